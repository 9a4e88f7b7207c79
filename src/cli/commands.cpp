// The subcommand table, built from commands.def so that a command cannot be declared and
// forgotten in the dispatcher or the usage text.
#include "commands.h"

namespace burnmark::cli {

std::span<const Command> commands() {
  static constexpr Command table[] = {
#define BURNMARK_COMMAND(name, arguments, summary) {#name, arguments, summary, &run_##name},
#include "commands.def"
#undef BURNMARK_COMMAND
  };
  return table;
}

} // namespace burnmark::cli
