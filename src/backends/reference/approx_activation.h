// Activations of the reference backend: the exact function in double, rounded once to f32, with
// its bound (approx.h). The rules, their sources and the LibTorch behaviours they do not mirror
// are in docs/conventions_activation.md.
//
// Forward values are the mathematics, limits included: gelu, silu, mish at -inf are -0 and
// softsign(±inf) = ±1 (LibTorch: NaN, from -inf * 0 and inf / inf). Bounds are what a correct
// f32 library achieves, so where LibTorch's kernel cancels (exp(x) - 1 in elu, 1 + erf in gelu)
// its error shows up instead of being hidden.
//
// Gradients are g * f'(x), f' exact. derivatives.yaml names a dedicated kernel for most of these
// ops (gelu_backward, silu_backward, ...); its f32 formula is an implementation detail, so only
// its rounding enters the bound: each f32 step may err by a few units of its operands' size
// (`terms`), which is what a cancelling formula such as cdf + x * pdf loses. At kinks and at NaN
// the choice of the kernel's scalar form (which agrees with torch/_decomp) is followed; its AVX2
// form differs at NaN for several ops, which docs/conventions_activation.md lists as findings.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "approx.h"
#include "burnmark/ir/op.h"

namespace burnmark::ref {
namespace act {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// exp(x) is below the f32 normal range from here down (ln 2^-126): the kernels' exp and
// 1 / (1 + exp(-x)) lose precision or flush to 0 there.
inline constexpr double kExpSubnormal = -87.33654475;
// Ulps (units of storage.u) for kernels built from a few Sleef u10 calls and roundings.
inline constexpr double kKernelUlps = 4;
// selu's constants as PyTorch documents them (torch.nn.SELU).
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
inline constexpr double kSeluScale = 1.0507009873554804934193349852946;

// The image of [x - e, x + e] under f, relative to z = f(x), for f monotone between the
// critical points c0 and c1 (NaN: none). A slope at x alone misses saturation (approx.h).
template <class F> double spread(F f, Approx x, double z, double c0 = kNaN, double c1 = kNaN) {
  if (x.e == 0 || !std::isfinite(x.v)) return 0.0;
  const double lo = x.v - x.e;
  const double hi = x.v + x.e;
  double d = std::max(std::fabs(f(lo) - z), std::fabs(f(hi) - z));
  if (lo < c0 && c0 < hi) d = std::max(d, std::fabs(f(c0) - z));
  if (lo < c1 && c1 < hi) d = std::max(d, std::fabs(f(c1) - z));
  return d;
}

// A rounded result of a composite kernel: `ulps` of the result, plus kTermUlps for each
// intermediate the kernel rounds, `terms` being the sum of their magnitudes (scaled to the
// result) where a later step cancels them; a result below the normal range may come out as 0.
inline constexpr double kTermUlps = 2;
inline Approx fin(double z, double e, double ulps, double terms = 0) {
  const double mag = std::fabs(z);
  if (mag < 0x1p-126) e += mag;
  return finish(z, e + kTermUlps * storage.u * terms, ulps);
}

// g * f'(x) with f'(x) = d known within e_d (input spread plus the kernel's rounding).
inline Approx times(Approx g, double d, double e_d, double ulps, double terms = 0) {
  return mul(g, fin(d, e_d, ulps, terms));
}

// The change of f' over the interval, from a bound on |f''| and the range of f'.
inline double slope_spread(Approx x, double f2_max, double f1_range) {
  return x.e == 0 ? 0.0 : std::min(f2_max * x.e, f1_range);
}

inline double sigmoid(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}
inline double softplus1(double x) { // log(1 + exp(x)) without overflow
  return std::max(x, 0.0) + std::log1p(std::exp(-std::fabs(x)));
}
// The error of an f32 tanh(u): an ulp, but no more than its distance to ±1, 2 sigmoid(-2|u|)
// (a library returns ±1 exactly once tanh has saturated in f32).
inline double sat_err(double u) {
  return std::min(2 * storage.u * std::fabs(std::tanh(u)), 4 * sigmoid(-2 * std::fabs(u)));
}

inline constexpr double kSqrtHalf = 0.70710678118654752440;
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;
inline double gelu_erf(double x) {
  if (x == -kInf) return -0.0;
  return 0.5 * x * std::erfc(-x * kSqrtHalf); // erfc keeps Phi(x) accurate for x << 0
}
inline constexpr double kGeluBeta = 0.79788456080286535588; // sqrt(2 / pi)
inline constexpr double kGeluKappa = 0.044715;
inline double gelu_tanh_inner(double x) {
  return kGeluBeta * (x + kGeluKappa * x * x * x);
}
inline double gelu_tanh(double x) {
  if (x == -kInf) return -0.0;
  return x * sigmoid(2 * gelu_tanh_inner(x)); // 0.5 (1 + tanh u) = sigmoid(2u), no cancellation
}
inline double silu(double x) {
  return x == -kInf ? -0.0 : x * sigmoid(x);
}
inline double mish(double x) {
  return x == -kInf ? -0.0 : x * std::tanh(softplus1(x));
}
// Minima (numerically, in double): gelu erf / tanh, silu, mish.
inline constexpr double kGeluMin = -0.75179152472435207;
inline constexpr double kGeluTanhMin = -0.75246142210065869;
inline constexpr double kSiluMin = -1.2784645427862351;
inline constexpr double kMishMin = -1.1924312145418896;

// elu(x; alpha, scale, input_scale) as elu_kernel defines it: scale x above 0, else
// alpha scale (exp(input_scale x) - 1); expm1 keeps the exact value near 0-. At ±0 the
// documented alpha (exp(x) - 1) is alpha * +0.
inline double elu_general(double x, double alpha, double scale, double in_scale) {
  if (x > 0 || std::isnan(x)) return scale * x;
  if (x == 0) return alpha * scale * 0.0;
  return alpha * scale * std::expm1(in_scale * x);
}

// exp(x * c) with c != 1 rounds its argument (and c itself, celu's f32(1 / alpha)): a relative
// error of the result of 2 |c x| u.
inline double arg_err(double x, double c) {
  return c == 1 ? 0.0 : 2 * storage.u * std::fabs(c * x);
}

inline Approx elu_forward(Approx x, double alpha, double scale, double in_scale) {
  const auto f = [=](double t) { return elu_general(t, alpha, scale, in_scale); };
  const double z = f(x.v);
  if (indeterminate(x)) return unknown(z);
  // Monotone on each side of 0 (decreasing below 0 when alpha < 0).
  const double e = spread(f, x, z, 0.0);
  if (x.v > 0 || std::isnan(x.v)) return scale == 1 ? Approx{z, x.e} : fin(z, e, kExactUlps);
  return fin(z, e + arg_err(x.v, in_scale) * std::fabs(alpha * scale) * std::exp(in_scale * x.v),
             kKernelUlps);
}

// elu_backward(grad, alpha, scale, input_scale, is_result=false, self): x <= 0 gives
// grad * input_scale * alpha * scale * exp(input_scale x), else grad * scale (NaN: scale, the
// scalar kernel's choice). The kink at 0 is real unless alpha * input_scale == 1 (celu, elu 1).
inline Approx elu_backward(Approx g, Approx x, double alpha, double scale, double in_scale) {
  const double neg = in_scale * alpha * scale;
  const auto d = [=](double t) { return t <= 0 ? neg * std::exp(in_scale * t) : scale; };
  const bool kink = std::fabs(alpha * in_scale - 1) > 1e-12;
  const double dv = d(x.v);
  if (indeterminate(x)) return {mul(g, {to_storage(dv), 0.0}).v, kInf};
  const double e =
      spread(d, x, dv, 0.0) + (x.v <= 0 ? arg_err(x.v, in_scale) * std::fabs(dv) : 0.0);
  const Approx r = x.v <= 0
                       ? times(g, dv, e, kKernelUlps)
                       : (scale == 1 ? g : times(g, dv, e, kExactUlps)); // scale rounded to f32
  if (kink && touches(x, 0.0) && !(g.v == 0 && g.e == 0)) return {r.v, kInf};
  return r;
}

} // namespace act

// ---- smooth activations ----

// logsigmoid = min(x, 0) - log1p(exp(-|x|)): logsigmoid(-100) = -100, logsigmoid(+inf) = -0.
inline Approx logsigmoid_forward(Approx x, const Attrs&) {
  const auto f = [](double t) { return -act::softplus1(-t); };
  const double z = f(x.v);
  if (indeterminate(x)) return unknown(z);
  return act::fin(z, act::spread(f, x, z), act::kKernelUlps); // both terms <= 0: no cancellation
}
// log_sigmoid_backward(grad, self, buffer): grad * sigmoid(-x), monotone in x.
inline Approx logsigmoid_backward(Approx g, Approx x, Approx, const Attrs&) {
  const auto d = [](double t) { return act::sigmoid(-t); };
  const double dv = d(x.v);
  if (indeterminate(x)) return unknown(g.v * dv);
  return act::times(g, dv, act::spread(d, x, dv), act::kKernelUlps);
}

// softplus(x; beta, threshold): x where f32(x * beta) > threshold (documented: "reverts to the
// linear function"), else log1p(exp(beta x)) / beta. The switch is taken on the rounded product,
// as the kernel does (0.2f * 10 rounds to 2, which is not above 2).
namespace act {
inline bool softplus_linear(double x, double beta, double threshold) {
  return to_opmath(x * beta) > threshold;
}
inline double softplus_soft(double x, double beta) {
  return softplus1(beta * x) / beta;
}
// Whether the two ends of the interval take different branches.
inline bool softplus_switches(Approx x, double beta, double threshold) {
  return x.e > 0 &&
         softplus_linear(x.v - x.e, beta, threshold) != softplus_linear(x.v + x.e, beta, threshold);
}
} // namespace act

inline Approx softplus_forward(Approx x, const Attrs& at) {
  const double beta = at.beta;
  const double th = at.threshold;
  const bool lin = act::softplus_linear(x.v, beta, th);
  const auto soft = [beta](double t) { return act::softplus_soft(t, beta); };
  const double z = lin ? x.v : soft(x.v);
  if (indeterminate(x)) return unknown(z);
  // Both branches increase with x, so the union of their images bounds an interval that
  // straddles the switch; a jump larger than the rounding makes the element indeterminate.
  if (act::softplus_switches(x, beta, th)) {
    const double lo = x.v - x.e;
    const double hi = x.v + x.e;
    const double e = std::max(std::max(soft(hi), hi) - z, z - std::min(soft(lo), lo));
    const double jump = std::fabs(soft(x.v) - x.v);
    if (jump > act::kKernelUlps * storage.u * std::fabs(z)) return {to_storage(z), kInf};
    return act::fin(z, e + jump, act::kKernelUlps);
  }
  if (lin) return {x.v, x.e};
  // Rounding beta x costs up to |beta x| u in exp; exp below the normal range loses the rest.
  const double w = beta * x.v;
  const double arg =
      beta == 1 ? 0.0 : 2 * storage.u * std::fabs(w) * act::sigmoid(w) / std::fabs(beta);
  const double sub = w < act::kExpSubnormal ? std::fabs(z) : 0.0;
  return act::fin(z, act::spread(soft, x, z) + arg + sub, act::kKernelUlps);
}
// softplus_backward: grad above the switch, else grad * z / (z + 1), z = exp(beta x), i.e.
// grad * sigmoid(beta x).
inline Approx softplus_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const double beta = at.beta;
  const double th = at.threshold;
  const auto d = [beta](double t) { return act::sigmoid(beta * t); };
  const bool lin = act::softplus_linear(x.v, beta, th);
  const double dv = lin ? 1.0 : d(x.v);
  if (indeterminate(x)) return unknown(g.v * dv);
  if (act::softplus_switches(x, beta, th)) {
    const double jump = std::fabs(1 - d(x.v));
    if (jump > act::kKernelUlps * storage.u && !(g.v == 0 && g.e == 0))
      return {to_storage(g.v * dv), kInf};
    return act::times(g, dv, act::spread(d, x, dv) + jump, act::kKernelUlps);
  }
  if (lin) return g;
  const double w = beta * x.v;
  const double arg = beta == 1 ? 0.0 : 2 * storage.u * std::fabs(w) * dv * act::sigmoid(-w);
  const double sub = w < act::kExpSubnormal ? dv : 0.0;
  return act::times(g, dv, act::spread(d, x, dv) + arg + sub, act::kKernelUlps);
}

