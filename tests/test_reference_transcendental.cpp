// The reference's trigonometric, hyperbolic, error-function and gamma-family ops
// (approx_transcendental.h): gradients against central differences, the values at poles, domain
// edges and special points (C99 Annex F, the mathematics, PyTorch's documented conventions), and
// the size of the error bounds. Expected values come from C99 F.9, closed forms, or mpmath 1.3.0
// at 40 digits, never from the implementation under test.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "approx_transcendental.h"

namespace burnmark::ref {
namespace {

using Fwd = Approx (*)(Approx, const Attrs&);
using Bwd = Approx (*)(Approx, Approx, Approx, const Attrs&);

constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
constexpr double kEulerGamma = 0.57721566490153286061;
const Attrs kAt{};

Approx leaf(double x) {
  return {static_cast<double>(static_cast<float>(x)), 0.0};
}
double f32(double x) {
  return static_cast<double>(static_cast<float>(x));
}
Approx fwd(Fwd f, double x) {
  return f(leaf(x), kAt);
}
Approx grad(Fwd f, Bwd b, double x, double g = 1.0) {
  const Approx ax = leaf(x);
  return b({g, 0.0}, ax, f(ax, kAt), kAt);
}
bool is_neg_zero(double v) {
  return v == 0 && std::signbit(v);
}
bool is_pos_zero(double v) {
  return v == 0 && !std::signbit(v);
}

struct Op {
  const char* name;
  Fwd f;
  Bwd b;
  std::vector<double> points; // away from poles, kinks and overflow
};

const std::vector<Op>& ops() {
  static const std::vector<Op> all = {
      {"sin", sin_forward, sin_backward, {0.3, -1.2, 2.5, 10.0}},
      {"cos", cos_forward, cos_backward, {0.3, -1.2, 2.5, 10.0}},
      {"tan", tan_forward, tan_backward, {0.3, -1.0, 1.4, 4.0}},
      {"asin", asin_forward, asin_backward, {-0.9, -0.3, 0.2, 0.7}},
      {"acos", acos_forward, acos_backward, {-0.9, -0.3, 0.2, 0.7}},
      {"atan", atan_forward, atan_backward, {-3.0, 0.5, 20.0}},
      {"sinh", sinh_forward, sinh_backward, {-5.0, -0.5, 1.3, 20.0}},
      {"cosh", cosh_forward, cosh_backward, {-5.0, -0.5, 1.3, 20.0}},
      {"asinh", asinh_forward, asinh_backward, {-40.0, -0.7, 0.2, 3.0}},
      {"acosh", acosh_forward, acosh_backward, {1.5, 3.0, 100.0}},
      {"atanh", atanh_forward, atanh_backward, {-0.9, -0.2, 0.5, 0.95}},
      {"erf", erf_forward, erf_backward, {-2.0, -0.3, 0.6, 1.7, 3.0}},
      {"erfc", erfc_forward, erfc_backward, {-2.0, -0.3, 0.6, 1.7, 3.0}},
      {"erfinv", erfinv_forward, erfinv_backward, {-0.95, -0.3, 0.1, 0.6, 0.99}},
      {"lgamma", lgamma_forward, lgamma_backward, {0.3, 1.2, 2.7, 15.0, -0.4, -2.3, -7.3}},
      {"digamma", digamma_forward, digamma_backward, {0.3, 1.2, 2.7, 15.0, -0.4, -2.3, -7.3}},
  };
  return all;
}

// (1) Backward with g = 1 against central differences of the forward value.
TEST(ReferenceTranscendental, GradientsMatchFiniteDifferences) {
  for (const Op& op : ops()) {
    for (double x0 : op.points) {
      const double x = f32(x0);
      // Five-point stencil: the f32-rounded values allow no tiny h, the curvature near the
      // domain edges no large one.
      const double h = 1e-3 * std::max(0.1, std::fabs(x));
      const auto v = [&](double t) { return op.f({t, 0.0}, kAt).v; };
      const double numeric = (v(x - 2 * h) - 8 * v(x - h) + 8 * v(x + h) - v(x + 2 * h)) / (12 * h);
      const double analytic = grad(op.f, op.b, x).v;
      EXPECT_NEAR(analytic, numeric, 1e-3 * std::fabs(numeric) + 1e-6)
          << op.name << " at " << x;
    }
  }
}

// (3) Exact inputs in well-conditioned regions: value and gradient bounds of a few ulps. (Near
// erfinv's edges its gradient exp(erfinv(x)^2) amplifies the value's error by 2 erfinv(x)^2.)
TEST(ReferenceTranscendental, BoundsAreTinyForExactWellConditionedInputs) {
  for (const Op& op : ops()) {
    for (double x : op.points) {
      if (op.f == erfinv_forward && std::fabs(x) > 0.9) continue;
      const Approx y = fwd(op.f, x);
      const Approx g = grad(op.f, op.b, x);
      EXPECT_LT(y.e, 1e-6 * std::fabs(y.v)) << op.name << " at " << x;
      EXPECT_LT(g.e, 1e-6 * std::fabs(g.v)) << op.name << "' at " << x;
    }
  }
}

// The bound of an inexact input covers the function's image of the input interval (sampled,
// endpoints included), for monotone, convex and oscillating functions alike.
TEST(ReferenceTranscendental, BoundsCoverTheImageOfTheInputInterval) {
  struct Case {
    Fwd f;
    double x, e;
  };
  const Case cases[] = {
      {sin_forward, 1.0, 0.3},    {cos_forward, 0.1, 0.5},     {tan_forward, 1.2, 0.2},
      {asin_forward, 0.9, 0.05},  {acos_forward, -0.5, 0.2},   {atan_forward, 0.0, 2.0},
      {sinh_forward, 3.0, 0.5},   {cosh_forward, 0.2, 1.0},    {asinh_forward, -1.0, 0.7},
      {acosh_forward, 2.0, 0.5},  {atanh_forward, 0.5, 0.3},   {erf_forward, 0.5, 1.0},
      {erfc_forward, 2.0, 1.5},   {erfinv_forward, 0.3, 0.5},  {lgamma_forward, 1.5, 1.2},
      {lgamma_forward, -2.5, 0.3}, {digamma_forward, 1.0, 0.6}, {digamma_forward, -0.5, 0.4},
  };
  for (const Case& c : cases) {
    const Approx y = c.f({c.x, c.e}, kAt);
    ASSERT_TRUE(std::isfinite(y.e)) << c.x;
    for (int i = -10; i <= 10; ++i) {
      const double t = c.x + c.e * i / 10.0;
      const double ft = c.f({t, 0.0}, kAt).v; // rounded to f32, as y.v is: allow that rounding
      EXPECT_LE(std::fabs(ft - y.v), y.e + 0x1p-24 * std::fabs(ft)) << c.x << " to " << t;
    }
  }
}

// ---- trigonometric ----

TEST(ReferenceTranscendental, SinCosTanSpecialValues) {
  // C99 F.9.1.6, F.9.1.5, F.9.1.7: sin and tan keep the sign of zero, cos(+-0) = 1, inf gives NaN.
  EXPECT_TRUE(is_neg_zero(fwd(sin_forward, -0.0).v));
  EXPECT_TRUE(is_pos_zero(fwd(sin_forward, 0.0).v));
  EXPECT_TRUE(is_neg_zero(fwd(tan_forward, -0.0).v));
  EXPECT_EQ(fwd(cos_forward, -0.0).v, 1.0);
  for (Fwd f : {sin_forward, cos_forward, tan_forward}) {
    EXPECT_TRUE(std::isnan(fwd(f, kInfD).v));
    EXPECT_TRUE(std::isnan(fwd(f, -kInfD).v));
    EXPECT_TRUE(std::isnan(fwd(f, std::nan("")).v));
    EXPECT_EQ(fwd(f, kInfD).e, 0.0); // NaN must match exactly
  }
  // Huge arguments need an exact range reduction (mpmath, 40 digits).
  EXPECT_EQ(fwd(sin_forward, 3e38).v, f32(0.87490488776443438416));
  EXPECT_EQ(fwd(cos_forward, 3e38).v, f32(-0.48429478354190691555));
  EXPECT_EQ(fwd(sin_forward, 1e30).v, f32(-0.79116343852198366780));
  EXPECT_EQ(fwd(sin_forward, 823549.6).v, f32(-0.03957230731590933334));
  EXPECT_EQ(fwd(tan_forward, 8388608.0).v, f32(-0.47934123862654285716));
  // tan at the f32 nearest pi/2 is large but finite and exact in f32 terms.
  const Approx t = fwd(tan_forward, 1.57079637);
  EXPECT_EQ(t.v, f32(-22877332.428856459874));
  EXPECT_LT(t.e, 1e-6 * std::fabs(t.v));
  // Gradients: cos(0) = 1; -sin(-0) = +0; tan'(0) = 1 + 0^2.
  EXPECT_EQ(grad(sin_forward, sin_backward, 0.0).v, 1.0);
  EXPECT_TRUE(is_pos_zero(grad(cos_forward, cos_backward, -0.0).v));
  EXPECT_EQ(grad(tan_forward, tan_backward, -0.0).v, 1.0);
}

TEST(ReferenceTranscendental, TanIsIndeterminateAcrossAPole) {
  EXPECT_TRUE(indeterminate(tan_forward({f32(kPi / 2), 1e-3}, kAt)));
  EXPECT_TRUE(indeterminate(tan_forward({-f32(3 * kPi / 2), 1e-3}, kAt)));
  EXPECT_TRUE(indeterminate(tan_forward({0.0, 2.0}, kAt))); // an interval a period wide
  EXPECT_TRUE(indeterminate(tan_forward({1e30, 1e23}, kAt)));
  EXPECT_FALSE(indeterminate(tan_forward({1.0, 1e-2}, kAt)));
  // sin and cos of an imprecise huge argument are merely anywhere in [-1, 1].
  EXPECT_LE(sin_forward({1e30, 1e23}, kAt).e, 2.0 + 1e-6);
}

TEST(ReferenceTranscendental, ArcSineAndArcCosineAtTheDomainEdges) {
  // asin(+-1) = +-pi/2, acos(1) = +0 (C99 F.9.1.1), acos(-1) = pi; NaN outside [-1, 1].
  EXPECT_EQ(fwd(asin_forward, 1.0).v, f32(kPi / 2));
  EXPECT_EQ(fwd(asin_forward, -1.0).v, -f32(kPi / 2));
  EXPECT_TRUE(is_neg_zero(fwd(asin_forward, -0.0).v));
  EXPECT_TRUE(is_pos_zero(fwd(acos_forward, 1.0).v));
  EXPECT_EQ(fwd(acos_forward, -1.0).v, f32(kPi));
  EXPECT_EQ(fwd(acos_forward, -0.0).v, f32(kPi / 2));
  for (Fwd f : {asin_forward, acos_forward}) {
    const Approx out = fwd(f, 1.00000012);
    EXPECT_TRUE(std::isnan(out.v));
    EXPECT_EQ(out.e, 0.0);
    EXPECT_TRUE(std::isnan(fwd(f, -2.0).v));
    // An interval crossing the edge may be NaN or not.
    EXPECT_TRUE(indeterminate(f({0.9999999, 1e-6}, kAt)));
    EXPECT_TRUE(indeterminate(f({-1.0000001, 1e-6}, kAt)));
  }
  // (-x*x + 1).rsqrt() is 1/sqrt(0) = inf at +-1; with grad 0 the product 0 * inf is NaN.
  EXPECT_EQ(grad(asin_forward, asin_backward, 1.0).v, kInfD);
  EXPECT_EQ(grad(asin_forward, asin_backward, -1.0).v, kInfD);
  EXPECT_EQ(grad(acos_forward, acos_backward, 1.0).v, -kInfD);
  EXPECT_TRUE(std::isnan(grad(asin_forward, asin_backward, 1.0, 0.0).v));
  EXPECT_TRUE(std::isnan(grad(asin_forward, asin_backward, 2.0).v));
  // asin'(0.5) = 1/sqrt(0.75).
  EXPECT_NEAR(grad(asin_forward, asin_backward, 0.5).v, 1 / std::sqrt(0.75), 2e-7);
  // The slope blows up where the interval reaches +-1.
  const Approx x{0.99999, 1e-4};
  EXPECT_TRUE(indeterminate(asin_backward({1.0, 0.0}, x, asin_forward(x, kAt), kAt)));
}

TEST(ReferenceTranscendental, ArcTangentAtInfinityAndTheOverflowingSquare) {
  // C99 F.9.1.3: atan(+-inf) = +-pi/2, atan(-0) = -0.
  EXPECT_EQ(fwd(atan_forward, kInfD).v, f32(kPi / 2));
  EXPECT_EQ(fwd(atan_forward, -kInfD).v, -f32(kPi / 2));
  EXPECT_TRUE(is_neg_zero(fwd(atan_forward, -0.0).v));
  // grad / (x * x + 1): x * x is finite at 1e19 (gives 1e-38) and overflows f32 at 2e19 (gives 0).
  EXPECT_NEAR(grad(atan_forward, atan_backward, 1e19).v, 1e-38, 1e-44);
  EXPECT_TRUE(is_pos_zero(grad(atan_forward, atan_backward, 2e19).v));
  EXPECT_TRUE(is_pos_zero(grad(atan_forward, atan_backward, kInfD).v));
}

// ---- hyperbolic ----

TEST(ReferenceTranscendental, SinhCoshOverflowWhereF32Does) {
  // C99 F.9.2.5, F.9.2.4: sinh keeps the sign of zero and infinity, cosh(+-0) = 1, cosh(+-inf) = +inf.
  EXPECT_TRUE(is_neg_zero(fwd(sinh_forward, -0.0).v));
  EXPECT_EQ(fwd(sinh_forward, -kInfD).v, -kInfD);
  EXPECT_EQ(fwd(cosh_forward, -0.0).v, 1.0);
  EXPECT_EQ(fwd(cosh_forward, -kInfD).v, kInfD);
  // The f32 overflow threshold is ln(2 FLT_MAX) = 89.415986: 89.4159851 is finite
  // (3.4028196e38, mpmath), 89.416 overflows for sure (bound 0).
  const Approx below = fwd(sinh_forward, 89.4159851);
  EXPECT_EQ(below.v, f32(3.40281963750862078950e38));
  const Approx above = fwd(cosh_forward, 89.416);
  EXPECT_EQ(above.v, kInfD);
  EXPECT_EQ(above.e, 0.0);
  EXPECT_EQ(fwd(sinh_forward, -89.416).v, -kInfD);
  // An interval reaching the threshold is indeterminate.
  EXPECT_TRUE(indeterminate(sinh_forward({89.41598, 1e-4}, kAt)));
  // sinh(88.72) = 1.6965903e38 (mpmath), a normal bound.
  const Approx big = fwd(sinh_forward, 88.72);
  EXPECT_EQ(big.v, f32(1.69659025811335291740e38));
  EXPECT_LT(big.e, 1e-6 * big.v);
  // sinh' = cosh, cosh' = sinh: cosh'(-0) = sinh(-0) = -0; both overflow together.
  EXPECT_TRUE(is_neg_zero(grad(cosh_forward, cosh_backward, -0.0).v));
  EXPECT_EQ(grad(sinh_forward, sinh_backward, -89.416).v, kInfD);
}

TEST(ReferenceTranscendental, InverseHyperbolicEdges) {
  // asinh keeps the sign of zero and infinity (C99 F.9.2.2); asinh(3e38) = 89.289993 (mpmath).
  EXPECT_TRUE(is_neg_zero(fwd(asinh_forward, -0.0).v));
  EXPECT_EQ(fwd(asinh_forward, -kInfD).v, -kInfD);
  EXPECT_EQ(fwd(asinh_forward, 3e38).v, f32(89.289993004834376244));
  // (x.pow(2) + 1).rsqrt(): x * x overflows at 2e19, so the gradient is 1/sqrt(inf) = 0.
  EXPECT_TRUE(is_pos_zero(grad(asinh_forward, asinh_backward, 2e19).v));
  EXPECT_NEAR(grad(asinh_forward, asinh_backward, 1e19).v, 1e-19, 1e-25);
  // acosh(1) = +0 (C99 F.9.2.1), NaN below 1, acosh(+inf) = +inf.
  EXPECT_TRUE(is_pos_zero(fwd(acosh_forward, 1.0).v));
  EXPECT_TRUE(std::isnan(fwd(acosh_forward, 0.99999994).v));
  EXPECT_EQ(fwd(acosh_forward, 0.99999994).e, 0.0);
  EXPECT_TRUE(std::isnan(fwd(acosh_forward, -kInfD).v));
  EXPECT_EQ(fwd(acosh_forward, kInfD).v, kInfD);
  EXPECT_EQ(fwd(acosh_forward, 3e38).v, f32(89.289993004834376244));
  EXPECT_TRUE(indeterminate(acosh_forward({1.0, 1e-6}, kAt)));
  // (x * x - 1).rsqrt(): +inf at 1, NaN on (-1, 1), finite 1/sqrt(3) at -2 (forward NaN).
  EXPECT_EQ(grad(acosh_forward, acosh_backward, 1.0).v, kInfD);
  EXPECT_TRUE(std::isnan(grad(acosh_forward, acosh_backward, 0.5).v));
  EXPECT_NEAR(grad(acosh_forward, acosh_backward, -2.0).v, 1 / std::sqrt(3.0), 1e-7);
  // atanh(+-1) = +-inf (pole, C99 F.9.2.3), NaN beyond, sign of zero kept.
  EXPECT_EQ(fwd(atanh_forward, 1.0).v, kInfD);
  EXPECT_EQ(fwd(atanh_forward, -1.0).v, -kInfD);
  EXPECT_EQ(fwd(atanh_forward, 1.0).e, 0.0);
  EXPECT_TRUE(is_neg_zero(fwd(atanh_forward, -0.0).v));
  EXPECT_TRUE(std::isnan(fwd(atanh_forward, 2.0).v));
  EXPECT_EQ(fwd(atanh_forward, 0.99999994).v, f32(8.6643397420981549518));
  EXPECT_TRUE(indeterminate(atanh_forward({0.9999, 1e-3}, kAt)));
  // grad * 1 / (1 - x * x): +inf at 1, -1/3 at 2.
  EXPECT_EQ(grad(atanh_forward, atanh_backward, 1.0).v, kInfD);
  EXPECT_EQ(grad(atanh_forward, atanh_backward, 2.0).v, f32(-1.0 / 3));
}

// ---- error functions ----

TEST(ReferenceTranscendental, ErrorFunctionSpecialValues) {
  // C99 F.9.5.1, F.9.5.2: erf keeps the sign of zero, erf(+-inf) = +-1, erfc(-inf) = 2, erfc(inf) = +0.
  EXPECT_TRUE(is_neg_zero(fwd(erf_forward, -0.0).v));
  EXPECT_EQ(fwd(erf_forward, -kInfD).v, -1.0);
  EXPECT_EQ(fwd(erfc_forward, -0.0).v, 1.0);
  EXPECT_EQ(fwd(erfc_forward, -kInfD).v, 2.0);
  EXPECT_TRUE(is_pos_zero(fwd(erfc_forward, kInfD).v));
  // erf(4) = 1 - 1.5e-8 rounds to 1 in f32; erf(3.9) = 1 - 3.5e-8 to the float below 1.
  EXPECT_EQ(fwd(erf_forward, 4.0).v, 1.0);
  EXPECT_EQ(fwd(erf_forward, 3.9).v, f32(1 - 0x1p-24));
  // erfc underflows: erfc(9.3) = 1.6532383e-39 is subnormal, erfc(10) = 2.09e-45 rounds to the
  // smallest subnormal (mpmath); the bound lets a library flush either to 0.
  EXPECT_EQ(fwd(erfc_forward, 9.3).v, f32(1.65323828535294211790e-39));
  const Approx tiny = fwd(erfc_forward, 10.0);
  EXPECT_EQ(tiny.v, 0x1p-149);
  EXPECT_GE(tiny.e, tiny.v);
  EXPECT_TRUE(is_pos_zero(fwd(erfc_forward, 11.0).v));
  // 2/sqrt(pi) * exp(-x^2) * grad, with the constant rounded to f32 first.
  EXPECT_EQ(grad(erf_forward, erf_backward, 0.0).v, f32(2 / std::sqrt(kPi)));
  EXPECT_EQ(grad(erfc_forward, erfc_backward, 0.0).v, -f32(2 / std::sqrt(kPi)));
  EXPECT_TRUE(is_pos_zero(grad(erf_forward, erf_backward, 27.0).v)); // exp(-729) = 0
  EXPECT_TRUE(is_neg_zero(grad(erfc_forward, erfc_backward, kInfD).v));
}

TEST(ReferenceTranscendental, InverseErrorFunction) {
  // erfinv(+-1) = +-inf, NaN outside [-1, 1], odd (sign of zero kept).
  EXPECT_EQ(fwd(erfinv_forward, 1.0).v, kInfD);
  EXPECT_EQ(fwd(erfinv_forward, -1.0).v, -kInfD);
  EXPECT_EQ(fwd(erfinv_forward, 1.0).e, 0.0);
  EXPECT_TRUE(std::isnan(fwd(erfinv_forward, 1.00000012).v));
  EXPECT_TRUE(std::isnan(fwd(erfinv_forward, -kInfD).v));
  EXPECT_TRUE(is_neg_zero(fwd(erfinv_forward, -0.0).v));
  // mpmath: erfinv(0.5) = 0.47693627620446987, erfinv(1 - 2^-24) = 3.8325068569007109.
  EXPECT_EQ(fwd(erfinv_forward, 0.5).v, f32(0.47693627620446987338));
  EXPECT_EQ(fwd(erfinv_forward, 0.99999994).v, f32(3.8325068569007109095));
  EXPECT_EQ(fwd(erfinv_forward, -0.99999994).v, -f32(3.8325068569007109095));
  // Tiny arguments: erfinv(y) = sqrt(pi)/2 y to first order.
  EXPECT_EQ(fwd(erfinv_forward, 1e-30).v, f32(std::sqrt(kPi) / 2 * f32(1e-30)));
  EXPECT_TRUE(indeterminate(erfinv_forward({0.99999, 1e-4}, kAt)));
  // 0.5 * sqrt(pi) * exp(erfinv(x)^2) * grad: sqrt(pi)/2 at 0, inf at +-1.
  EXPECT_EQ(grad(erfinv_forward, erfinv_backward, 0.0).v, f32(std::sqrt(kPi) / 2));
  EXPECT_EQ(grad(erfinv_forward, erfinv_backward, -1.0).v, kInfD);
  EXPECT_TRUE(std::isnan(grad(erfinv_forward, erfinv_backward, 2.0).v));
}

// ---- gamma family ----

TEST(ReferenceTranscendental, LgammaPolesZerosAndOverflow) {
  // C99 F.9.5.3: lgamma(1) = lgamma(2) = +0; +inf at +-0, the negative integers and +-inf.
  EXPECT_TRUE(is_pos_zero(fwd(lgamma_forward, 1.0).v));
  EXPECT_TRUE(is_pos_zero(fwd(lgamma_forward, 2.0).v));
  for (double x : {0.0, -0.0, -1.0, -2.0, -1e30, kInfD, -kInfD}) {
    const Approx y = fwd(lgamma_forward, x);
    EXPECT_EQ(y.v, kInfD) << x;
    EXPECT_EQ(y.e, 0.0) << x;
  }
  EXPECT_TRUE(std::isnan(fwd(lgamma_forward, std::nan("")).v));
  // lgamma(1/2) = log(sqrt(pi)); lgamma(-5/2) = log(8 sqrt(pi) / 15).
  EXPECT_EQ(fwd(lgamma_forward, 0.5).v, f32(0.5 * std::log(kPi)));
  EXPECT_EQ(fwd(lgamma_forward, -2.5).v, f32(std::log(8 * std::sqrt(kPi) / 15)));
  // Near the negative zero at -2.4570549: -4.5638323e-5 (mpmath), relatively accurate.
  EXPECT_EQ(fwd(lgamma_forward, -2.4570549).v, f32(-4.5638322941718116960e-5));
  // f32 overflow from 4.0850034e36: 4.08e36 is finite (3.3986057e38, mpmath), 4.0851e36 is not.
  EXPECT_EQ(fwd(lgamma_forward, 4.08e36).v, f32(3.39860574887492925986e38));
  EXPECT_EQ(fwd(lgamma_forward, 4.0851e36).v, kInfD);
  // An interval reaching a pole is indeterminate.
  EXPECT_TRUE(indeterminate(lgamma_forward({-1.0, 1e-3}, kAt)));
  EXPECT_TRUE(indeterminate(lgamma_forward({1e-4, 2e-4}, kAt)));
  EXPECT_FALSE(indeterminate(lgamma_forward({-1.5, 0.4}, kAt)));
  // lgamma' = digamma: -gamma at 1, -inf at +0, +inf at -0, NaN at the negative integers.
  EXPECT_EQ(grad(lgamma_forward, lgamma_backward, 1.0).v, f32(-kEulerGamma));
  EXPECT_EQ(grad(lgamma_forward, lgamma_backward, 0.0).v, -kInfD);
  EXPECT_EQ(grad(lgamma_forward, lgamma_backward, -0.0).v, kInfD);
  EXPECT_TRUE(std::isnan(grad(lgamma_forward, lgamma_backward, -3.0).v));
}

TEST(ReferenceTranscendental, DigammaPolesAndClosedForms) {
  // psi(1) = -gamma, psi(2) = 1 - gamma, psi(1/2) = -gamma - 2 log 2.
  EXPECT_EQ(fwd(digamma_forward, 1.0).v, f32(-kEulerGamma));
  EXPECT_EQ(fwd(digamma_forward, 2.0).v, f32(1 - kEulerGamma));
  EXPECT_EQ(fwd(digamma_forward, 0.5).v, f32(-kEulerGamma - 2 * std::log(2.0)));
  // mpmath: psi(-2.5) = 1.1031566406452432; psi(1.4616321f) = -1.2036052549e-8 (next to the root).
  EXPECT_EQ(fwd(digamma_forward, -2.5).v, f32(1.1031566406452431872));
  EXPECT_EQ(fwd(digamma_forward, 1.4616321).v, f32(-1.2036052549106669488e-8));
  // psi(+0) = -inf: PyTorch documents "digamma returns -Inf for 0" since 1.8
  // (https://pytorch.org/docs/1.13/generated/torch.digamma.html); psi(-0) = +inf, the limit from
  // below; the negative integers are NaN (the one-sided limits are +inf and -inf); psi(-inf) NaN.
  EXPECT_EQ(fwd(digamma_forward, 0.0).v, -kInfD);
  EXPECT_EQ(fwd(digamma_forward, -0.0).v, kInfD);
  EXPECT_TRUE(std::isnan(fwd(digamma_forward, -1.0).v));
  EXPECT_TRUE(std::isnan(fwd(digamma_forward, -1e30).v));
  EXPECT_TRUE(std::isnan(fwd(digamma_forward, -kInfD).v));
  EXPECT_EQ(fwd(digamma_forward, kInfD).v, kInfD);
  EXPECT_EQ(fwd(digamma_forward, 0x1p-149).v, -kInfD); // -1/x overflows f32
  EXPECT_TRUE(indeterminate(digamma_forward({-2.0, 1e-3}, kAt)));
  // digamma' = trigamma: pi^2/6 at 1, pi^2/2 at 1/2; +inf at 0 and the negative integers (the
  // limit from both sides); mpmath: psi'(-2.5) = 9.5392466, psi'(-1000.5) = 9.8686054.
  EXPECT_EQ(grad(digamma_forward, digamma_backward, 1.0).v, f32(kPi * kPi / 6));
  EXPECT_EQ(grad(digamma_forward, digamma_backward, 0.5).v, f32(kPi * kPi / 2));
  EXPECT_EQ(grad(digamma_forward, digamma_backward, 0.0).v, kInfD);
  EXPECT_EQ(grad(digamma_forward, digamma_backward, -1.0).v, kInfD);
  EXPECT_EQ(grad(digamma_forward, digamma_backward, -2.5).v, f32(9.5392466449891237539));
  EXPECT_EQ(grad(digamma_forward, digamma_backward, -1000.5).v, f32(9.8686054001734414233));
  EXPECT_TRUE(is_pos_zero(grad(digamma_forward, digamma_backward, kInfD).v));
  const Approx x{-3.0, 1e-2};
  EXPECT_TRUE(indeterminate(digamma_backward({1.0, 0.0}, x, digamma_forward(x, kAt), kAt)));
}

} // namespace
} // namespace burnmark::ref
