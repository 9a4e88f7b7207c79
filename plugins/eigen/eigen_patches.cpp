// The Eigen plugin's patches (eigen_patches.h), one case per op: each workaround rewrites only
// the elements its bug affects, with the C library's correctly rounded (or, for log, sub-ulp)
// scalar function, which is what Eigen's own scalar tail computes for them.
#include "eigen_patches.h"

#include <cmath>
#include <limits>

namespace burnmark::eigen {
namespace {

bool is_subnormal(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL;
}

// Rewrites out[i] = f(x[i]) wherever `affected(x[i])`; the op is elementwise and unary, so `x`
// and `out` have the same element count.
template <class Affected, class F>
void rewrite(const Dense& x, Dense& out, Affected affected, F f) {
  for (std::size_t i = 0; i < out.data.size(); ++i)
    if (affected(x.data[i])) out.data[i] = f(x.data[i]);
}

} // namespace

void apply_patches(const Patches& p, const BurnmarkStmt& s, In in, Dense& out) {
  if (!p.any()) return;
  using plugin::OpId;
  switch (static_cast<OpId>(s.op)) {
  case OpId::Sqrt: {
    const auto scalar = [](float v) { return std::sqrt(v); };
    // eigen-sqrt-negzero: the packet sqrt returns +0 for -0; IEEE 754 requires sqrt(-0) = -0
    // (and so the gradient -inf).
    if (p.on(PatchId::SqrtNegzero))
      rewrite(
          *in[0], out, [](float v) { return v == 0.0f && std::signbit(v); }, scalar);
    // eigen-sqrt-inf: the packet sqrt (rsqrt estimate times x) returns NaN for +inf.
    if (p.on(PatchId::SqrtInf))
      rewrite(
          *in[0], out, [](float v) { return v == std::numeric_limits<float>::infinity(); }, scalar);
    // eigen-sqrt-subnormal: the packet sqrt flushes subnormals, sqrt(1e-40) = 0 and
    // sqrt(-1e-40) = +inf (true: 1e-20 and NaN).
    if (p.on(PatchId::SqrtSubnormal)) rewrite(*in[0], out, is_subnormal, scalar);
    return;
  }
  case OpId::Rsqrt:
    // eigen-rsqrt-subnormal: EIGEN_FAST_MATH's prsqrt keeps the raw rsqrtps estimate below
    // FLT_MIN, which reads a subnormal as a zero of its sign (+inf, -inf; true 1.00000266e20 and
    // NaN). 1 / sqrt in double, rounded once, is the correctly rounded rsqrt here.
    if (p.on(PatchId::RsqrtSubnormal))
      rewrite(*in[0], out, is_subnormal,
              [](float v) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(v))); });
    return;
  case OpId::Log:
  case OpId::Log2:
    // eigen-log-subnormal: the packet log (and log2) reads a subnormal as FLT_MIN, log(1e-40) =
    // -87.34 (true -92.10), log2(1e-40) = -126. Computed in double, rounded once.
    if (p.on(PatchId::LogSubnormal)) {
      const bool two = static_cast<OpId>(s.op) == OpId::Log2;
      rewrite(*in[0], out, is_subnormal, [two](float v) {
        const double x = static_cast<double>(v);
        return static_cast<float>(two ? std::log2(x) : std::log(x));
      });
    }
    return;
  default: return;
  }
}

} // namespace burnmark::eigen