// gelu: variant 0 x * Phi(x) (approximate "none"), variant 1 the documented tanh form.
inline Approx gelu_forward(Approx x, const Attrs& at) {
  const bool tanh_form = at.variant == 1;
  const double z = tanh_form ? act::gelu_tanh(x.v) : act::gelu_erf(x.v);
  if (indeterminate(x)) return unknown(z);
  const double e = tanh_form ? act::spread(act::gelu_tanh, x, z, act::kGeluTanhMin)
                             : act::spread(act::gelu_erf, x, z, act::kGeluMin);
  return act::fin(z, e, act::kKernelUlps);
}
// gelu_backward(grad, self, approximate). erf: grad * (cdf + x * pdf); tanh: grad *
// (0.5 (1 + t) + 0.5 x (1 - t^2) u'), t = tanh(u). Limits at ±inf are 1 and 0 (LibTorch: NaN,
// from inf * 0). The kernels round exp's argument x * x / 2 and cancel near the minimum of gelu.
inline Approx gelu_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const double t = x.v;
  double d;
  double terms;
  double extra = 0;
  if (std::isinf(t)) {
    d = t > 0 ? 1.0 : 0.0;
    terms = 0;
  } else if (at.variant == 1) {
    // tanh(u) is off by its own ulp (none once saturated) and by u's roundings through 1 - t^2;
    // the error of t reaches d through 0.5 (1 + t) and through 1 - t^2.
    const double u = act::gelu_tanh_inner(t);
    const double th = std::tanh(u);
    const double du = act::kGeluBeta * (1 + 3 * act::kGeluKappa * t * t);
    const double s = act::sigmoid(2 * u);
    const double sech2 = 4 * s * act::sigmoid(-2 * u); // 1 - tanh^2 without cancellation
    d = s + 0.5 * t * sech2 * du;
    const double et = act::sat_err(u) + 3 * storage.u * sech2 * std::fabs(u);
    extra = et * (0.5 + std::fabs(t) * du * std::fabs(th));
    terms = s + 0.5 * std::fabs(t) * du * sech2;
  } else {
    const double cdf = 0.5 * std::erfc(-t * act::kSqrtHalf);
    const double xpdf = t * std::exp(-0.5 * t * t) * act::kInvSqrt2Pi;
    d = cdf + xpdf;
    // cdf = 0.5 (1 + erf): erf's error and the rounding of 1 + erf; exp's argument x^2 / 2. The
    // constant 1 is for oneDNN's gelu_erf backward (LibTorch's path for contiguous f32), which
    // was measured up to 4.4u off near 0.
    terms = 1 + cdf + 1.5 * std::fabs(2 * cdf - 1) + std::fabs(xpdf) * (1 + 0.5 * t * t);
  }
  if (indeterminate(x)) return unknown(g.v * d);
  return act::times(g, d, act::slope_spread(x, 0.8, 1.26) + extra, act::kKernelUlps, terms);
}

