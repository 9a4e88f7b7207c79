// The Eigen plugin's patches (eigen_patches.h), one case per op: each workaround rewrites only
// the elements its bug affects, with the C library's correctly rounded (or, for log, sub-ulp)
// scalar function, which is what Eigen's own scalar tail computes for them, or with the limit.
// The C library has no digamma or trigamma: those patches use Eigen's double implementation
// (the same Cephes code with double's range and its own 9-or-more-term zeta loop), rounded once.
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

// Eigen's double digamma and trigamma (polygamma(1, x)), rounded once to float.
float digamma_in_double(float v) {
  return static_cast<float>(Eigen::numext::digamma(static_cast<double>(v)));
}
float trigamma_in_double(float v) {
  return static_cast<float>(Eigen::numext::polygamma(1.0, static_cast<double>(v)));
}

// grad_in[0][i] = grad_out[i] * d(x[i]) wherever `affected(x[i])`, for a unary op's backward
// `grad * d(self)`.
template <class Affected, class D>
void rewrite_grad(const Dense& x, const Dense& g, Dense& dx, Affected affected, D d) {
  for (std::size_t i = 0; i < dx.data.size(); ++i)
    if (affected(x.data[i])) dx.data[i] = g.data[i] * d(x.data[i]);
}

// eigen-addmm-alpha-zero-overflow: beta C + alpha (A @ B) with alpha = 0 is beta C + 0 · p,
// p = (A @ B)_ij, exactly beta C for a finite p (the sign of a zero from 0 · p kept), but the
// contraction's f32 accumulator of p overflows to inf first and 0 · inf = NaN (Eigen's own gemm
// applies alpha after accumulating as well). Rewritten: the NaN elements whose row of A and
// column of B are finite (p in double, exact enough for its sign, never overflows there) and
// whose beta C is not NaN itself; beta = 0 ignores C, as the forward (eigen_linalg.cpp) does.
void patch_addmm_alpha_zero(const BurnmarkStmt& s, In in, Dense& out) {
  const Dense &a = *in[1], &b = *in[2];
  const Index n = out.shape.dims[1], k = a.shape.dims[1];
  const auto beta = static_cast<float>(s.attrs.beta);
  const Tensor4 c = expand_to(*in[0], dims4(out.shape));
  for (std::size_t o = 0; o < out.data.size(); ++o) {
    if (!std::isnan(out.data[o])) continue;
    const Index i = static_cast<Index>(o) / n, j = static_cast<Index>(o) % n;
    double p = 0.0;
    bool finite = true;
    for (Index l = 0; l < k && finite; ++l) {
      const float x = a.data[static_cast<std::size_t>(i * k + l)],
                  y = b.data[static_cast<std::size_t>(l * n + j)];
      finite = std::isfinite(x) && std::isfinite(y); // else 0 · inf or NaN: NaN is right
      p += static_cast<double>(x) * y;
    }
    const float bc = beta == 0.0f ? 0.0f : beta * c.data()[o];
    if (finite && !std::isnan(bc))
      out.data[o] = bc + 0.0f * static_cast<float>(std::copysign(1.0, p));
  }
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
    // eigen-sqrt-inexact: EIGEN_FAST_MATH's packet sqrt (rsqrtps estimate, one Newton step,
    // times x) is not correctly rounded, and which inputs it misses depends on the processor's
    // rsqrtps table: sqrt(1) = 0.99999994 on Intel, sqrt(1.0000001) = 1.0000001 and sqrt(49) =
    // 7.0000005 on AMD Zen 5. Any element may be off, so every element goes through std::sqrt
    // (sqrtss, correctly rounded by IEEE 754), which is what the scalar tail computes.
    if (p.on(PatchId::SqrtInexact))
      rewrite(
          *in[0], out, [](float) { return true; }, scalar);
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
  case OpId::Exp:
    // eigen-exp-underflow: the packet exp clamps its input at about -88.38, so every x below
    // the normal range gives 2.94e-39 (exp(-3e38), exp(-100); true 0 and 3.78e-44). Below
    // log(FLT_MIN) the result is subnormal or 0: std::exp there.
    if (p.on(PatchId::ExpUnderflow))
      rewrite(
          *in[0], out, [](float v) { return v < -87.3365478515625f; },
          [](float v) { return std::exp(v); });
    return;
  case OpId::Digamma:
    // eigen-digamma-zero: Eigen returns NaN at ±0 as at its other poles; a signed zero picks a
    // side, and the one-sided limits are -inf at +0 and +inf at -0 (PyTorch's digamma(0)).
    if (p.on(PatchId::DigammaZero))
      rewrite(
          *in[0], out, [](float v) { return v == 0.0f; },
          [](float v) {
            return std::signbit(v) ? std::numeric_limits<float>::infinity()
                                   : -std::numeric_limits<float>::infinity();
          });
    // eigen-digamma-near-root: the float digamma's absolute error (1.2e-8 at 1.4616321, where
    // it returns 0) is a large relative one near the positive root x0 = 1.46163214; within
    // [1.45, 1.475] |digamma| < 0.013, so there in double.
    if (p.on(PatchId::DigammaNearRoot))
      rewrite(
          *in[0], out, [](float v) { return v >= 1.45f && v <= 1.475f; }, digamma_in_double);
    return;
  case OpId::Floor:
  case OpId::Ceil:
  case OpId::Round: {
    // eigen-rounding-negzero: without SSE4.1 the packet floor / ceil / rint lose the sign of a
    // zero result (floor(-0), ceil(-0.5), rint(-0) = +0; IEEE 754 and C99 F.9.6: -0). Those
    // results come from -1 < x <= -0 only: through std::floor / ceil / nearbyint there.
    if (!p.on(PatchId::RoundingNegzero)) return;
    const auto op = static_cast<OpId>(s.op);
    rewrite(
        *in[0], out, [](float v) { return std::signbit(v) && v > -1.0f; },
        [op](float v) {
          return op == OpId::Floor  ? std::floor(v)
                 : op == OpId::Ceil ? std::ceil(v)
                                    : std::nearbyint(v);
        });
    return;
  }
  case OpId::Maximum:
  case OpId::Minimum: {
    // eigen-maximum-zero-tie: on the tie +0 == -0 the packet pmax / pmin return the second
    // operand, the scalar path the first. IEEE 754-2019: maximum(±0, ∓0) = +0, minimum -0.
    if (!p.on(PatchId::MaximumZeroTie)) return;
    const bool max = static_cast<OpId>(s.op) == OpId::Maximum;
    const Dims to = dims4(out.shape);
    const Tensor4 a = expand_to(*in[0], to), b = expand_to(*in[1], to);
    for (std::size_t i = 0; i < out.data.size(); ++i) {
      const float x = a.data()[i], y = b.data()[i];
      if (x != 0.0f || y != 0.0f) continue;
      const bool negative =
          max ? std::signbit(x) && std::signbit(y) : std::signbit(x) || std::signbit(y);
      out.data[i] = negative ? -0.0f : 0.0f;
    }
    return;
  }
  case OpId::Addmm:
    // eigen-addmm-alpha-zero-overflow (patch_addmm_alpha_zero).
    if (p.on(PatchId::AddmmAlphaZeroOverflow) && s.attrs.alpha == 0.0)
      patch_addmm_alpha_zero(s, in, out);
    return;
  default: return;
  }
}

