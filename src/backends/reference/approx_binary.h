// Scalar math of the binary ops (maximum ... lerp), the comparisons and where: forward value and
// bound, and the gradients of both operands in the order of PyTorch 1.13.1's derivatives.yaml.
// docs/conventions_binary.md lists each rule, its source and the LibTorch behaviours it departs
// from.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>

#include "approx.h"
#include "burnmark/ir/op.h"

namespace burnmark::ref {

namespace binary_detail {

inline constexpr Approx kZero{0.0, 0.0};
inline constexpr Approx kOne{1.0, 0.0};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The same value bit for bit as far as a result can tell: equal (or both NaN), the same sign of
// zero, the same bound.
inline bool same(Approx a, Approx b) {
  const bool value = (std::isnan(a.v) && std::isnan(b.v)) ||
                     (a.v == b.v && std::signbit(a.v) == std::signbit(b.v));
  return value && a.e == b.e;
}

// where(pass, t, f) whose mask may be wrong: indeterminate unless both branches are the same.
inline Approx choose(bool pass, bool uncertain, Approx t, Approx f) {
  const Approx out = pass ? t : f;
  if (uncertain && !same(t, f)) return {out.v, kInf};
  return out;
}

inline bool contains_zero(Approx a) {
  return a.v == 0 || straddles_zero(a);
}

// The operands' intervals meet, so their order (or equality) is not known. Exact operands, NaN
// included, always compare with certainty.
inline bool overlap(Approx a, Approx b) {
  if (indeterminate(a) || indeterminate(b)) return true;
  if (exact(a) && exact(b)) return false;
  return std::fabs(a.v - b.v) <= a.e + b.e; // false for NaN and for an exact infinity
}

// f32(floor(a/b)) or f32(trunc(a/b)) of the exact quotient of f32 values a, b (finite, b != 0);
// a zero carries the quotient's sign. f32(floor(a/b)) is not floor(f32(a/b)): 7 / 0.1f is
// 69.99999895..., whose f32 quotient is 70.
inline double integer_quotient(double a, double b, bool floor_mode) {
  const double q = a / b;
  const double aq = std::fabs(q);
  if (aq < 0x1p27) {
    // a - fmod(a, b) = trunc(a/b) * b spans at most log2|q| + 25 bits, so it and the division
    // are exact in double.
    const double r = std::fmod(a, b);
    double t = (a - r) / b;
    if (floor_mode && r != 0 && (r < 0) != (b < 0)) t -= 1;
    return t == 0 ? std::copysign(0.0, q) : t;
  }
  // From 2^47 on, a - m b for an f32 midpoint m is 0 or at least |b| (its bits are multiples of
  // ulp(m) ulp(b)), so no midpoint lies strictly between q and its floor: both round alike.
  if (aq >= 0x1p47) return q;
  const long double A = std::fabs(static_cast<long double>(a));
  const long double B = std::fabs(static_cast<long double>(b));
  long double t = std::floor(A / B);
  // fma rounds A - t B once, so its sign is exact; t +- 1 are exact below 2^63.
  if (std::fma(-t, B, A) < 0)
    t -= 1;
  else if (std::fma(-(t + 1), B, A) >= 0)
    t += 1;
  if (std::signbit(a) == std::signbit(b)) return static_cast<double>(t);
  if (!floor_mode || std::fma(-t, B, A) == 0) return -static_cast<double>(t);
  return -static_cast<double>(t + 1);
}

// div(a, b, rounding_mode) on f32 values. Floor follows Python's //, which PyTorch's docs name:
// fmod(±inf, b) is NaN, so ±inf // b is NaN, and -5 // inf is -1. Trunc is trunc of the
// division, so ±inf / 3 truncates to ±inf. A zero divisor gives IEEE's a / b.
inline double rounded_division(double a, double b, bool floor_mode) {
  if (std::isnan(a) || std::isnan(b) || b == 0) return a / b;
  if (std::isinf(a)) return floor_mode ? kNaN : a / b;
  if (std::isinf(b)) {
    if (!floor_mode || a == 0 || (a < 0) == (b < 0)) return std::copysign(0.0, a / b);
    return -1.0;
  }
  return integer_quotient(a, b, floor_mode);
}

// Python's % on f32 values: fmod (exact) moved into the divisor's sign by adding b (one rounding,
// of an exact sum that double holds or cannot misround); a zero takes the divisor's sign.
inline double remainder_exact(double a, double b) {
  double r = std::fmod(a, b);
  if (std::isnan(r)) return r;
  if (r == 0) return std::copysign(0.0, b);
  if ((r < 0) != (b < 0)) r += b;
  return r;
}

// The cheap floor / trunc of a quotient, for the ends of an input box (not exact near integers;
// the range is widened instead).
inline double coarse_division(double a, double b, bool floor_mode) {
  if (std::isinf(b) && std::isfinite(a)) return rounded_division(a, b, floor_mode);
  const double q = a / b;
  return floor_mode ? std::floor(q) : std::trunc(q);
}

// floor / trunc of a'/b' over the box a ± E_a, b ± E_b (b's interval clear of 0): the quotient
// is monotone in each operand, so its extremes are at corners, and floor and trunc keep order.
struct IntegerRange {
  double lo;
  double hi;
};
inline IntegerRange quotient_range(Approx a, Approx b, bool floor_mode) {
  if (std::isinf(b.v)) {
    const double x = coarse_division(a.v - a.e, b.v, floor_mode);
    const double y = coarse_division(a.v + a.e, b.v, floor_mode);
    return {std::min(x, y), std::max(x, y)};
  }
  double lo = kInf;
  double hi = -kInf;
  for (const double x : {a.v - a.e, a.v + a.e}) {
    for (const double y : {b.v - b.e, b.v + b.e}) {
      lo = std::min(lo, x / y);
      hi = std::max(hi, x / y);
    }
  }
  lo -= 0x1p-50 * std::fabs(lo);
  hi += 0x1p-50 * std::fabs(hi);
  return floor_mode ? IntegerRange{std::floor(lo), std::floor(hi)}
                    : IntegerRange{std::trunc(lo), std::trunc(hi)};
}

// Beyond 2^52 the double corners cannot resolve one integer step, so any input error may cross.
inline bool quotient_jumps(Approx a, Approx b, IntegerRange r) {
  return r.lo != r.hi || std::fabs(a.v / b.v) >= 0x1p52;
}

inline Approx div_rounded(Approx a, Approx b, bool floor_mode) {
  const double v = to_storage(rounded_division(a.v, b.v, floor_mode));
  // From 2^digits on (2^24 in f32) the integer itself is rounded, and divmod formulas (LibTorch's)
  // round the quotient and a - fmod(a, b) on the way: one ulp, as for a division.
  const double big =
      std::isfinite(v) && std::fabs(v) >= 1 / storage.u ? kExactUlps * storage.u * std::fabs(v) : 0;
  if (exact(a) && exact(b)) return {v, big};
  if (indeterminate(a) || indeterminate(b) || straddles_zero(b)) return {v, kInf};
  if (std::isnan(a.v) || std::isnan(b.v)) return {v, 0.0};
  if (b.v == 0) return straddles_zero(a) ? Approx{v, kInf} : Approx{v, 0.0};
  if (std::isinf(a.v)) return {v, 0.0}; // ±inf or NaN whatever b is
  const IntegerRange r = quotient_range(a, b, floor_mode);
  // floor and f32 rounding are monotone, so the results at the range's ends bound all others;
  // near an integer that is a jump of 1 (or more).
  double e = 0;
  for (const double end : {r.lo, r.hi}) {
    const double f = to_storage(end);
    if (f != v) e = std::max(e, std::fabs(f - v));
  }
  if (std::isnan(e) || (std::isinf(e) && std::isfinite(v))) return {v, kInf};
  if (!std::isfinite(v) && e > 0) return {v, kInf};
  return {v, e + big};
}

inline bool is_integer(double x) {
  return std::isfinite(x) && x == std::floor(x);
}
// [x - e, x + e] holds an integer.
inline bool reaches_integer(Approx x) {
  return std::floor(x.v + x.e) >= x.v - x.e;
}

} // namespace binary_detail

// ---- maximum, minimum: NaN-propagating (IEEE 754-2019 maximum / minimum)

// IEEE 754-2019 orders -0 below +0. LibTorch returns whichever operand its code path favours
// (the AVX2 body the second, the scalar tail the first), so signed-zero ties are a finding.
inline Approx maximum_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  if (std::isnan(a.v) && !indeterminate(a)) return {a.v, 0.0};
  if (std::isnan(b.v) && !indeterminate(b)) return {b.v, 0.0};
  const bool a_wins = a.v > b.v || (a.v == b.v && !std::signbit(a.v));
  const Approx pick = a_wins ? a : b;
  if (indeterminate(a) || indeterminate(b)) return {pick.v, kInf};
  // max is 1-Lipschitz in the larger of the two errors.
  return {pick.v, overlap(a, b) ? std::max(a.e, b.e) : pick.e};
}
inline Approx minimum_forward(Approx a, Approx b, const Attrs& at) {
  return neg(maximum_forward(neg(a), neg(b), at));
}

