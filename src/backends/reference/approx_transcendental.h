// Trigonometric, hyperbolic, error-function and gamma-family ops of the reference backend:
// forward values computed from the f32 input in double (long double for digamma and trigamma),
// rounded once to f32, with a bound on how far a correct f32 library may land; backward rules in
// the order of operations of PyTorch 1.13.1's derivatives.yaml. docs/conventions_transcendental.md
// lists every rule, its source and its special values.
#pragma once

#include <cmath>
#include <limits>

#include "approx.h"
#include "burnmark/ir/op.h"

namespace burnmark::ref {

namespace transcendental_detail {

inline constexpr Approx kOne{1.0, 0.0};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr long double kPiL = 3.141592653589793238462643383279502884L;

// Spread of f over [x - e, x + e] for an f that is monotone, convex or concave there: the
// extreme deviation from z sits at an endpoint (for a convex f, f(t) >= z + f'(x)(t - x) and
// |f'(x)| e is at most the larger endpoint secant). Every op below is one of the three on each
// pole-free interval, except sin and cos.
inline double endpoint_spread(double (*f)(double), Approx a, double z) {
  if (a.e == 0) return 0.0;
  return std::max(std::fabs(f(a.v + a.e) - z), std::fabs(f(a.v - a.e) - z));
}

// finish_transcendental with another ulps allowance (units of storage.u).
inline Approx finish_ulps(double z, double e, double ulps) {
  const double mag = std::fabs(z);
  return finish(z, mag < 0x1p-126 ? e + mag : e, ulps);
}

// 1 / sqrt(s): LibTorch's rsqrt is a division by a square root (two roundings), vector body and
// scalar tail alike (vec256_float.h: _mm256_div_ps(1, _mm256_sqrt_ps(x))).
inline Approx rsqrt(Approx s) {
  return one_kernel([&] { return div(kOne, sqrt(s)); });
}

// The input interval crosses the edge of a closed domain [-1, 1]: an f32 library may land inside
// (a finite value) or outside (NaN). An interval wholly outside is NaN for sure.
inline bool crosses_unit(Approx x) {
  return x.e > 0 && std::fabs(x.v) - x.e <= 1 && std::fabs(x.v) + x.e > 1;
}

// The interval holds 0 or a negative integer (the poles of lgamma, digamma, trigamma).
inline bool gamma_pole_within(Approx x) {
  if (x.e == 0) return false;
  const double lo = x.v - x.e;
  if (lo > 0) return false;
  return std::floor(std::min(x.v + x.e, 0.0)) >= lo;
}

inline double tan_d(double x) {
  return std::tan(x);
}
inline double asin_d(double x) {
  return std::asin(x);
}
inline double acos_d(double x) {
  return std::acos(x);
}
inline double atan_d(double x) {
  return std::atan(x);
}
inline double sinh_d(double x) {
  return std::sinh(x);
}
inline double cosh_d(double x) {
  return std::cosh(x);
}
inline double asinh_d(double x) {
  return std::asinh(x);
}
inline double acosh_d(double x) {
  return std::acosh(x);
}
inline double atanh_d(double x) {
  return std::atanh(x);
}
inline double erf_d(double x) {
  return std::erf(x);
}
inline double erfc_d(double x) {
  return std::erfc(x);
}

// glibc's lgamma writes the global signgam; lgamma_r keeps the reference thread-safe. glibc's
// double lgamma (2.22+) is accurate near the negative zeros too
// (sysdeps/ieee754/dbl-64/lgamma_neg.c).
inline double lgamma_d(double x) {
#if defined(__GLIBC__)
  int sign = 0;
  return ::lgamma_r(x, &sign);
#else
  return std::lgamma(x);
#endif
}

// Inverse error function: an initial guess (M. Giles, "Approximating the erfinv function", GPU
// Computing Gems, 2011; accurate to ~1e-7) refined by Halley steps. For |y| > 1/2 the residual is
// taken on erfc, whose argument 1 - |y| is exact, so the steps keep their relative accuracy up to
// y = 1 - 2^-24; on erf itself, erf(x) - y cancels there.
inline double erfinv_d(double y) {
  const double a = std::fabs(y);
  if (!(a <= 1)) return kNaN;
  if (a == 1) return std::copysign(std::numeric_limits<double>::infinity(), y);
  if (a < 0x1p-30) return y * 0.886226925452758013649083741671; // sqrt(pi)/2; y^3 term < 2^-60
  double w = -std::log((1.0 - a) * (1.0 + a));
  double p;
  if (w < 5.0) {
    w -= 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = std::sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  double x = p * a;
  for (int i = 0; i < 4; ++i) {
    const double f = a <= 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    const double d = 1.1283791670955126 * std::exp(-x * x); // erf'(x)
    const double step = f / (d + x * f);                    // Halley: erf'' = -2x erf'
    x -= step;
    if (std::fabs(step) <= 0x1p-56 * x) break;
  }
  return std::copysign(x, y);
}

// pi / tan(pi x) and pi^2 / sin^2(pi x) with x reduced exactly to r = x - nearest integer, so
// that the period costs nothing at large |x|.
inline long double pi_cot_pi(long double x) {
  const long double r = x - std::nearbyint(x);
  return kPiL / std::tan(kPiL * r);
}
inline long double pi2_csc2_pi(long double x) {
  const long double r = x - std::nearbyint(x);
  const long double s = std::sin(kPiL * r);
  return kPiL * kPiL / (s * s);
}

// Digamma in long double (64-bit mantissa on x86-64), so that the cancellation near the root
// 1.4616 and near the negative roots still leaves f32 precision: reflection for x < 0,
// recurrence up to x >= 20, then the asymptotic series (next term below 1e-20 relative).
// Poles: psi(+0) = -inf, psi(-0) = +inf (the one-sided limits, what LibTorch's calc_digamma
// returns and PyTorch documents for +0 since 1.8), negative integers NaN (the limits from the
// two sides are +inf and -inf); psi(-inf) = NaN, psi(+inf) = +inf.
inline double digamma_d(double xd) {
  if (std::isnan(xd)) return xd;
  if (xd == 0) return std::copysign(std::numeric_limits<double>::infinity(), -xd);
  if (xd < 0 && xd == std::floor(xd)) return kNaN;
  if (xd == std::numeric_limits<double>::infinity()) return xd;
  long double x = xd;
  long double acc = 0;
  if (x < 0) {
    acc = -pi_cot_pi(x);
    x = 1 - x;
  }
  for (; x < 20; x += 1)
    acc -= 1 / x;
  const long double ix2 = 1 / (x * x);
  const long double series =
      ix2 *
      (1.0L / 12 -
       ix2 * (1.0L / 120 -
              ix2 * (1.0L / 252 -
                     ix2 * (1.0L / 240 - ix2 * (1.0L / 132 - ix2 * (691.0L / 32760 - ix2 / 12))))));
  return static_cast<double>(acc + (std::log(x) - 0.5L / x - series));
}

// Trigamma, psi'(x) = sum 1/(x+k)^2, likewise; +inf at 0 and the negative integers (the limit
// from both sides, as C99 Annex F gives lgamma's poles +inf); trigamma(+-inf) = 0 and NaN.
inline double trigamma_d(double xd) {
  if (std::isnan(xd)) return xd;
  if (xd == std::numeric_limits<double>::infinity()) return 0.0;
  if (xd == -std::numeric_limits<double>::infinity()) return kNaN;
  if (xd <= 0 && xd == std::floor(xd)) return std::numeric_limits<double>::infinity();
  long double x = xd;
  long double acc = 0;
  long double sign = 1;
  if (x < 0) { // psi'(x) + psi'(1 - x) = pi^2 / sin^2(pi x)
    acc = -pi2_csc2_pi(x);
    sign = -1;
    x = 1 - x;
  }
  for (; x < 20; x += 1)
    acc += 1 / (x * x);
  const long double ix = 1 / x;
  const long double ix2 = ix * ix;
  const long double series =
      ix + ix2 / 2 +
      ix * ix2 *
          (1.0L / 6 -
           ix2 * (1.0L / 30 -
                  ix2 * (1.0L / 42 -
                         ix2 * (1.0L / 30 -
                                ix2 * (5.0L / 66 -
                                       ix2 * (691.0L / 2730 -
                                              ix2 * (7.0L / 6 - ix2 * 3617.0L / 510)))))));
  return static_cast<double>(sign * (acc + series));
}

// Ulps allowances (units of storage.u = half an f32 ulp; k storage.u |z| is at least k/2 ulps): the
// error of the f32 library LibTorch calls, plus our own half ulp, measured against these double
// values. Sleef u10 kernels (sin ... erf, lgamma) are within 1 ulp (measured: 0.9); Sleef's erfc
// u15 within 1.5 (measured 1.1); glibc 2.36's float asinh/acosh/atanh within 2 (measured 1.8);
// glibc's lgammaf, LibTorch's scalar tail of lgamma, within 2.1 ulps for x > 0 and 5.2 for x < 0.
// erfinv, digamma and trigamma have no vendor kernel; a correct f32 erfinv is within 2 ulps
// (CUDA's erfinvf documents 2), digamma and trigamma within 1 (a double evaluation rounded once).
// LibTorch's own float code for these three is far worse (docs/conventions_transcendental.md):
// the allowance is not widened for it.
inline constexpr double kU10 = kTranscendentalUlps;
inline constexpr double kU15 = 4;
inline constexpr double kGlibcUlps = 5;
inline constexpr double kErfinvUlps = 5;
inline constexpr double kLgammaPosUlps = 6;
inline constexpr double kLgammaNegUlps = 12;
// Near lgamma's zeros on the negative axis the result is the difference of two O(1) terms
// (log(pi / |sin(pi x)|) - lgamma(1 - x)); Sleef documents lgammaf_u10 there as within
// max(1 ulp, 1e-8) absolute.
inline constexpr double kLgammaNegAbs = 1e-8;

inline Approx trigamma(Approx x) {
  const double z = trigamma_d(x.v);
  if (indeterminate(x) || gamma_pole_within(x)) return unknown(z);
  return finish_ulps(z, endpoint_spread(trigamma_d, x, z), kU10); // convex between poles
}

// PyTorch's docs of torch.sinh / torch.cosh note that the CPU kernels "may use the Sleef library,
// which rounds very large results to infinity" (PR #49413). That note describes a defect, not an
// intended result: the value depends on the element's position (vector body or scalar tail),
// upstream keeps issue #48641 open as a bug and fixed it in PR #184359. So the reference gives
// the correct f32 value and the fuzzer reports the difference (bugs.md,
// libtorch-cosh-vector-overflow) instead of calling it indeterminate.
inline Approx sleef_hyperbolic(double z, Approx, double spread) {
  return finish_transcendental(z, spread);
}

} // namespace transcendental_detail

// ---- trigonometric ----

// |sin(x + t) - sin(x)| = 2 |cos(x + t/2)| |sin(t/2)| <= |t| (|cos x| + |t|/2), capped at 2.
// glibc's double sin/cos/tan reduce huge arguments exactly (Payne-Hanek), so the value is the
// correctly rounded one up to 3e38.
inline Approx sin_forward(Approx x, const Attrs&) {
  const double z = std::sin(x.v);
  if (indeterminate(x)) return unknown(z);
  const double e = x.e == 0 ? 0.0 : std::min(2.0, x.e * (std::fabs(std::cos(x.v)) + x.e / 2));
  return finish_transcendental(z, e);
}
inline Approx cos_forward(Approx x, const Attrs&) {
  const double z = std::cos(x.v);
  if (indeterminate(x)) return unknown(z);
  const double e = x.e == 0 ? 0.0 : std::min(2.0, x.e * (std::fabs(std::sin(x.v)) + x.e / 2));
  return finish_transcendental(z, e);
}
// self: grad * self.cos()
inline Approx sin_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return mul(g, cos_forward(x, at));
}
// self: grad * -self.sin()
inline Approx cos_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return mul(g, neg(sin_forward(x, at)));
}

