// The Eigen plugin's fix-and-continue patches (docs/patches.md): each one a small, local
// workaround for one known bug of Eigen 3.4 (bugs.md, "Eigen 3.4"), named by its bugs.md id as
// corpus/patches.txt lists it. Off unless the host activates them (plugin.h's set_patches,
// BURNMARK_PATCHES); with none active the plugin computes exactly what Eigen computes.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "burnmark/plugin/patch_set.h"

#include "eigen_tensor.h"

namespace burnmark::eigen {

// The patches this plugin knows, in kPatchIds order.
enum class PatchId : std::size_t {
  SqrtNegzero,
  SqrtInf,
  SqrtSubnormal,
  RsqrtSubnormal,
  LogSubnormal,
  ExpUnderflow,
  DigammaZero,
  DigammaNearRoot,
  TrigammaInf,
  TrigammaNegInf,
  TrigammaNegative,
  TrigammaHuge,
  RoundingNegzero,
  MaximumZeroTie,
  AddmmAlphaZeroOverflow,
  SqrtInexact,
};
inline constexpr std::array<std::string_view, 16> kPatchIds = {
    "eigen-sqrt-negzero",     "eigen-sqrt-inf",          "eigen-sqrt-subnormal",
    "eigen-rsqrt-subnormal",  "eigen-log-subnormal",     "eigen-exp-underflow",
    "eigen-digamma-zero",     "eigen-digamma-near-root", "eigen-trigamma-inf",
    "eigen-trigamma-neg-inf", "eigen-trigamma-negative", "eigen-trigamma-huge",
    "eigen-rounding-negzero", "eigen-maximum-zero-tie",  "eigen-addmm-alpha-zero-overflow",
    "eigen-sqrt-inexact"};

using Patches = plugin::PatchSet<PatchId, kPatchIds>;

// After Eigen's forward kernel for `s` wrote `out`: recomputes, through a scalar std:: path, the
// elements an active patch covers. The backward of most patched ops reads the corrected result
// (exp, sqrt, rsqrt) or only its input (log, log2), so it needs no patch of its own.
void apply_patches(const Patches& patches, const BurnmarkStmt& s, In in, Dense& out);

// After Eigen's backward kernel for `s` wrote `grad_in`: the same for the patches whose bug is
// in a backward formula (lgamma's digamma, digamma's polygamma(1, x)).
void apply_backward_patches(const Patches& patches, const BurnmarkStmt& s, In in,
                            const Dense& grad_out, GradIn grad_in);

} // namespace burnmark::eigen
