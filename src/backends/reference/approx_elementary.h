// Scalar forward and backward rules of the elementary unary ops: log1p, expm1, log2, log10, exp2,
// rsqrt, reciprocal, square, sign, sgn, the rounding ops (floor, ceil, round, trunc, frac) and
// clamp_min / clamp_max. Same value-and-bound model as approx.h; docs/conventions_elementary.md
// lists every rule, its derivatives.yaml source and what LibTorch 1.13.1 does differently.
#pragma once

#include <cmath>
#include <limits>
#include <numbers>

#include "approx.h"
#include "burnmark/ir/op.h"

namespace burnmark::ref {

namespace elementary_detail {

inline constexpr Approx kOne{1.0, 0.0};
inline constexpr Approx kZero{0.0, 0.0};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Sleef's u10 kernels (log1pf, expm1f, log2f, log10f, exp2f) are within 1 ulp; like exp and log
// in approx.h they get 4 u. They underflow gradually (measured: exp2 on [-151, -125], log1p and
// expm1 of subnormals land within one subnormal step), so unlike finish_transcendental no flush
// to zero is excused: a library that flushes breaks IEEE gradual underflow.
inline constexpr double kLibmUlps = kTranscendentalUlps;
// rsqrt has no f32 implementation that everyone uses: LibTorch computes 1 / sqrt(x) with two
// roundings (within 2 u of the exact value), others a correctly rounded one (within u) or a
// refined hardware estimate. Two of them may differ by 3 u, so not exact even on exact inputs.
inline constexpr double kRsqrtUlps = 4;

// The constants derivatives.yaml multiplies by: a double Scalar, cast to f32 in f32 programs and
// to f32 or the dtype in reduced ones (1.13.1's bf16 log2 gradient rounds ln 2 to bf16).
inline constexpr double kLn2 = 0.6931471805599453;
inline constexpr double kLn10 = 2.3025850929940456;

// finish() charges the ulps at |z|; a library evaluating at the far end of the interval rounds
// a value up to |z| + e, so the propagated part gets its share too (measured: expm1 and exp2
// across a wide interval land just beyond a bound without it).
inline double far_end(double e, double ulps) {
  return e + ulps * storage.u * e;
}
// Finish for the libm-backed ops: ulps allowance, overflow reach, non-finite results exact.
inline Approx finish_libm(double exact_value, double e) {
  return finish(exact_value, far_end(e, kLibmUlps), kLibmUlps);
}
// For the correctly rounded ops built from approx.h's mul and div, whose bound is the exact
// image of the interval plus the rounding at z only.
inline Approx with_far_rounding(Approx a) {
  if (!indeterminate(a)) a.e = far_end(a.e, kExactUlps);
  return a;
}

// The ends of x ± e, never inside the exact interval: x ± e rounds in double and may land on a
// jump the exact end misses (an integer x with e below its double ulp), so an end whose rounding
// went inward (TwoSum gives the error exactly) moves one double ulp outward. Step functions
// evaluated there never under-report a jump in reach.
inline double sum_rounded_away(double a, double b, double toward) {
  const double s = a + b;
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  return (toward < 0 ? err < 0 : err > 0) ? std::nextafter(s, toward) : s;
}
inline double lower_end(Approx x) {
  return sum_rounded_away(x.v, -x.e, -kInf);
}
inline double upper_end(Approx x) {
  return sum_rounded_away(x.v, x.e, kInf);
}

// For a nondecreasing step function f (floor, ceil, round, trunc, sign): its exact image of the
// input interval, as distance from z = f(x). It is 0 while no jump is in reach and the size of
// the jumps in reach otherwise, so the bound stays finite: a consumer that cannot take either
// value (reciprocal of floor(x) that may be 0) becomes indeterminate through its own rule.
template <class F> double step_spread(F f, Approx x, double z) {
  if (x.e == 0) return 0.0;
  return std::max(f(upper_end(x)) - z, z - f(lower_end(x)));
}

// The rounding ops return exact integers (or the input itself from 2^23 on), so with an exact
// input every library agrees bit for bit: no ulps term.
template <class F> Approx rounding(Approx x, F f) {
  const double z = f(x.v);
  if (indeterminate(x)) return {z, kInf};
  if (!std::isfinite(z)) return {z, 0.0};
  return {z, step_spread(f, x, z)};
}

inline double rsqrt_exact(double x) {
  return 1.0 / std::sqrt(x);
}

// torch.frac's documented formula, x - floor(|x|) * sgn(x), evaluated in IEEE arithmetic:
// frac(-0) = -0 - (+0 * 0) = -0 and frac(±inf) = NaN. Every step is exact in double.
inline double frac_exact(double x) {
  return x - std::floor(std::fabs(x)) * sign_of(x);
}

} // namespace elementary_detail

// ---- logarithms and exponentials ----

// log1p: -inf at -1, NaN below. Indeterminate when the interval reaches -1.
inline Approx log1p_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = std::log1p(x.v);
  if (indeterminate(x) || (x.e > 0 && x.v - x.e <= -1)) return unknown(z);
  // log1p is concave: the far side is below, log1p(x) - log1p(x - e) = -log1p(-e / (1 + x)).
  return finish_libm(z, x.e == 0 ? 0.0 : neg_log1p_neg_bound(x.e / (1 + x.v)));
}
// log1p_backward (F): grad / (self + 1), so finite 1/(x+1) even below -1 where the value is NaN.
inline Approx log1p_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace elementary_detail;
  return div(g, add(x, kOne));
}

