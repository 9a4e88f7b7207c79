// Factories of the backends compiled into BurnMark. Only the LibTorch backend's .cpp includes
// LibTorch; this header does not.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "burnmark/backends/conventions.h"
#include "burnmark/driver/driver.h"

namespace burnmark {

// The independent CPU reference: double precision, its own reverse-mode tape, IEEE 754 and the
// documented or free choices of docs/conventions.md. `other_side` switches registered
// conventions to the side the reference does not take (the backend is then named
// "ref[<convention>]").
std::unique_ptr<Backend> make_reference_backend(ConventionSet other_side = {});
// The reference once per registered convention, each with that one switched.
std::vector<std::pair<Convention, std::unique_ptr<Backend>>> make_convention_references();

// LibTorch eager on CPU, float32, autograd. intra_op_threads <= 0 keeps LibTorch's default.
std::unique_ptr<Backend> make_libtorch_backend(int intra_op_threads);

} // namespace burnmark