// D: self: at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0), other
// likewise with self > other. Ties split the gradient (a free choice at the kink); a NaN
// operand makes every comparison false, so both operands get the whole gradient. Overlapping
// operands make the split uncertain, the gradient indeterminate.
inline std::array<Approx, 2> maximum_backward(Approx g, Approx a, Approx b, Approx, const Attrs&) {
  using namespace binary_detail;
  const Approx half = div(g, {2.0, 0.0});
  const Approx tie = a.v == b.v ? half : g;
  const bool uncertain = overlap(a, b);
  return {choose(!(a.v < b.v), uncertain, tie, kZero), choose(!(a.v > b.v), uncertain, tie, kZero)};
}
inline std::array<Approx, 2> minimum_backward(Approx g, Approx a, Approx b, Approx y,
                                              const Attrs& at) {
  return maximum_backward(g, neg(a), neg(b), neg(y), at);
}

// ---- fmax, fmin: C99 fmax / fmin, NaN ignored unless both are NaN

// PyTorch documents fmax as std::fmax, whose sign of a zero tie C99 (F.9.9.2) leaves free;
// LibTorch returns the first operand on every tie, and so does the reference.
inline Approx fmax_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  const bool a_nan = std::isnan(a.v) && !indeterminate(a);
  const bool b_nan = std::isnan(b.v) && !indeterminate(b);
  if (a_nan) return b_nan ? Approx{kNaN, 0.0} : b;
  if (b_nan) return a;
  const Approx pick = a.v >= b.v ? a : b;
  if (indeterminate(a) || indeterminate(b)) return {pick.v, kInf};
  return {pick.v, overlap(a, b) ? std::max(a.e, b.e) : pick.e};
}
inline Approx fmin_forward(Approx a, Approx b, const Attrs& at) {
  return neg(fmax_forward(neg(a), neg(b), at));
}