// silu = x * sigmoid(x).
inline Approx silu_forward(Approx x, const Attrs&) {
  const double z = act::silu(x.v);
  if (indeterminate(x)) return unknown(z);
  // x / (1 + exp(-x)) is x / inf = -0 once exp(-x) overflows.
  const double sub = x.v < act::kExpSubnormal ? std::fabs(z) : 0.0;
  return act::fin(z, act::spread(act::silu, x, z, act::kSiluMin) + sub, act::kKernelUlps);
}
// silu_backward: grad * s * (1 + x (1 - s)), s = sigmoid(x); limits 1 at +inf, 0 at -inf.
// The rounding of s costs |x| u in 1 - s.
inline Approx silu_backward(Approx g, Approx x, Approx, const Attrs&) {
  const double t = x.v;
  const double s = act::sigmoid(t);
  const double d = std::isinf(t) ? (t > 0 ? 1.0 : 0.0) : s + t * s * act::sigmoid(-t);
  if (indeterminate(x)) return unknown(g.v * d);
  const double terms = std::isinf(t) ? 0.0 : s * (1 + std::fabs(t));
  const double sub = t < act::kExpSubnormal ? std::fabs(d) : 0.0;
  return act::times(g, d, act::slope_spread(x, 0.5, 1.2) + sub, act::kKernelUlps, terms);
}

