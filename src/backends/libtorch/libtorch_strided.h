// libtorch-strided's half of the Framework concept: LibTorch eager on the same values in other
// memory layouts. Leaves with a layout in the program keep it (LibTorchFramework::leaf builds it
// for every LibTorch backend); every other leaf and every op result is re-laid out, by register
// number r, as
//   r % 3 == 0  transposed storage (the dims reversed in memory, then permuted back),
//   r % 3 == 1  every other element of a buffer twice as long in the last dim (stride 2),
//   r % 3 == 2  a contiguous view at storage offset 1 (one float past an aligned start),
// so kernels see non-contiguous and misaligned inputs all through the program, and backward sees
// non-contiguous gradients. A tensor of rank < 2 takes stride 2 instead of transposed, one of at
// most one element the offset. The re-layout of an op result is made of differentiable views and
// copies (permute, contiguous, stack, select, cat, narrow, view), so gradients flow through it
// exactly; the Python reproducer's `layout()` builds the same tensors.
#pragma once

// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include "libtorch_framework.h"

namespace burnmark {

class LibTorchStridedFramework {
public:
  using Tensor = torch::Tensor;

  void reset(const Program& program) {
    eager_.reset(program);
    next_register_ = 0;
  }
  Tensor leaf(const Leaf& leaf, bool track_gradient);
  Tensor alias(const Tensor& t) {
    ++next_register_;
    return t;
  }
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape);
  void backward(const Tensor& root) { eager_.backward(root); }
  std::optional<HostTensor> grad(const Tensor& t) { return eager_.grad(t); }
  HostTensor read(const Tensor& t) { return eager_.read(t); }
  // Forward mode: the leaf's tangent is contiguous, everything computed from it is laid out
  // like its primal (LibTorch gives a tangent its primal's strides).
  Tensor dual(const Tensor& t, const HostTensor& tangent) { return eager_.dual(t, tangent); }
  HostTensor tangent(const Tensor& t) { return eager_.tangent(t); }
  std::vector<std::optional<HostTensor>> hessian_vector(const Tensor& root,
                                                        std::span<const Tensor> leaves,
                                                        std::span<const HostTensor> directions) {
    return eager_.hessian_vector(root, leaves, directions);
  }

private:
  LibTorchFramework eager_;
  int next_register_ = 0;
};

// The same values as `t` in register `reg`'s layout (see above); differentiable.
torch::Tensor with_register_layout(const torch::Tensor& t, int reg);

} // namespace burnmark