// D (1.13.1): self: grad.masked_fill((self >= other).logical_or_(other.isnan()).logical_not_(),
// 0), other: grad.masked_fill((self >= other).logical_or_(other.isnan()), 0): ties go to self.
// LibTorch 2.15 splits a tie evenly, as maximum does: both are subgradients, and 2.15's side is
// the registered convention fmax-grad-tie-split.
inline std::array<Approx, 2> fmax_backward(Approx g, Approx a, Approx b, Approx, const Attrs&) {
  using namespace binary_detail;
  const bool to_a = a.v >= b.v || std::isnan(b.v);
  const bool uncertain = overlap(a, b);
  if (a.v == b.v && other_side(Convention::FmaxGradTieSplit)) {
    const Approx half = div(g, {2.0, 0.0});
    return {choose(true, uncertain, half, kZero), choose(true, uncertain, half, kZero)};
  }
  return {gate(g, to_a, uncertain), gate(g, !to_a, uncertain)};
}
// D: the same with self <= other.
inline std::array<Approx, 2> fmin_backward(Approx g, Approx a, Approx b, Approx y,
                                           const Attrs& at) {
  return fmax_backward(g, neg(a), neg(b), neg(y), at);
}

// ---- atan2(a = y, b = x)

// C99 F.9.1.4 values (atan2(±0, -0) = ±pi, atan2(±inf, -inf) = ±3pi/4, ...) from glibc's
// atan2. Indeterminate where the box reaches the cut y = ±0, x < 0 (pi against -pi) or the
// origin; elsewhere |grad| <= 1/r at the point of the box nearest the origin. Sleef's u10
// atan2f is within 1 ulp: the transcendental allowance.
inline Approx atan2_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  const double z = std::atan2(a.v, b.v);
  if (std::isnan(z)) return indeterminate(a) || indeterminate(b) ? unknown(z) : Approx{z, 0.0};
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  if (exact(a) && exact(b)) return finish_transcendental(z, 0.0);
  if ((straddles_zero(a) && b.v - b.e <= 0) || (contains_zero(a) && straddles_zero(b)))
    return unknown(z);
  const double r =
      std::hypot(std::max(std::fabs(a.v) - a.e, 0.0), std::max(std::fabs(b.v) - b.e, 0.0));
  return finish_transcendental(z, (a.e + b.e) / r);
}

