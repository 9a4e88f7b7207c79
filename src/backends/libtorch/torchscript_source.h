// A program as TorchScript source, for the LibTorch JIT backends: one function `forward` whose
// parameters are the leaves and whose body makes, per statement, the same ATen call (overload
// and attributes) as the eager backend, so the two paths differ only by what the JIT does.
#pragma once

#include <string>

#include "burnmark/ir/program.h"

namespace burnmark {

// Compiles with torch::jit::compile (no Python: `torch.` names resolve to ATen ops). `forward`
// returns a tuple: the root first, then every op result nothing uses (kept live, see the .cpp).
std::string torchscript_source(const Program& program);

} // namespace burnmark
