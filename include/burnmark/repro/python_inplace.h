// The Python reproducer's in-place path (ReproPath::Inplace): each op libtorch-inplace runs in
// place (runs_in_place, burnmark/ir/inplace_form.h) as the same in-place call on the same view,
// so a finding only that backend shows reproduces in a standalone PyTorch script.
#pragma once

#include <optional>
#include <string>

#include "burnmark/ir/program.h"

namespace burnmark {

// The in-place call libtorch-inplace makes for `in` (result register `result`), on the
// destination named r<result>, the operands named r<N>: `r5.sin_()`, `r5.add_(r2)`,
// `torch.ops.aten.elu_(r5, 1.0)` (the very ATen op torch::elu_ calls). nullopt when the backend
// runs `in` functionally (then the eager path's torch_python_call is what it ran). `fits`: the
// result has the first operand's shape, as runs_in_place takes it.
std::optional<std::string> torch_python_inplace_call(const Instr& in, Reg result, bool fits);

// The statement lines (each starting with `indent`, ending in a newline) that run register `r`,
// an op, as libtorch-inplace does: its destination made by the script's inplace_destination(),
// then the in-place call; nullopt when the op runs functionally.
std::optional<std::string> python_inplace_statement(const Program& p, Reg r,
                                                    const std::string& indent);

// The script's inplace_destination(x, reg), defined after main() when some statement uses it: the
// same view as libtorch_inplace.h's inplace_destination.
extern const char* const kInplaceDestinationHelper;

} // namespace burnmark