// Indeterminate when the interval holds a pole pi/2 + k pi: it is a period wide, or tan, which
// increases between poles, wraps around from +inf to -inf inside it.
inline Approx tan_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::tan(x.v);
  if (indeterminate(x)) return unknown(z);
  if (x.e == 0) return finish_transcendental(z, 0.0);
  if (2 * x.e >= 3.14159 || std::tan(x.v - x.e) > std::tan(x.v + x.e)) return unknown(z);
  return finish_transcendental(z, endpoint_spread(tan_d, x, z));
}
// self: grad * (1 + result.pow(2)); pow(y, 2) is y * y
inline Approx tan_backward(Approx g, Approx, Approx y, const Attrs&) {
  return mul(g, add(transcendental_detail::kOne, mul(y, y)));
}

// asin and acos: NaN outside [-1, 1], the exact edge values +-pi/2, 0 and pi at +-1;
// indeterminate when the interval crosses +-1 (NaN or not).
inline Approx asin_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::asin(x.v);
  if (indeterminate(x) || crosses_unit(x)) return unknown(z);
  return finish_transcendental(z, std::fabs(x.v) > 1 ? 0.0 : endpoint_spread(asin_d, x, z));
}
inline Approx acos_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::acos(x.v);
  if (indeterminate(x) || crosses_unit(x)) return unknown(z);
  return finish_transcendental(z, std::fabs(x.v) > 1 ? 0.0 : endpoint_spread(acos_d, x, z));
}
// self: grad * (-self * self + 1).rsqrt(); inf at +-1 (1/sqrt(0)), NaN outside, indeterminate
// where the interval reaches +-1 (sqrt and div see the interval of 1 - x^2 reach 0).
inline Approx asin_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace transcendental_detail;
  return mul(g, rsqrt(add(mul(neg(x), x), kOne)));
}
// self: grad * -((-self * self + 1).rsqrt())
inline Approx acos_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace transcendental_detail;
  return mul(g, neg(rsqrt(add(mul(neg(x), x), kOne))));
}

