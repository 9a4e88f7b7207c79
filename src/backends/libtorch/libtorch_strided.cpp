// The layouts of libtorch-strided (libtorch_strided.h).
#include "libtorch_strided.h"

#include <numeric>
#include <vector>

namespace burnmark {

torch::Tensor with_register_layout(const torch::Tensor& t, int reg) {
  int kind = reg % 3;
  if (t.numel() <= 1) kind = 2;
  if (kind == 0 && t.dim() < 2) kind = 1;
  switch (kind) {
  case 0: {
    std::vector<std::int64_t> reversed(static_cast<std::size_t>(t.dim()));
    std::iota(reversed.rbegin(), reversed.rend(), 0);
    return t.permute(reversed).contiguous().permute(reversed);
  }
  case 1: return torch::stack({t, t}, -1).select(-1, 0);
  default:
    return torch::cat({torch::zeros({1}, t.options()), t.flatten()})
        .narrow(0, 1, t.numel())
        .view(t.sizes());
  }
}

torch::Tensor LibTorchStridedFramework::leaf(const Leaf& leaf, bool track_gradient) {
  // A leaf the program lays out keeps its layout (every LibTorch backend builds it); a
  // contiguous one takes its register's. A leaf in a layout is the view itself, detached from
  // how it was built: its strides and storage offset stay, and its gradient is its own.
  const int reg = next_register_++;
  if (!leaf.layout.contiguous()) return eager_.leaf(leaf, track_gradient);
  torch::Tensor t = with_register_layout(eager_.leaf(leaf, false), reg).detach();
  if (track_gradient) t.set_requires_grad(true);
  return t;
}

torch::Tensor LibTorchStridedFramework::apply(const Instr& instr,
                                              std::span<const Tensor* const> operands,
                                              const Shape& shape) {
  return with_register_layout(eager_.apply(instr, operands, shape), next_register_++);
}

} // namespace burnmark
