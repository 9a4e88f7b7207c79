// Turns fuzzer bytes into a legal program (a total function: every byte string decodes), and
// back: the encoder finds bytes that decode to a given program, so text programs become seeds.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "burnmark/ir/program.h"

namespace burnmark {

struct GeneratorOptions {
  int max_leaves = 4;          // MAX_LEAVES, 1..8: new-leaf steps past this alias a register
  int min_ops = 0;             // MIN_OPS: op steps forced before the bytes may end the program
  int min_dim = 1;             // FUZZ_MIN_DIM
  int max_dim = 16;            // FUZZ_MAX_DIM (at most kMaxDim)
  int max_steps = 48;          // leaf + op steps
  double special_rate = 0.05;  // share of leaf elements drawn from the special-value table
};

Program generate(std::span<const std::uint8_t> bytes, const GeneratorOptions& options);

struct EncodeResult {
  std::variant<std::vector<std::uint8_t>, std::string> value; // bytes, or why it cannot be encoded
  bool ok() const { return std::holds_alternative<std::vector<std::uint8_t>>(value); }
  const std::vector<std::uint8_t>& bytes() const { return std::get<std::vector<std::uint8_t>>(value); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// generate(encode(p).bytes(), options) == p whenever encoding succeeds.
EncodeResult encode(const Program& program, const GeneratorOptions& options);

} // namespace burnmark
