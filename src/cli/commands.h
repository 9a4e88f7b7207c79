// The subcommand table of `burnmark`, generated from commands.def.
#pragma once

#include <span>
#include <string_view>

namespace burnmark::cli {

using CommandFn = int (*)(std::span<const std::string_view> args);

struct Command {
  std::string_view name;
  std::string_view arguments;
  std::string_view summary;
  CommandFn run;
};

#define BURNMARK_COMMAND(name, arguments, summary)                                                 \
  int run_##name(std::span<const std::string_view> args);
#include "commands.def"
#undef BURNMARK_COMMAND

std::span<const Command> commands();

} // namespace burnmark::cli
