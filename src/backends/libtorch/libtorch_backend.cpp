// make_libtorch_backend, make_libtorch_strided_backend and make_libtorch_inplace_backend: the
// eager Frameworks wrapped as
// Backends, with thread count and grad mode fixed around each run.
// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <torch/utils.h>

#include <memory>
#include <optional>
#include <string>

#include "burnmark/backends/builtin.h"
#include "libtorch_framework.h"
#include "libtorch_fwd_over_rev.h"
#include "libtorch_inplace.h"
#include "libtorch_platform.h"
#include "libtorch_strided.h"

namespace burnmark {
namespace {

// LibTorch's documented word for an op whose forward-mode derivative is not implemented: a
// missing feature to skip, not a wrong result.
bool lacks_forward_mode(const Outcome& out) {
  return out.status == Status::Error &&
         out.message.find("Trying to use forward AD with") != std::string::npos &&
         out.message.find("that does not support it") != std::string::npos;
}

// And for an op whose double backward is not implemented ("derivative for
// aten::hardsigmoid_backward is not implemented"): raised only when asked for second order.
bool lacks_second_order(const Outcome& out) {
  return out.status == Status::Error && out.message.starts_with("derivative for aten::") &&
         out.message.find("_backward is not implemented") != std::string::npos;
}

// Forward-only runs also switch autograd off, so LibTorch records nothing; the guard is scoped
// to one run so that grad mode in the caller's thread is left as it was.
template <Framework F> class LibTorchBackend final : public Backend {
public:
  explicit LibTorchBackend(std::string name) : inner_(std::move(name)) {
    skip_libtorch_error_backtraces();
  }
  const std::string& name() const override { return inner_.name(); }
  std::string note() const override {
    const int threads = torch::get_num_threads();
    return libtorch_platform() +
           (threads == 1 ? "" : ", " + std::to_string(threads) + " intra-op threads");
  }
  std::string platform() const override { return libtorch_platform(); }
  Outcome run(const Program& program, const RunOptions& options) override {
    std::optional<torch::NoGradGuard> no_grad;
    if (!options.gradients) no_grad.emplace();
    Outcome out = inner_.run(program, options);
    // libtorch-fwd-over-rev runs forward mode through backward's formulas to second order.
    if ((options.tangents || options.hessian) && lacks_forward_mode(out))
      out.status = Status::Unsupported;
    if (options.hessian && lacks_second_order(out)) out.status = Status::Unsupported;
    return out;
  }

private:
  FrameworkBackend<F> inner_;
};

} // namespace

std::unique_ptr<Backend> make_libtorch_backend(int intra_op_threads) {
  // The thread count changes reduction order and hence the last bits of sums and matmuls; the
  // caller picks it (1 by default) so that a finding replays identically.
  if (intra_op_threads > 0 && torch::get_num_threads() != intra_op_threads)
    torch::set_num_threads(intra_op_threads);
  return std::make_unique<LibTorchBackend<LibTorchFramework>>("libtorch");
}

std::unique_ptr<Backend> make_libtorch_inplace_backend() {
  return std::make_unique<LibTorchBackend<LibTorchInplaceFramework>>("libtorch-inplace");
}

std::unique_ptr<Backend> make_libtorch_fwd_over_rev_backend() {
  return std::make_unique<LibTorchBackend<LibTorchFwdOverRevFramework>>("libtorch-fwd-over-rev");
}

std::unique_ptr<Backend> make_libtorch_strided_backend() {
  return std::make_unique<LibTorchBackend<LibTorchStridedFramework>>("libtorch-strided");
}

} // namespace burnmark
