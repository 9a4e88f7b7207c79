// The reference backend's elementwise ops (add, sub, mul, div with broadcasting; neg, abs, exp,
// log, sqrt, relu, sigmoid, tanh, clamp, pow): forward values against math computed here,
// gradients against central finite differences, and PyTorch 1.13.1's conventions at kinks and
// special values (docs/conventions.md).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "reference_test_builder.h"

using namespace burnmark;
using namespace burnmark::reference_test;

TEST(ReferenceForward, ElementwiseBinaryBroadcast) {
  const std::vector<float> a = {0.5f, -1.25f, 2.0f, 1.5f, -0.75f, 3.0f};
  const std::vector<float> c = {1.5f, -2.0f, 0.1f};
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    Builder b;
    const Reg x = b.leaf({2, 3}, a);
    const Reg y = b.leaf({3}, c);
    const Outcome out = run(b.done(b.op(op, {x, y})), false);
    ASSERT_EQ(out.root.shape.to_string(), "[2,3]");
    for (std::size_t i = 0; i < 6; ++i) {
      const double u = a[i];
      const double v = c[i % 3];
      const double want = op == Op::Add   ? u + v
                          : op == Op::Sub ? u - v
                          : op == Op::Mul ? u * v
                                          : u / v;
      EXPECT_SAME(f32(want), out.root.values[i]);
    }
  }
}

TEST(ReferenceForward, ElementwiseUnary) {
  const std::vector<float> xs = {0.5f, 1.75f, 3.0f, 0.1f};
  const std::vector<float> signed_xs = {-2.5f, -0.5f, 0.25f, 4.0f};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double s = signed_xs[i];
    EXPECT_SAME(f32(-s), unary_values(Op::Neg, signed_xs)[i]);
    EXPECT_SAME(f32(std::fabs(s)), unary_values(Op::Abs, signed_xs)[i]);
    EXPECT_SAME(f32(std::exp(s)), unary_values(Op::Exp, signed_xs)[i]);
    EXPECT_SAME(f32(std::log(x)), unary_values(Op::Log, xs)[i]);
    EXPECT_SAME(f32(std::sqrt(x)), unary_values(Op::Sqrt, xs)[i]);
    EXPECT_SAME(f32(s > 0 ? s : 0.0), unary_values(Op::Relu, signed_xs)[i]);
    EXPECT_SAME(f32(1 / (1 + std::exp(-s))), unary_values(Op::Sigmoid, signed_xs)[i]);
    EXPECT_SAME(f32(std::tanh(s)), unary_values(Op::Tanh, signed_xs)[i]);
    EXPECT_SAME(f32(std::min(std::max(s, -1.0), 1.0)),
                unary_values(Op::Clamp, signed_xs, bounds(-1, 1))[i]);
    EXPECT_SAME(f32(std::pow(x, 1.5)), unary_values(Op::Pow, xs, exponent(1.5))[i]);
    EXPECT_SAME(f32(f32(s * s) * s), unary_values(Op::Pow, signed_xs, exponent(3))[i]);
    EXPECT_SAME(f32(1 / f32(std::sqrt(x))), unary_values(Op::Pow, xs, exponent(-0.5))[i]);
  }
}

TEST(ReferenceGradients, BinaryOpsWithBroadcasting) {
  const std::vector<float> a = values(6, -1.25f, 0.5f);
  const std::vector<float> c = {1.5f, -2.0f, 0.75f};
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    SCOPED_TRACE(std::string(op_name(op)));
    expect_gradients_match_fd(weighted(op, {{{2, 3}, a}, {{3}, c}}));
    expect_gradients_match_fd(weighted(op, {{{2, 1}, {1.25f, -0.5f}}, {{1, 3}, c}}));
  }
}

