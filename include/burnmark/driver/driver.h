// The one SSA walk every in-process backend shares: leaves, aliases, instructions, backward and
// gradient read-out. A backend only says how to do each step (the Framework concept); the order
// of steps, the alias protocol and the zeros-for-absent-gradient rule live here, once.
#pragma once

#include <concepts>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "burnmark/driver/last_words.h"
#include "burnmark/driver/outcome.h"
#include "burnmark/ir/program.h"

namespace burnmark {

// F::Tensor is a cheap handle (copying it must not copy data nor detach it from autograd).
template <class F>
concept Framework = requires(F f, const typename F::Tensor& t, const Leaf& leaf, const Instr& instr,
                             std::span<const typename F::Tensor* const> operands,
                             const Shape& shape, const Program& program) {
  typename F::Tensor;
  {f.reset(program)}; // forget the previous program; this one's leaves come next
  { f.leaf(leaf, bool{}) } -> std::same_as<typename F::Tensor>;            // bool: track gradient
  { f.alias(t) } -> std::same_as<typename F::Tensor>;                      // same node, not a copy
  { f.apply(instr, operands, shape) } -> std::same_as<typename F::Tensor>; // shape: inferred result
  {f.backward(t)};                                          // seeded with ones of t's shape
  { f.grad(t) } -> std::same_as<std::optional<HostTensor>>; // nullopt: no gradient reached it
  { f.read(t) } -> std::same_as<HostTensor>;
};

// A framework with forward-mode AD also has dual(t, tangent) -> Tensor (t carrying that tangent;
// the driver keeps t itself for reading the gradient) and tangent(t) -> HostTensor (zeros when
// no tangent reached t). The driver reads the root's tangent before backward().
template <class F>
concept ForwardModeFramework = Framework<F> &&
    requires(F f, const typename F::Tensor& t, const HostTensor& tangent) {
  { f.dual(t, tangent) } -> std::same_as<typename F::Tensor>;
  { f.tangent(t) } -> std::same_as<HostTensor>;
};

// A framework with second-order AD also has hessian_vector(root, leaves, directions): per leaf
// (the handles leaf() returned, in leaf order) the gradient of <grad sum(root), v> with v the
// directions (one per leaf, zeros for index leaves), i.e. H·v; nullopt where it is zero because
// nothing reached the leaf. The driver calls it before backward(), which must still work after.
template <class F>
concept SecondOrderFramework = Framework<F> &&
    requires(F f, const typename F::Tensor& t, std::span<const typename F::Tensor> leaves,
             std::span<const HostTensor> directions) {
  {
    f.hessian_vector(t, leaves, directions)
    } -> std::same_as<std::vector<std::optional<HostTensor>>>;
};

// The direction every backend differentiates a float leaf along in forward mode: the same for
// all of them, nonzero everywhere (a zero tangent would hide a wrong derivative there) and exact
// in every float dtype. Leaf k's element i walks a table of eight magnitudes and both signs, so
// neighbouring elements and leaves differ.
inline HostTensor leaf_tangent(const Shape& shape, std::size_t leaf_index) {
  static constexpr double kSteps[] = {1.0, -0.5, 2.0, -1.5, 0.75, -1.0, 0.25, -2.0};
  HostTensor t{shape, std::vector<double>(static_cast<std::size_t>(shape.numel())), {}};
  for (std::size_t i = 0; i < t.values.size(); ++i)
    t.values[i] = kSteps[(i * 3 + leaf_index * 5) % 8];
  return t;
}

// An unreached leaf has no gradient in any framework; its gradient is zero. For every backend
// that reads gradients out itself (the walk below, the JIT backends).
inline HostTensor zero_gradient(const Program& program, Reg leaf) {
  const Shape& shape = program.shape_of(leaf);
  return HostTensor{shape, std::vector<double>(static_cast<std::size_t>(shape.numel()), 0.0), {}};
}

// `registers`, when given, receives every register's handle after the run (valid until the
// framework's next reset), for a backend that reads more than the outcome out of its framework.
template <Framework F>
Outcome run_program(F& framework, const Program& program, const RunOptions& options,
                    std::vector<typename F::Tensor>* registers = nullptr) {
  Outcome out;
  if (options.tangents && !ForwardModeFramework<F>) {
    out.status = Status::Unsupported;
    out.message = "forward-mode AD";
    return out;
  }
  if (options.hessian && !SecondOrderFramework<F>) {
    out.status = Status::Unsupported;
    out.message = "second-order AD";
    return out;
  }
  try {
    framework.reset(program);
    std::vector<typename F::Tensor> regs;
    regs.reserve(program.num_registers());
    // What each leaf statement created, before any tangent: gradients are read from these.
    std::vector<typename F::Tensor> leaves;
    leaves.reserve(program.leaves.size());
    std::vector<const typename F::Tensor*> operands;
    for (const Stmt& s : program.stmts) {
      switch (s.kind) {
      case StmtKind::Leaf: {
        // Index leaves are never differentiated; their gradient reads as zeros.
        const Leaf& leaf = program.leaves[static_cast<std::size_t>(s.leaf)];
        const bool differentiable = leaf.dtype == DType::F32;
        leaves.push_back(framework.leaf(leaf, options.gradients && differentiable));
        regs.push_back(leaves.back());
        if constexpr (ForwardModeFramework<F>)
          if (options.tangents && differentiable)
            regs.back() = framework.dual(
                leaves.back(), leaf_tangent(leaf.shape, static_cast<std::size_t>(s.leaf)));
        break;
      }
      case StmtKind::Alias:
        regs.push_back(framework.alias(regs[static_cast<std::size_t>(s.source)]));
        break;
      case StmtKind::Op:
        operands.clear();
        for (Reg r : s.instr.operands)
          operands.push_back(&regs[static_cast<std::size_t>(r)]);
        regs.push_back(framework.apply(s.instr, operands, s.shape));
        break;
      }
    }
    const auto& root = regs[static_cast<std::size_t>(program.root)];
    if constexpr (requires { framework.error_possible(); })
      out.error_possible = framework.error_possible();
    out.root = framework.read(root);
    if constexpr (ForwardModeFramework<F>)
      if (options.tangents) {
        out.tangent = framework.tangent(root);
        // Forward mode may find an error possible where the values did not (slogdet of a
        // singular matrix: its derivative does not exist).
        if constexpr (requires { framework.error_possible(); })
          out.error_possible = out.error_possible || framework.error_possible();
      }
    if constexpr (SecondOrderFramework<F>)
      if (options.hessian) {
        const std::vector<Reg> leaf_regs = program.leaf_registers();
        std::vector<HostTensor> directions;
        directions.reserve(leaf_regs.size());
        for (std::size_t k = 0; k < leaf_regs.size(); ++k) {
          const Leaf& leaf = program.leaves[k];
          directions.push_back(leaf.dtype == DType::F32 ? leaf_tangent(leaf.shape, k)
                                                        : zero_gradient(program, leaf_regs[k]));
        }
        std::vector<std::optional<HostTensor>> hv =
            framework.hessian_vector(root, leaves, directions);
        for (std::size_t k = 0; k < leaf_regs.size(); ++k)
          out.hvp.push_back(hv[k] ? std::move(*hv[k]) : zero_gradient(program, leaf_regs[k]));
        // Second order may find an error possible where first order did not (slogdet of a
        // singular matrix: its second derivative does not exist).
        if constexpr (requires { framework.error_possible(); })
          out.error_possible = framework.error_possible();
      }
    if (options.gradients) {
      framework.backward(root);
      std::size_t leaf = 0;
      for (Reg r : program.leaf_registers()) {
        std::optional<HostTensor> g = framework.grad(leaves[leaf++]);
        out.grads.push_back(g ? std::move(*g) : zero_gradient(program, r));
      }
    }
    if (registers != nullptr) *registers = std::move(regs);
  } catch (const std::exception& e) {
    out.status = Status::Error;
    out.message = e.what();
    out.grads.clear();
    out.hvp.clear();
  }
  return out;
}

// A backend as the oracle sees it: something that runs a whole program. In-process frameworks
// get this from FrameworkBackend; plugins implement it directly, since they take the whole
// program at once across the C ABI.
class Backend {
public:
  virtual ~Backend() = default;
  virtual const std::string& name() const = 0;
  virtual Outcome run(const Program& program, const RunOptions& options) = 0;
  // What the last run did that its values do not show (which path or kernels it took), for
  // `burnmark run`; empty when there is nothing to say.
  virtual std::string note() const { return {}; }
  // Which kernels this backend's library chose on this processor: its version and the kernel
  // set it dispatched to ("LibTorch 1.13.1 AVX2", oneDNN's ISA, Eigen's packets and the CPU
  // vendor where those use approximate instructions). A library's rounding can differ from one
  // platform to another, so a behaviour a test or a bugs.md row pins holds on the platforms it
  // was measured on. Empty for a backend whose results do not depend on the processor (the
  // reference). A child's is known once it has started (after its first run).
  virtual std::string platform() const { return {}; }
  // The fix-and-continue patches (docs/patches.md) this backend applies, by corpus/patches.txt
  // id: known bugs it works around at their op, so programs composing that op stay comparable.
  // Empty for an unpatched backend (the default).
  virtual std::vector<std::string> active_patches() const { return {}; }
  // The ops this backend runs, when it runs only some (a plugin's op list: programs with any
  // other op are Unsupported); nullopt when it runs every op. BURNMARK_OPS=auto draws from these.
  virtual std::optional<std::vector<Op>> supported_ops() const { return std::nullopt; }
  // For triage, from one run with gradients: per register, the gradient of sum(root) with
  // respect to that register's values (what flows into it from everything downstream), nullopt
  // where none reaches it; empty when the backend cannot say, the default (only the in-process
  // reference reads its intermediate gradients).
  virtual std::vector<std::optional<std::vector<double>>> register_gradients(const Program&) {
    return {};
  }
};

// Every caller runs a backend through this, so that a process dying inside it can name it.
inline Outcome run_backend(Backend& backend, const Program& program, const RunOptions& options) {
  const RunningBackend running(backend.name());
  return backend.run(program, options);
}

template <Framework F> class FrameworkBackend final : public Backend {
public:
  template <class... Args>
  explicit FrameworkBackend(std::string name, Args&&... args)
      : name_(std::move(name)), framework_(std::forward<Args>(args)...) {}
  const std::string& name() const override { return name_; }
  Outcome run(const Program& program, const RunOptions& options) override {
    Outcome out = run_program(framework_, program, options);
    out.backend = name_;
    return out;
  }

private:
  std::string name_;
  F framework_;
};

} // namespace burnmark
