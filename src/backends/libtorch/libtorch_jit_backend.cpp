// libtorch-jit and libtorch-nnc: the program compiled to TorchScript (torchscript_source.h) and
// run by LibTorch's profiling graph executor until it specialises, with gradients from the
// JIT's own autodiff (DifferentiableGraph, symbolic derivatives); -nnc also forces the
// TensorExpr fuser on for CPU, so elementwise chains run as NNC kernels.
// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/jit.h>
#include <torch/utils.h>

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "libtorch_framework.h"
#include "libtorch_platform.h"
#include "torchscript_source.h"

// Exported by libtorch_cpu but declared in a header (codegen/fuser/interface.h) that LibTorch's
// packages do not install; these are the calls behind torch._C._jit_override_can_fuse_on_cpu.
namespace torch::jit {
TORCH_API void overrideCanFuseOnCPU(bool value);
TORCH_API bool canFuseOnCPU();
} // namespace torch::jit

namespace burnmark {
namespace {

// The profiling executor profiles the first run(s) and optimises from the shapes it saw
// (getNumProfiledRuns, 1 by default); the fusion strategy may re-specialise once more. The
// last of these runs is the one compared, after the executor has settled.
constexpr int kRuns = 3;

// The fuser settings are process-wide and read when a graph is optimised, i.e. inside a run:
// each run sets what its variant needs and puts back what it found, so libtorch-jit and
// libtorch-nnc can share a process.
class FuserSettings {
public:
  explicit FuserSettings(bool fuse)
      : can_fuse_(torch::jit::canFuseOnCPU()),
        must_use_llvm_(torch::jit::tensorexpr::getTEMustUseLLVMOnCPU()),
        texpr_(torch::jit::tensorExprFuserEnabled()),
        reductions_(torch::jit::texprReductionsEnabled()) {
    torch::jit::overrideCanFuseOnCPU(fuse);
    torch::jit::setTensorExprFuserEnabled(fuse || texpr_);
    // Debian's LibTorch has no LLVM; NNC then runs its kernels through its own IR evaluator,
    // which it only does when not told to insist on LLVM.
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = !fuse && must_use_llvm_;
    torch::jit::setTexprReductionsEnabled(fuse || reductions_);
  }
  ~FuserSettings() {
    torch::jit::overrideCanFuseOnCPU(can_fuse_);
    torch::jit::setTensorExprFuserEnabled(texpr_);
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = must_use_llvm_;
    torch::jit::setTexprReductionsEnabled(reductions_);
  }
  FuserSettings(const FuserSettings&) = delete;
  FuserSettings& operator=(const FuserSettings&) = delete;

private:
  bool can_fuse_, must_use_llvm_, texpr_, reductions_;
};

void count_nodes(const torch::jit::Block& block, JitGraphCounts& counts) {
  for (const torch::jit::Node* node : block.nodes()) {
    const std::string kind = node->kind().toQualString();
    if (kind.rfind("prim::TensorExprGroup", 0) == 0) ++counts.fusion_groups;
    if (kind == "prim::DifferentiableGraph") ++counts.differentiable_graphs;
    if (kind == "prim::TypeCheck" || kind == "prim::RequiresGradCheck" ||
        kind == "prim::TensorExprDynamicGuard")
      ++counts.type_guards;
    for (const torch::jit::Block* inner : node->blocks())
      count_nodes(*inner, counts);
    if (node->hasAttribute(torch::jit::attr::Subgraph))
      count_nodes(*node->g(torch::jit::attr::Subgraph)->block(), counts);
  }
}

class LibTorchJitBackend final : public Backend {
public:
  explicit LibTorchJitBackend(bool fuse)
      : name_(fuse ? "libtorch-nnc" : "libtorch-jit"), fuse_(fuse) {
    skip_libtorch_error_backtraces();
  }
  const std::string& name() const override { return name_; }

  Outcome run(const Program& program, const RunOptions& options) override {
    Outcome out;
    out.backend = name_;
    counts_ = {};
    if (options.tangents) { // TorchScript has no forward-mode AD
      out.status = Status::Unsupported;
      out.message = "forward-mode AD";
      return out;
    }
    // The JIT's autodiff builds first-order graphs only (create_graph falls back to eager).
    if (options.hessian) {
      out.status = Status::Unsupported;
      out.message = "second-order AD";
      return out;
    }
    try {
      const FuserSettings settings(fuse_);
      std::optional<torch::NoGradGuard> no_grad;
      if (!options.gradients) no_grad.emplace();
      const std::shared_ptr<torch::jit::CompilationUnit> unit =
          torch::jit::compile(torchscript_source(program));
      torch::jit::Function& forward = unit->get_function("forward");
      for (int run = 1; run <= kRuns; ++run)
        run_once(program, options, forward, run == kRuns ? &out : nullptr);
    } catch (const std::exception& e) {
      out.status = Status::Error;
      out.message = e.what();
      out.grads.clear();
    }
    return out;
  }

  std::string platform() const override {
    return fuse_ ? libtorch_nnc_platform() : libtorch_platform();
  }

  std::string note() const override {
    // A differentiable graph's forward is optimised, and fused, by an executor of its own that
    // LibTorch does not expose, so its fusion groups are not in this count.
    return fmt::format("optimised graph of the last run: {} fusion group(s), {} differentiable "
                       "graph(s){}, {} type guard(s)",
                       counts_.fusion_groups, counts_.differentiable_graphs,
                       counts_.differentiable_graphs > 0 && fuse_
                           ? " (fused inside, where NNC can, uncounted)"
                           : "",
                       counts_.type_guards);
  }

  JitGraphCounts counts() const { return counts_; }

private:
  // Fresh leaves every run, as a training loop feeds fresh batches: gradients never accumulate
  // across runs, and the executor sees the same types each time. Runs before the last one also
  // run backward, so that the JIT's backward graphs are exercised and settle too.
  void run_once(const Program& program, const RunOptions& options, torch::jit::Function& forward,
                Outcome* result) {
    std::vector<torch::Tensor> leaves;
    torch::jit::Stack stack;
    framework_.reset(program);
    for (const Leaf& leaf : program.leaves) {
      leaves.push_back(framework_.leaf(leaf, options.gradients && leaf.dtype == DType::F32));
      stack.emplace_back(leaves.back());
    }
    const torch::Tensor root = forward(std::move(stack)).toTupleRef().elements().at(0).toTensor();
    if (result) {
      // Before backward: the JIT's backward graphs have executors of their own, and the last
      // executed graph would then be one of those.
      if (const std::shared_ptr<torch::jit::Graph> graph = torch::jit::lastExecutedOptimizedGraph())
        count_nodes(*graph->block(), counts_);
      result->root = framework_.read(root);
    }
    if (!options.gradients) return;
    framework_.backward(root);
    if (!result) return;
    const std::vector<Reg> leaf_regs = program.leaf_registers();
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      std::optional<HostTensor> g = framework_.grad(leaves[i]);
      result->grads.push_back(g ? std::move(*g) : zero_gradient(program, leaf_regs[i]));
    }
  }

  std::string name_;
  bool fuse_;
  LibTorchFramework framework_;
  JitGraphCounts counts_;
};

} // namespace

std::unique_ptr<Backend> make_libtorch_jit_backend(bool fuse) {
  return std::make_unique<LibTorchJitBackend>(fuse);
}

JitGraphCounts jit_graph_counts(const Backend& backend) {
  const auto* jit = dynamic_cast<const LibTorchJitBackend*>(&backend);
  return jit ? jit->counts() : JitGraphCounts{};
}

} // namespace burnmark
