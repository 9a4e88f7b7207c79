// libtorch-inplace's half of the Framework concept: each op that has an in-place form runs as
// that form on a fresh clone of its first operand (`x.clone().sin_()`, `x.clone().add_(y)`),
// which autograd allows and which reaches LibTorch's in-place kernels and their own derivative
// formulas (several are written in terms of the result, not the input). Everything else, and an
// in-place form that is illegal here, runs functionally as in `libtorch`:
//   - binary forms only when the result has the first operand's shape (no broadcast into it);
//   - elu_, celu_ and leaky_relu_ only with a non-negative alpha or slope: their result-based
//     backward is documented to raise otherwise ("not supported"), which is not a finding;
//   - never asinh_, acosh_, atanh_, whose derivatives derivatives.yaml declares not implemented.
#pragma once

// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include "libtorch_framework.h"

namespace burnmark {

class LibTorchInplaceFramework {
public:
  using Tensor = torch::Tensor;

  void reset(const Program& program) { eager_.reset(program); }
  Tensor leaf(const Leaf& leaf, bool track_gradient) { return eager_.leaf(leaf, track_gradient); }
  Tensor alias(const Tensor& t) { return t; }
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape);
  void backward(const Tensor& root) { eager_.backward(root); }
  std::optional<HostTensor> grad(const Tensor& t) { return eager_.grad(t); }
  HostTensor read(const Tensor& t) { return eager_.read(t); }
  // Forward mode: the clone carries its operand's tangent, and the in-place form updates it with
  // its own forward formula (derivatives.yaml's `self_t.…_()` variants).
  Tensor dual(const Tensor& t, const HostTensor& tangent) { return eager_.dual(t, tangent); }
  HostTensor tangent(const Tensor& t) { return eager_.tangent(t); }
  std::vector<std::optional<HostTensor>> hessian_vector(const Tensor& root,
                                                        std::span<const Tensor> leaves,
                                                        std::span<const HostTensor> directions) {
    return eager_.hessian_vector(root, leaves, directions);
  }

private:
  LibTorchFramework eager_;
};

} // namespace burnmark
