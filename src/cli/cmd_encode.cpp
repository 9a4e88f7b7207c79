// `burnmark encode IN OUT`: fuzzer bytes that decode to the program IN, so that hand-written or
// minimised programs become corpus seeds. The bytes are checked by decoding them again.
#include <fmt/format.h>

#include "burnmark/gen/generator.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

int run_encode(std::span<const std::string_view> args) {
  if (args.size() != 2)
    return usage_error("encode: expected IN and OUT (usage: burnmark encode IN OUT)");
  const Config config = config_or_exit();
  const std::optional<Program> program = load_program(args[0], config);
  if (!program) return kExitUsage;
  const GeneratorOptions options = generator_options(config);
  const EncodeResult encoded = encode(*program, options);
  if (!encoded.ok())
    return usage_error(fmt::format("{}: cannot encode: {}", args[0], encoded.error()));
  if (!(generate(encoded.bytes(), options) == *program))
    return usage_error(
        fmt::format("{}: encoded bytes decode to a different program (generator bug)", args[0]));
  if (!write_file(args[1], encoded.bytes()))
    return usage_error(fmt::format("{}: cannot write file", args[1]));
  return kExitAgree;
}

} // namespace burnmark::cli
