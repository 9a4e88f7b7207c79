// libtorch-fwd-over-rev's half of the Framework concept: LibTorch eager with every float leaf a
// dual tensor from the start (its forward-mode direction, leaf_tangent), so that the gradients,
// computed with create_graph inside the dual level, are dual too and their tangents are H·v.
// This is forward over reverse in LibTorch itself: the forward-mode formulas of the backward
// functions (tanh_backward, threshold_backward, mm's backward products, ...) run, a code path
// double backward never takes. Forward mode reads the same duals; reverse mode runs after the
// level is left, as in libtorch.
#pragma once

// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <vector>

#include "libtorch_framework.h"

namespace burnmark {

class LibTorchFwdOverRevFramework {
public:
  using Tensor = torch::Tensor;

  void reset(const Program& program) {
    eager_.reset(program);
    primals_.clear();
    duals_.clear();
    next_leaf_ = 0;
  }
  Tensor leaf(const Leaf& leaf, bool track_gradient);
  Tensor alias(const Tensor& t) { return t; }
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape) {
    return eager_.apply(instr, operands, shape);
  }
  void backward(const Tensor& root) { eager_.backward(root); }
  // Gradients live on the primal leaf, not on its dual view.
  std::optional<HostTensor> grad(const Tensor& t) { return eager_.grad(primal_of(t)); }
  HostTensor read(const Tensor& t) { return eager_.read(t); }
  // The leaf already carries its direction, which is the tangent forward mode asks for.
  Tensor dual(const Tensor& t, const HostTensor&) { return t; }
  HostTensor tangent(const Tensor& t) { return eager_.tangent(t); }
  // The gradients with create_graph inside the level: their tangents.
  std::vector<std::optional<HostTensor>> hessian_vector(const Tensor& root,
                                                        std::span<const Tensor> leaves,
                                                        std::span<const HostTensor> directions);

private:
  const Tensor& primal_of(const Tensor& t) const;

  LibTorchFramework eager_;
  std::vector<Tensor> primals_; // one per leaf() (undefined for a leaf without a gradient)
  std::vector<Tensor> duals_;   // what leaf() returned
  std::size_t next_leaf_ = 0;
};

} // namespace burnmark
