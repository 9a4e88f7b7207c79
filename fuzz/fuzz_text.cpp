// libFuzzer target over what BurnMark reads from users: the text form (what `burnmark show|run`
// and every corpus file go through) and raw fuzzer inputs decoded by the generator. It checks the
// contracts between them, so a parser crash, a leak or a round trip that changes a program is a
// finding (built with AddressSanitizer and UBSan; CI runs it for a bounded number of inputs):
//   - parse_program never crashes, and to_text of what it accepts parses back to the same program;
//   - generate() of any bytes is a valid program whose text round-trips;
//   - encode() of a parsed program, when it succeeds, decodes back to that program.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/program.h"
#include "burnmark/ir/text.h"

namespace {

void round_trips_as_text(const burnmark::Program& p) {
  const burnmark::ParseResult again = burnmark::parse_program(burnmark::to_text(p));
  if (!again.ok() || !(again.program() == p)) std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace burnmark;
  const GeneratorOptions options;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ParseResult parsed = parse_program(text);
  if (parsed.ok()) {
    round_trips_as_text(parsed.program());
    const EncodeResult encoded = encode(parsed.program(), options);
    if (encoded.ok() && !(generate(encoded.bytes(), options) == parsed.program())) std::abort();
  }
  const Program generated = generate(std::span(data, size), options);
  if (!validate(generated).empty()) std::abort();
  round_trips_as_text(generated);
  return 0;
}