inline Approx atan_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::atan(x.v);
  if (indeterminate(x)) return unknown(z);
  return finish_transcendental(z, endpoint_spread(atan_d, x, z));
}
// self: grad / (self * self + 1); x * x overflows from 1.8447e19, giving 0
inline Approx atan_backward(Approx g, Approx x, Approx, const Attrs&) {
  return div(g, add(mul(x, x), transcendental_detail::kOne));
}

// ---- hyperbolic ----

// sinh and cosh overflow f32 from |x| = 89.41599 (ln(2 FLT_MAX)); below that the result is
// finite, whatever Sleef's vector kernel does (sleef_hyperbolic).
inline Approx sinh_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::sinh(x.v);
  if (indeterminate(x)) return unknown(z);
  return sleef_hyperbolic(z, x, endpoint_spread(sinh_d, x, z));
}
inline Approx cosh_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::cosh(x.v);
  if (indeterminate(x)) return unknown(z);
  return sleef_hyperbolic(z, x, endpoint_spread(cosh_d, x, z)); // convex
}
// self: grad * self.cosh()
inline Approx sinh_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return mul(g, cosh_forward(x, at));
}
// self: grad * self.sinh()
inline Approx cosh_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return mul(g, sinh_forward(x, at));
}

// asinh, acosh, atanh run through glibc's float functions in LibTorch (a scalar loop).
inline Approx asinh_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::asinh(x.v);
  if (indeterminate(x)) return unknown(z);
  return finish_ulps(z, endpoint_spread(asinh_d, x, z), kGlibcUlps);
}
// self: grad * (self.pow(2) + 1).rsqrt(); x * x overflows from 1.8447e19, so the gradient is
// 1/sqrt(inf) = 0 there although asinh'(x) = 1/x is still a normal f32.
inline Approx asinh_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace transcendental_detail;
  return mul(g, rsqrt(add(mul(x, x), kOne)));
}

