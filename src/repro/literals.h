// Exact literals and case checks shared by the C++ and Python emitters: f32 leaf data as bit
// patterns, doubles in their shortest round-tripping decimal form.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "burnmark/repro/repro.h"

namespace burnmark::repro_detail {

// "r3": register 3's variable in every emitted program, C++ and Python alike.
std::string reg(Reg r);
// A double as a Python literal: "0.5", "nan", "inf".
std::string literal(double v);
// "True" or "False".
std::string py_bool(bool b);

// "0x3f000000": the float's bit pattern, which keeps NaN payloads, -0 and subnormals exact.
std::string float_bits(float value);
// A leaf value's bit pattern in its program's dtype: an f64 program's as "0x3fe0000000000000"
// (its values need not be floats), every other program's as float_bits.
std::string value_bits(double value, FloatDType dtype);
// The shortest decimal spelling of a leaf value that a library turning a Python or C++ double
// into the program's dtype gets back exactly, whether it rounds the double straight to the dtype
// or through float first (PyTorch's torch.tensor does the latter for bf16 and f16): "0.1",
// "-0.0", "inf", "nan" (the default quiet NaN only). nullopt where no decimal is exact (a NaN
// with another sign or payload): then only the bit pattern is.
std::optional<std::string> exact_decimal(double value, FloatDType dtype);
// Comma-separated items, a line break with `indent` every `per_line` items.
std::string join_wrapped(const std::vector<std::string>& items, std::size_t per_line,
                         const std::string& indent);
// The inferred result shape of an instruction (reshape's call names it).
Shape result_shape(const Program& p, const Instr& in);
// permute's dims, comma-separated (each language adds its own brackets).
std::string permutation_items(const Program& p, const Instr& in);
// Leaf i's gradient bounds, empty when the case has none.
const std::vector<double>& bounds_of(const ReproCase& repro, std::size_t leaf);
// "one intra-op thread", "4 intra-op threads": for the reproducer's header comment.
std::string threads_phrase(int threads);
// Throws std::invalid_argument when the case cannot be emitted.
void check_case(const ReproCase& repro);

} // namespace burnmark::repro_detail
