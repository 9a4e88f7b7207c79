// `burnmark show FILE`: the program a text file or a raw fuzzer input stands for, as text.
#include <fmt/format.h>

#include "burnmark/ir/text.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

int run_show(std::span<const std::string_view> args) {
  if (args.size() != 1) return usage_error("show: expected one FILE (usage: burnmark show FILE)");
  const Config config = config_or_exit();
  const std::optional<Program> program = load_program(args[0], config);
  if (!program) return kExitUsage;
  fmt::print("{}", to_text(*program));
  return kExitAgree;
}

} // namespace burnmark::cli
