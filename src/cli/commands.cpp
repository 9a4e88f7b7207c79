// The subcommand table, built from commands.def so that a command cannot be declared and
// forgotten in the parser or the help.
#include "commands.h"

namespace burnmark::cli {

std::span<const Command> commands() {
  static constexpr Command table[] = {
#define BURNMARK_COMMAND(name, summary, description, examples, after_dashes)                       \
  {#name, summary, description, examples, after_dashes, &define_##name},
#include "commands.def"
#undef BURNMARK_COMMAND
  };
  return table;
}

} // namespace burnmark::cli
