// The binary ops' scalar math (approx_binary.h): gradients against central differences, the
// values at kinks and special points (each expected value from C99 Annex F, IEEE 754, PyTorch's
// docs or derivatives.yaml, or plain arithmetic — never from the implementation), and the
// bounds: tiny for exact well-conditioned inputs, infinite where the value may jump.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "approx_binary.h"

namespace burnmark::ref {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = std::numbers::pi;

Approx x(double v, double e = 0) {
  return {v, e};
}
double f32(double v) {
  return static_cast<double>(static_cast<float>(v));
}
Attrs weight(double w) {
  Attrs at;
  at.weight = f32(w);
  return at;
}
Attrs rounding(int variant) {
  Attrs at;
  at.variant = variant;
  return at;
}
bool neg_zero(Approx a) {
  return a.v == 0 && std::signbit(a.v);
}
bool pos_zero(Approx a) {
  return a.v == 0 && !std::signbit(a.v);
}

using Fwd = Approx (*)(Approx, Approx, const Attrs&);
using Bwd = std::array<Approx, 2> (*)(Approx, Approx, Approx, Approx, const Attrs&);

// Central differences of the forward value in each operand against the backward with g = 1.
void expect_gradient(Fwd fwd, Bwd bwd, double a, double b, const Attrs& at = {}) {
  const auto value = [&](double p, double q) { return fwd(x(p), x(q), at).v; };
  const double ha = 1e-3 * std::max(std::fabs(a), 0.1);
  const double hb = 1e-3 * std::max(std::fabs(b), 0.1);
  const double da = (value(a + ha, b) - value(a - ha, b)) / (2 * ha);
  const double db = (value(a, b + hb) - value(a, b - hb)) / (2 * hb);
  const auto g = bwd(x(1), x(a), x(b), fwd(x(a), x(b), at), at);
  EXPECT_NEAR(g[0].v, da, 1e-3 * std::max(1.0, std::fabs(da))) << "d/da at " << a << ", " << b;
  EXPECT_NEAR(g[1].v, db, 1e-3 * std::max(1.0, std::fabs(db))) << "d/db at " << a << ", " << b;
}

// Exact inputs in a well-conditioned region: the bound is a few ulps at most.
void expect_tight(Approx r) {
  EXPECT_TRUE(std::isfinite(r.e));
  EXPECT_LT(r.e, 1e-6 * std::max(std::fabs(r.v), 1e-30));
}

// ---- maximum / minimum

TEST(ReferenceBinary, MaximumMinimumValues) {
  const Attrs at;
  // NaN-propagating (torch.maximum docs: "If one of the elements being compared is a NaN, then
  // that element is returned").
  EXPECT_TRUE(std::isnan(maximum_forward(x(kNan), x(1), at).v));
  EXPECT_TRUE(std::isnan(maximum_forward(x(1), x(kNan), at).v));
  EXPECT_TRUE(std::isnan(minimum_forward(x(-kInf), x(kNan), at).v));
  EXPECT_EQ(maximum_forward(x(kNan), x(1), at).e, 0);
  // IEEE 754-2019 9.6: maximum / minimum order -0 below +0, whatever the operand order.
  EXPECT_TRUE(pos_zero(maximum_forward(x(-0.0), x(0.0), at)));
  EXPECT_TRUE(pos_zero(maximum_forward(x(0.0), x(-0.0), at)));
  EXPECT_TRUE(neg_zero(minimum_forward(x(-0.0), x(0.0), at)));
  EXPECT_TRUE(neg_zero(minimum_forward(x(0.0), x(-0.0), at)));
  EXPECT_EQ(maximum_forward(x(-kInf), x(3), at).v, 3);
  EXPECT_EQ(minimum_forward(x(-kInf), x(3), at).v, -kInf);
}

TEST(ReferenceBinary, MaximumMinimumGradients) {
  const Attrs at;
  // derivatives.yaml: where(self == other, grad / 2, grad) masked where the other one wins.
  auto g = maximum_backward(x(1), x(2), x(2), x(2), at);
  EXPECT_EQ(g[0].v, 0.5);
  EXPECT_EQ(g[1].v, 0.5);
  g = maximum_backward(x(1), x(-0.0), x(0.0), x(0.0), at); // -0 == +0 is a tie
  EXPECT_EQ(g[0].v, 0.5);
  EXPECT_EQ(g[1].v, 0.5);
  // With a NaN every comparison is false: neither gradient is masked.
  g = maximum_backward(x(1), x(kNan), x(1), x(kNan), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, 1);
  g = minimum_backward(x(1), x(1), x(kNan), x(kNan), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, 1);
  expect_gradient(maximum_forward, maximum_backward, 1.5, -2);
  expect_gradient(maximum_forward, maximum_backward, -3, 0.25);
  expect_gradient(minimum_forward, minimum_backward, 1.5, -2);
  expect_gradient(minimum_forward, minimum_backward, -3, 0.25);
}

TEST(ReferenceBinary, MaximumBounds) {
  const Attrs at;
  // Overlapping operands: the value stays within the larger error, the split is unknown.
  const Approx a = x(1, 1e-3), b = x(1.0005);
  EXPECT_EQ(maximum_forward(a, b, at).e, 1e-3);
  const auto g = maximum_backward(x(1), a, b, x(1.0005), at);
  EXPECT_TRUE(std::isinf(g[0].e));
  EXPECT_TRUE(std::isinf(g[1].e));
  // A zero upstream gradient is zero whichever way the split goes.
  const auto g0 = maximum_backward(x(0), a, b, x(1.0005), at);
  EXPECT_EQ(g0[0].e, 0);
  EXPECT_EQ(g0[1].e, 0);
  // Separated operands: certain, and the winner's own error.
  EXPECT_EQ(maximum_forward(x(2, 1e-3), x(1), at).e, 1e-3);
  EXPECT_EQ(maximum_forward(x(2), x(1, 1e-3), at).e, 0);
  EXPECT_EQ(maximum_backward(x(1), x(2, 1e-3), x(1), x(2), at)[1].e, 0);
}

// ---- fmax / fmin

TEST(ReferenceBinary, FmaxFminValues) {
  const Attrs at;
  // C99 F.9.9.2: a NaN operand is ignored; NaN only if both are NaN.
  EXPECT_EQ(fmax_forward(x(kNan), x(1), at).v, 1);
  EXPECT_EQ(fmax_forward(x(1), x(kNan), at).v, 1);
  EXPECT_EQ(fmin_forward(x(kNan), x(-1), at).v, -1);
  EXPECT_TRUE(std::isnan(fmax_forward(x(kNan), x(kNan), at).v));
  EXPECT_EQ(fmax_forward(x(2), x(-kInf), at).v, 2);
  // C99 leaves the sign of a zero tie free (torch.fmax is documented as std::fmax): the first
  // operand, as LibTorch returns on every path.
  EXPECT_TRUE(neg_zero(fmax_forward(x(-0.0), x(0.0), at)));
  EXPECT_TRUE(pos_zero(fmin_forward(x(0.0), x(-0.0), at)));
}

TEST(ReferenceBinary, FmaxFminGradients) {
  const Attrs at;
  // derivatives.yaml: self gets grad where self >= other or other is NaN, other elsewhere.
  auto g = fmax_backward(x(1), x(2), x(2), x(2), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, 0);
  g = fmax_backward(x(1), x(kNan), x(1), x(1), at);
  EXPECT_EQ(g[0].v, 0);
  EXPECT_EQ(g[1].v, 1);
  g = fmax_backward(x(1), x(1), x(kNan), x(1), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, 0);
  g = fmin_backward(x(1), x(kNan), x(kNan), x(kNan), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, 0);
  // masked_fill does not multiply: an infinite upstream gradient stays a clean 0 elsewhere.
  g = fmin_backward(x(kInf), x(1), x(2), x(1), at);
  EXPECT_EQ(g[0].v, kInf);
  EXPECT_EQ(g[1].v, 0);
  expect_gradient(fmax_forward, fmax_backward, 1.5, -2);
  expect_gradient(fmin_forward, fmin_backward, 1.5, -2);
  EXPECT_TRUE(std::isinf(fmax_backward(x(1), x(1, 1e-3), x(1), x(1), at)[0].e));
}

// ---- atan2

TEST(ReferenceBinary, Atan2SpecialValues) {
  const Attrs at;
  // C99 F.9.1.4.
  EXPECT_EQ(atan2_forward(x(0.0), x(-0.0), at).v, f32(kPi));
  EXPECT_EQ(atan2_forward(x(-0.0), x(-0.0), at).v, -f32(kPi));
  EXPECT_TRUE(pos_zero(atan2_forward(x(0.0), x(0.0), at)));
  EXPECT_TRUE(neg_zero(atan2_forward(x(-0.0), x(0.0), at)));
  EXPECT_EQ(atan2_forward(x(0.0), x(-3), at).v, f32(kPi));
  EXPECT_EQ(atan2_forward(x(-2), x(0.0), at).v, -f32(kPi / 2));
  EXPECT_EQ(atan2_forward(x(kInf), x(-kInf), at).v, f32(3 * kPi / 4));
  EXPECT_EQ(atan2_forward(x(-kInf), x(kInf), at).v, -f32(kPi / 4));
  EXPECT_EQ(atan2_forward(x(1), x(-kInf), at).v, f32(kPi));
  EXPECT_TRUE(neg_zero(atan2_forward(x(-1), x(kInf), at)));
  EXPECT_EQ(atan2_forward(x(kInf), x(5), at).v, f32(kPi / 2));
  EXPECT_TRUE(std::isnan(atan2_forward(x(kNan), x(1), at).v));
}

TEST(ReferenceBinary, Atan2Gradients) {
  const Attrs at;
  // atan2_backward in 1.13.1: grad * other * recip, grad * -self * recip, recip =
  // 1 / (self^2 + other^2) — no guard, so the origin gives 0 * inf = NaN.
  const auto g0 = atan2_backward(x(1), x(0.0), x(0.0), x(0.0), at);
  EXPECT_TRUE(std::isnan(g0[0].v));
  EXPECT_TRUE(std::isnan(g0[1].v));
  // d/dy = x / r^2 = 0, d/dx = -y / r^2 = -1 at (1, 0).
  const auto g1 = atan2_backward(x(1), x(1), x(0.0), x(f32(kPi / 2)), at);
  EXPECT_EQ(g1[0].v, 0);
  EXPECT_EQ(g1[1].v, -1);
  // The squares are formed in double: at 3e38 the partials are +-1/6e38 (an f32 subnormal), at
  // 1e-30 they are +-5e29, where f32 squares overflow and underflow.
  const auto g2 = atan2_backward(x(1), x(f32(3e38)), x(f32(3e38)), x(f32(kPi / 4)), at);
  EXPECT_EQ(g2[0].v, f32(f32(3e38) / (2.0 * f32(3e38) * f32(3e38))));
  EXPECT_EQ(g2[1].v, -g2[0].v);
  const double tiny = f32(1e-30);
  const auto g3 = atan2_backward(x(1), x(tiny), x(tiny), x(f32(kPi / 4)), at);
  EXPECT_EQ(g3[0].v, f32(1 / (2 * tiny)));
  EXPECT_EQ(g3[1].v, -f32(1 / (2 * tiny)));
  expect_gradient(atan2_forward, atan2_backward, 0.5, 2);
  expect_gradient(atan2_forward, atan2_backward, -1.5, -0.75);
  expect_gradient(atan2_forward, atan2_backward, 3, -4);
}

TEST(ReferenceBinary, Atan2Bounds) {
  const Attrs at;
  expect_tight(atan2_forward(x(1), x(2), at));
  expect_tight(atan2_forward(x(-3), x(-0.5), at));
  // The cut y = ±0, x < 0 (the value jumps from pi to -pi) and the origin.
  EXPECT_TRUE(std::isinf(atan2_forward(x(0.0, 1e-6), x(-1), at).e));
  EXPECT_TRUE(std::isinf(atan2_forward(x(0.0), x(0.0, 1e-6), at).e));
  // Across y = 0 at x > 0 the function is smooth.
  const Approx smooth = atan2_forward(x(0.0, 1e-6), x(1), at);
  EXPECT_LT(smooth.e, 2e-6);
}

// ---- pow(tensor, tensor)

TEST(ReferenceBinary, PowTensorSpecialValues) {
  const Attrs at;
  const auto p = [&](double a, double b) { return pow_tensor_forward(x(a), x(b), at); };
  // C99 F.9.4.4.
  EXPECT_EQ(p(kNan, 0.0).v, 1);
  EXPECT_EQ(p(kNan, -0.0).v, 1);
  EXPECT_EQ(p(1, kNan).v, 1);
  EXPECT_EQ(p(-1, kInf).v, 1);
  EXPECT_EQ(p(-1, -kInf).v, 1);
  EXPECT_EQ(p(-0.0, -1).v, -kInf);
  EXPECT_EQ(p(-0.0, -2).v, kInf);
  EXPECT_EQ(p(-0.0, -0.5).v, kInf);
  EXPECT_EQ(p(0.0, -1).v, kInf);
  EXPECT_TRUE(neg_zero(p(-0.0, 3)));
  EXPECT_TRUE(pos_zero(p(-0.0, 0.5)));
  EXPECT_TRUE(pos_zero(p(-0.0, 2)));
  EXPECT_TRUE(std::isnan(p(-2, 0.5).v));
  EXPECT_EQ(p(-2, 3).v, -8);
  EXPECT_TRUE(neg_zero(p(-kInf, -1)));
  EXPECT_TRUE(pos_zero(p(-kInf, -2)));
  EXPECT_EQ(p(-kInf, 3).v, -kInf);
  EXPECT_EQ(p(-kInf, 0.5).v, kInf);
  EXPECT_EQ(p(0.5, kInf).v, 0);
  EXPECT_EQ(p(0.5, -kInf).v, kInf);
  EXPECT_EQ(p(2, -kInf).v, 0);
  EXPECT_EQ(p(f32(1e20), 2).v, kInf); // 1e40 overflows f32
  for (const Approx r : {p(kNan, 0.0), p(-0.0, -1), p(-2, 0.5), p(f32(1e20), 2)})
    EXPECT_EQ(r.e, 0);
}

TEST(ReferenceBinary, PowTensorGradients) {
  const Attrs at;
  const auto g = [&](double gr, double a, double b) {
    const Approx y = pow_tensor_forward(x(a), x(b), at);
    return pow_tensor_backward(x(gr), x(a), x(b), y, at);
  };
  // pow_backward_self: 0 where exponent == 0; pow_backward_exponent: 0 where self == 0 and
  // exponent >= 0, else result * log(self).
  auto r = g(1, 0.0, 0.0);
  EXPECT_EQ(r[0].v, 0);
  EXPECT_EQ(r[1].v, 0);
  r = g(1, 2, 0.0);
  EXPECT_EQ(r[0].v, 0);
  EXPECT_EQ(r[1].v, f32(std::log(2.0)));
  r = g(1, kNan, 0.0); // where() ignores the NaN for self; log(NaN) for the exponent
  EXPECT_EQ(r[0].v, 0);
  EXPECT_TRUE(std::isnan(r[1].v));
  // Both wheres sit inside a product with grad: inf * 0 = NaN.
  r = g(kInf, 0.0, 2);
  EXPECT_TRUE(std::isnan(r[0].v));
  EXPECT_TRUE(std::isnan(r[1].v));
  // 3 * (-2)^2 = 12; log(-2) is NaN.
  r = g(1, -2, 3);
  EXPECT_EQ(r[0].v, 12);
  EXPECT_TRUE(std::isnan(r[1].v));
  // -1 * (-0)^-2 = -inf; result * log(-0) = -inf * -inf = +inf.
  r = g(1, -0.0, -1);
  EXPECT_EQ(r[0].v, -kInf);
  EXPECT_EQ(r[1].v, kInf);
  // 2^10 * log(2) = 709.78...
  EXPECT_NEAR(g(1, 2, 10)[1].v, 1024 * std::log(2.0), 1e-4);
  expect_gradient(pow_tensor_forward, pow_tensor_backward, 1.5, 2.5);
  expect_gradient(pow_tensor_forward, pow_tensor_backward, 0.7, -1.3);
  expect_gradient(pow_tensor_forward, pow_tensor_backward, 3, 0.5);
  expect_gradient(pow_tensor_forward, pow_tensor_backward, 4, -0.25);
}

TEST(ReferenceBinary, PowTensorBounds) {
  const Attrs at;
  expect_tight(pow_tensor_forward(x(1.5), x(2.5), at));
  expect_tight(pow_tensor_forward(x(0.3), x(-4), at));
  // A pole, a domain edge, a jump: indeterminate.
  EXPECT_TRUE(std::isinf(pow_tensor_forward(x(0.0, 1e-3), x(-1), at).e));
  EXPECT_TRUE(std::isinf(pow_tensor_forward(x(-2), x(3, 1e-3), at).e));
  EXPECT_TRUE(std::isinf(pow_tensor_forward(x(1, 1e-3), x(kInf), at).e));
  EXPECT_TRUE(std::isinf(pow_tensor_forward(x(0.0), x(0.0, 1e-3), at).e));
  // Certain however the operands move: a negative base under non-integer exponents is NaN,
  // a zero exponent gives 1 and a unit base gives 1 even against an indeterminate operand.
  const Approx nan = pow_tensor_forward(x(-2, 0.1), x(0.5, 0.1), at);
  EXPECT_TRUE(std::isnan(nan.v));
  EXPECT_EQ(nan.e, 0);
  EXPECT_EQ(pow_tensor_forward(x(3, kInf), x(0.0), at).e, 0);
  EXPECT_EQ(pow_tensor_forward(x(1), x(3, kInf), at).e, 0);
  // A base straddling 0 under an integer exponent is continuous: (|x| + E)^2 - x^2 at most.
  const Approx sq = pow_tensor_forward(x(0.0, 1e-3), x(2), at);
  EXPECT_TRUE(std::isfinite(sq.e));
  EXPECT_GE(sq.e, 1e-6);
}

// ---- remainder / fmod / div_rounded

TEST(ReferenceBinary, RemainderValues) {
  const Attrs at;
  const auto r = [&](double a, double b) { return remainder_forward(x(a), x(b), at); };
  // 70 * 0.1f exceeds 7, so floor(7 / 0.1f) = 69 and the exact remainder is 7 - 69 * 0.1f.
  const double tenth = f32(0.1);
  EXPECT_EQ(r(7, tenth).v, f32(7 - 69 * tenth));
  EXPECT_EQ(r(7, tenth).e, 0);
  // The docs: the result has the divisor's sign — zeros included (Python's -6.0 % 3.0 = 0.0).
  EXPECT_TRUE(pos_zero(r(-6, 3)));
  EXPECT_TRUE(neg_zero(r(6, -3)));
  EXPECT_TRUE(pos_zero(r(-0.0, 3)));
  EXPECT_TRUE(neg_zero(r(0.0, -3)));
  // 1e30f = 1000000015047466219876688855040 is a multiple of 3.
  EXPECT_TRUE(pos_zero(r(-f32(1e30), 3)));
  EXPECT_EQ(r(-7, 3).v, 2);
  EXPECT_EQ(r(7, -3).v, -2);
  // Python: -5.0 % inf = inf, 5.0 % inf = 5.0, x % 0 raises (NaN as fmod's), inf % 3 = nan.
  EXPECT_EQ(r(-5, kInf).v, kInf);
  EXPECT_EQ(r(5, kInf).v, 5);
  EXPECT_EQ(r(5, -kInf).v, -kInf);
  EXPECT_TRUE(std::isnan(r(5, 0.0).v));
  EXPECT_TRUE(std::isnan(r(kInf, 3).v));
  // The exact 1 - 1e-30 rounds to the divisor itself.
  EXPECT_EQ(r(-f32(1e-30), 1).v, 1);
  // A huge quotient still has an exact remainder (fmod is exact): 16777216 = 3 * 5592405 + 1.
  EXPECT_EQ(r(16777216, 3).v, 1);
  EXPECT_EQ(r(-16777216, 3).v, 2);
}

TEST(ReferenceBinary, RemainderFmodGradients) {
  const Attrs at;
  const double tenth = f32(0.1);
  // derivatives.yaml: other: -grad * floor(a / b) (remainder), -grad * trunc(a / b) (fmod),
  // both 69 at 7 / 0.1f (the exact quotient is 69.99999896).
  auto g = remainder_backward(x(1), x(7), x(tenth), remainder_forward(x(7), x(tenth), at), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, -69);
  g = fmod_backward(x(1), x(7), x(tenth), fmod_forward(x(7), x(tenth), at), at);
  EXPECT_EQ(g[0].v, 1);
  EXPECT_EQ(g[1].v, -69);
  g = remainder_backward(x(1), x(-7), x(tenth), x(0), at);
  EXPECT_EQ(g[1].v, 70); // floor(-69.99999896) = -70
  g = fmod_backward(x(1), x(-7), x(tenth), x(0), at);
  EXPECT_EQ(g[1].v, 69); // trunc(-69.99999896) = -69
  expect_gradient(remainder_forward, remainder_backward, 7.5, 2);
  expect_gradient(remainder_forward, remainder_backward, -7.5, 2);
  expect_gradient(remainder_forward, remainder_backward, 7.5, -2);
  expect_gradient(fmod_forward, fmod_backward, 7.5, 2);
  expect_gradient(fmod_forward, fmod_backward, -7.5, 2);
  expect_gradient(fmod_forward, fmod_backward, 0.3, -2);
}

TEST(ReferenceBinary, FmodValues) {
  const Attrs at;
  const auto r = [&](double a, double b) { return fmod_forward(x(a), x(b), at); };
  const double tenth = f32(0.1);
  EXPECT_EQ(r(7, tenth).v, f32(7 - 69 * tenth));
  // C99 F.9.7.1: the dividend's sign, fmod(±0, y) = ±0, fmod(x, ±inf) = x, NaN for a zero
  // divisor or an infinite dividend.
  EXPECT_TRUE(neg_zero(r(-6, 3)));
  EXPECT_TRUE(neg_zero(r(-0.0, 3)));
  EXPECT_EQ(r(-7, 3).v, -1);
  EXPECT_EQ(r(5, kInf).v, 5);
  EXPECT_EQ(r(-5, -kInf).v, -5);
  EXPECT_TRUE(std::isnan(r(5, 0.0).v));
  EXPECT_TRUE(std::isnan(r(kInf, 3).v));
  // Exact for any quotient, here 3e38 / 1e-10 (beyond f32): math.fmod gives 8.30062963e-11.
  EXPECT_NEAR(r(f32(3e38), f32(1e-10)).v, 8.30062963e-11, 1e-18);
  EXPECT_EQ(r(16777216, 3).v, 1);
}

TEST(ReferenceBinary, DivRoundedValues) {
  const Attrs trunc = rounding(0), floor = rounding(1);
  const auto d = [](double a, double b, const Attrs& at) {
    return div_rounded_forward(x(a), x(b), at);
  };
  const double tenth = f32(0.1);
  // The exact quotient 7 / 0.1f = 69.99999896 rounds to 70 in f32, but its trunc and floor
  // are 69 (Python: 7.0 // float32(0.1) = 69.0).
  EXPECT_EQ(d(7, tenth, trunc).v, 69);
  EXPECT_EQ(d(7, tenth, floor).v, 69);
  EXPECT_EQ(d(-7, tenth, trunc).v, -69);
  EXPECT_EQ(d(-7, tenth, floor).v, -70);
  EXPECT_EQ(d(-0.5, 3, floor).v, -1);
  // Zeros carry the quotient's sign (IEEE division; Python's floor division).
  EXPECT_TRUE(neg_zero(d(-0.5, 3, trunc)));
  EXPECT_TRUE(neg_zero(d(0.5, -3, trunc)));
  EXPECT_TRUE(pos_zero(d(0.5, 3, floor)));
  EXPECT_TRUE(neg_zero(d(0.0, -3, floor)));
  EXPECT_TRUE(neg_zero(d(-0.0, 3, floor)));
  EXPECT_TRUE(pos_zero(d(-1, -3, floor)));
  // Division by zero: IEEE a / b, for both modes.
  EXPECT_EQ(d(1, 0.0, trunc).v, kInf);
  EXPECT_EQ(d(1, 0.0, floor).v, kInf);
  EXPECT_EQ(d(-1, 0.0, trunc).v, -kInf);
  EXPECT_EQ(d(-1, -0.0, floor).v, kInf);
  EXPECT_TRUE(std::isnan(d(0.0, 0.0, trunc).v));
  EXPECT_TRUE(std::isnan(d(0.0, 0.0, floor).v));
  // Python: -5.0 // inf = -1.0, 5.0 // -inf = -1.0, inf // 3.0 = nan; trunc(inf / 3) = inf.
  EXPECT_EQ(d(-5, kInf, floor).v, -1);
  EXPECT_EQ(d(5, -kInf, floor).v, -1);
  EXPECT_TRUE(neg_zero(d(-5, kInf, trunc)));
  EXPECT_TRUE(std::isnan(d(kInf, 3, floor).v));
  EXPECT_EQ(d(kInf, 3, trunc).v, kInf);
  // Huge quotients: floor(1e30f / 3) = 333333338349155406625562951680, rounded to f32.
  EXPECT_EQ(d(f32(1e30), 3, floor).v, f32(3.33333338349155406625562951680e29));
  EXPECT_EQ(d(16777216, 3, trunc).v, 5592405);
  // Beyond f32: inf.
  EXPECT_EQ(d(f32(3e38), f32(1e-10), floor).v, kInf);
  // Below 2^24 the integer is exact: no bound.
  EXPECT_EQ(d(7, tenth, floor).e, 0);
  EXPECT_EQ(d(-7, tenth, trunc).e, 0);
}

TEST(ReferenceBinary, DivRoundedGradientsAreZero) {
  // div_tensor_self_backward / div_tensor_other_backward: zeros_like(grad) with a rounding mode.
  for (int v : {0, 1}) {
    const auto g = div_rounded_backward(x(kNan), x(7), x(2), x(3), rounding(v));
    EXPECT_EQ(g[0].v, 0);
    EXPECT_EQ(g[1].v, 0);
    EXPECT_EQ(g[0].e, 0);
    EXPECT_EQ(g[1].e, 0);
  }
}

TEST(ReferenceBinary, ModuloBoundsJumpAtIntegerQuotients) {
  const Attrs at, trunc = rounding(0), floor = rounding(1);
  // Away from an integer quotient the result moves with the inputs only.
  EXPECT_LT(remainder_forward(x(7.5, 1e-6), x(3), at).e, 1e-5);
  EXPECT_LT(fmod_forward(x(7.5, 1e-6), x(3), at).e, 1e-5);
  EXPECT_EQ(div_rounded_forward(x(7.5, 1e-6), x(3), trunc).e, 0);
  // Near one the value may jump by the divisor (remainder, fmod) or by 1 (the quotients).
  EXPECT_GE(remainder_forward(x(6, 1e-6), x(3), at).e, 3);
  EXPECT_GE(fmod_forward(x(6, 1e-6), x(3), at).e, 3);
  EXPECT_GE(div_rounded_forward(x(6, 1e-6), x(3), trunc).e, 1);
  EXPECT_GE(div_rounded_forward(x(6, 1e-6), x(3), floor).e, 1);
  // fmod is continuous where the dividend crosses 0, remainder and floor are not.
  EXPECT_LT(fmod_forward(x(0.0, 1e-6), x(3), at).e, 1e-5);
  EXPECT_GE(remainder_forward(x(0.0, 1e-6), x(3), at).e, 3);
  EXPECT_EQ(div_rounded_forward(x(0.0, 1e-6), x(3), trunc).e, 0);
  EXPECT_GE(div_rounded_forward(x(0.0, 1e-6), x(3), floor).e, 1);
  // A divisor interval holding 0: anything.
  EXPECT_TRUE(std::isinf(remainder_forward(x(1), x(0.0, 1e-6), at).e));
  EXPECT_TRUE(std::isinf(fmod_forward(x(1), x(0.0, 1e-6), at).e));
  EXPECT_TRUE(std::isinf(div_rounded_forward(x(1), x(0.0, 1e-6), floor).e));
  // Exact inputs: exact results.
  EXPECT_EQ(remainder_forward(x(7.25), x(-3), at).e, 0);
  EXPECT_EQ(fmod_forward(x(7.25), x(-3), at).e, 0);
}

// ---- hypot

TEST(ReferenceBinary, HypotValues) {
  const Attrs at;
  EXPECT_EQ(hypot_forward(x(3), x(4), at).v, 5);
  // C99 F.9.4.3: no undue overflow, and hypot(±inf, y) = +inf even for a NaN y.
  const double big = f32(3e38), ten = f32(1e38);
  EXPECT_EQ(hypot_forward(x(big), x(ten), at).v, f32(std::sqrt(big * big + ten * ten)));
  EXPECT_EQ(hypot_forward(x(big), x(big), at).v, kInf); // 4.2e38 is beyond f32
  EXPECT_EQ(hypot_forward(x(kInf), x(kNan), at).v, kInf);
  EXPECT_EQ(hypot_forward(x(kNan), x(-kInf), at).v, kInf);
  EXPECT_TRUE(std::isnan(hypot_forward(x(kNan), x(1), at).v));
  EXPECT_EQ(hypot_forward(x(-0.0), x(-3), at).v, 3);
  const double tiny = f32(1e-40);
  EXPECT_EQ(hypot_forward(x(tiny), x(tiny), at).v, f32(std::sqrt(2.0) * tiny));
  expect_tight(hypot_forward(x(3), x(4), at));
}

TEST(ReferenceBinary, HypotGradients) {
  const Attrs at;
  // derivatives.yaml: grad * self / result, grad * other / result.
  const auto g = hypot_backward(x(1), x(3), x(4), x(5), at);
  EXPECT_EQ(g[0].v, f32(0.6));
  EXPECT_EQ(g[1].v, f32(0.8));
  const auto g0 = hypot_backward(x(1), x(0.0), x(0.0), x(0.0), at); // 0 / 0
  EXPECT_TRUE(std::isnan(g0[0].v));
  EXPECT_TRUE(std::isnan(g0[1].v));
  expect_gradient(hypot_forward, hypot_backward, 1.5, -2);
  expect_gradient(hypot_forward, hypot_backward, -0.3, 7);
}

// ---- xlogy

TEST(ReferenceBinary, XlogyValues) {
  const Attrs at;
  const auto r = [&](double a, double b) { return xlogy_forward(x(a), x(b), at); };
  // The docs: NaN if other is NaN; 0 if input == 0; input * log(other) otherwise.
  EXPECT_EQ(r(0.0, 0.0).v, 0);
  EXPECT_EQ(r(0.0, -1).v, 0);
  EXPECT_EQ(r(0.0, kInf).v, 0);
  EXPECT_EQ(r(-0.0, 2).v, 0);
  EXPECT_TRUE(std::isnan(r(0.0, kNan).v));
  EXPECT_TRUE(std::isnan(r(kNan, 2).v));
  EXPECT_EQ(r(2, 0.0).v, -kInf);
  EXPECT_EQ(r(-2, 0.0).v, kInf);
  EXPECT_TRUE(std::isnan(r(2, -1).v));
  EXPECT_TRUE(std::isnan(r(kInf, 1).v)); // inf * log(1) = inf * 0
  EXPECT_EQ(r(2, kInf).v, kInf);
  EXPECT_TRUE(neg_zero(r(-2, 1))); // -2 * +0
  EXPECT_EQ(r(3, 1.5).v, f32(3 * std::log(1.5)));
  expect_tight(r(3, 1.5));
  // A log argument reaching 0 is indeterminate; a zero x is 0 whatever y is.
  EXPECT_TRUE(std::isinf(xlogy_forward(x(2), x(0.0, 1e-6), at).e));
  EXPECT_EQ(xlogy_forward(x(0.0), x(0.0, 1e-6), at).e, 0);
  // x straddling 0 against a certainly negative y: NaN or (at x = 0) 0.
  EXPECT_TRUE(std::isinf(xlogy_forward(x(0.0, 1e-6), x(-1), at).e));
}

TEST(ReferenceBinary, XlogyGradients) {
  const Attrs at;
  const auto g = [&](double gr, double a, double b) {
    return xlogy_backward(x(gr), x(a), x(b), xlogy_forward(x(a), x(b), at), at);
  };
  // derivatives.yaml: self: xlogy(grad, other) masked to 0 where self == 0 and other <= 0;
  // other: grad * self / other.
  auto r = g(1, 0.0, 0.0);
  EXPECT_EQ(r[0].v, 0);
  EXPECT_TRUE(std::isnan(r[1].v)); // 0 / 0
  r = g(1, 0.0, -1);
  EXPECT_EQ(r[0].v, 0);
  r = g(1, 0.0, kInf); // not masked: log(inf)
  EXPECT_EQ(r[0].v, kInf);
  EXPECT_EQ(r[1].v, 0);
  r = g(1, -0.0, 2);
  EXPECT_EQ(r[0].v, f32(std::log(2.0)));
  r = g(kInf, 0.0, 2); // xlogy(inf, 2) = inf; inf * 0 / 2 = NaN
  EXPECT_EQ(r[0].v, kInf);
  EXPECT_TRUE(std::isnan(r[1].v));
  r = g(0.0, 5, 0.0); // xlogy(0, 0) = 0: no 0 * inf
  EXPECT_EQ(r[0].v, 0);
  expect_gradient(xlogy_forward, xlogy_backward, 3, 1.5);
  expect_gradient(xlogy_forward, xlogy_backward, -0.7, 4);
}

// ---- copysign

TEST(ReferenceBinary, CopysignValues) {
  const Attrs at;
  const auto r = [&](double a, double b) { return copysign_forward(x(a), x(b), at); };
  EXPECT_EQ(r(1, -0.0).v, -1);
  EXPECT_TRUE(neg_zero(r(0.0, -1)));
  EXPECT_TRUE(pos_zero(r(-0.0, 1)));
  EXPECT_EQ(r(-3, 2).v, 3);
  EXPECT_EQ(r(kInf, -1).v, -kInf);
  EXPECT_TRUE(std::isnan(r(kNan, -1).v));
  EXPECT_EQ(r(-3, 2).e, 0);
  // A NaN's sign bit is not something the reference can know: either sign.
  EXPECT_GE(r(1, kNan).e, 2);
  EXPECT_GE(copysign_forward(x(1), x(0.0, 1e-6), at).e, 2);
  EXPECT_TRUE(straddles_zero(copysign_forward(x(0.0), x(0.0, 1e-6), at)));
}

TEST(ReferenceBinary, CopysignGradients) {
  const Attrs at;
  const auto g = [&](double a, double b) {
    return copysign_backward(x(1), x(a), x(b), copysign_forward(x(a), x(b), at), at);
  };
  // copysign_tensor_self_backward: grad * (result / self), 0 where self == 0; other: zeros.
  EXPECT_EQ(g(-3, 2)[0].v, -1);
  EXPECT_EQ(g(3, -2)[0].v, -1);
  EXPECT_EQ(g(3, 2)[0].v, 1);
  EXPECT_EQ(g(0.0, -1)[0].v, 0);
  EXPECT_TRUE(std::isnan(g(kInf, -1)[0].v)); // -inf / inf
  EXPECT_EQ(g(-3, 2)[1].v, 0);
  EXPECT_EQ(g(-3, 2)[1].e, 0);
  expect_gradient(copysign_forward, copysign_backward, -3, 2);
  expect_gradient(copysign_forward, copysign_backward, 1.5, -0.5);
  // A self straddling 0 flips the ratio: indeterminate.
  const Approx a = x(0.0, 1e-6);
  EXPECT_TRUE(std::isinf(copysign_backward(x(1), a, x(2), copysign_forward(a, x(2), at), at)[0].e));
}

// ---- lerp

TEST(ReferenceBinary, LerpValues) {
  const auto r = [](double a, double b, double w) { return lerp_forward(x(a), x(b), weight(w)); };
  EXPECT_EQ(r(1, 3, 0.25).v, 1.5);
  // The docs' start + weight * (end - start) in exact arithmetic: no intermediate overflow.
  const double big = f32(3e38);
  EXPECT_EQ(r(-big, big, 0.5).v, 0);
  EXPECT_EQ(r(-big, big, 0.25).v, f32(-big / 2));
  EXPECT_EQ(r(-big, big, 0.0).v, -big);
  EXPECT_EQ(r(-big, big, 1.0).v, big);
  EXPECT_EQ(r(-big, big, 0.0).e, 0);
  EXPECT_EQ(r(1, big, 2).v, kInf); // 6e38 - 1 is beyond f32
  const double a = f32(0.1), b = f32(0.7), w = f32(0.1);
  EXPECT_EQ(r(a, b, w).v, f32(a + w * (b - a)));
  expect_tight(r(a, b, w));
  expect_tight(r(-2, 5, 2));
  // NaN propagates; infinite endpoints are indeterminate where the equal forms disagree.
  EXPECT_TRUE(std::isnan(r(kNan, 1, 0.5).v));
  EXPECT_EQ(r(kNan, 1, 0.5).e, 0);
  EXPECT_TRUE(std::isinf(r(kInf, 1, 0.5).e));
  // In f64 too, where end - start overflows the double the reference computes in.
  const StorageScope f64(FloatDType::F64);
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(r(-max, max, 0.5).v, 0);
  EXPECT_EQ(r(-max, max, 0.25).v, -max / 2);
  EXPECT_EQ(r(max, -max, 0.0).v, max);
  EXPECT_TRUE(std::isfinite(r(-max, max, 0.5).e));
}

TEST(ReferenceBinary, LerpGradients) {
  // derivatives.yaml lerp.Scalar: grad * (1 - weight), grad * weight.
  const Attrs at = weight(0.1);
  const auto g = lerp_backward(x(1), x(2), x(5), x(2.3), at);
  EXPECT_EQ(g[0].v, f32(1 - f32(0.1)));
  EXPECT_EQ(g[1].v, f32(0.1));
  for (double w : {0.25, 0.5, 0.75, 2.0, -1.0})
    expect_gradient(lerp_forward, lerp_backward, 1.5, -2, weight(w));
}

// ---- comparisons and where

TEST(ReferenceBinary, ComparisonsFollowIeee) {
  const Attrs at;
  EXPECT_EQ(lt_forward(x(kNan), x(1), at).v, 0);
  EXPECT_EQ(le_forward(x(kNan), x(kNan), at).v, 0);
  EXPECT_EQ(gt_forward(x(1), x(kNan), at).v, 0);
  EXPECT_EQ(ge_forward(x(kNan), x(1), at).v, 0);
  EXPECT_EQ(eq_forward(x(kNan), x(kNan), at).v, 0);
  EXPECT_EQ(ne_forward(x(kNan), x(kNan), at).v, 1);
  EXPECT_EQ(eq_forward(x(-0.0), x(0.0), at).v, 1);
  EXPECT_EQ(ge_forward(x(0.0), x(-0.0), at).v, 1);
  EXPECT_EQ(lt_forward(x(-0.0), x(0.0), at).v, 0);
  EXPECT_EQ(le_forward(x(kInf), x(kInf), at).v, 1);
  EXPECT_EQ(gt_forward(x(-kInf), x(-kInf), at).v, 0);
  EXPECT_EQ(lt_forward(x(-kInf), x(3e38), at).v, 1);
  EXPECT_EQ(ne_forward(x(kNan), x(kNan), at).e, 0);
  // Intervals that meet make a comparison uncertain; separated ones do not.
  EXPECT_TRUE(std::isinf(lt_forward(x(1, 1e-3), x(1.0005), at).e));
  EXPECT_TRUE(std::isinf(eq_forward(x(1, 1e-3), x(1.0005), at).e));
  EXPECT_EQ(lt_forward(x(1, 1e-3), x(2), at).e, 0);
  EXPECT_EQ(ne_forward(x(1, 1e-3), x(2), at).e, 0);
  EXPECT_EQ(gt_forward(x(kInf), x(2, 1), at).e, 0);
  EXPECT_TRUE(std::isinf(ge_forward(x(1, kInf), x(2), at).e));
}

TEST(ReferenceBinary, Where) {
  const Attrs at;
  const Approx yes{1, 0}, no{0, 0}, unsure{1, kInf};
  EXPECT_EQ(where_forward(yes, x(2, 1e-6), x(3), at).v, 2);
  EXPECT_EQ(where_forward(yes, x(2, 1e-6), x(3), at).e, 1e-6);
  EXPECT_EQ(where_forward(no, x(2), x(3), at).v, 3);
  EXPECT_TRUE(std::isinf(where_forward(unsure, x(2), x(3), at).e));
  EXPECT_EQ(where_forward(unsure, x(2), x(2), at).e, 0); // both branches the same
  // derivatives.yaml: where(condition, grad, 0), where(condition, 0, grad).
  auto g = where_backward(x(kInf), yes, at);
  EXPECT_EQ(g[0].v, kInf);
  EXPECT_EQ(g[1].v, 0);
  g = where_backward(x(1.5), no, at);
  EXPECT_EQ(g[0].v, 0);
  EXPECT_EQ(g[1].v, 1.5);
  g = where_backward(x(1.5), unsure, at);
  EXPECT_TRUE(std::isinf(g[0].e));
  EXPECT_TRUE(std::isinf(g[1].e));
  g = where_backward(x(0.0), unsure, at);
  EXPECT_EQ(g[0].e, 0);
  EXPECT_EQ(g[1].e, 0);
}

} // namespace
} // namespace burnmark::ref