// expm1: overflows f32 above 88.7228; -1 at -inf.
inline Approx expm1_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = std::expm1(x.v);
  if (indeterminate(x) || overflow_uncertain(z, x, storage.exp_overflow_input)) return unknown(z);
  // Convex and increasing: the far side is above, exp(x) * expm1(e).
  return finish_libm(z, scaled(std::exp(x.v), expm1_bound(x.e)));
}
// D: grad * (result + 1). Where the result has rounded to -1 (x < -17.3) the gradient is
// exactly 0 although exp(x) is not: that is the formula, one rounding per step.
inline Approx expm1_backward(Approx g, Approx, Approx y, const Attrs&) {
  using namespace elementary_detail;
  return mul(g, add(y, kOne));
}

// log2 and log10: -inf at ±0, NaN below; subnormal inputs are ordinary numbers to the double
// log (log2(1e-40) = -132.877). Indeterminate where the interval reaches 0.
inline Approx log2_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = std::log2(x.v);
  if (indeterminate(x) || (x.e > 0 && x.v - x.e <= 0)) return unknown(z);
  return finish_libm(z, x.e == 0 ? 0.0 : neg_log1p_neg_bound(x.e / x.v) / std::numbers::ln2);
}
// D: grad / (self * 0.6931471805599453), the constant rounded to f32 first; the product of a
// subnormal self underflows further, so log2'(1e-40) = inf.
inline Approx log2_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace elementary_detail;
  return div(g, mul(x, scalar_operand(kLn2)));
}

inline Approx log10_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = std::log10(x.v);
  if (indeterminate(x) || (x.e > 0 && x.v - x.e <= 0)) return unknown(z);
  return finish_libm(z, x.e == 0 ? 0.0 : neg_log1p_neg_bound(x.e / x.v) / std::numbers::ln10);
}
// D: grad / (self * 2.3025850929940456).
inline Approx log10_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace elementary_detail;
  return div(g, mul(x, scalar_operand(kLn10)));
}

// exp2: inf from 128 on; gradual underflow below -126 (2^-149 at -149, 0 at -150, the tie
// rounding to even).
inline Approx exp2_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = std::exp2(x.v);
  if (indeterminate(x) || overflow_uncertain(z, x, storage.exp2_overflow_input)) return unknown(z);
  // An exact integer input has an exact power of two for result, which exp2 kernels return (the
  // scaling step is exact; measured for LibTorch at 128, -126, -149, -150). Without this the
  // ulps allowance would make exp2(128) = inf indeterminate.
  if (x.e == 0 && x.v == std::nearbyint(x.v)) return finish(z, 0.0, 0.0);
  return finish_libm(z, scaled(z, expm1_bound(x.e * std::numbers::ln2)));
}
// D: grad * result * M_LN2, left to right: grad * result may overflow where result * ln2 would
// not (exp2(127.5) with grad 2 gives inf).
inline Approx exp2_backward(Approx g, Approx, Approx y, const Attrs&) {
  using namespace elementary_detail;
  return mul(mul(g, y), scalar_operand(kLn2));
}

// ---- powers ----

