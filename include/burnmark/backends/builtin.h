// Factories of the backends compiled into BurnMark. Only the LibTorch backend's .cpp includes
// LibTorch; this header does not.
#pragma once

#include <memory>

#include "burnmark/driver/driver.h"

namespace burnmark {

// The independent CPU reference: double precision, its own reverse-mode tape, PyTorch's
// conventions at kinks and special values (docs/conventions.md).
std::unique_ptr<Backend> make_reference_backend();

// LibTorch eager on CPU, float32, autograd. intra_op_threads <= 0 keeps LibTorch's default.
std::unique_ptr<Backend> make_libtorch_backend(int intra_op_threads);

} // namespace burnmark
