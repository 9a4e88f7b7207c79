// The text form of a program: readable SSA with each register's shape, which parses back to
// the identical program (floats are printed so that they round-trip bit for bit).
//
//   # burnmark program v1
//   dtype bf16            (every float tensor's dtype; the line is omitted for f32)
//   %0 = leaf f32[2,3] [0.5, -1, nan, inf, -0, 1e-40]
//   %1 = leaf f32[3] [1, 2, 3]
//   %2 = add %0, %1 : f32[2,3]
//   %3 = pow %2, exponent=0.5 : f32[2,3]
//   %4 = sum_dim %3, dim=1, keepdim=true : f32[2,1]
//   %5 = alias %4 : f32[2,1]
//   root %5
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "burnmark/ir/program.h"

namespace burnmark {

std::string to_text(const Program& program);
// One statement's line without the leaf data (used in reports).
std::string stmt_to_text(const Program& program, Reg reg);
// A float in the shortest form that parses back to the same bits ("nan", "-inf", "-0").
std::string float_to_text(float value);
// A leaf value of a program of `dtype` in the same manner: the shortest double for f64, and for
// the other dtypes (whose values are all floats) exactly what float_to_text prints.
std::string value_to_text(double value, FloatDType dtype);
// A double as a floating literal of Python, C++ and TorchScript: the shortest decimal that parses
// back to the same double, always with a '.' or an exponent; NaN and the infinities take the
// spellings given (each language has its own), a minus sign before `inf` for -inf.
std::string double_literal(double value, const std::string& nan, const std::string& inf);

struct ParseResult {
  std::variant<Program, std::string> value; // the program, or "line N: what is wrong"
  bool ok() const { return std::holds_alternative<Program>(value); }
  const Program& program() const { return std::get<Program>(value); }
  Program& program() { return std::get<Program>(value); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// True when a file's bytes are a text program rather than a raw fuzzer input: skipping blank
// and '#' comment lines, it opens with "# burnmark program" or "%0 =". Raw fuzzer bytes only
// rarely look like that.
bool looks_like_program_text(std::string_view bytes);

// Parses and validates (shapes are re-inferred and must match the text).
ParseResult parse_program(std::string_view text);

} // namespace burnmark