// mish = x * tanh(softplus(x)).
inline Approx mish_forward(Approx x, const Attrs&) {
  const double z = act::mish(x.v);
  if (indeterminate(x)) return unknown(z);
  const double sub = x.v < act::kExpSubnormal ? std::fabs(z) : 0.0; // exp(x) subnormal
  return act::fin(z, act::spread(act::mish, x, z, act::kMishMin) + sub, act::kKernelUlps);
}
// mish_backward: grad * (t + x * sigmoid(x) * (1 - t^2)), t = tanh(softplus(x)).
inline Approx mish_backward(Approx g, Approx x, Approx, const Attrs&) {
  const double v = x.v;
  const double t = std::tanh(act::softplus1(v));
  const double s = act::sigmoid(v);
  double d = 1.0;
  double terms = 0;
  double extra = 0;
  if (v == -kInf) {
    d = 0.0;
  } else if (v != kInf) {
    const double sp = act::softplus1(v);
    d = t + v * s * (1 - t * t);
    // t off by its ulp and by softplus's roundings; 1 - t^2 then by 2 |t| times that.
    const double et = act::sat_err(sp) + 4 * storage.u * (1 - t * t) * sp;
    extra = et * (1 + 2 * std::fabs(v) * s * std::fabs(t));
    terms = std::fabs(t) + std::fabs(v) * s * (1 - t * t);
    // Below ln 2^-126 the kernel's sigmoid is 1 / (1 + inf) = 0: d comes out as exp(x), not
    // (1 + x) exp(x), even of the other sign.
    if (v < act::kExpSubnormal) extra += 2 * std::fabs(d);
  }
  if (indeterminate(x)) return unknown(g.v * d);
  return act::times(g, d, act::slope_spread(x, 0.65, 1.21) + extra, act::kKernelUlps, terms);
}

