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

} // namespace burnmark::testing