// atan2's partial derivatives b / (a^2 + b^2) (for a) and -a / (a^2 + b^2) (for b) are the
// mathematics' (C99 has no gradient to follow). The squares are intermediates of the formula, not
// results, so they are formed in double and the quotient is rounded once: atan2([1e-30], [1e-30])
// has gradients of +-5e29, finite in f32, where LibTorch's f32 squares underflow (1.13.1: inf,
// 2.15's origin guard: 0; bugs.md, libtorch-atan2-grad-underflow) and at 3e38 overflow (0 for
// 1.7e-39). Bound: each partial moves by at most 1/r^2 per unit of a or b, r the box's distance
// from the origin; LibTorch's five f32 roundings are the ulps. Non-finite inputs keep the formula
// derivatives.yaml writes (atan2(inf, 1): 0 and inf * 0 = NaN), the origin its convention.
inline Approx atan2_partial(Approx num, Approx a, Approx b) {
  using namespace binary_detail;
  const double z = num.v / (a.v * a.v + b.v * b.v);
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  const double r =
      std::hypot(std::max(std::fabs(a.v) - a.e, 0.0), std::max(std::fabs(b.v) - b.e, 0.0));
  if (r == 0) return unknown(z);
  return finish(z, (a.e + b.e) / (r * r), 5);
}

// At the origin, where atan2 jumps and has no derivative, LibTorch 2.15 returns 0 (recip =
// where(denom == 0, 0, recip), pytorch#165427) and 1.13.1 0 * inf = NaN: the two sides of the
// registered convention atan2-grad-origin-zero. Only there: 2.15's guard also fires where the
// squares underflow, where the gradient is huge, not 0.
inline std::array<Approx, 2> atan2_backward(Approx g, Approx a, Approx b, Approx, const Attrs&) {
  using namespace binary_detail;
  const bool origin = a.v == 0 && b.v == 0 && a.e == 0 && b.e == 0;
  if (origin || !std::isfinite(a.v) || !std::isfinite(b.v)) {
    const Approx recip = origin && other_side(Convention::Atan2GradOriginZero)
                             ? Approx{0.0, 0.0}
                             : div(kOne, add(mul(a, a), mul(b, b)));
    return {mul(mul(g, b), recip), mul(mul(g, neg(a)), recip)};
  }
  return {mul(g, atan2_partial(b, a, b)), mul(g, atan2_partial(neg(a), a, b))};
}

// ---- pow(tensor a, tensor b)