// rsqrt = 1 / sqrt(x) as documented: +inf at +0, -inf at -0 (1 / -0), +0 at inf, NaN below 0.
// The value is the correctly rounded one; kRsqrtUlps covers the two-rounding implementations.
inline Approx rsqrt_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = rsqrt_exact(x.v);
  if (indeterminate(x) || (x.e > 0 && x.v - x.e <= 0)) return unknown(z); // pole at 0
  // Decreasing and convex: the far side is below.
  return finish(z, x.e == 0 ? 0.0 : far_end(rsqrt_exact(x.v - x.e) - z, kRsqrtUlps), kRsqrtUlps);
}
// D: -0.5 * grad * result.pow(3), left to right, pow(3) through the x*x*x fast path. At +0:
// -0.5 * inf^3 = -inf; with grad 0 there, NaN.
inline Approx rsqrt_backward(Approx g, Approx, Approx y, const Attrs&) {
  return mul(mul({-0.5, 0.0}, g), pow(y, 3.0));
}

// reciprocal: a correctly rounded division, so exact inputs give exact results; subnormals
// below 2^-128 overflow to inf, values above 2^126 come out subnormal.
inline Approx reciprocal_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  return with_far_rounding(div(kOne, x));
}
// D: -grad * (result * result): result * result overflows first (reciprocal(1e-20) with grad
// 1e-30 gives -inf).
// The mathematics fixes -g / x^2, not how to round it: -(g * y) * y or -g / (x * x) (oneDNN's)
// are as correct. With exact g and y, mul's bounds are 0 (D's rounding sequence gives the same
// bits everywhere), but another sequence need not: D's value is -g/x^2 (1 + 2 d0 + d1 + d2),
// y = (1/x)(1 + d0), and -g / (x * x) is -g/x^2 (1 + d3 + d4), |d_i| <= u, so the two lie up to
// 5u |z| apart; 3 kExactUlps = 6u covers it (reciprocal(x) * x's gradient at 0.75 is -2^-23 by
// D and 0 by oneDNN: ReferenceErrorBounds.ReciprocalGradientCoversAnyRoundingOrder).
inline Approx reciprocal_backward(Approx g, Approx, Approx y, const Attrs&) {
  Approx r = mul(neg(g), mul(y, y));
  // Where the exact -g y^2 is below a quarter of the smallest subnormal, every order rounds it
  // to zero of the same sign: nothing to allow, and the zero stays exact (a NaN that D's next
  // step makes of it is then judged: libtorch-jit-reciprocal-grad-association).
  const double exact_value = std::fabs(g.v * y.v * y.v);
  if (exact(g) && exact(y) && exact(r) && std::isfinite(r.v) &&
      !(exact_value < 0.25 * storage.underflow_step))
    r.e = 3 * kExactUlps * (storage.u * std::fabs(r.v) + storage.underflow_step);
  return r;
}

// square is pow(self, 2) (CompositeImplicitAutograd), whose fast path is x * x: overflows from
// 1.8446744e19, underflows to 0 below 2^-75 / sqrt(2).
inline Approx square_forward(Approx x, const Attrs&) {
  return elementary_detail::with_far_rounding(mul(x, x));
}
// pow_backward (F): grad * (2 * self.pow(1)), pow(1) a copy.
inline Approx square_backward(Approx g, Approx x, Approx, const Attrs&) {
  return mul(g, mul({2.0, 0.0}, x));
}

// ---- sign ----

// The mathematical signum: +0 for both zeros (sgn's documented "0 if |x| == 0"), NaN for NaN
// (sgn's documented x / |x|; numpy and the array API agree; LibTorch 1.13.1 returns 0, a finding:
// pytorch/pytorch#41245). Within reach of 0 the value is uncertain by the jumps in reach (1 or 2).
inline Approx sign_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  if (std::isnan(x.v)) return x;
  return rounding(x, [](double t) { return sign_of(t); });
}
// D: zeros_like(grad): exactly 0 even for a NaN or indeterminate grad.
inline Approx sign_backward(Approx, Approx, Approx, const Attrs&) {
  return elementary_detail::kZero;
}

// sgn is sign on real tensors (its docs say so); sgn(±inf) = ±1, the limit of x / |x|.
inline Approx sgn_forward(Approx x, const Attrs& at) {
  return sign_forward(x, at);
}
// sgn_backward (F) for a real self: a zero tensor.
inline Approx sgn_backward(Approx, Approx, Approx, const Attrs&) {
  return elementary_detail::kZero;
}

// ---- rounding ----
// Signed zeros as C99 Annex F: floor(-0) = -0, ceil(-0.5) = -0, round(-0.5) = -0,
// trunc(-0.5) = -0. Gradients: D gives zeros_like(grad) for all four.

