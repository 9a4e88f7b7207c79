// The LibTorch eager backend's half of the Framework concept: how each step of the shared SSA
// walk (driver.h) is done with LibTorch tensors. Included only by this backend and its tests.
#pragma once

// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <torch/types.h>

#include <optional>
#include <span>
#include <vector>

#include "burnmark/driver/outcome.h"
#include "burnmark/ir/program.h"

namespace burnmark {

// CPU, the program's float dtype, autograd. Tensors are LibTorch's own handles, so copying one
// shares the data and the autograd node, which is what the alias protocol needs.
class LibTorchFramework {
public:
  using Tensor = torch::Tensor;

  LibTorchFramework() = default;
  LibTorchFramework(const LibTorchFramework&) = delete;
  LibTorchFramework& operator=(const LibTorchFramework&) = delete;
  ~LibTorchFramework() { leave_dual_level(); }

  void reset(const Program& program);
  Tensor leaf(const Leaf& leaf, bool track_gradient);
  // The very same tensor: a clone would be a new autograd node whose gradient never reaches the
  // aliased leaf, hiding exactly the bugs aliases are there to provoke.
  Tensor alias(const Tensor& t) { return t; }
  // Throws if LibTorch's result shape differs from the inferred one: that is a finding.
  Tensor apply(const Instr& instr, std::span<const Tensor* const> operands, const Shape& shape);
  void backward(const Tensor& root);
  std::optional<HostTensor> grad(const Tensor& t);
  HostTensor read(const Tensor& t);
  // Forward mode (torch.autograd.forward_ad's make_dual and unpack_dual, at one dual level
  // entered on the first dual() of a program and left at the next reset()).
  Tensor dual(const Tensor& primal, const HostTensor& tangent);
  HostTensor tangent(const Tensor& t);
  // Second order by double backward: the gradients with create_graph, then the gradient of
  // sum_k <grad_k, v_k> (torch.autograd.grad twice; both keep the graph for backward()).
  std::vector<std::optional<HostTensor>> hessian_vector(const Tensor& root,
                                                        std::span<const Tensor> leaves,
                                                        std::span<const HostTensor> directions);

  // The forward-AD level of the program in progress, entered by the first dual().
  std::optional<std::uint64_t> dual_level() const { return dual_level_; }

private:
  void leave_dual_level();
  // Host values in the program's dtype, a fresh tensor (never a view of `host`).
  torch::Tensor from_host(const HostTensor& host) const;

  torch::ScalarType float_type_ = torch::kFloat32; // the program's float dtype
  std::optional<std::uint64_t> dual_level_;
};

// `values` laid out as `layout` says (layout.h): a view of a fresh NaN-filled buffer with that
// layout's strides and storage offset, holding the same values; differentiable (reverse and
// forward mode), the gradient of `values` the view's gradient read back through the layout.
// relayout is this; an expanded layout keeps index 0 of each expanded dim.
torch::Tensor with_layout(const torch::Tensor& values, const LeafLayout& layout);
// A leaf's layout: with_layout of `values` (contiguous) as a tensor of its own, no gradient.
torch::Tensor with_leaf_layout(const torch::Tensor& values, const LeafLayout& layout);

} // namespace burnmark