// C99 F.9.4.4 through glibc's pow in double, rounded once: pow(x, ±0) = 1 and pow(1, y) = 1 for
// any x, y (NaN too), pow(-1, ±inf) = 1, pow(±0, odd y < 0) = ±inf, pow(x < 0, non-integer) =
// NaN. The bound comes from log z = b log a: |b' log a' - b log a| <= (|b| + E_b) D + E_b |log a|
// with D = -log1p(-E_a / |a|), so |z' - z| <= |z| expm1 of that. Indeterminate where the box
// reaches a pole (a = 0 with b <= 0), a domain edge (a < 0 with b not one integer), a jump
// (|a| = 1 with b = ±inf, b = 0 with a = 0 or inf) or a sign flip (a = -inf, b inexact).
inline Approx pow_tensor_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  const double z = std::pow(a.v, b.v);
  if (b.v == 0 && exact(b)) return {1.0, 0.0};
  if (a.v == 1 && exact(a)) return {1.0, 0.0};
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  if (exact(a) && exact(b)) return finish_transcendental(z, 0.0);
  if (std::isnan(a.v)) return touches(b, 0.0) ? unknown(z) : Approx{z, 0.0};
  if (std::isnan(b.v)) return touches(a, 1.0) ? unknown(z) : Approx{z, 0.0};
  const bool negative_reach = a.v - a.e < 0;
  if (negative_reach && (!exact(b) || !(is_integer(b.v) || std::isinf(b.v)))) {
    // Certain NaN only if every base is negative and no exponent is an integer.
    const bool all_nan = a.v + a.e < 0 && !std::isinf(a.v) && !reaches_integer(b);
    return all_nan ? Approx{kNaN, 0.0} : unknown(z);
  }
  if (contains_zero(a) && b.v - b.e <= 0) return unknown(z);
  if (std::isinf(a.v)) { // exact: ±inf, b inexact
    if (a.v < 0 || touches(b, 0.0)) return unknown(z);
    return {z, 0.0};
  }
  if (std::isinf(b.v)) // exact: a inexact, result 0, 1 or inf by |a| against 1
    return touches(abs(a), 1.0) ? unknown(z) : Approx{z, 0.0};
  const double lo = std::fabs(a.v) - a.e;
  double e;
  if (lo > 0) {
    const double d = a.e == 0 ? 0.0 : neg_log1p_neg_bound(a.e / std::fabs(a.v));
    const double log_a = std::fabs(std::log(std::fabs(a.v)));
    const double delta = (std::fabs(b.v) + b.e) * d + scaled(log_a, b.e);
    e = std::fabs(z) * expm1_bound(delta);
  } else if (a.v == 0 && exact(a)) {
    e = 0; // exponents all positive: ±0
  } else {
    // The base straddles 0 under an exact integer exponent >= 1: |d/da| <= b (|a| + E_a)^(b-1).
    e = b.v * std::pow(std::fabs(a.v) + a.e, b.v - 1) * a.e;
  }
  return finish_transcendental(z, e);
}

// F pow_backward_self: where(exponent == 0.0, 0, grad * (exponent * self.pow(exponent - 1)));
// F pow_backward_exponent: grad * where(self == 0 & exponent >= 0, 0, result * self.log()). The
// where sits inside the product, so an infinite upstream gradient times that 0 is NaN.
inline std::array<Approx, 2> pow_tensor_backward(Approx g, Approx a, Approx b, Approx y,
                                                 const Attrs& at) {
  using namespace binary_detail;
  const Approx d_self = mul(g, mul(b, pow_tensor_forward(a, sub(b, kOne), at)));
  const Approx ga = choose(b.v == 0, touches(b, 0.0), kZero, d_self);
  const bool base_zero = a.v == 0 && b.v >= 0;
  const bool unsure = indeterminate(a) || indeterminate(b) ||
                      (straddles_zero(a) && b.v + b.e >= 0) ||
                      (contains_zero(a) && straddles_zero(b));
  const Approx slope = choose(base_zero, unsure, kZero, mul(y, log(a)));
  return {ga, mul(g, slope)};
}

// ---- remainder, fmod, div_rounded