inline Approx floor_forward(Approx x, const Attrs&) {
  return elementary_detail::rounding(x, [](double t) { return std::floor(t); });
}
inline Approx floor_backward(Approx, Approx, Approx, const Attrs&) {
  return elementary_detail::kZero;
}

inline Approx ceil_forward(Approx x, const Attrs&) {
  return elementary_detail::rounding(x, [](double t) { return std::ceil(t); });
}
inline Approx ceil_backward(Approx, Approx, Approx, const Attrs&) {
  return elementary_detail::kZero;
}

// Half to even (torch.round's documented tie rule): nearbyint in the default rounding mode.
inline Approx round_forward(Approx x, const Attrs&) {
  return elementary_detail::rounding(x, [](double t) { return std::nearbyint(t); });
}
inline Approx round_backward(Approx, Approx, Approx, const Attrs&) {
  return elementary_detail::kZero;
}

inline Approx trunc_forward(Approx x, const Attrs&) {
  return elementary_detail::rounding(x, [](double t) { return std::trunc(t); });
}
inline Approx trunc_backward(Approx, Approx, Approx, const Attrs&) {
  return elementary_detail::kZero;
}

// frac: slope 1 between the nonzero integers, a jump of 1 at each (it is continuous at 0).
// With a jump in reach a correct implementation lands within 1 + e of us, and never more than 2
// away (both values lie in (-1, 1)). Exact otherwise, so no ulps term.
inline Approx frac_forward(Approx x, const Attrs&) {
  using namespace elementary_detail;
  const double z = frac_exact(x.v);
  if (indeterminate(x)) return {z, kInf};
  if (x.e == 0 || std::isnan(z)) return {z, 0.0};
  const bool jump = std::trunc(lower_end(x)) != std::trunc(upper_end(x));
  return {z, jump ? std::min(1.0 + x.e, 2.0) : x.e};
}
// D: grad, even across the jumps.
inline Approx frac_backward(Approx g, Approx, Approx, const Attrs&) {
  return g;
}

// ---- one-sided clamps ----
// Forward: min(max(x, lo)) per torch.clamp's documented formula with PyTorch's NaN-propagating
// max/min (torch.maximum: "if one of the elements being compared is a NaN, then that element is
// returned"; IEEE 754-2019 maximum agrees): a NaN input or a NaN bound gives NaN. On a tie x is
// kept, so clamp_min(-0, 0) = -0.

inline Approx clamp_min_forward(Approx x, const Attrs& at) {
  using namespace elementary_detail;
  const double lo = to_opmath(at.lo);
  if (std::isnan(lo)) return {kNaN, 0.0};
  if (std::isnan(x.v)) return x;
  const double z = x.v < lo ? lo : x.v;
  if (indeterminate(x)) return {z, kInf};
  return {z, x.v + x.e < lo ? 0.0 : x.e};
}
// D: where(self >= min, grad, 0): passes at the bound, 0 at a NaN input and everywhere for a NaN
// bound (no comparison with NaN holds, so that zero is certain), 0 rather than NaN for an
// infinite grad below the bound.
inline Approx clamp_min_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const double lo = to_opmath(at.lo);
  // The other side of clamp-grad-open-below blocks the gradient at x = lo itself (oneDNN's clip),
  // and so does clamp-grad-min-norm's (LibTorch 2.15).
  const bool pass =
      other_side(Convention::ClampGradOpenBelow) || other_side(Convention::ClampGradMinNorm)
          ? x.v > lo
          : x.v >= lo;
  return gate(g, pass, !std::isnan(lo) && touches(x, lo));
}

inline Approx clamp_max_forward(Approx x, const Attrs& at) {
  using namespace elementary_detail;
  const double hi = to_opmath(at.hi);
  if (std::isnan(hi)) return {kNaN, 0.0};
  if (std::isnan(x.v)) return x;
  const double z = x.v > hi ? hi : x.v;
  if (indeterminate(x)) return {z, kInf};
  return {z, x.v - x.e > hi ? 0.0 : x.e};
}
// D: where(self <= max, grad, 0); the other side of clamp-grad-min-norm blocks at x = hi.
inline Approx clamp_max_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const double hi = to_opmath(at.hi);
  const bool pass = other_side(Convention::ClampGradMinNorm) ? x.v < hi : x.v <= hi;
  return gate(g, pass, !std::isnan(hi) && touches(x, hi));
}

} // namespace burnmark::ref
