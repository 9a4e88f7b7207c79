// libtorch-inplace's half of the Framework concept: each op that has an in-place form runs as
// that form on a strided view of a larger buffer holding its first operand's values (see
// inplace_destination: `dest.copy_(x); dest.sin_()`, `dest.add_(y)`), which autograd allows
// and which reaches LibTorch's in-place kernels on a non-contiguous, offset destination, their
// own derivative formulas (several are written in terms of the result, not the input), and
// autograd's view + in-place machinery (CopySlices, the view's grad_fn rebased). Everything
// else, and an in-place form that is illegal here, runs functionally as in `libtorch` (the choice
// is runs_in_place, burnmark/ir/inplace_form.h, which the in-place reproducer shares):
//   - binary forms only when the result has the first operand's shape (no broadcast into it);
//   - elu_, celu_ and leaky_relu_ only with a non-negative alpha or slope: their result-based
//     backward is documented to raise otherwise ("not supported"), which is not a finding;
//   - never asinh_, acosh_, atanh_, whose derivatives derivatives.yaml declares not implemented.
#pragma once

// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <cstdint>
#include <vector>

#include "libtorch_framework.h"

namespace burnmark {

class LibTorchInplaceFramework {
public:
  using Tensor = torch::Tensor;

  void reset(const Program& program) {
    eager_.reset(program);
    next_register_ = 0;
  }
  Tensor leaf(const Leaf& leaf, bool track_gradient) {
    ++next_register_;
    return eager_.leaf(leaf, track_gradient);
  }
  Tensor alias(const Tensor& t) {
    ++next_register_;
    return t;
  }
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape);
  void backward(const Tensor& root) { eager_.backward(root); }
  std::optional<HostTensor> grad(const Tensor& t) { return eager_.grad(t); }
  HostTensor read(const Tensor& t) { return eager_.read(t); }
  // Forward mode: copy_ gives the view its operand's tangent (and the buffer a zero tangent
  // around it), and the in-place form updates it with its own forward formula
  // (derivatives.yaml's `self_t.…_()` variants).
  Tensor dual(const Tensor& t, const HostTensor& tangent) { return eager_.dual(t, tangent); }
  HostTensor tangent(const Tensor& t) { return eager_.tangent(t); }
  std::vector<std::optional<HostTensor>> hessian_vector(const Tensor& root,
                                                        std::span<const Tensor> leaves,
                                                        std::span<const HostTensor> directions) {
    return eager_.hessian_vector(root, leaves, directions);
  }

private:
  LibTorchFramework eager_;
  int next_register_ = 0; // the register the next leaf, alias or op result is
};

// Where register `reg`'s in-place form writes: a view of a fresh zero buffer of 2·numel+1
// elements (no gradient of its own), at storage offset 1, each dim's stride twice the dense
// one, the dims in memory row-major for an even register and reversed (the first dim fastest)
// for an odd one; `x`'s values copied in with copy_, so gradients and tangents flow to `x`.
// The last dim's stride is at least 2 and the offset non-zero for every shape, rank 0 too (an
// offset view). The Python and C++ reproducers build the same view.
inline constexpr std::int64_t kInplaceStorageOffset = 1;
std::vector<std::int64_t> inplace_destination_strides(c10::IntArrayRef sizes, int reg);
torch::Tensor inplace_destination(const torch::Tensor& x, int reg);

} // namespace burnmark