// ---- the elu family (elu_kernel / elu_backward with is_result=false) ----

inline Approx elu_forward(Approx x, const Attrs& at) {
  return act::elu_forward(x, at.alpha, 1.0, 1.0);
}
inline Approx elu_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return act::elu_backward(g, x, at.alpha, 1.0, 1.0);
}
inline Approx selu_forward(Approx x, const Attrs&) {
  return act::elu_forward(x, act::kSeluAlpha, act::kSeluScale, 1.0);
}
inline Approx selu_backward(Approx g, Approx x, Approx, const Attrs&) {
  return act::elu_backward(g, x, act::kSeluAlpha, act::kSeluScale, 1.0);
}
// celu = elu(x, alpha, 1, 1 / alpha): alpha (exp(x / alpha) - 1) below 0; C1 at 0.
inline Approx celu_forward(Approx x, const Attrs& at) {
  return act::elu_forward(x, at.alpha, 1.0, 1.0 / at.alpha);
}
inline Approx celu_backward(Approx g, Approx x, Approx, const Attrs& at) {
  return act::elu_backward(g, x, at.alpha, 1.0, 1.0 / at.alpha);
}

// ---- piecewise linear ----

// leaky_relu: x > 0 ? x : x * slope (one rounded product). With slope 0, -inf gives the limit
// -0 (LibTorch: 0 * -inf = NaN).
inline Approx leaky_relu_forward(Approx x, const Attrs& at) {
  const double s = at.slope;
  const double z = x.v > 0 || std::isnan(x.v) ? x.v : (s == 0 && std::isinf(x.v) ? -0.0 : x.v * s);
  if (indeterminate(x)) return unknown(z);
  const double slope =
      touches(x, 0.0) ? std::max(1.0, std::fabs(s)) : (x.v > 0 ? 1.0 : std::fabs(s));
  return finish_exact(z, scaled(slope, x.e));
}
// leaky_relu_backward(grad, self, slope, false): self > 0 ? grad : grad * slope, so
// leaky_relu'(0) = slope and NaN takes the slope.
inline Approx leaky_relu_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const Approx r = x.v > 0 ? g : mul(g, {at.slope, 0.0});
  if (at.slope != 1 && touches(x, 0.0) && !(g.v == 0 && g.e == 0)) return {r.v, kInf};
  return r;
}

