// The subcommand table of `burnmark`, generated from commands.def, and what each command's file
// provides: its options declared on a CLI11 subcommand, and the code that runs once they parsed.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace burnmark::cli {

// An Action runs a command whose options have parsed into the state the Action holds;
// `after_dashes` are the arguments after `--` (empty unless the command's table entry names them).
// Exit status.
using Action = std::function<int(std::span<const std::string> after_dashes)>;
using DefineFn = Action (*)(CLI::App& app);

struct Command {
  std::string_view name;
  std::string_view summary;
  std::string_view description;
  std::string_view examples;     // one command line per line
  std::string_view after_dashes; // what arguments after `--` are, "" when none are taken
  DefineFn define;
};

#define BURNMARK_COMMAND(name, summary, description, examples, after_dashes)                       \
  Action define_##name(CLI::App& app);
#include "commands.def"
#undef BURNMARK_COMMAND

std::span<const Command> commands();

} // namespace burnmark::cli