TEST(ReferenceGradients, UnaryOpsAwayFromKinks) {
  const std::vector<float> pos = values(6, 0.375f, 0.3125f);
  const std::vector<float> mixed = {-1.5f, -0.625f, 0.3125f, 0.875f, 1.25f, 2.0f};
  const std::vector<float> clamp_in = {-1.5f, -0.625f, 0.125f, 0.5f, 1.25f, 2.0f};
  const auto one = [](const std::vector<float>& xs) {
    return std::vector<std::pair<Shape, std::vector<float>>>{{{6}, xs}};
  };
  for (Op op : {Op::Neg, Op::Abs, Op::Exp, Op::Relu, Op::Sigmoid, Op::Tanh}) {
    SCOPED_TRACE(std::string(op_name(op)));
    expect_gradients_match_fd(weighted(op, one(mixed)));
  }
  expect_gradients_match_fd(weighted(Op::Log, one(pos)));
  expect_gradients_match_fd(weighted(Op::Sqrt, one(pos)));
  expect_gradients_match_fd(weighted(Op::Clamp, one(clamp_in), bounds(-1, 1)));
  expect_gradients_match_fd(weighted(Op::Clamp, one(clamp_in), bounds(-0.5, 0.25)));
  expect_gradients_match_fd(weighted(Op::Clamp, one(clamp_in), bounds(0.5, -0.5)));
  for (double c : kPowExponents) {
    SCOPED_TRACE("pow " + std::to_string(c));
    expect_gradients_match_fd(weighted(Op::Pow, one(pos), exponent(c)));
    if (c == std::floor(c)) expect_gradients_match_fd(weighted(Op::Pow, one(mixed), exponent(c)));
  }
}

TEST(ReferenceGradients, BroadcastOperandGetsSummedGradient) {
  Builder b;
  const Reg x = b.leaf({2, 3}, values(6, 0, 1));
  const Reg y = b.leaf({3}, {1, 2, 3});
  const Outcome out = run(b.done(b.op(Op::Add, {x, y})));
  EXPECT_EQ(out.grads[0].values, std::vector<double>(6, 1.0));
  EXPECT_EQ(out.grads[1].values, std::vector<double>(3, 2.0));
  EXPECT_EQ(out.grads[1].shape.to_string(), "[3]");
}

TEST(ReferenceConventions, Abs) {
  // sgn(±0) = 0 is the subgradient at the kink; at NaN the derivative is NaN (sign(NaN) is NaN).
  const auto g = unary_grads(Op::Abs, {0.0f, -0.0f, kNaN, -3.0f, 2.0f});
  EXPECT_EQ(g[0], 0);
  EXPECT_EQ(g[1], 0);
  EXPECT_TRUE(std::isnan(g[2]));
  EXPECT_EQ(g[3], -1);
  EXPECT_EQ(g[4], 1);
}

TEST(ReferenceConventions, Relu) {
  const auto v = unary_values(Op::Relu, {kNaN, -1.0f, 0.0f, 2.0f});
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0);
  EXPECT_SAME(-0.0, unary_values(Op::Relu, {-0.0f})[0]); // clamp_min keeps x unless x < 0
  const auto g = unary_grads(Op::Relu, {kNaN, -1.0f, 0.0f, -0.0f, 2.0f});
  EXPECT_EQ(g, (std::vector<double>{1, 0, 0, 0, 1}));
}

TEST(ReferenceConventions, Clamp) {
  const std::vector<float> xs = {-1.0f, 1.0f, kNaN, -2.0f, 0.5f, 3.0f};
  const auto v = unary_values(Op::Clamp, xs, bounds(-1, 1));
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], -1);
  EXPECT_EQ(v[5], 1);
  EXPECT_EQ(unary_grads(Op::Clamp, xs, bounds(-1, 1)), (std::vector<double>{1, 1, 0, 0, 1, 0}));
  EXPECT_SAME(-0.0, unary_values(Op::Clamp, {-0.0f}, bounds(0, 1))[0]); // x kept on a tie
  // lo > hi: hi everywhere (NaN still propagates), gradient 0 everywhere.
  const auto inverted = unary_values(Op::Clamp, xs, bounds(0.5, -0.5));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i == 2)
      EXPECT_TRUE(std::isnan(inverted[i]));
    else
      EXPECT_EQ(inverted[i], -0.5);
  }
  EXPECT_EQ(unary_grads(Op::Clamp, xs, bounds(0.5, -0.5)), std::vector<double>(6, 0.0));
}

TEST(ReferenceConventions, SqrtAndLogAtZero) {
  const auto sg = unary_grads(Op::Sqrt, {0.0f, -0.0f, 4.0f});
  EXPECT_EQ(sg[0], kInfD);
  EXPECT_EQ(sg[1], -kInfD);
  EXPECT_EQ(sg[2], 0.25);
  EXPECT_SAME(-0.0, unary_values(Op::Sqrt, {-0.0f})[0]);
  const auto lg = unary_grads(Op::Log, {0.0f, -0.0f, -2.0f});
  EXPECT_EQ(lg[0], kInfD);
  EXPECT_EQ(lg[1], -kInfD);
  EXPECT_EQ(lg[2], -0.5); // finite 1/x although the forward is NaN
  const auto lv = unary_values(Op::Log, {0.0f, -2.0f});
  EXPECT_EQ(lv[0], -kInfD);
  EXPECT_TRUE(std::isnan(lv[1]));
}