// hardtanh = clamp(x, min_val, max_val) (NaN passes, -0 stays -0 at a bound of 0).
inline Approx hardtanh_forward(Approx x, const Attrs& at) {
  return clamp(x, at.lo, at.hi);
}
// hardtanh_backward: (x <= min || x >= max) ? 0 : grad — 0 at the bounds (unlike clamp) and
// grad at NaN.
inline Approx open_hardtanh_backward(Approx g, Approx x, double lo, double hi) {
  const bool pass = !(x.v <= lo || x.v >= hi);
  return gate(g, pass, touches(x, lo) || touches(x, hi));
}
// The other side of hardtanh-grad-closed is TorchScript's symbolic derivative,
// grad * ((x >= min) * (x <= max)): passed at the bounds, blocked at NaN, by product.
inline Approx hardtanh_backward(Approx g, Approx x, Approx, const Attrs& at) {
  if (!other_side(Convention::HardtanhGradClosed))
    return open_hardtanh_backward(g, x, at.lo, at.hi);
  return gate_as(true, g, x.v >= at.lo && x.v <= at.hi, touches(x, at.lo) || touches(x, at.hi));
}
// relu6 = hardtanh(x, 0, 6), so its gradient is open hardtanh's (TorchScript's relu6 derivative
// is open at the bounds too, so hardtanh-grad-closed does not apply).
inline Approx relu6_forward(Approx x, const Attrs&) {
  return clamp(x, 0.0, 6.0);
}
// The other side of relu-grad-by-product for relu6 is TorchScript's
// grad * ((result > 0) & (result < 6)): blocked at NaN, by product.
inline Approx relu6_backward(Approx g, Approx x, Approx y, const Attrs&) {
  if (!other_side(Convention::ReluGradByProduct)) return open_hardtanh_backward(g, x, 0.0, 6.0);
  return gate_as(true, g, y.v > 0 && y.v < 6, touches(x, 0.0) || touches(x, 6.0));
}

// hardsigmoid = min(max(x + 3, 0), 6) / 6; x + 3 and the division each round.
inline Approx hardsigmoid_forward(Approx x, const Attrs&) {
  if (std::isnan(x.v)) return {x.v, x.e};
  const double z = std::min(std::max(x.v + 3, 0.0), 6.0) / 6;
  if (indeterminate(x)) return unknown(z);
  const bool flat = x.v + x.e < -3 || x.v - x.e > 3;
  return finish(z, flat ? 0.0 : x.e / 6, 2 * kExactUlps);
}
// hardsigmoid_backward: -3 < x < 3 ? grad / 6 : 0 (0 at ±3 and at NaN).
inline Approx hardsigmoid_backward(Approx g, Approx x, Approx, const Attrs&) {
  const bool pass = x.v > -3 && x.v < 3;
  const bool uncertain = touches(x, -3.0) || touches(x, 3.0);
  if (!pass) return gate(g, false, uncertain);
  const double z = g.v / 6;
  if (indeterminate(g)) return unknown(z);
  // The kernel multiplies by f32(1/6): one rounding more than g / 6.
  return gate(finish(z, g.e / 6, 2 * kExactUlps), true, uncertain);
}

// hardswish = x * min(max(x + 3, 0), 6) / 6: -0 for x <= -3 (x times +0), also at -inf
// (LibTorch: -inf * 0 = NaN; the docs give 0 there).
namespace act {
inline double hardswish(double x) {
  if (x <= -3) return -0.0;
  if (x >= 3) return x;
  return x * (x + 3) / 6;
}
} // namespace act
inline Approx hardswish_forward(Approx x, const Attrs&) {
  const double z = std::isnan(x.v) ? x.v : act::hardswish(x.v);
  if (indeterminate(x)) return unknown(z);
  // Three roundings (x + 3, the product, / 6); x * 6 / 6 on the linear side too.
  return act::fin(z, act::spread(act::hardswish, x, z, -1.5), 2 * kExactUlps);
}
// hardswish_backward: x < -3 ? 0 : (x <= 3 ? grad * (x / 3 + 0.5) : grad), so -0.5 at -3, 1.5
// at 3 and grad at NaN (the scalar kernel; its AVX2 form gives grad at 3 and NaN at NaN).
inline Approx hardswish_backward(Approx g, Approx x, Approx, const Attrs&) {
  const bool uncertain = touches(x, -3.0) || touches(x, 3.0);
  if (x.v < -3) return gate(g, false, uncertain);
  if (!(x.v <= 3)) return gate(g, true, uncertain);
  const double d = (2 * x.v + 3) / 6;
  // x / 3 + 0.5 cancels near -1.5: its roundings are of size 0.5 + |x| / 3.
  const Approx r = act::times(g, d, scaled(1.0 / 3, x.e), kExactUlps, 0.5 + std::fabs(x.v) / 3);
  return uncertain && !(g.v == 0 && g.e == 0) ? Approx{r.v, kInf} : r;
}