// NaN below 1, acosh(1) = +0; indeterminate when the interval crosses 1.
inline Approx acosh_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::acosh(x.v);
  if (indeterminate(x) || (x.e > 0 && x.v - x.e < 1 && x.v + x.e >= 1)) return unknown(z);
  return finish_ulps(z, x.v < 1 ? 0.0 : endpoint_spread(acosh_d, x, z), kGlibcUlps);
}
// self: grad * (self * self - 1).rsqrt() (real case; derivatives.yaml since PR #80841):
// +inf at 1, NaN on (-1, 1), finite for x <= -1 although the forward is NaN there.
inline Approx acosh_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace transcendental_detail;
  return mul(g, rsqrt(sub(mul(x, x), kOne)));
}

// atanh(+-1) = +-inf (pole), NaN beyond; indeterminate when the interval reaches +-1.
inline Approx atanh_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::atanh(x.v);
  if (indeterminate(x) || (x.e > 0 && std::fabs(x.v) - x.e <= 1 && std::fabs(x.v) + x.e >= 1))
    return unknown(z);
  return finish_ulps(z, std::fabs(x.v) > 1 ? 0.0 : endpoint_spread(atanh_d, x, z), kGlibcUlps);
}
// self: grad * 1 / (1 - self.pow(2)), i.e. (grad * 1) / (1 - x * x); +-inf at +-1
inline Approx atanh_backward(Approx g, Approx x, Approx, const Attrs&) {
  using namespace transcendental_detail;
  return div(g, sub(kOne, mul(x, x)));
}

