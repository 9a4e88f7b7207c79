// `burnmark show [--dtype D] FILE`: the program a text file or a raw fuzzer input stands for, as
// text; with --dtype, the same program in another float dtype (values and attributes rounded),
// so an f32 finding can be tried in bf16 and the other way round.
#include <fmt/format.h>

#include "app.h"
#include "burnmark/ir/text.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

Action define_show(CLI::App& app) {
  struct Args {
    std::string dtype, file;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--dtype", a->dtype, "print the program in this float dtype (values rounded)")
      ->type_name("f32|bf16|f16|f64")
      ->check(check_with([](const std::string& d) {
        return float_dtype_from_name(d)
                   ? std::string()
                   : fmt::format("unknown dtype '{}' (valid: f32, bf16, f16, f64)", d);
      }));
  app.add_option("FILE", a->file, "a text program or a raw fuzzer input (crash-*)")->required();
  return [a](std::span<const std::string>) {
    const Config config = config_or_exit();
    const std::optional<Program> program = load_program(a->file, config);
    if (!program) return kExitUsage;
    const std::optional<FloatDType> dtype =
        a->dtype.empty() ? std::nullopt : float_dtype_from_name(a->dtype);
    fmt::print("{}", to_text(dtype ? with_float_dtype(*program, *dtype) : *program));
    return kExitAgree;
  };
}

} // namespace burnmark::cli