// softsign = x / (1 + |x|), the C++ frontend's composite (no ATen op); ±1 at ±inf.
namespace act {
inline double softsign(double x) {
  return std::isinf(x) ? std::copysign(1.0, x) : x / (1 + std::fabs(x));
}
} // namespace act
inline Approx softsign_forward(Approx x, const Attrs&) {
  const double z = act::softsign(x.v);
  if (indeterminate(x)) return unknown(z);
  return act::fin(z, act::spread(act::softsign, x, z), 2 * kExactUlps);
}
// Through the composite's autograd (div, add, abs): g / b - g * ((x / b) / b) * sgn(x),
// b = |x| + 1, whose two terms of size |g| / b cancel to g / b^2.
inline Approx softsign_backward(Approx g, Approx x, Approx, const Attrs&) {
  const double b = 1 + std::fabs(x.v);
  const auto d = [](double t) {
    return std::isinf(t) ? 0.0 : 1 / ((1 + std::fabs(t)) * (1 + std::fabs(t)));
  };
  const double dv = d(x.v);
  // An infinite upstream gradient meets inf - inf (x != 0) or inf * 0 (x = 0, where (x / b) / b
  // is 0) in the two terms, so the chain rule in IEEE arithmetic gives NaN, as for tanhshrink.
  if (std::isinf(g.v))
    return {std::numeric_limits<double>::quiet_NaN(), indeterminate(g) ? kInf : 0.0};
  if (indeterminate(x)) return unknown(g.v * dv);
  const double terms = std::isinf(b) ? 0.0 : 2 / b;
  return act::times(g, dv, act::spread(d, x, dv, 0.0), 2 * kExactUlps, terms);
}

// ---- shrinks ----

// hardshrink: -lambd <= x <= lambd ? +0 : x. A jump of lambd at ±lambd.
inline Approx hardshrink_forward(Approx x, const Attrs& at) {
  const double l = at.lambd;
  const bool zero = x.v >= -l && x.v <= l;
  const double z = zero ? 0.0 : x.v;
  if (indeterminate(x)) return unknown(z);
  if (l > 0 && (touches(x, l) || touches(x, -l))) return {z, kInf};
  if (zero && x.v - x.e >= -l && x.v + x.e <= l) return {z, 0.0};
  return {z, x.e};
}
// shrink_backward: -lambd <= x <= lambd ? 0 : grad (0 at ±lambd, grad at NaN).
inline Approx hardshrink_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const double l = at.lambd;
  const bool pass = !(x.v >= -l && x.v <= l);
  return gate(g, pass, touches(x, l) || touches(x, -l));
}
// softshrink: x - lambd above lambd, x + lambd below -lambd, else +0; NaN stays NaN (LibTorch:
// 0, in both kernel forms).
inline Approx softshrink_forward(Approx x, const Attrs& at) {
  const double l = at.lambd;
  if (std::isnan(x.v)) return {x.v, x.e};
  const double z = x.v > l ? x.v - l : (x.v < -l ? x.v + l : 0.0);
  if (indeterminate(x)) return unknown(z);
  if (x.v - x.e >= -l && x.v + x.e <= l) return {z, 0.0};
  return finish_exact(z, x.e); // one correctly rounded subtraction
}
inline Approx softshrink_backward(Approx g, Approx x, Approx y, const Attrs& at) {
  return hardshrink_backward(g, x, y, at);
}

// tanhshrink = x - tanh(x), the frontend's composite: the rounding of tanh(x) is kept in the
// bound, since the subtraction cancels it up to |x| u near 0.
namespace act {
inline double tanhshrink(double x) {
  if (std::isinf(x)) return x;
  const double x2 = x * x;
  if (std::fabs(x) < 0x1p-7) // series: x^3/3 - 2x^5/15 + 17x^7/315
    return x * x2 * (1.0 / 3 - x2 * (2.0 / 15 - x2 * (17.0 / 315)));
  return x - std::tanh(x);
}
} // namespace act
inline Approx tanhshrink_forward(Approx x, const Attrs&) {
  const double z = act::tanhshrink(x.v);
  if (indeterminate(x)) return unknown(z);
  return act::fin(z, act::spread(act::tanhshrink, x, z), kTranscendentalUlps,
                  2 * std::fabs(std::tanh(x.v)));
}
// Through the composite: g + (-g) * (1 - y * y) with y = tanh(x), i.e. g tanh(x)^2, whose two
// terms of size |g| cancel near 0.
inline Approx tanhshrink_backward(Approx g, Approx x, Approx, const Attrs&) {
  const auto d = [](double t) { return std::tanh(t) * std::tanh(t); };
  const double dv = d(x.v);
  // tanhshrink is the composite x - tanh(x) (documented so, and so in LibTorch): an infinite
  // upstream gradient meets inf - inf (1 - y^2 > 0) or inf * 0 (y = ±1 in f32) in its two terms,
  // so the chain rule in IEEE arithmetic gives NaN. An upstream gradient that may as well be
  // finite (indeterminate) leaves the NaN undecided too.
  if (std::isinf(g.v))
    return {std::numeric_limits<double>::quiet_NaN(), indeterminate(g) ? kInf : 0.0};
  if (indeterminate(x)) return unknown(g.v * dv);
  return act::times(g, dv, act::spread(d, x, dv, 0.0), kTranscendentalUlps, 2);
}