// ---- error functions ----

inline Approx erf_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::erf(x.v);
  if (indeterminate(x)) return unknown(z);
  return finish_transcendental(z, endpoint_spread(erf_d, x, z));
}
// erfc underflows into the subnormals from x = 9.2 and to 0 beyond 10.05.
inline Approx erfc_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = std::erfc(x.v);
  if (indeterminate(x)) return unknown(z);
  return finish_ulps(z, endpoint_spread(erfc_d, x, z), kU15);
}
// self: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad; the double constant meets a float tensor
// as a wrapped scalar and is rounded to f32 first.
inline Approx erf_backward(Approx g, Approx x, Approx, const Attrs&) {
  const Approx c = scalar_operand(1.1283791670955126);
  return mul(mul(c, exp(neg(mul(x, x)))), g);
}
// self: -2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
inline Approx erfc_backward(Approx g, Approx x, Approx, const Attrs&) {
  const Approx c = scalar_operand(-1.1283791670955126);
  return mul(mul(c, exp(neg(mul(x, x)))), g);
}

// erfinv(+-1) = +-inf, NaN outside [-1, 1]; indeterminate when the interval reaches +-1.
inline Approx erfinv_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = erfinv_d(x.v);
  if (indeterminate(x) || (x.e > 0 && std::fabs(x.v) - x.e <= 1 && std::fabs(x.v) + x.e >= 1))
    return unknown(z);
  return finish_ulps(z, std::fabs(x.v) > 1 ? 0.0 : endpoint_spread(erfinv_d, x, z), kErfinvUlps);
}
// self: 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad; self.erfinv() is the forward
// result y again (the same kernel on the same input).
inline Approx erfinv_backward(Approx g, Approx, Approx y, const Attrs&) {
  const Approx c = scalar_operand(0.88622692545275801);
  return mul(mul(c, exp(mul(y, y))), g);
}

// ---- gamma family ----

// C99 F.9.5.3: lgamma(1) = lgamma(2) = +0, lgamma(+-0) = lgamma(negative integer) = +inf,
// lgamma(+-inf) = +inf. Overflows f32 from x = 4.0850034e36. Convex between poles.
inline Approx lgamma_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = lgamma_d(x.v);
  if (indeterminate(x) || gamma_pole_within(x)) return unknown(z);
  const double e = endpoint_spread(lgamma_d, x, z);
  if (x.v < 0) return finish_ulps(z, e + kLgammaNegAbs, kLgammaNegUlps);
  return finish_ulps(z, e, kLgammaPosUlps);
}
inline Approx digamma_forward(Approx x, const Attrs&);
// self: grad * digamma(self)
inline Approx lgamma_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return mul(g, digamma_forward(x, at));
}

// Monotone between poles. For x < 0 every f32 implementation reflects,
// psi(x) = psi(1 - x) - pi / tan(pi x), and near the negative roots the two terms cancel: its
// rounding errors scale with the terms, not with the result.
inline Approx digamma_forward(Approx x, const Attrs&) {
  using namespace transcendental_detail;
  const double z = digamma_d(x.v);
  if (indeterminate(x) || gamma_pole_within(x)) return unknown(z);
  double e = endpoint_spread(digamma_d, x, z);
  if (x.v < 0 && std::isfinite(z)) e += kU10 * storage.u * 2 * std::fabs(digamma_d(1 - x.v));
  return finish_ulps(z, e, kU10);
}
// self: grad * polygamma(1, self)
inline Approx digamma_backward(Approx g, Approx x, Approx, const Attrs&) {
  return mul(g, transcendental_detail::trigamma(x));
}

} // namespace burnmark::ref