void apply_backward_patches(const Patches& p, const BurnmarkStmt& s, In in, const Dense& g,
                            GradIn grad_in) {
  if (!p.any()) return;
  using plugin::OpId;
  switch (static_cast<OpId>(s.op)) {
  case OpId::Lgamma:
    // eigen-digamma-zero: lgamma's gradient grad * digamma(±0) is NaN through Eigen's digamma;
    // the one-sided limits are -inf (+0) and +inf (-0).
    if (p.on(PatchId::DigammaZero))
      rewrite_grad(
          *in[0], g, *grad_in[0], [](float v) { return v == 0.0f; },
          [](float v) {
            return std::signbit(v) ? std::numeric_limits<float>::infinity()
                                   : -std::numeric_limits<float>::infinity();
          });
    return;
  case OpId::Digamma: {
    // digamma's gradient grad * polygamma(1, x), each case one bug of Eigen's float zeta.
    const Dense& x = *in[0];
    Dense& dx = *grad_in[0];
    constexpr float inf = std::numeric_limits<float>::infinity();
    // eigen-trigamma-inf: zeta(2, inf)'s Euler-Maclaurin tail multiplies inf^-2 = 0 by inf,
    // NaN; trigamma(x) ~ 1/x, so the limit is 0.
    if (p.on(PatchId::TrigammaInf))
      rewrite_grad(
          x, g, dx, [](float v) { return v == inf; }, [](float) { return 0.0f; });
    // eigen-trigamma-neg-inf: the pole test q == floor(q) takes -inf for a non-positive
    // integer and returns +inf; trigamma oscillates between about pi^2 and +inf as x -> -inf,
    // so there is no limit: NaN, as for sin(inf).
    if (p.on(PatchId::TrigammaNegInf))
      rewrite_grad(
          x, g, dx, [](float v) { return v == -inf; },
          [](float) { return std::numeric_limits<float>::quiet_NaN(); });
    // eigen-trigamma-negative: the float zeta stops after 9 terms, so for q < 0 its asymptotic
    // tail starts at a small or negative q + 9. Eigen's double zeta sums until q + n > 9: every
    // finite negative non-integer x there (the poles, negative integers, are left to Eigen).
    if (p.on(PatchId::TrigammaNegative))
      rewrite_grad(
          x, g, dx, [](float v) { return v < 0.0f && v > -inf && v != std::floor(v); },
          trigamma_in_double);
    // eigen-trigamma-huge: zeta's terms pow(q, -2) underflow in float from about q = 1e19
    // (0 beyond 2.6e22), losing the 1/q term; in double they stay normal up to q = 1e154.
    if (p.on(PatchId::TrigammaHuge))
      rewrite_grad(
          x, g, dx, [](float v) { return v >= 1e18f && v < inf; }, trigamma_in_double);
    return;
  }
  default: return;
  }
}

} // namespace burnmark::eigen