TEST(ReferenceConventions, ZeroUpstreamTimesInfiniteSlopeIsNaN) {
  // sqrt'(0) = inf; with an upstream gradient of exactly 0 the rule computes 0 / (2 * 0) = NaN.
  Builder b;
  const Reg x = b.leaf({1}, {0.0f});
  const Reg s = b.op(Op::Sqrt, {x});
  const Reg w = b.leaf({1}, {0.0f});
  const Outcome out = run(b.done(b.op(Op::Mul, {s, w})));
  EXPECT_TRUE(std::isnan(out.grads[0].values[0]));
}

TEST(ReferenceConventions, DivisionByZero) {
  Builder b;
  const Reg x = b.leaf({3}, {1.0f, -1.0f, 0.0f});
  const Reg y = b.leaf({3}, {0.0f, 0.0f, 0.0f});
  const Outcome out = run(b.done(b.op(Op::Div, {x, y})));
  EXPECT_EQ(out.root.values[0], kInfD);
  EXPECT_EQ(out.root.values[1], -kInfD);
  EXPECT_TRUE(std::isnan(out.root.values[2]));
  EXPECT_EQ(out.grads[0].values, std::vector<double>(3, kInfD)); // grad / other = 1 / 0
  // -grad * ((self / other) / other): -(inf / 0) = -inf, -(-inf / 0) = +inf, NaN stays NaN.
  EXPECT_EQ(out.grads[1].values[0], -kInfD);
  EXPECT_EQ(out.grads[1].values[1], kInfD);
  EXPECT_TRUE(std::isnan(out.grads[1].values[2]));
}

TEST(ReferenceConventions, ExpGradientIsTheRoundedResult) {
  const auto g = unary_grads(Op::Exp, {89.0f, 1.0f});
  EXPECT_EQ(g[0], kInfD);
  EXPECT_EQ(g[1], f32(std::exp(1.0)));
}

TEST(ReferenceConventions, PowForward) {
  const auto p0 = unary_values(Op::Pow, {kNaN, 0.0f, -3.0f}, exponent(0));
  EXPECT_EQ(p0, std::vector<double>(3, 1.0));
  // C99 F.9.4.4: pow(-0, y) is +0 for y > 0 and +inf for y < 0 when y is not an odd integer;
  // pow(-inf, y) is +inf for y > 0 and +0 for y < 0 (not sqrt's -0, and sqrt(-inf)'s NaN).
  EXPECT_SAME(0.0, unary_values(Op::Pow, {-0.0f}, exponent(0.5))[0]);
  EXPECT_SAME(kInfD,
              unary_values(Op::Pow, {-std::numeric_limits<float>::infinity()}, exponent(0.5))[0]);
  EXPECT_SAME(0.0,
              unary_values(Op::Pow, {-std::numeric_limits<float>::infinity()}, exponent(-0.5))[0]);
  EXPECT_TRUE(std::isnan(unary_values(Op::Pow, {-1.0f}, exponent(0.5))[0]));
  EXPECT_EQ(unary_values(Op::Pow, {-0.0f}, exponent(-0.5))[0], kInfD);
  EXPECT_EQ(unary_values(Op::Pow, {0.0f}, exponent(-1))[0], kInfD);
  EXPECT_EQ(unary_values(Op::Pow, {-0.0f}, exponent(-1))[0], -kInfD);
  // x^-2 is not LibTorch's 1/(x*x), whose x*x overflows f32 from 2^64: with x = f32(1e20) =
  // 1e20 + 2004087734272, 1/x^2 = 9.99999960e-41 = 71362.38 * 2^-149, a subnormal, rounded to
  // 71362 steps (x^-2 = 1e-40 (1 - 2 * 2.004e-8); 1e-40 / 2^-149 = 71362.38).
  EXPECT_SAME(71362 * 0x1p-149, unary_values(Op::Pow, {1e20f}, exponent(-2))[0]);
  // Past 2^75 x^-2 is below half the smallest subnormal: 0.
  EXPECT_SAME(0.0, unary_values(Op::Pow, {1e23f}, exponent(-2))[0]);
  EXPECT_EQ(unary_values(Op::Pow, {1e20f}, exponent(2))[0], kInfD);
  EXPECT_EQ(unary_values(Op::Pow, {-2.0f}, exponent(3))[0], -8.0);
  EXPECT_TRUE(std::isnan(unary_values(Op::Pow, {kNaN}, exponent(1))[0]));
}