// The exact Python remainder (the docs: "Python's modulus operation", result with the divisor's
// sign), rounded once: remainder(-6, 3) = +0, remainder(-5, inf) = inf, remainder(x, 0) = NaN.
// Within one floor(a/b) the slopes are 1 and -floor(a/b); where the box's quotient crosses an
// integer the result jumps by |b|, and it never leaves [0, b) in any case.
inline Approx remainder_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  const double r = remainder_exact(a.v, b.v);
  if (exact(a) && exact(b)) return {to_storage(r), 0.0};
  if (indeterminate(a) || indeterminate(b) || straddles_zero(b)) return unknown(r);
  if (std::isnan(r)) return {r, 0.0}; // b exactly 0, or a infinite
  // b = ±inf: a' itself, or ±inf where a' has the other sign.
  if (std::isinf(b.v)) return a.v - a.e < 0 && a.v + a.e >= 0 ? unknown(r) : finish_exact(r, a.e);
  const IntegerRange q = quotient_range(a, b, true);
  const double cap = std::fabs(b.v) + b.e;
  const double piece = a.e + std::max(std::fabs(q.lo), std::fabs(q.hi)) * b.e;
  return finish_exact(r, quotient_jumps(a, b, q) ? cap : std::min(piece, cap));
}

// D remainder.Tensor: self: grad; other: -grad * self.div(other, rounding_mode="floor").
inline std::array<Approx, 2> remainder_backward(Approx g, Approx a, Approx b, Approx,
                                                const Attrs&) {
  return {g, mul(neg(g), binary_detail::div_rounded(a, b, true))};
}

// C fmod, exact (F.9.7.1: fmod(±0, y) = ±0, fmod(x, ±inf) = x, fmod(±inf, y) and fmod(x, 0)
// NaN). Continuous where a crosses 0; jumps by |b| where trunc(a/b) changes elsewhere.
inline Approx fmod_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  const double r = std::fmod(a.v, b.v);
  if (exact(a) && exact(b)) return {r, 0.0};
  if (indeterminate(a) || indeterminate(b) || straddles_zero(b)) return unknown(r);
  if (std::isnan(r)) return {r, 0.0};
  if (std::isinf(b.v)) return finish_exact(r, a.e);
  const IntegerRange q = quotient_range(a, b, false);
  const double cap = (straddles_zero(a) ? 2 : 1) * (std::fabs(b.v) + b.e);
  const double piece = a.e + std::max(std::fabs(q.lo), std::fabs(q.hi)) * b.e;
  return finish_exact(r, quotient_jumps(a, b, q) ? cap : std::min(piece, cap));
}

// D fmod.Tensor: self: grad; other: -grad * self.div(other, rounding_mode="trunc"), with the
// exact trunc (so the gradient agrees with the value fmod returned).
inline std::array<Approx, 2> fmod_backward(Approx g, Approx a, Approx b, Approx, const Attrs&) {
  return {g, mul(neg(g), binary_detail::div_rounded(a, b, false))};
}

// variant 0: trunc of the exact quotient; variant 1: floor of it, as Python's //.
inline Approx div_rounded_forward(Approx a, Approx b, const Attrs& at) {
  return binary_detail::div_rounded(a, b, at.variant == 1);
}

// D div.Tensor_mode: div_tensor_self_backward / div_tensor_other_backward return
// zeros_like(grad) once a rounding mode is given, whatever grad holds.
inline std::array<Approx, 2> div_rounded_backward(Approx, Approx, Approx, Approx, const Attrs&) {
  return {binary_detail::kZero, binary_detail::kZero};
}

// ---- hypot, xlogy, copysign

// C99 F.9.4.3: no intermediate overflow (hypot(3e38, 1e38) = 3.16e38), hypot(±inf, NaN) = +inf.
// 1-Lipschitz in the Euclidean norm of the errors. Sleef's u05 hypot and glibc's hypotf are
// not promised correctly rounded: one ulp.
inline Approx hypot_forward(Approx a, Approx b, const Attrs&) {
  const double z = std::hypot(a.v, b.v);
  if ((std::isinf(a.v) && exact(a)) || (std::isinf(b.v) && exact(b))) return {kInf, 0.0};
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  if (std::isnan(z)) return {z, 0.0};
  return finish(z, std::hypot(a.e, b.e), kExactUlps);
}

// D hypot: self: grad * self / result; other: grad * other / result ((0, 0) gives 0 / 0 = NaN).
inline std::array<Approx, 2> hypot_backward(Approx g, Approx a, Approx b, Approx y, const Attrs&) {
  return {div(mul(g, a), y), div(mul(g, b), y)};
}

