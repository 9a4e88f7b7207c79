// Which instructions libtorch-inplace runs as their in-place form (`dest.sin_()`, `dest.add_(y)`
// on a strided view holding the first operand's values) and which functionally: the one decision
// shared by that backend (src/backends/libtorch/libtorch_inplace.cpp) and the Python reproducer's
// in-place path (src/repro/python_inplace.cpp), so the script runs what the backend ran. No
// LibTorch here: the reproducer library never links it.
#pragma once

#include "burnmark/ir/program.h"

namespace burnmark {

// True when libtorch-inplace runs `instr` in place. `fits`: the result has the first operand's
// shape (a binary form writes into that operand, so it cannot broadcast into a larger result).
// False for ops without an in-place form in LibTorch 1.13 (or one with other semantics: lt_
// writes floats into x), for the in-place forms derivatives.yaml declares not differentiable
// (asinh_, acosh_, atanh_), and for elu_, celu_ and leaky_relu_ with a negative alpha or slope,
// whose result-based backward is documented to raise ("not supported").
bool runs_in_place(const Instr& instr, bool fits);

} // namespace burnmark
