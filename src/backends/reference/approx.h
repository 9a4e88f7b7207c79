// Scalar arithmetic of the reference backend: every elementwise formula, forward and backward,
// computed in double from the program's inputs, rounded to the program's float dtype (f32,
// bf16, f16), and carried with a bound on how far a correct library may land from it in that
// dtype (docs/conventions.md, "Error bounds").
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "burnmark/backends/conventions.h"
#include "burnmark/ir/float_dtype.h"

namespace burnmark::ref {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The float dtype of the program in progress on this thread (set by StorageScope around a run).
// Every result is rounded to it and its bound counts its roundings, so the formulas below hold
// for any IEEE format; f32 when no run is in progress.
struct Storage {
  FloatDType dtype = FloatDType::F32;
  double u = 0x1p-24; // unit roundoff: half an ulp, relative
  // Unit roundoff of the accumulator of a sum or dot product (at::opmath_type: f32 for f32, bf16
  // and f16, f64 for f64): LibTorch's CPU reductions and matmul add many terms in it and round to
  // the dtype once (docs/conventions_reductions.md, "Accumulation").
  double acc_u = 0x1p-24;
  double underflow_step = 0x1p-150; // half the subnormal step: a rounding's cost near zero
  double overflow = 0x1.ffffffp127; // exact results at least this large round to infinity
  // The same for the accumulator (f32's for bf16 and f16): a partial sum of a reduction
  // overflows only past this, whatever the dtype it is rounded to at the end.
  double acc_overflow = 0x1.ffffffp127;
  double exp_overflow_input = 88.72283905206835; // ln(largest finite): exp is inf above it
  double exp2_overflow_input = 128.0;            // log2 of the same
  // The smallest normal magnitude, below which the ftz-daz convention's other side may read or
  // write a value as 0; 0 for f16, which XLA computes in f32, where its subnormals are normal.
  double ftz_below = 0x1p-126;
};
inline Storage storage_for(FloatDType d) {
  if (d == FloatDType::F32) return {};
  const FloatFormat f = float_format(d);
  Storage s{d,
            f.unit_roundoff(),
            d == FloatDType::F64 ? f.unit_roundoff() : 0x1p-24,
            f.half_subnormal_step(),
            f.overflow_threshold(),
            d == FloatDType::F64 ? f.overflow_threshold() : 0x1.ffffffp127,
            std::log(f.max_finite),
            std::log2(f.max_finite)};
  s.ftz_below = d == FloatDType::F16 ? 0.0 : std::ldexp(1.0, f.min_exponent);
  return s;
}
inline thread_local Storage storage;
class StorageScope {
public:
  explicit StorageScope(FloatDType d) : saved_(storage) { storage = storage_for(d); }
  ~StorageScope() { storage = saved_; }
  StorageScope(const StorageScope&) = delete;
  StorageScope& operator=(const StorageScope&) = delete;

private:
  Storage saved_;
};

// The conventions switched to their other side for the run in progress on this thread (set by
// ConventionScope around a run; the scalar formulas consult it only at their convention points).
inline thread_local ConventionSet active_other_side;
// The convention points the run in progress reached (Outcome::conventions_reached): every
// reading of a switch is one.
inline thread_local ConventionSet reached_conventions;
inline bool other_side(Convention c) {
  reached_conventions.add(c);
  return active_other_side.has(c);
}
class ConventionScope {
public:
  explicit ConventionScope(ConventionSet s) : saved_(active_other_side) { active_other_side = s; }
  ~ConventionScope() { active_other_side = saved_; }
  ConventionScope(const ConventionScope&) = delete;
  ConventionScope& operator=(const ConventionScope&) = delete;

private:
  ConventionSet saved_;
};

// Ulp allowances in units of storage.u. Correctly rounded ops differ from ours only through their
// inputs, but two roundings of nearby exact values may land one ulp (2u) apart. Transcendentals:
// Sleef's u10 kernels are within 1 ulp, composed ones (sigmoid) a few roundings more.
inline constexpr double kExactUlps = 2;
inline constexpr double kTranscendentalUlps = 4;

// A rounded f32 value (widened) and the bound E on |f32 implementation - v|. E = +inf means the
// element is indeterminate in f32: an input interval touches a kink, a pole or a domain edge.
struct Approx {
  double v = 0;
  double e = 0;
};

// What a kernel computes its constants and intermediates in: LibTorch's opmath type, f32 for
// f32, bf16 and f16 programs, f64 for f64 ones.
inline double to_opmath(double x) {
  return storage.dtype == FloatDType::F64 ? x : static_cast<double>(static_cast<float>(x));
}
// A result as the program's dtype stores it.
inline double to_storage(double x) {
  return round_to(x, storage.dtype);
}
// A double scalar a formula multiplies a tensor by (derivatives.yaml's constants, 1 - weight):
// LibTorch keeps it in the opmath type for some kernels and casts it to the tensor's dtype for
// others, so either value is correct; the bound spans both (0 in f32 and f64 programs).
inline Approx scalar_operand(double c) {
  const double f = to_opmath(c);
  return {f, std::fabs(f - to_storage(c))};
}
inline bool indeterminate(Approx a) {
  return std::isinf(a.e);
}
inline bool exact(Approx a) {
  return a.e == 0;
}
// v ± e contains zero, so a sign, a division by zero or a pole is possible.
inline bool straddles_zero(Approx a) {
  return a.e > 0 && std::fabs(a.v) <= a.e;
}
// Sensitivity times input error; an exact input contributes nothing even where d is inf or NaN.
inline double scaled(double d, double e) {
  return e == 0 ? 0.0 : d * e;
}
inline Approx unknown(double exact_value) {
  return {to_storage(exact_value), kInf};
}
// Cheap upper bounds of expm1(d) and -log1p(-d) for d >= 0 (d + d^2 holds for d <= 1/2); the
// libm calls only for large d. Bounds run on every element, so they must cost little.
inline double expm1_bound(double d) {
  return d <= 0x1p-10 ? d + d * d : std::expm1(d);
}
inline double neg_log1p_neg_bound(double d) {
  return d <= 0x1p-10 ? d + d * d : -std::log1p(-d);
}

// Rounds an exact (double) result to f32 and closes its bound: adds the op's own rounding, makes
// the element indeterminate when the interval reaches the f32 overflow threshold from either
// side, and gives non-finite results bound 0 (they must match exactly).
inline Approx finish_edge(double exact_value, double v, double mag, double e) {
  if (!std::isfinite(exact_value)) return {v, 0.0};
  if (std::isnan(e)) e = kInf;
  if (mag + e >= storage.overflow && mag - e < storage.overflow) return {v, kInf};
  if (!std::isfinite(v)) return {v, 0.0};
  return {v, e};
}
inline Approx finish(double exact_value, double e, double ulps) {
  const double mag = std::fabs(exact_value);
  const double v = to_storage(exact_value);
  e += ulps * (storage.u * mag + storage.underflow_step);
  // One comparison clears the common case: finite, far from overflow, bound not NaN.
  if (mag + e < 0.5 * storage.overflow) [[likely]]
    return {v, e};
  return finish_edge(exact_value, v, mag, e);
}
// For transcendentals: besides their ulps, a result below the normal range may come out as 0
// (LibTorch's sigmoid(-100) is 1 / (1 + inf) = 0, not 3.7e-44).
inline Approx finish_transcendental(double exact_value, double e) {
  const double mag = std::fabs(exact_value);
  return finish(exact_value, mag < 0x1p-126 ? e + mag : e, kTranscendentalUlps);
}
// For correctly rounded ops: with exact inputs every f32 library computes the very same value.
inline Approx finish_exact(double exact_value, double e) {
  return finish(exact_value, e, e == 0 ? 0.0 : kExactUlps);
}

// PyTorch's mean op on the CPU (ReduceOps.cpp, mean_out): the sum of n terms rounded in the
// accumulator (f32 for bf16 and f16, the dtype itself for f32 and f64), divided there, rounded
// to the dtype once. `err` bounds the terms' own errors, `abs_sum` is sum|x_i|; the caller has
// already ruled out partial sums whose overflow depends on the order. An f16 row whose sum
// passes 65504 has a finite mean; an f32 row whose sum passes FLT_MAX has an infinite one.
inline Approx mean_of_sum(double sum, double abs_sum, double err, double n) {
  if (n == 1) return {sum, err}; // a copy: no addition, and x / 1 is exact
  const double m = sum / n;
  const double e = err + (n - 1) * storage.acc_u * abs_sum;
  if (std::fabs(sum) - e >= storage.acc_overflow) return {std::copysign(kInf, sum), 0.0};
  if (std::fabs(sum) + e >= storage.acc_overflow) return unknown(m);
  return finish_exact(m, e / n + 2 * storage.acc_u * std::fabs(m));
}

inline Approx neg(Approx a) {
  return {-a.v, a.e};
}
inline Approx abs(Approx a) {
  return {std::fabs(a.v), a.e};
}

inline Approx add(Approx a, Approx b) {
  const double z = a.v + b.v;
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  return finish_exact(z, a.e + b.e);
}
inline Approx sub(Approx a, Approx b) {
  return add(a, neg(b));
}

inline Approx mul_edge(Approx a, Approx b) {
  const double z = a.v * b.v;
  if (indeterminate(a) || indeterminate(b)) return unknown(z);
  // inf times something that may be zero: inf or NaN.
  if ((std::isinf(a.v) && straddles_zero(b)) || (std::isinf(b.v) && straddles_zero(a)))
    return unknown(z);
  return finish_exact(z, scaled(std::fabs(b.v), a.e) + scaled(std::fabs(a.v), b.e) + a.e * b.e);
}
inline Approx mul(Approx a, Approx b) {
  const double z = a.v * b.v;
  // A finite product has finite factors, so the bound is NaN-free and inf only from an input's.
  const double e = std::fabs(b.v) * a.e + std::fabs(a.v) * b.e + a.e * b.e;
  if (std::isfinite(z) && e < kInf) [[likely]]
    return finish_exact(z, e);
  return mul_edge(a, b);
}

inline Approx div(Approx a, Approx b) {
  const double z = a.v / b.v;
  if (indeterminate(a) || indeterminate(b) || straddles_zero(b)) return unknown(z);
  if (b.v == 0 && straddles_zero(a)) return unknown(z); // ±inf or NaN
  if (!std::isfinite(z)) return finish_exact(z, 0.0);
  // Worst case over the divisor's interval, so the bound holds beyond first order.
  return finish_exact(z, (a.e + scaled(std::fabs(z), b.e)) / (std::fabs(b.v) - b.e));
}

// A result that overflows f32 is exactly inf only if the whole input interval lies above the
// point where the function overflows (`limit`, ln(FLT_MAX) for exp): otherwise a correct library
// may return a finite value (the interval of copysign with a NaN's unknown sign spans both signs).
inline bool overflow_uncertain(double z, Approx x, double limit) {
  return std::isinf(to_storage(z)) && x.e > 0 && x.v - x.e <= limit;
}

inline Approx exp(Approx a) {
  const double z = std::exp(a.v);
  if (indeterminate(a) || overflow_uncertain(z, a, storage.exp_overflow_input)) return unknown(z);
  return finish_transcendental(z, scaled(std::fabs(z), expm1_bound(a.e)));
}

inline Approx log(Approx a) {
  const double z = std::log(a.v);
  // An interval wholly below zero is NaN whatever the rounding.
  if (!indeterminate(a) && a.v + a.e < 0) return {z, 0.0};
  if (indeterminate(a) || (a.e > 0 && a.v - a.e <= 0)) return unknown(z); // -inf or NaN possible
  const double e = a.e == 0 ? 0.0 : neg_log1p_neg_bound(a.e / a.v);
  return finish_transcendental(z, e);
}

inline Approx sqrt(Approx a) {
  const double z = std::sqrt(a.v);
  if (!indeterminate(a) && a.v + a.e < 0) return {z, 0.0}; // certainly NaN
  if (indeterminate(a) || (a.e > 0 && a.v - a.e <= 0))
    return unknown(z); // NaN, or an infinite slope
  const double e = a.e == 0 ? 0.0 : a.e / (z + std::sqrt(a.v - a.e));
  return finish_exact(z, e);
}

// clamp_min(x, 0), which keeps x unless x < 0: NaN passes through and relu(-0) = -0 (measured
// against LibTorch: pow(relu(-0), -0.5) is -inf there).
inline Approx relu(Approx a) {
  const double z = a.v < 0 ? 0.0 : a.v;
  if (indeterminate(a)) return {z, kInf};
  return {z, a.v + a.e < 0 ? 0.0 : a.e};
}

// NaN passes through; lo > hi returns hi (min(max(x, lo), hi)). A NaN bound makes every element
// NaN: torch.clamp is documented as min(max(x, min), max) with torch.maximum / torch.minimum,
// which propagate NaN (as IEEE 754-2019 maximum and minimum do).
inline Approx clamp(Approx a, double lo, double hi) {
  if (std::isnan(lo) || std::isnan(hi)) return {lo + hi, 0.0};
  if (std::isnan(a.v)) return a;
  const double z = std::min(std::max(a.v, lo), hi);
  if (indeterminate(a)) return {z, kInf};
  if (lo > hi || a.v + a.e < lo || a.v - a.e > hi) return {z, 0.0};
  return {z, a.e};
}

inline double sigmoid_exact(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
// Sigmoid and tanh are monotone, so the image of [x - e, x + e] bounds the propagated error
// exactly. A slope bound at x is not enough: where the result has saturated in double
// (sigmoid(5e5) = 1, so y(1 - y) = 0) the slope vanishes although the input interval may reach
// the steep part around 0 — a matmul cancellation fed to sigmoid did exactly that.
inline double monotone_spread(double (*f)(double), Approx a, double z) {
  return a.e == 0 ? 0.0 : std::max(f(a.v + a.e) - z, z - f(a.v - a.e));
}

inline Approx sigmoid(Approx a) {
  const double z = sigmoid_exact(a.v);
  if (indeterminate(a)) return unknown(z);
  return finish_transcendental(z, monotone_spread(sigmoid_exact, a, z));
}

inline double tanh_exact(double x) {
  return std::tanh(x);
}
inline Approx tanh(Approx a) {
  const double z = std::tanh(a.v);
  if (indeterminate(a)) return unknown(z);
  return finish_transcendental(z, monotone_spread(tanh_exact, a, z));
}

// The exact value of `steps` rounded once to the dtype: the steps run in double (indeterminate
// there: +inf bound). The double steps are within a few of their own ulps of the exact value, so
// where that interval holds a rounding boundary both neighbours are correct.
template <class Steps> Approx rounded_once(Steps steps) {
  Approx in_f64;
  {
    const StorageScope wide(FloatDType::F64);
    in_f64 = steps();
  }
  if (indeterminate(in_f64)) return {to_storage(in_f64.v), kInf};
  Approx rounded = finish(in_f64.v, in_f64.e, in_f64.e == 0 ? 0.0 : kExactUlps);
  if (std::isfinite(in_f64.v)) {
    const double slack = 4 * 0x1p-53 * std::fabs(in_f64.v);
    rounded.e += std::max(std::fabs(to_storage(in_f64.v - slack) - rounded.v),
                          std::fabs(to_storage(in_f64.v + slack) - rounded.v));
  }
  return rounded;
}

// One LibTorch kernel that the reference writes as several rounded steps (1 / sqrt(x), x * x * x),
// or one derivative formula that LibTorch evaluates as several kernels and another library as
// one (pow's gradient: LibTorch's pow, scalar mul and mul each round to bf16; oneDNN's
// eltwise_pow backward computes in f32 and rounds once). In a reduced dtype a kernel may keep its
// intermediates in f32 (its opmath type) and round once, or round every step to the dtype
// (Vectorized<BFloat16> arithmetic): both are correct implementations, and so is one that rounds
// the exact value once (a kernel in a wider type), so the bound spans the three. In f32 there is
// one answer.
template <class Steps> Approx one_kernel(Steps steps) {
  const Approx per_step = steps();
  if (storage.dtype == FloatDType::F32 || storage.dtype == FloatDType::F64 ||
      indeterminate(per_step))
    return per_step;
  Approx in_f32;
  {
    const StorageScope opmath(FloatDType::F32);
    in_f32 = steps();
  }
  const Approx rounded = rounded_once(steps);
  if (indeterminate(in_f32) || indeterminate(rounded)) return {per_step.v, kInf};
  const Approx once = finish(in_f32.v, in_f32.e, in_f32.e == 0 ? 1.0 : kExactUlps);
  Approx r = per_step;
  for (const Approx& other : {once, rounded}) {
    if (!std::isfinite(other.v) || !std::isfinite(per_step.v)) {
      const bool same = other.v == per_step.v || (std::isnan(other.v) && std::isnan(per_step.v));
      if (!same) return {per_step.v, kInf};
      continue;
    }
    r.e = std::max(r.e, std::fabs(other.v - per_step.v) + other.e);
  }
  return r;
}

// x^3 and x^-2 through LibTorch's fast paths (x*x)*x and 1/(x*x) (pow_tensor_scalar_optimized_
// kernel). torch.pow documents x ** exponent, so these steps are one correct implementation
// among others only while x*x stays in f32's normal range. Beyond it the steps lose what x^c keeps:
// x*x overflows from |x| = 2^64, where 1/x^2 is still a subnormal down to 2^-149 (pow(1e20, -2)
// = 9.99995e-41, the steps give 0), and below |x| = 2^-63 x*x keeps only the subnormals' bits.
// There the reference is x^c rounded once, and a library following the steps is a finding
// (docs/conventions.md, pow). Inside the range the bound also admits x^c rounded once (a correctly
// rounding pow, oneDNN's or Eigen's, lands one ulp or one subnormal step from the two roundings of
// the steps). Only f32 programs: f64 has no wider type to check the steps in, and in bf16 and f16
// one_kernel's doctrine (every step rounded to the dtype is a correct kernel) is left as it was.
template <class Steps> Approx power_steps(Approx x, Steps steps) {
  if (storage.dtype != FloatDType::F32) return one_kernel(steps);
  const double near = std::fabs(x.v) - x.e, far = std::fabs(x.v) + x.e;
  const bool square_normal = near > 0 && near * near >= 0x1p-126 && far * far < 0x1.ffffffp127;
  if (!square_normal && !indeterminate(x)) return rounded_once(steps);
  const Approx r = steps();
  if (indeterminate(r)) return r;
  const Approx rounded = rounded_once(steps);
  if (!std::isfinite(r.v) || !std::isfinite(rounded.v)) return r;
  return {r.v, std::max(r.e, std::fabs(rounded.v - r.v) + rounded.e)};
}

// pow with a scalar exponent through LibTorch's fast paths, which decide the f32 roundings and
// the results at NaN: c = 0 fills 1, c = 1 copies, 2 and 3 multiply, -2 is 1/(x*x), 0.5 / -0.5
// / -1 are sqrt / 1/sqrt / reciprocal, anything else is pow.
inline Approx pow(Approx x, double c) {
  constexpr Approx one{1.0, 0.0};
  if (c == 0) return one;
  if (c == 1) return x;
  if (c == 2) return mul(x, x);
  if (c == 3) return power_steps(x, [&] { return mul(mul(x, x), x); });
  if (c == -2) return power_steps(x, [&] { return div(one, mul(x, x)); });
  // At -0 and -inf the square-root paths are not pow: C99 F.9.4.4 (IEEE 754 pow) gives +0 and
  // +inf at -0, +inf and +0 at -inf, where sqrt keeps the sign of zero and sqrt(-inf) is NaN.
  // PyTorch documents no exception (torch.pow is x ** exponent), so LibTorch's -0, -inf and NaN
  // there are a finding (bugs.md, libtorch-pow-half-negzero; pytorch#127163).
  if ((c == 0.5 || c == -0.5) && x.e == 0) {
    if (x.v == 0 && std::signbit(x.v)) return {c > 0 ? 0.0 : kInf, 0.0};
    if (x.v == -kInf) return {c > 0 ? kInf : 0.0, 0.0};
  }
  if (c == 0.5) return sqrt(x);
  if (c == -0.5) return one_kernel([&] { return div(one, sqrt(x)); });
  if (c == -1) return div(one, x);
  const double z = std::pow(x.v, c);
  if (indeterminate(x)) return unknown(z);
  const bool integral = c == std::floor(c);
  if ((!integral && x.e > 0 && x.v - x.e <= 0) || (c < 0 && straddles_zero(x))) return unknown(z);
  // The slope |c| |x|^(c-1) at the far end of the interval.
  const double far = c < 1 ? std::fabs(x.v) - x.e : std::fabs(x.v) + x.e;
  return finish_transcendental(z, scaled(std::fabs(c) * std::pow(far, c - 1), x.e));
}

// sgn: ±0 and NaN give 0. Uncertain where the interval touches the jump at 0.
inline double sign_of(double x) {
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
}

// A gradient routed by a mask: selected, where(mask, g, 0), or `by_product`, g * mask (0 * inf
// and 0 * NaN are NaN). When the mask itself is uncertain (the input interval touches the kink)
// the element is indeterminate, unless g is exactly 0 either way.
inline Approx gate_as(bool by_product, Approx g, bool pass, bool uncertain) {
  const Approx blocked = by_product ? mul(g, Approx{0.0, 0.0}) : Approx{0.0, 0.0};
  const Approx out = pass ? g : blocked;
  if (uncertain && !(g.v == 0 && g.e == 0)) return {out.v, kInf};
  return out;
}
// The other side of gate-grad-by-product is the product, as TorchScript's symbolic derivatives
// compute it: a blocked inf or NaN gradient then becomes NaN instead of 0.
inline Approx gate(Approx g, bool pass, bool uncertain) {
  return gate_as(other_side(Convention::GateGradByProduct), g, pass, uncertain);
}

// The interval x ± e reaches the point k (a kink of the op).
inline bool touches(Approx x, double k) {
  return indeterminate(x) || (x.e > 0 && std::fabs(x.v - k) <= x.e);
}

} // namespace burnmark::ref
