// `burnmark show [--dtype D] FILE`: the program a text file or a raw fuzzer input stands for, as
// text; with --dtype, the same program in another float dtype (values and attributes rounded),
// so an f32 finding can be tried in bf16 and the other way round.
#include <fmt/format.h>

#include "burnmark/ir/text.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

int run_show(std::span<const std::string_view> args) {
  std::optional<FloatDType> dtype;
  if (args.size() == 3 && args[0] == "--dtype") {
    dtype = float_dtype_from_name(args[1]);
    if (!dtype)
      return usage_error(
          fmt::format("show: unknown dtype '{}' (valid: f32, bf16, f16, f64)", args[1]));
    args = args.subspan(2);
  }
  if (args.size() != 1)
    return usage_error(
        "show: expected one FILE (usage: burnmark show [--dtype f32|bf16|f16|f64] FILE)");
  const Config config = config_or_exit();
  const std::optional<Program> program = load_program(args[0], config);
  if (!program) return kExitUsage;
  fmt::print("{}", to_text(dtype ? with_float_dtype(*program, *dtype) : *program));
  return kExitAgree;
}

} // namespace burnmark::cli