// The docs: NaN if y is NaN, 0 if x == 0 (whatever y is, -0 included), else x * log(y) — so
// xlogy(inf, 1) = inf * 0 = NaN. Rounded once (LibTorch rounds log, then the product: within
// the transcendental allowance). |x' L' - x L| <= E_x (|L| + D) + |x| D with D the log's spread.
inline Approx xlogy_forward(Approx a, Approx b, const Attrs&) {
  using namespace binary_detail;
  if (std::isnan(b.v) && !indeterminate(b)) return {b.v, 0.0};
  if (a.v == 0 && exact(a)) return indeterminate(b) ? unknown(0.0) : Approx{0.0, 0.0};
  const double l = std::log(b.v);
  const double z = a.v * l;
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  if (exact(a) && exact(b)) return finish_transcendental(z, 0.0);
  // A box holding x = 0 holds the value 0 as well as x' log(y').
  if (b.v + b.e < 0) return straddles_zero(a) ? unknown(kNaN) : Approx{kNaN, 0.0};
  if (b.e > 0 && b.v - b.e <= 0) return unknown(z);
  if (std::isinf(l) || std::isinf(a.v)) {
    // inf times a factor whose sign (or zero-ness) the box may flip.
    if ((std::isinf(l) && straddles_zero(a)) || (std::isinf(a.v) && touches(b, 1.0)))
      return unknown(z);
    return {z, 0.0};
  }
  if (std::isnan(z)) return {z, 0.0};
  const double d = b.e == 0 ? 0.0 : neg_log1p_neg_bound(b.e / b.v);
  return finish_transcendental(z, scaled(std::fabs(l) + d, a.e) + std::fabs(a.v) * d);
}

// D xlogy.Tensor (after issue #80770): self: at::xlogy(grad, other).masked_fill((self == 0.) &
// (other <= 0.), 0.); other: grad * self / other.
inline std::array<Approx, 2> xlogy_backward(Approx g, Approx a, Approx b, Approx, const Attrs& at) {
  using namespace binary_detail;
  const bool masked = a.v == 0 && b.v <= 0;
  const bool uncertain = indeterminate(a) || indeterminate(b) ||
                         (straddles_zero(a) && b.v - b.e <= 0) ||
                         (contains_zero(a) && touches(b, 0.0));
  return {choose(masked, uncertain, kZero, xlogy_forward(g, b, at)), div(mul(g, a), b)};
}

// |a| with b's sign bit (LibTorch honours a NaN's sign bit too). The reference cannot know the
// sign bit of a NaN another library produced, nor the sign of an interval around 0: then either
// sign, and a zero result straddles 0.
inline Approx copysign_forward(Approx a, Approx b, const Attrs&) {
  const double z = std::copysign(a.v, b.v);
  if (indeterminate(a)) return unknown(z);
  if (std::isnan(a.v)) return {a.v, 0.0};
  if (!(indeterminate(b) || std::isnan(b.v) || straddles_zero(b))) return {z, a.e};
  if (std::isinf(a.v)) return {z, kInf};
  return {z, 2 * std::fabs(a.v) + a.e + storage.underflow_step};
}

// F copysign_tensor_self_backward: ratio = result / self, masked_fill_(self == 0, 0),
// grad * ratio (so ±inf gives inf / inf = NaN); D: other: zeros_like(other). The ratio is ±1,
// uncertain exactly when the sign of self or of the result is.
inline std::array<Approx, 2> copysign_backward(Approx g, Approx a, Approx, Approx y, const Attrs&) {
  using namespace binary_detail;
  Approx ratio = kZero;
  if (indeterminate(a) || indeterminate(y))
    ratio = {a.v == 0 ? 0.0 : y.v / a.v, kInf};
  else if (!(a.v == 0 && exact(a)))
    ratio = {y.v / a.v, straddles_zero(a) || straddles_zero(y) ? kInf : 0.0};
  return {mul(g, ratio), kZero};
}

// ---- lerp(a, b, scalar weight w)

