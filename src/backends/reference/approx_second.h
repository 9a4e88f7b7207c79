// Second derivatives f'' of the elementwise transcendental ops and activations, for
// second_order.cpp. Each is computed in double and carries a bound. The bound counts the
// roundings of a library's double-backward formula in proportion to the size of the terms that
// formula adds (they may cancel to a small f''). It also counts the change of f'' over the
// operand's interval. Where f'' jumps (a kink of f', a switch of branch) within that interval,
// or exactly there, the result is indeterminate: which side a library's mask takes there is its
// own choice.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <utility>

#include "approx_activation.h"
#include "approx_transcendental.h"

namespace burnmark::ref::second {

// A library's double backward chains the first-order formula's roundings with its own: more
// than a first-order rule's, and a transcendental or two among them.
inline constexpr double kUlps = 8;

struct Curvature {
  double value;
  double terms; // the size of what a library's formula adds to get `value`
};
inline Curvature same(double v) {
  return {v, v};
}

// f'' at x: exact in double, its change over x's interval (sampled at both ends: the interval is
// a few ulps wide), and kUlps roundings of its terms.
template <class F> Approx curvature(F f2, Approx x) {
  const Curvature c = f2(x.v);
  if (indeterminate(x)) return unknown(c.value);
  double spread = 0;
  if (x.e > 0)
    spread = std::max(std::fabs(f2(x.v - x.e).value - c.value),
                      std::fabs(f2(x.v + x.e).value - c.value));
  return finish(c.value, spread + kUlps * storage.u * std::fabs(c.terms), kUlps);
}

// x is on a point where f'' jumps, or within its reach.
inline bool at_jump(Approx x, double k) {
  return x.v == k || touches(x, k);
}
inline Approx unjudged(Approx a) {
  return {a.v, kInf};
}

inline constexpr double kTwoOverSqrtPi = std::numbers::inv_sqrtpi * 2;

inline Approx tan(Approx x) {
  return curvature(
      [](double v) {
        const double t = std::tan(v);
        return same(2 * t * (1 + t * t));
      },
      x);
}
inline Approx asin(Approx x) {
  return curvature([](double v) { return same(v * std::pow(1 - v * v, -1.5)); }, x);
}
inline Approx acos(Approx x) {
  return curvature([](double v) { return same(-v * std::pow(1 - v * v, -1.5)); }, x);
}
inline Approx asinh(Approx x) {
  return curvature([](double v) { return same(-v * std::pow(1 + v * v, -1.5)); }, x);
}
inline Approx acosh(Approx x) {
  return curvature([](double v) { return same(-v * std::pow(v * v - 1, -1.5)); }, x);
}
inline Approx atanh(Approx x) {
  return curvature(
      [](double v) {
        const double d = 1 - v * v;
        return same(2 * v / (d * d));
      },
      x);
}
// erf' = 2/sqrt(pi) exp(-x^2), erf'' = -2x erf'; erfc is its negation.
inline Approx erf(Approx x, double sign) {
  return curvature(
      [sign](double v) { return same(sign * -2 * v * kTwoOverSqrtPi * std::exp(-v * v)); }, x);
}
// From the result y: erfinv' = sqrt(pi)/2 exp(y^2), erfinv'' = 2 y erfinv'^2.
inline Approx erfinv(Approx y) {
  return curvature(
      [](double v) {
        const double d = std::exp(v * v) / kTwoOverSqrtPi;
        return same(2 * v * d * d);
      },
      y);
}
inline Approx logsigmoid(Approx x) {
  return curvature([](double v) { return same(-act::sigmoid(v) * act::sigmoid(-v)); }, x);
}
// Linear above the threshold (documented): f'' jumps from beta s (1 - s) to 0 at the switch,
// where f' itself jumps (to 1 from sigmoid(threshold)): f' has no derivative on the switch
// point, and LibTorch's double backward takes the linear side there while its backward takes
// the soft one (found by the first f32 campaign, threshold 0 at x = 0).
inline Approx softplus(Approx x, const Attrs& at) {
  const double beta = at.beta;
  const double th = at.threshold;
  const Approx r = curvature(
      [=](double v) {
        if (act::softplus_linear(v, beta, th)) return same(0.0);
        return same(beta * act::sigmoid(beta * v) * act::sigmoid(-beta * v));
      },
      x);
  const bool on_switch = to_opmath(x.v * beta) == th;
  return act::softplus_switches(x, beta, th) || on_switch ? unjudged(r) : r;
}
// silu'' = s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x).
inline Approx silu(Approx x) {
  return curvature(
      [](double v) {
        if (std::isinf(v)) return same(0.0);
        const double s = act::sigmoid(v);
        const double ss = s * act::sigmoid(-v);
        return Curvature{ss * (2 + v * (1 - 2 * s)), ss * (2 + std::fabs(v))};
      },
      x);
}
// gelu: x Phi(x), gelu'' = phi(x) (2 - x^2); the tanh form differentiates
// x/2 (1 + tanh(u)), u = k (x + kappa x^3), twice.
inline Approx gelu(Approx x, const Attrs& at) {
  if (at.variant != 1)
    return curvature(
        [](double v) {
          if (std::isinf(v)) return same(0.0);
          const double phi = std::exp(-v * v / 2) * std::numbers::inv_sqrtpi / std::numbers::sqrt2;
          return Curvature{phi * (2 - v * v), phi * (2 + v * v)};
        },
        x);
  return curvature(
      [](double v) {
        if (std::isinf(v)) return same(0.0);
        const double u = act::gelu_tanh_inner(v);
        const double th = std::tanh(u);
        const double sech2 = 1 - th * th;
        const double du = act::kGeluBeta * (1 + 3 * act::kGeluKappa * v * v);
        const double ddu = 6 * act::kGeluBeta * act::kGeluKappa * v;
        return Curvature{
            sech2 * (du - v * th * du * du + 0.5 * v * ddu),
            sech2 * (std::fabs(du) + std::fabs(v * th) * du * du + 0.5 * std::fabs(v * ddu))};
      },
      x);
}
// mish = x tanh(softplus(x)): mish'' = (1 - t^2) s (2 + x (1 - s - 2 t s)), t = tanh(softplus x).
inline Approx mish(Approx x) {
  return curvature(
      [](double v) {
        if (std::isinf(v)) return same(0.0);
        const double t = std::tanh(act::softplus1(v));
        const double s = act::sigmoid(v);
        const double k = (1 - t * t) * s;
        return Curvature{k * (2 + v * (1 - s - 2 * t * s)),
                         k * (2 + std::fabs(v) * (1 + s + 2 * std::fabs(t) * s))};
      },
      x);
}
// elu, selu, celu: scale alpha in_scale^2 exp(in_scale x) at x <= 0, 0 above; f'' jumps at 0.
inline Approx elu(Approx x, double alpha, double scale, double in_scale) {
  const Approx r = curvature(
      [=](double v) {
        return same(v <= 0 ? scale * alpha * in_scale * in_scale * std::exp(in_scale * v) : 0.0);
      },
      x);
  return at_jump(x, 0.0) && alpha != 0 ? unjudged(r) : r;
}
// x (x + 3) / 6 between -3 and 3: f'' = 1/3 there, 0 outside, jumps at both ends.
inline Approx hardswish(Approx x) {
  const Approx r = curvature([](double v) { return same(v > -3 && v < 3 ? 1.0 / 3 : 0.0); }, x);
  return at_jump(x, -3.0) || at_jump(x, 3.0) ? unjudged(r) : r;
}
// x / (1 + |x|): f'' = -2 sign(x) / (1 + |x|)^3, which jumps at 0.
inline Approx softsign(Approx x) {
  const Approx r = curvature(
      [](double v) {
        if (std::isinf(v)) return same(0.0);
        const double b = 1 + std::fabs(v);
        return same(-2 * ((v > 0) - (v < 0)) / (b * b * b));
      },
      x);
  return at_jump(x, 0.0) ? unjudged(r) : r;
}
// x - tanh(x): f'' = 2 t (1 - t^2), t = tanh(x).
inline Approx tanhshrink(Approx x) {
  return curvature(
      [](double v) {
        const double t = std::tanh(v);
        return same(2 * t * (1 - t * t));
      },
      x);
}
// log(x / (1 - x)): f'' = (2x - 1) / (x (1 - x))^2 inside the range; clamped (eps given) 0
// outside it, with a jump at both ends.
inline Approx logit(Approx x, const Attrs& at) {
  const act::LogitRange range = act::logit_range(at);
  const Approx r = curvature(
      [=](double v) {
        if (range.clamped && (v < range.lo || v > range.hi)) return same(0.0);
        const double d = v * (1 - v);
        return Curvature{(2 * v - 1) / (d * d), (2 * std::fabs(v) + 1) / (d * d)};
      },
      x);
  return range.clamped && (at_jump(x, range.lo) || at_jump(x, range.hi)) ? unjudged(r) : r;
}

// Tetragamma, psi''(x) = -2 sum 1/(x+k)^3, in long double as trigamma_d: reflection
// psi''(x) = psi''(1 - x) - 2 pi^3 cot(pi x) / sin^2(pi x) for x < 0, recurrence
// psi''(x) = psi''(x + 1) - 2 / x^3 up to x >= 20, then the asymptotic series (the derivative of
// trigamma's; the next term is below 1e-19 relative there). NaN at the poles, where the limits
// from the two sides are -inf and +inf; -0 at +inf, NaN at -inf (no limit).
inline double tetragamma_d(double xd) {
  using namespace transcendental_detail;
  if (std::isnan(xd)) return xd;
  if (xd == kInf) return -0.0;
  if (xd <= 0 && xd == std::floor(xd)) return kNaN;
  long double x = xd;
  long double acc = 0;
  if (x < 0) {
    acc = -2 * pi_cot_pi(x) * pi2_csc2_pi(x);
    x = 1 - x;
  }
  for (; x < 20; x += 1)
    acc -= 2 / (x * x * x);
  const long double ix = 1 / x;
  const long double ix2 = ix * ix;
  const long double series =
      ix2 *
      (1 + ix +
       ix2 * (0.5L -
              ix2 * (1.0L / 6 -
                     ix2 * (1.0L / 6 -
                            ix2 * (3.0L / 10 -
                                   ix2 * (5.0L / 6 - ix2 * (691.0L / 210 - ix2 * 35.0L / 2)))))));
  return static_cast<double>(acc - series);
}

// digamma'' = tetragamma, which LibTorch's double backward computes as polygamma(2, x) (its
// zeta sum, measured within 1 ulp of these values in f32 on both half-axes). Monotone between
// poles (psi''' > 0), so the ends of the interval bound its change. For x < 0 the rounding is
// counted on the larger of what the reflection adds and what the direct sum over the negative
// and positive terms adds (bounded by |psi''(f)| + |psi''(1 - f)|, f the fractional part): the
// two cancel near the zeros of psi'' between the poles.
inline Approx digamma(Approx x) {
  using namespace transcendental_detail;
  const double z = tetragamma_d(x.v);
  if (indeterminate(x) || gamma_pole_within(x) || std::isnan(z)) return unknown(z);
  double terms = std::fabs(z);
  if (x.v < 0) {
    const double f = x.v - std::floor(x.v);
    const double reflected = std::fabs(tetragamma_d(1 - x.v)) +
                             static_cast<double>(std::fabs(2 * pi_cot_pi(x.v) * pi2_csc2_pi(x.v)));
    const double direct = std::fabs(tetragamma_d(f)) + std::fabs(tetragamma_d(1 - f));
    terms = std::max(reflected, direct);
  }
  return finish(z, endpoint_spread(tetragamma_d, x, z) + kUlps * storage.u * terms, kUlps);
}

// The Hessian of a binary op at (a, b): d2/da2, d2/da db, d2/db2.
struct Hessian2 {
  Approx aa, ab, bb;
};
// Each entry as in curvature(), its change over both operands' intervals sampled at the ends.
template <class F> Hessian2 hessian2(F h, Approx a, Approx b) {
  const auto at = [&](double x, double y) { return h(x, y); };
  const std::array<Curvature, 3> c = at(a.v, b.v);
  if (indeterminate(a) || indeterminate(b))
    return {unknown(c[0].value), unknown(c[1].value), unknown(c[2].value)};
  std::array<double, 3> spread{};
  for (const auto& [x, y] : {std::pair{a.v - a.e, b.v}, std::pair{a.v + a.e, b.v},
                             std::pair{a.v, b.v - b.e}, std::pair{a.v, b.v + b.e}}) {
    if (x == a.v && y == b.v) continue;
    const std::array<Curvature, 3> d = at(x, y);
    for (std::size_t k = 0; k < 3; ++k)
      spread[k] = std::max(spread[k], std::fabs(d[k].value - c[k].value));
  }
  std::array<Approx, 3> r;
  for (std::size_t k = 0; k < 3; ++k)
    r[k] = finish(c[k].value, spread[k] + kUlps * storage.u * std::fabs(c[k].terms), kUlps);
  return {r[0], r[1], r[2]};
}
// atan2(a, b), r^2 = a^2 + b^2: -2ab / r^4, (a^2 - b^2) / r^4, 2ab / r^4. A library
// differentiates b / r^2 and -a / r^2, so the mixed entry is 1 / r^2 - 2 b^2 / r^4: its terms.
inline Hessian2 atan2(Approx a, Approx b) {
  return hessian2(
      [](double x, double y) {
        const double r2 = x * x + y * y;
        const double r4 = r2 * r2;
        return std::array<Curvature, 3>{same(-2 * x * y / r4),
                                        Curvature{(x * x - y * y) / r4, 1 / r2 + 2 * y * y / r4},
                                        same(2 * x * y / r4)};
      },
      a, b);
}
// hypot(a, b) = r: b^2 / r^3, -ab / r^3, a^2 / r^3. A library differentiates a / r, so
// d2/da2 comes as 1 / r - a^2 / r^3, which cancels where |b| << |a|: those are its terms.
inline Hessian2 hypot(Approx a, Approx b) {
  return hessian2(
      [](double x, double y) {
        const double r = std::hypot(x, y);
        const double r3 = r * r * r;
        return std::array<Curvature, 3>{Curvature{y * y / r3, 1 / r + x * x / r3},
                                        same(-x * y / r3),
                                        Curvature{x * x / r3, 1 / r + y * y / r3}};
      },
      a, b);
}

inline Hessian2 unjudged(Hessian2 h) {
  return {unjudged(h.aa), unjudged(h.ab), unjudged(h.bb)};
}
// a^b: b (b - 1) a^(b-2), a^(b-1) (1 + b log a), a^b log(a)^2, judged wherever the function
// has them:
// - a exactly 0, b > 0: every derivative in b is 0 (a^b log(a)^k -> 0), the mixed one is 0 for
//   b > 1, d2/da2 is 0 for b > 2, 2 at b = 2 and 0 at b = 1 (f = a). Elsewhere (0 < b < 2 but
//   1 and 2, or the mixed one at b <= 1) they are infinite or have no limit: not judged.
//   LibTorch's masks (the exponent's gradient is 0 at a = 0, b >= 0; the self gradient's
//   pow(a, b - 1) differentiated in b is that mask again) give the same values.
// - b exactly 0, a > 0: f = 1 for every a, so d2/da2 = 0, but a^b is smooth there: the mixed
//   derivative is 1 / a and d2/db2 is log(a)^2, as the general formula says.
// - a or b within reach of 0 (an inexact operand), or a = 0 with b <= 0: not judged.
inline Hessian2 pow_tensor(Approx a, Approx b) {
  const Hessian2 h = hessian2(
      [](double x, double y) {
        const double p = std::pow(x, y);
        const double l = std::log(x);
        const double p1 = std::pow(x, y - 1);
        return std::array<Curvature, 3>{
            same(y * (y - 1) * std::pow(x, y - 2)),
            Curvature{p1 * (1 + y * l), std::fabs(p1) * (1 + std::fabs(y * l))}, same(p * l * l)};
      },
      a, b);
  if (!at_jump(a, 0.0) && !at_jump(b, 0.0)) return h;
  if (indeterminate(a) || indeterminate(b)) return unjudged(h);
  if (a.v == 0 && a.e == 0 && std::isfinite(b.v) && b.v - b.e > 0) {
    const bool exactly = b.e == 0;
    const Approx zero{};
    const Approx aa = b.v - b.e > 2         ? zero
                      : exactly && b.v == 2 ? Approx{2.0, 0.0}
                      : exactly && b.v == 1 ? zero
                                            : unjudged(zero);
    return {aa, b.v - b.e > 1 ? zero : unjudged(zero), zero};
  }
  if (b.v == 0 && b.e == 0 && a.v - a.e > 0 && std::isfinite(a.v)) return h;
  return unjudged(h);
}
// x log y: 0, 1 / y, -x / y^2. LibTorch masks the self gradient where x = 0 (xlogy(x != 0, y)),
// so at x = 0 the mixed derivative is 0 one way and 1 / y the other: not judged there.
inline Hessian2 xlogy(Approx a, Approx b) {
  const Hessian2 h = hessian2(
      [](double x, double y) {
        return std::array<Curvature, 3>{same(0.0), same(1 / y), same(-x / (y * y))};
      },
      a, b);
  return at_jump(a, 0.0) ? unjudged(h) : h;
}

// copysign(a, b) = |a| sgn(b): every entry 0 away from a = 0 and b = 0 (a jump of the ratio
// result / self and of the result itself). LibTorch's double backward of its rule
// grad * (result / self) differentiates the division, and the two terms it adds,
// (G / a) (result / a) and -G ((result / a) / a), cancel only up to their roundings: d2/da2
// is 0 with their size, 2 / |a|, as its terms. The exponent's gradient is zeros_like(other).
inline Hessian2 copysign(Approx a, Approx b) {
  const Hessian2 h = hessian2(
      [](double x, double) {
        return std::array<Curvature, 3>{Curvature{0.0, 2 / std::fabs(x)}, same(0.0), same(0.0)};
      },
      a, b);
  return at_jump(a, 0.0) || at_jump(b, 0.0) ? unjudged(h) : h;
}

} // namespace burnmark::ref::second
