// libtorch-fwd-over-rev: dual leaves from the start, gradients with create_graph inside the
// dual level, H·v read as the gradients' tangents.
#include "libtorch_fwd_over_rev.h"

#include <torch/csrc/autograd/autograd.h>

#include "burnmark/driver/driver.h"

namespace burnmark {

torch::Tensor LibTorchFwdOverRevFramework::leaf(const Leaf& leaf, bool track_gradient) {
  const std::size_t index = next_leaf_++;
  Tensor primal = eager_.leaf(leaf, track_gradient);
  // Index leaves carry no tangent, as in the driver's forward mode.
  if (leaf.dtype != DType::F32) {
    primals_.push_back(primal);
    duals_.push_back(primal);
    return primal;
  }
  Tensor dual = eager_.dual(primal, leaf_tangent(leaf.shape, index));
  primals_.push_back(primal);
  duals_.push_back(dual);
  return dual;
}

const torch::Tensor& LibTorchFwdOverRevFramework::primal_of(const Tensor& t) const {
  for (std::size_t i = 0; i < duals_.size(); ++i)
    if (duals_[i].unsafeGetTensorImpl() == t.unsafeGetTensorImpl()) return primals_[i];
  return t;
}

std::vector<std::optional<HostTensor>>
LibTorchFwdOverRevFramework::hessian_vector(const Tensor& root, std::span<const Tensor> leaves,
                                            std::span<const HostTensor>) {
  std::vector<std::optional<HostTensor>> out(leaves.size());
  std::vector<torch::Tensor> inputs;
  std::vector<std::size_t> leaf_of;
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    const Tensor& primal = primal_of(leaves[k]);
    if (primal.requires_grad()) {
      inputs.push_back(primal);
      leaf_of.push_back(k);
    }
  }
  const std::optional<std::uint64_t> level = eager_.dual_level();
  if (inputs.empty() || !root.requires_grad() || !level) return out;
  const std::vector<torch::Tensor> grads =
      torch::autograd::grad({root}, inputs, {torch::ones_like(root)}, /*retain_graph=*/true,
                            /*create_graph=*/true, /*allow_unused=*/true);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    const torch::Tensor tangent =
        std::get<1>(at::_unpack_dual(grads[i], static_cast<std::int64_t>(*level)));
    // No tangent reached this gradient: its H·v is zero, as a gradient that never arrives.
    if (tangent.defined()) out[leaf_of[i]] = eager_.read(tangent);
  }
  return out;
}

} // namespace burnmark
