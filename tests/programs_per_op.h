// One program per op of the vocabulary, each inside its op's domain, for the tests that run
// every op through LibTorch and its variants (test_ref_vs_libtorch, test_forward_mode).
#pragma once

#include <vector>

#include "burnmark/ir/program.h"

namespace burnmark::testing {

struct NamedProgram {
  Op op;
  Program program;
};

// The op under test is fed by leaves (and, for layout ops, weighted by a leaf so that the
// gradient's layout matters).
std::vector<NamedProgram> programs_per_op();

// Every float leaf moved by `step` along its forward-mode direction (leaf_tangent), for central
// differences; throws std::logic_error if a moved value is not exact in f32 (steps of 2^-12 keep
// |x| < 256 exact).
Program perturbed_along_tangents(const Program& p, double step);
// Whether a comparison (a mask feeding where or masked_fill) is in the program: at a tie AD
// takes the branch where() took, a difference quotient the function's.
bool has_comparison(const Program& p);

} // namespace burnmark::testing
