// `burnmark encode IN OUT`: fuzzer bytes that decode to the program IN, so that hand-written or
// minimised programs become corpus seeds. The bytes are checked by decoding them again.
#include <fmt/format.h>

#include "app.h"
#include "burnmark/gen/generator.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

Action define_encode(CLI::App& app) {
  struct Args {
    std::string in, out;
  };
  auto a = std::make_shared<Args>();
  app.add_option("IN", a->in, "the program: a text program or a raw fuzzer input")->required();
  app.add_option("OUT", a->out, "the file to write the fuzzer input bytes to")->required();
  return [a](std::span<const std::string>) {
    const Config config = config_or_exit();
    const std::optional<Program> program = load_program(a->in, config);
    if (!program) return kExitUsage;
    const GeneratorOptions options = generator_options(config);
    const EncodeResult encoded = encode(*program, options);
    if (!encoded.ok())
      return usage_error(fmt::format("{}: cannot encode: {}", a->in, encoded.error()));
    if (!(generate(encoded.bytes(), options) == *program))
      return usage_error(
          fmt::format("{}: encoded bytes decode to a different program (generator bug)", a->in));
    if (!write_file(a->out, encoded.bytes()))
      return usage_error(fmt::format("{}: cannot write file", a->out));
    return kExitAgree;
  };
}

} // namespace burnmark::cli
