// The onednn plugin's kernels (the Kernels of plugin_walk.h): each op's forward and backward
// built from oneDNN primitives (onednn_kernels.cpp), then the fix-and-continue patches the host
// turned on (onednn_patches.h).
#pragma once

#include <span>
#include <string_view>

#include "burnmark/plugin/plugin_walk.h"
#include "dnnl_ops.h"
#include "onednn_patches.h"

namespace burnmark::onednn {

using burnmark::plugin::Dense;

// Registers are floats in every dtype: in a bf16 or f16 program they hold values of that dtype
// (the walk's leaves are, and every primitive writes 16-bit memory), so the walk's rounding of
// each result is exact; only the reductions' backward loops (row_grads.h) compute in f32 and
// are rounded there, once.
struct OnednnKernels {
  using Scalar = float;
  using In = std::span<const Dense<float>* const>;
  using GradIn = std::span<Dense<float>* const>;

  void forward(const BurnmarkStmt& s, In in, Dense<float>& out);
  void backward(const BurnmarkStmt& s, In in, const Dense<float>& out, const Dense<float>& g,
                GradIn gin);

  // Fix-and-continue patches (onednn_patches.h), set by the host through set_patches.
  bool enable_patch(std::string_view id) { return patches_.enable(id); }
  void clear_patches() { patches_.clear(); }

private:
  template <class F> void guarded(const BurnmarkStmt& s, F&& f);
  void forward_op(const BurnmarkStmt& s, In in, Dense<float>& out);
  void backward_op(const BurnmarkStmt& s, In in, const Dense<float>& out, const Dense<float>& g,
                   GradIn gin);
  void reduce_forward(const BurnmarkStmt& s, const Dense<float>& x, Dense<float>& out);
  void reduce_backward(const BurnmarkStmt& s, const Dense<float>& x, const Dense<float>& out,
                       const Dense<float>& g, Dense<float>& dx);
  void sum_to(ConstView g, Dense<float>& grad);
  void share_to(ConstView base, const Dense<float>& lhs, const Dense<float>& rhs,
                const Dense<float>& g, Dense<float>& t, Dense<float>& grad);
  Dense<float> negated(const Dense<float>& g);
  void matmul_grad(ConstView a, bool ta, ConstView b, bool tb, const BurnmarkShape& out,
                   Dense<float>& grad);

  DnnlOps ops_;
  Patches patches_;
};

} // namespace burnmark::onednn