TEST(ReferenceConventions, PowBackward) {
  EXPECT_EQ(unary_grads(Op::Pow, {kNaN, 0.0f, 2.0f}, exponent(0)), std::vector<double>(3, 0.0));
  EXPECT_EQ(unary_grads(Op::Pow, {kNaN, 0.0f}, exponent(1)), std::vector<double>(2, 1.0));
  // 0.5 * pow(x, -0.5), and pow(-0, -0.5) is +inf (C99), so both zeros give +inf.
  const auto half = unary_grads(Op::Pow, {0.0f, -0.0f}, exponent(0.5));
  EXPECT_EQ(half[0], kInfD);
  EXPECT_EQ(half[1], kInfD);
  EXPECT_EQ(unary_grads(Op::Pow, {0.0f, -0.0f}, exponent(-1)), std::vector<double>(2, -kInfD));
  const auto m2 = unary_grads(Op::Pow, {0.0f, -0.0f}, exponent(-2));
  EXPECT_EQ(m2[0], -kInfD);
  EXPECT_EQ(m2[1], kInfD);
  // grad * (c * x^(c-1)) with x^(c-1) through the same fast paths: c = 3 uses x*x.
  EXPECT_EQ(unary_grads(Op::Pow, {-2.0f}, exponent(3))[0], 12.0);
  // d/dx x^-1 = -x^-2: at f32(1e20) -71362 * 2^-149 (PowForward), not the -0 of 1/(x*x) once
  // x*x has overflowed (issue 14's four-backend campaign: oneDNN and Eigen give the subnormal).
  EXPECT_SAME(-71362 * 0x1p-149, unary_grads(Op::Pow, {1e20f}, exponent(-1))[0]);
}

// The bound of x^-2 where LibTorch's 1/(x*x) overflows: the exact subnormal is judged, so the
// fast path's 0 diverges (its error 1e-40 is the value itself) and a correctly rounded
// neighbour does not.
TEST(ReferenceConventions, PowMinusTwoKeepsItsSubnormals) {
  const auto run_pow = [](float x, double c) {
    Builder b;
    const Reg r = b.leaf({1}, {x});
    return run(b.done(b.op(Op::Pow, {r}, exponent(c))));
  };
  const Outcome fwd = run_pow(1e20f, -2);
  const double v = fwd.root.values[0], e = fwd.root.error_bound[0];
  EXPECT_SAME(71362 * 0x1p-149, v);
  EXPECT_LT(e, 0x1p-149); // below one subnormal step: an exact rounding
  const Outcome grad = run_pow(1e20f, -1);
  EXPECT_LT(grad.grads[0].error_bound[0], 0x1p-149);
  // Just inside the range (x*x = 2^126 at x = 2^63) the steps are exact: 1/x^2 = 2^-126.
  EXPECT_SAME(0x1p-126, unary_values(Op::Pow, {0x1p63f}, exponent(-2))[0]);
  // Below 2^-63 x*x is subnormal; x = 1.5 * 2^-64: x^-2 = 2^128 / 2.25, a normal float that
  // 1/(x*x) meets exactly as well (2.25 * 2^-128 is a subnormal multiple of 2^-149).
  EXPECT_SAME(static_cast<double>(static_cast<float>(0x1p128 / 2.25)),
              unary_values(Op::Pow, {1.5f * 0x1p-64f}, exponent(-2))[0]);
}

TEST(ReferenceConventions, SigmoidTanhFollowTheirF32Formulas) {
  const std::vector<float> xs = {-3.0f, 0.0f, 0.7f, 5.0f};
  const auto sg = unary_grads(Op::Sigmoid, xs);
  const auto tg = unary_grads(Op::Tanh, xs);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double y = f32(1 / (1 + std::exp(-double(xs[i]))));
    EXPECT_SAME(f32(f32(1 - y) * y), sg[i]);
    const double t = f32(std::tanh(double(xs[i])));
    EXPECT_SAME(f32(1 - f32(t * t)), tg[i]);
  }
}

TEST(ReferenceConventions, ExpOverflowsWhereF32Does) {
  const auto v = unary_values(Op::Exp, {88.0f, 89.0f});
  EXPECT_TRUE(std::isfinite(v[0]));
  EXPECT_EQ(v[1], kInfD);
}