// ---- logit ----

// logit = log(x / (1 - x)); variant 1 clamps x to [eps, f32(1 - eps)] first (the kernel's
// bounds, so eps 0.5 gives 0 everywhere). Outside [0, 1] NaN, log(±0) = -inf, logit(1) = +inf.
namespace act {
inline double logit(double x) {
  if (x == 1) return kInf;
  return std::log(x) - std::log1p(-x); // no rounded quotient: accurate near 1/2
}
struct LogitRange {
  bool clamped;
  double lo, hi;
};
inline LogitRange logit_range(const Attrs& at) {
  if (at.variant != 1) return {false, 0.0, 1.0};
  return {true, at.eps, to_storage(1 - at.eps)}; // scalar_t(1) - eps
}
inline double logit_clamp(double x, LogitRange r) {
  return r.clamped && !std::isnan(x) ? (x < r.lo ? r.lo : (x > r.hi ? r.hi : x)) : x;
}
} // namespace act
inline Approx logit_forward(Approx x, const Attrs& at) {
  const act::LogitRange r = act::logit_range(at);
  const double c = act::logit_clamp(x.v, r);
  const double z = act::logit(c);
  if (indeterminate(x)) return unknown(z);
  if (x.e == 0) return act::fin(z, 0.0, act::kKernelUlps);
  // Clamping is 1-Lipschitz; the clamped interval must stay inside (0, 1).
  const double lo = act::logit_clamp(x.v - x.e, r);
  const double hi = act::logit_clamp(x.v + x.e, r);
  if (!(lo > 0 && hi < 1)) return unknown(z);
  return act::fin(z, std::max(act::logit(hi) - z, z - act::logit(lo)), act::kKernelUlps);
}
// logit_backward(grad, self, eps): grad / (x (1 - x)) on the range, which is [0, 1] without eps
// (NaN outside) and [eps, 1 - eps] with eps (0 outside). At 0 and 1 the scalar kernel gives
// grad * inf, +inf also at x = -0 (its AVX2 form: grad / (-0) = -inf), NaN when grad is 0.
// NaN gives NaN in both variants (the AVX2 form with eps: 0).
inline Approx logit_backward(Approx g, Approx x, Approx, const Attrs& at) {
  const act::LogitRange r = act::logit_range(at);
  const double v = x.v;
  if (std::isnan(v)) return {v, x.e}; // NaN: its bound is 0 unless indeterminate
  const bool inside = v >= r.lo && v <= r.hi;
  const double outside = r.clamped ? 0.0 : act::kNaN;
  // The gradient jumps at the range's ends (to 0 outside, or to NaN past the poles 0 and 1).
  const bool edge = touches(x, r.lo) || touches(x, r.hi);
  if (!inside) {
    if (edge && !(r.clamped && g.v == 0 && g.e == 0)) return {outside, kInf};
    return {outside, 0.0};
  }
  if (v == 0 || v == 1) {
    const Approx r0 = mul(g, {kInf, 0.0});
    return edge ? Approx{r0.v, kInf} : r0;
  }
  // x (1 - x) is exact in double; the kernel rounds 1 - x and the product.
  const double p = v * (1 - v);
  const Approx res =
      div(g, {p, 2 * kExactUlps * storage.u * p + scaled(std::fabs(1 - 2 * v) + x.e, x.e)});
  return edge && !(g.v == 0 && g.e == 0) ? Approx{res.v, kInf} : res;
}

} // namespace burnmark::ref
