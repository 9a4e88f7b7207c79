// The PyTorch call of one instruction, as Python source: the one table of Python spellings,
// shared by the Python reproducer and the torch backends that run programs as Python functions
// (src/backends/python), so that what a repro runs is what the backend ran.
#pragma once

#include <string>

#include "burnmark/ir/program.h"

namespace burnmark {

// An expression over the operands' registers named r<N> (`torch.pow(r0, 0.5)`), calling the
// same overloads as the libtorch backend (a Python float exponent reaches pow's Scalar overload).
// It refers to the module-level names `torch`, `F` (torch.nn.functional), `nan` and `inf`;
// `scripted` spells NaN and infinity as float("nan") and float("inf") instead, which
// TorchScript folds.
std::string torch_python_call(const Program& program, const Instr& instr, bool scripted);

} // namespace burnmark
