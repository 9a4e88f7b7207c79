// The oneDNN plugin's fix-and-continue patches (docs/patches.md): each one a small, local
// workaround for one known bug of oneDNN 2.6 (bugs.md, "oneDNN 2.6"), named by its bugs.md id as
// corpus/patches.txt lists it. Off unless the host activates them (plugin.h's set_patches,
// BURNMARK_PATCHES); with none active the plugin computes exactly what oneDNN computes.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "burnmark/plugin/patch_set.h"

#include "burnmark/plugin/plugin_walk.h"

namespace burnmark::onednn {

// The patches this plugin knows, in kPatchIds order.
enum class PatchId : std::size_t {
  ExpNan,
  ReluNan,
  ClampNan,
  ClampMinNan,
  HardtanhNan,
  MaximumNanFirst,
  AmaxDropsNan,
  SoftmaxNanRow,
  LogSoftmaxInfRow,
  LogSubnormal,
  ActivationInfinities,
  ReductionMaxInit,
  PowGradInf,
  PowHalfNegzero,
  PowNegzero,
  EluGradSubnormal,
  ClampMaxGradNegInf,
  SoftReluCancellation,
  GeluErfCancellation,
  GeluTanhCancellation,
  EluExpm1,
  MishNegativeTail,
  NormPowersOverflow,
  Pow2GradOverflow,
  LogOne,
  LogSoftmaxGradCancellation,
  AddmmAlphaZeroOverflow,
  ExpUnderflowEarly,
};
inline constexpr std::array<std::string_view, 28> kPatchIds = {
    "onednn-exp-nan",
    "onednn-relu-nan",
    "onednn-clamp-nan",
    "onednn-clamp-min-nan",
    "onednn-hardtanh-nan",
    "onednn-maximum-nan-first",
    "onednn-amax-drops-nan",
    "onednn-softmax-nan-row",
    "onednn-log-softmax-inf-row",
    "onednn-log-subnormal",
    "onednn-activation-infinities",
    "onednn-reduction-max-init",
    "onednn-pow-grad-inf",
    "onednn-pow-half-negzero",
    "onednn-pow-negzero",
    "onednn-elu-grad-subnormal",
    "onednn-clamp-max-grad-neg-inf",
    "onednn-soft-relu-cancellation",
    "onednn-gelu-erf-cancellation",
    "onednn-gelu-tanh-cancellation",
    "onednn-elu-expm1",
    "onednn-mish-negative-tail",
    "onednn-norm-powers-overflow",
    "onednn-pow2-grad-overflow",
    "onednn-log-one",
    "onednn-log-softmax-grad-cancellation",
    "onednn-addmm-alpha-zero-overflow",
    "onednn-exp-underflow-early",
};

using Patches = plugin::PatchSet<PatchId, kPatchIds>;

using PatchIn = std::span<const plugin::Dense<float>* const>;
using PatchGradIn = std::span<plugin::Dense<float>* const>;

// After oneDNN's forward primitive for `s` wrote `out`: rewrites the elements an active patch
// covers. A backward that reads the result (exp, softmax, the reductions' loops) then reads the
// corrected one.
void patch_forward(const Patches& patches, const BurnmarkStmt& s, PatchIn in,
                   plugin::Dense<float>& out);

// After oneDNN's backward for `s` wrote `grad_in`: rewrites the gradient elements whose backward
// formula has its own bug (an eltwise_backward that reads only the input, not the corrected
// result). Unary ops with grad_in[0], in[0], out and grad_out of one shape.
void patch_backward(const Patches& patches, const BurnmarkStmt& s, PatchIn in,
                    const plugin::Dense<float>& out, const plugin::Dense<float>& grad_out,
                    PatchGradIn grad_in);

} // namespace burnmark::onednn