// The docs' a + w (b - a) in exact arithmetic, rounded once: lerp(-3e38, 3e38, 0.5) = 0, where
// LibTorch's f32 (b - a) overflows. The algebraically equal forms (LibTorch's
// b - (b - a)(1 - w) for |w| >= 0.5, (1 - w) a + w b) give different inf / NaN once an endpoint
// is infinite: indeterminate unless all three agree. Allowance: the three roundings of either
// LibTorch form, about u (|z| + 3 max(|w|, |1 - w|) |b - a|), which cancellation can make large
// relative to z. w = 0 and w = 1 are exact on exact inputs, up to the sign of a zero.
inline Approx lerp_forward(Approx a, Approx b, const Attrs& at) {
  using namespace binary_detail;
  const double w = at.weight;
  // In f64 (no wider double to hold it) b - a can overflow where z does not:
  // lerp(-DBL_MAX, DBL_MAX, 0.5) is 0. Then the endpoints are halved, exactly at that magnitude.
  const double k = std::isfinite(a.v) && std::isfinite(b.v) && !std::isfinite(b.v - a.v) ? 0.5 : 1;
  const double z = std::fma(w, k * b.v - k * a.v, k * a.v) / k;
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  if (!std::isfinite(a.v) || !std::isfinite(b.v)) {
    const double f2 = b.v - (b.v - a.v) * (1 - w);
    const double f3 = (1 - w) * a.v + w * b.v;
    const double f1 = a.v + w * (b.v - a.v);
    const bool agree = same({f1, 0.0}, {f2, 0.0}) && same({f1, 0.0}, {f3, 0.0});
    return {f1, agree ? 0.0 : kInf};
  }
  const double dk = std::fabs(k * b.v - k * a.v); // |b - a| times k
  if ((w == 0 || w == 1) && exact(a) && exact(b)) {
    const double v = w == 0 ? a.v : b.v;
    return {v, v == 0 ? storage.underflow_step : 0.0};
  }
  const double e = std::fabs(1 - w) * a.e + std::fabs(w) * b.e +
                   3 * storage.u * std::max(std::fabs(w), std::fabs(1 - w)) / k * dk +
                   3 * storage.underflow_step;
  return finish(z, e, kExactUlps);
}

// D lerp.Scalar: self: grad * (1 - weight.toDouble()) (the double 1 - w rounded to f32 as the
// scalar factor); end: grad * weight.
inline std::array<Approx, 2> lerp_backward(Approx g, Approx, Approx, Approx, const Attrs& at) {
  return {mul(g, scalar_operand(1 - at.weight)), mul(g, {at.weight, 0.0})};
}

// ---- comparisons: IEEE (NaN compares false except ne; -0 == +0)

inline Approx compare_result(bool v, Approx a, Approx b) {
  return {v ? 1.0 : 0.0, binary_detail::overlap(a, b) ? kInf : 0.0};
}
inline Approx lt_forward(Approx a, Approx b, const Attrs&) {
  return compare_result(a.v < b.v, a, b);
}
inline Approx le_forward(Approx a, Approx b, const Attrs&) {
  return compare_result(a.v <= b.v, a, b);
}
inline Approx gt_forward(Approx a, Approx b, const Attrs&) {
  return compare_result(a.v > b.v, a, b);
}
inline Approx ge_forward(Approx a, Approx b, const Attrs&) {
  return compare_result(a.v >= b.v, a, b);
}
inline Approx eq_forward(Approx a, Approx b, const Attrs&) {
  return compare_result(a.v == b.v, a, b);
}
inline Approx ne_forward(Approx a, Approx b, const Attrs&) {
  return compare_result(a.v != b.v, a, b);
}

// ---- where(cond, a, b)

// An uncertain mask (bound != 0) leaves the element indeterminate unless both branches agree.
inline Approx where_forward(Approx cond, Approx a, Approx b, const Attrs&) {
  return binary_detail::choose(cond.v != 0, cond.e != 0, a, b);
}

// D where.self: self: where(condition, grad, 0); other: where(condition, 0, grad).
inline std::array<Approx, 2> where_backward(Approx g, Approx cond, const Attrs&) {
  return {gate(g, cond.v != 0, cond.e != 0), gate(g, cond.v == 0, cond.e != 0)};
}

} // namespace burnmark::ref
