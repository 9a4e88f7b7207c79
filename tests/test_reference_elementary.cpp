// The elementary unary ops of the reference backend (approx_elementary.h): gradients against
// central differences, the values at each op's special points (derived from C99 Annex F, the
// PyTorch docs and derivatives.yaml, not from the implementation), and the size of the bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "approx_elementary.h"

namespace {

using namespace burnmark;
using namespace burnmark::ref;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using Fwd = Approx (*)(Approx, const Attrs&);
using Bwd = Approx (*)(Approx, Approx, Approx, const Attrs&);
struct Unary {
  const char* name;
  Fwd f;
  Bwd b;
};
#define UNARY(op)                                                                                  \
  Unary {                                                                                          \
#op, op##_forward, op##_backward                                                               \
  }

// An exact f32 leaf.
Approx leaf(double v) {
  return {static_cast<double>(static_cast<float>(v)), 0.0};
}
Attrs with_lo(double lo) {
  Attrs a;
  a.lo = lo;
  return a;
}
Attrs with_hi(double hi) {
  Attrs a;
  a.hi = hi;
  return a;
}
const Attrs kNone{};

Approx fwd(Unary op, double x, const Attrs& at = kNone) {
  return op.f(leaf(x), at);
}
// The gradient for upstream g at an exact x, through the op's own forward result.
Approx grad(Unary op, double x, double g = 1.0, const Attrs& at = kNone) {
  const Approx y = op.f(leaf(x), at);
  return op.b(leaf(g), leaf(x), y, at);
}
bool is_neg_zero(double v) {
  return v == 0 && std::signbit(v);
}
bool is_pos_zero(double v) {
  return v == 0 && !std::signbit(v);
}

// Central difference of the forward's rounded value over f32 neighbours x ± h, h relative to a
// scale that keeps the curvature term and the f32 rounding of the results both near 1e-4.
void expect_matches_difference(Unary op, double x, double scale, const Attrs& at = kNone) {
  const double xp = leaf(x + 1e-3 * scale).v;
  const double xm = leaf(x - 1e-3 * scale).v;
  const double fd = (fwd(op, xp, at).v - fwd(op, xm, at).v) / (xp - xm);
  const Approx d = grad(op, x, 1.0, at);
  if (fd == 0) {
    EXPECT_EQ(d.v, 0.0) << op.name << " at " << x;
  } else {
    EXPECT_NEAR(d.v, fd, 1e-3 * std::fabs(fd)) << op.name << " at " << x;
  }
}

TEST(ReferenceElementary, GradientsMatchCentralDifferences) {
  struct Case {
    Unary op;
    std::vector<double> xs;
    Attrs at = kNone;
  };
  const std::vector<Case> cases = {
      {UNARY(log1p), {-0.9, -0.5, 0.3, 2.0, 100.0}},
      {UNARY(expm1), {-5.0, -1.0, 0.5, 3.0, 20.0}},
      {UNARY(log2), {1e-3, 0.5, 3.0, 1e10}},
      {UNARY(log10), {1e-3, 0.5, 3.0, 1e10}},
      {UNARY(exp2), {-20.0, -1.0, 0.5, 10.0, 100.0}},
      {UNARY(rsqrt), {1e-4, 0.5, 2.0, 1e6}},
      {UNARY(reciprocal), {-3.0, -0.1, 0.25, 7.0, 1e5}},
      {UNARY(square), {-3.0, -0.1, 0.5, 1e3}},
      {UNARY(sign), {-3.0, 2.0}},
      {UNARY(sgn), {-3.0, 2.0}},
      {UNARY(floor), {1.3, -2.7, 0.2}},
      {UNARY(ceil), {1.3, -2.7, 0.2}},
      {UNARY(round), {1.3, -2.7, 0.2}},
      {UNARY(trunc), {1.3, -2.7, 0.2}},
      {UNARY(frac), {1.3, -2.7, 0.2, 5.6}},
      {UNARY(clamp_min), {0.2, 1.3, -4.0}, with_lo(0.5)},
      {UNARY(clamp_max), {0.2, 1.3, -4.0}, with_hi(-0.5)},
  };
  for (const Case& c : cases)
    for (double x : c.xs) {
      // Away from the domain edge of log1p the distance to -1 sets the scale.
      const double scale = c.op.f == log1p_forward ? std::fabs(x + 1) : std::fabs(x);
      expect_matches_difference(c.op, x, scale, c.at);
    }
}

// ---- special values ----

TEST(ReferenceElementary, Log1pEdges) {
  const Unary op = UNARY(log1p);
  // C99 F.10.3.4: log1p(-1) = -inf, log1p(x < -1) = NaN, log1p(±0) = ±0, log1p(+inf) = +inf.
  EXPECT_EQ(fwd(op, -1.0).v, -kInf);
  EXPECT_TRUE(std::isnan(fwd(op, -1.00000012).v));
  EXPECT_TRUE(std::isnan(fwd(op, -kInf).v));
  EXPECT_TRUE(is_pos_zero(fwd(op, 0.0).v));
  EXPECT_TRUE(is_neg_zero(fwd(op, -0.0).v));
  EXPECT_EQ(fwd(op, kInf).v, kInf);
  // log1p(x) = log(x) + log1p(1/x), and log1p(1/x) < 2^-100 here: 88.5968 (LibTorch's Sleef
  // kernel returns inf above 1e38, a finding).
  EXPECT_NEAR(fwd(op, 3e38).v, std::log(static_cast<double>(3e38f)), 1e-5);
  EXPECT_NEAR(fwd(op, 1e38 * 1.0000001).v, std::log(1e38), 1e-4);
  // Tiny inputs: log1p(x) = x - x^2/2, i.e. x itself in f32, subnormals included.
  EXPECT_EQ(fwd(op, 1e-30).v, leaf(1e-30).v);
  EXPECT_EQ(fwd(op, 1e-40).v, leaf(1e-40).v);
  // derivatives.yaml's log1p_backward: grad / (self + 1) — +inf at -1, and the finite -1 / 1
  // at -2 although the value is NaN there. -0.99999994 + 1 = 2^-24 exactly.
  EXPECT_EQ(grad(op, -1.0).v, kInf);
  EXPECT_EQ(grad(op, -2.0).v, -1.0);
  EXPECT_EQ(grad(op, -0.99999994).v, 0x1p24);
  // + 1 rounds first: 1e-8 + 1 = 1 in f32.
  EXPECT_EQ(grad(op, 1e-8).v, 1.0);
}

TEST(ReferenceElementary, Expm1Edges) {
  const Unary op = UNARY(expm1);
  // ln(FLT_MAX) = 88.7228391: 88.7228f (= 88.72279...) stays finite, 88.7229f overflows.
  EXPECT_TRUE(std::isfinite(fwd(op, 88.7228).v));
  EXPECT_EQ(fwd(op, 88.7229).v, kInf);
  EXPECT_EQ(fwd(op, 89.0).e, 0.0);
  // C99 F.10.3.3: expm1(±0) = ±0, expm1(-inf) = -1.
  EXPECT_TRUE(is_neg_zero(fwd(op, -0.0).v));
  EXPECT_EQ(fwd(op, -kInf).v, -1.0);
  EXPECT_EQ(fwd(op, -100.0).v, -1.0); // e^-100 is far below half an ulp of 1
  EXPECT_EQ(fwd(op, 1e-40).v, leaf(1e-40).v);
  // D: grad * (result + 1): -1 + 1 = 0 at -100 (not e^-100), inf after overflow.
  EXPECT_EQ(grad(op, -100.0).v, 0.0);
  EXPECT_EQ(grad(op, 89.0).v, kInf);
  EXPECT_EQ(grad(op, 0.0).v, 1.0);
  // An input interval reaching below the overflow point may not overflow: unknown, not inf
  // (found by the scalar-kernel campaign: copysign with a NaN of unknown sign, then expm1).
  const Attrs none{};
  EXPECT_EQ(ref::expm1_forward(Approx{2.3e27, 4.6e27}, none).e, kInf);
  EXPECT_EQ(ref::exp2_forward(Approx{200.0, 100.0}, none).e, kInf);
  EXPECT_EQ(ref::exp(Approx{100.0, 20.0}).e, kInf);
  EXPECT_EQ(ref::expm1_forward(Approx{1e30, 0.0}, none).e, 0.0); // exact: surely inf
}

TEST(ReferenceElementary, Log2Log10Edges) {
  const Unary l2 = UNARY(log2);
  const Unary l10 = UNARY(log10);
  for (Unary op : {l2, l10}) {
    // C99 F.10.3.8/10: log(±0) = -inf, log(1) = +0, log(x < 0) = NaN, log(+inf) = +inf.
    EXPECT_EQ(fwd(op, 0.0).v, -kInf) << op.name;
    EXPECT_EQ(fwd(op, -0.0).v, -kInf) << op.name;
    EXPECT_TRUE(is_pos_zero(fwd(op, 1.0).v)) << op.name;
    EXPECT_TRUE(std::isnan(fwd(op, -1.0).v)) << op.name;
    EXPECT_EQ(fwd(op, kInf).v, kInf) << op.name;
    EXPECT_EQ(fwd(op, 0.0).e, 0.0) << op.name;
  }
  EXPECT_EQ(fwd(l2, 8.0).v, 3.0);
  EXPECT_EQ(fwd(l10, 1000.0).v, 3.0);
  // Subnormals are ordinary numbers: 1e-40f is 71362 * 2^-149, the smallest one 2^-149.
  ASSERT_EQ(std::ldexp(leaf(1e-40).v, 149), 71362.0);
  EXPECT_NEAR(fwd(l2, 1e-40).v, std::log2(71362.0) - 149, 2e-5); // -132.877
  EXPECT_EQ(fwd(l2, 0x1p-149).v, -149.0);
  EXPECT_NEAR(fwd(l10, 0x1p-149).v, -149 * 0.30102999566398120, 1e-5); // -44.8534
  EXPECT_LT(fwd(l2, 1e-40).e, 1e-4);
  // D: grad / (self * ln2) with the constant rounded to f32: ±inf at ±0, and at 1e-40 the
  // subnormal product 6.9e-41 has a reciprocal 1.4e40 beyond FLT_MAX.
  EXPECT_EQ(grad(l2, 0.0).v, kInf);
  EXPECT_EQ(grad(l2, -0.0).v, -kInf);
  EXPECT_EQ(grad(l2, 1e-40).v, kInf);
  EXPECT_NEAR(grad(l2, 1.0).v, 1 / std::numbers::ln2, 1e-6);
  EXPECT_NEAR(grad(l10, 1.0).v, 1 / std::numbers::ln10, 1e-6);
  EXPECT_NEAR(grad(l2, -1.0).v, -1 / std::numbers::ln2, 1e-6); // finite where the value is NaN
}

TEST(ReferenceElementary, Exp2OverflowAndGradualUnderflow) {
  const Unary op = UNARY(exp2);
  EXPECT_EQ(fwd(op, 128.0).v, kInf); // 2^128 > FLT_MAX
  EXPECT_EQ(fwd(op, 128.0).e, 0.0);  // not indeterminate: 2^128 is exact, every kernel overflows
  EXPECT_TRUE(std::isfinite(fwd(op, 127.99999).v));
  EXPECT_EQ(fwd(op, -126.0).v, 0x1p-126);
  EXPECT_EQ(fwd(op, -149.0).v, 0x1p-149);
  EXPECT_EQ(fwd(op, -149.0).e, 0.0);           // powers of two are exact
  EXPECT_EQ(fwd(op, -149.5).v, 0x1p-149);      // 0.707 of the smallest step rounds up to it
  EXPECT_TRUE(is_pos_zero(fwd(op, -150.0).v)); // half the smallest step: the tie goes to even 0
  EXPECT_TRUE(is_pos_zero(fwd(op, -kInf).v));  // C99 F.10.3.2
  EXPECT_EQ(fwd(op, -0.0).v, 1.0);
  // A subnormal result keeps a bound below its own size: IEEE gradual underflow, so an
  // implementation that flushes 2^-140.3 to zero lies outside it.
  const Approx sub = fwd(op, -140.3);
  EXPECT_GT(sub.v, 0.0);
  EXPECT_LT(sub.e, 0.01 * sub.v);
  // D: grad * result * M_LN2, left to right: 2 * 2^127.5 overflows before the ln2.
  EXPECT_EQ(grad(op, 127.5, 2.0).v, kInf);
  EXPECT_NEAR(grad(op, 0.0).v, std::numbers::ln2, 1e-7);
}

TEST(ReferenceElementary, RsqrtFollowsOneOverSqrt) {
  const Unary op = UNARY(rsqrt);
  // Documented as 1 / sqrt(x): sqrt(-0) = -0 (IEEE), so rsqrt(-0) = 1 / -0 = -inf.
  EXPECT_EQ(fwd(op, 0.0).v, kInf);
  EXPECT_EQ(fwd(op, -0.0).v, -kInf);
  EXPECT_TRUE(is_pos_zero(fwd(op, kInf).v));
  EXPECT_TRUE(std::isnan(fwd(op, -1.0).v));
  EXPECT_EQ(fwd(op, 4.0).v, 0.5);
  EXPECT_NEAR(fwd(op, 1e-40).v, 1 / std::sqrt(leaf(1e-40).v), 1e14); // 1e20, finite
  // Not exact on exact inputs: a two-rounding 1 / sqrt and a correctly rounded rsqrt differ by
  // an ulp (LibTorch's is the former; rsqrt(x) for 27% of random x).
  EXPECT_GT(fwd(op, 2.0).e, 0.0);
  EXPECT_LT(fwd(op, 2.0).e, 1e-6 * fwd(op, 2.0).v);
  // D: -0.5 * grad * result^3: -inf at +0, +inf at -0 (-0.5 * (-inf)^3), NaN for grad 0 at +0
  // (-0 * inf), -1/16 at 4.
  EXPECT_EQ(grad(op, 0.0).v, -kInf);
  EXPECT_EQ(grad(op, -0.0).v, kInf);
  EXPECT_TRUE(std::isnan(grad(op, 0.0, 0.0).v));
  EXPECT_EQ(grad(op, 4.0).v, -0.0625);
  EXPECT_EQ(grad(op, 1e-40).v, -kInf); // result^3 = 1e60 overflows
}

TEST(ReferenceElementary, ReciprocalOverflowsFromTheSubnormals) {
  const Unary op = UNARY(reciprocal);
  EXPECT_EQ(fwd(op, 0.0).v, kInf);
  EXPECT_EQ(fwd(op, -0.0).v, -kInf);
  EXPECT_EQ(fwd(op, 1e-40).v, kInf); // 1e40 > FLT_MAX
  EXPECT_EQ(fwd(op, -1e-40).v, -kInf);
  EXPECT_EQ(fwd(op, 2.9e-39).v, kInf); // 3.45e38 > FLT_MAX + half an ulp
  EXPECT_EQ(fwd(op, 2.9e-39).e, 0.0);
  const Approx small = fwd(op, 3e38); // 3.3e-39, subnormal, correctly rounded
  EXPECT_GT(small.v, 0.0);
  EXPECT_LT(small.v, 0x1p-126);
  EXPECT_EQ(small.e, 0.0);
  EXPECT_TRUE(is_pos_zero(fwd(op, kInf).v));
  EXPECT_TRUE(is_neg_zero(fwd(op, -kInf).v));
  EXPECT_EQ(fwd(op, 4.0).v, 0.25);
  // D: -grad * (result * result): at 1e-20, result^2 = 1e40 overflows before grad 1e-30 can
  // scale it down; -inf at both zeros.
  EXPECT_EQ(grad(op, 1e-20, 1e-30).v, -kInf);
  EXPECT_EQ(grad(op, 0.0).v, -kInf);
  EXPECT_EQ(grad(op, -0.0).v, -kInf);
  EXPECT_EQ(grad(op, 4.0).v, -0.0625);
  EXPECT_TRUE(is_neg_zero(grad(op, kInf).v));
}

TEST(ReferenceElementary, SquareOverflowAndUnderflow) {
  const Unary op = UNARY(square);
  // 1.8446743e19f = 2^64 (1 - 2^-24): its square 2^128 (1 - 2^-23 + 2^-48) rounds down to
  // FLT_MAX - ulp; 1.8446744e19f = 2^64 squares to 2^128 = inf.
  EXPECT_EQ(fwd(op, 1.8446743e19).v, 0x1.fffffcp127);
  EXPECT_EQ(fwd(op, 1.8446744e19).v, kInf);
  EXPECT_EQ(fwd(op, -1.9e19).v, kInf);
  EXPECT_TRUE(is_pos_zero(fwd(op, -0.0).v));
  EXPECT_TRUE(is_pos_zero(fwd(op, 1e-23).v));    // 1e-46 < 2^-150
  EXPECT_EQ(fwd(op, 1.0842022e-19).v, 0x1p-126); // (2^-63)^2
  EXPECT_EQ(fwd(op, 3.0).e, 0.0);
  // pow_backward: grad * (2 * self): 2^65 at 2^64 although the value overflowed; -0 at -0.
  EXPECT_EQ(grad(op, 1.8446744e19).v, 0x1p65);
  EXPECT_TRUE(is_neg_zero(grad(op, -0.0).v));
  EXPECT_EQ(grad(op, 1e30, 1e-20).v, leaf(2e10).v);
}

TEST(ReferenceElementary, SignAndSgn) {
  for (Unary op : {UNARY(sign), UNARY(sgn)}) {
    // NaN propagates (sgn's documented x / |x|; numpy.sign; LibTorch's 0 is a finding,
    // pytorch/pytorch#41245). Both zeros give +0 (sgn's docs: "0 if |x| == 0").
    EXPECT_TRUE(std::isnan(fwd(op, kNaN).v)) << op.name;
    EXPECT_TRUE(is_pos_zero(fwd(op, 0.0).v)) << op.name;
    EXPECT_TRUE(is_pos_zero(fwd(op, -0.0).v)) << op.name;
    EXPECT_EQ(fwd(op, 1e-40).v, 1.0) << op.name;
    EXPECT_EQ(fwd(op, -1e-40).v, -1.0) << op.name;
    EXPECT_EQ(fwd(op, kInf).v, 1.0) << op.name;
    EXPECT_EQ(fwd(op, -kInf).v, -1.0) << op.name;
    EXPECT_EQ(fwd(op, -3.0).e, 0.0) << op.name;
    // Uncertain by the jumps in reach: 0.5 ± 1 reaches -1 (2), 0.5 ± 0.5 reaches 0 (1), and
    // exact zero ± 1e-7 reaches both sides (1).
    EXPECT_EQ(op.f({0.5, 1.0}, kNone).e, 2.0) << op.name;
    EXPECT_EQ(op.f({0.5, 0.5}, kNone).e, 1.0) << op.name;
    EXPECT_EQ(op.f({0.0, 1e-7}, kNone).e, 1.0) << op.name;
    EXPECT_EQ(op.f({0.5, 0.25}, kNone).e, 0.0) << op.name;
    // zeros_like(grad) for sign, a zero tensor from sgn_backward: 0 even for a NaN or
    // indeterminate upstream gradient.
    EXPECT_TRUE(is_pos_zero(grad(op, 2.0, kNaN).v)) << op.name;
    const Approx d = op.b({1.0, kInf}, {0.0, 1.0}, op.f({0.0, 1.0}, kNone), kNone);
    EXPECT_EQ(d.v, 0.0) << op.name;
    EXPECT_EQ(d.e, 0.0) << op.name;
  }
}

TEST(ReferenceElementary, RoundingValues) {
  const Unary fl = UNARY(floor), ce = UNARY(ceil), ro = UNARY(round), tr = UNARY(trunc);
  EXPECT_EQ(fwd(fl, -0.5).v, -1.0);
  EXPECT_EQ(fwd(fl, 8388607.5).v, 8388607.0);
  EXPECT_EQ(fwd(fl, -8388607.5).v, -8388608.0);
  EXPECT_TRUE(is_neg_zero(fwd(fl, -0.0).v)); // C99 F.10.6.2
  EXPECT_TRUE(is_neg_zero(fwd(ce, -0.5).v)); // F.10.6.1: ceil(-0.5) = -0
  EXPECT_TRUE(is_neg_zero(fwd(tr, -0.5).v)); // F.10.6.8
  EXPECT_EQ(fwd(ce, 1e-40).v, 1.0);
  EXPECT_EQ(fwd(fl, -1e-40).v, -1.0);
  // torch.round's documented ties to even: round(-0.5) = -0, round(0.5) = 0, 1.5 and 2.5 -> 2.
  EXPECT_TRUE(is_neg_zero(fwd(ro, -0.5).v));
  EXPECT_TRUE(is_pos_zero(fwd(ro, 0.5).v));
  EXPECT_EQ(fwd(ro, 1.5).v, 2.0);
  EXPECT_EQ(fwd(ro, 2.5).v, 2.0);
  EXPECT_EQ(fwd(ro, -2.5).v, -2.0);
  EXPECT_TRUE(is_pos_zero(fwd(ro, 0.49999997).v)); // no 0.49999997 + 0.5 = 1 trap
  EXPECT_EQ(fwd(ro, 8388607.5).v, 8388608.0);      // the tie goes to the even neighbour
  EXPECT_EQ(fwd(ro, 16777216.0).v, 16777216.0);
  for (Unary op : {fl, ce, ro, tr}) {
    EXPECT_EQ(fwd(op, 1e30).v, leaf(1e30).v) << op.name; // every f32 above 2^23 is an integer
    EXPECT_EQ(fwd(op, kInf).v, kInf) << op.name;
    EXPECT_EQ(fwd(op, -kInf).v, -kInf) << op.name;
    EXPECT_TRUE(std::isnan(fwd(op, kNaN).v)) << op.name;
    EXPECT_EQ(fwd(op, 2.5).e, 0.0) << op.name; // exact for exact inputs
    // D: zeros_like(grad), even for a NaN or infinite upstream gradient.
    EXPECT_TRUE(is_pos_zero(grad(op, 2.5, kNaN).v)) << op.name;
    EXPECT_EQ(grad(op, 2.5, kInf).v, 0.0) << op.name;
  }
}

TEST(ReferenceElementary, RoundingJumpsWithinReach) {
  const Unary fl = UNARY(floor), ro = UNARY(round), tr = UNARY(trunc);
  // floor(2 ± 1e-7) is 1 or 2: uncertain by the jump, not indeterminate; the jump below an
  // exact integer is seen even when 2 - e rounds back to 2 in double (e = 1e-17).
  EXPECT_EQ(fl.f({2.0, 1e-7}, kNone).e, 1.0);
  EXPECT_EQ(fl.f({2.0, 1e-17}, kNone).e, 1.0);
  EXPECT_EQ(fl.f({2.5, 0.1}, kNone).e, 0.0);
  EXPECT_EQ(fl.f({2.5, 1.6}, kNone).e, 2.0); // 0.9 .. 4.1: floor spans 0 .. 4
  // round's jumps sit at the halves.
  EXPECT_EQ(ro.f({2.5, 1e-6}, kNone).e, 1.0);
  EXPECT_EQ(ro.f({2.0, 0.4}, kNone).e, 0.0);
  // trunc is continuous at 0 (-0.1 and 0.9 both truncate to zero); 1.1 reaches the jump at 1.
  EXPECT_EQ(tr.f({0.4, 0.5}, kNone).e, 0.0);
  EXPECT_EQ(tr.f({0.5, 0.6}, kNone).e, 1.0);
  // Beyond 2^23 the ops are the identity on f32, so the bound is the input's (plus the one
  // double ulp the interval is widened by).
  EXPECT_NEAR(fl.f({0x1p30, 64.0}, kNone).e, 64.0, 1e-3);
  // An indeterminate input stays indeterminate; the gradient stays an exact 0.
  EXPECT_TRUE(indeterminate(fl.f({2.0, kInf}, kNone)));
  EXPECT_EQ(fl.b({1.0, 0.0}, {2.0, kInf}, {2.0, kInf}, kNone).e, 0.0);
}

TEST(ReferenceElementary, Frac) {
  const Unary op = UNARY(frac);
  // The documented formula x - floor(|x|) * sgn(x), in IEEE arithmetic.
  EXPECT_EQ(fwd(op, 2.5).v, 0.5);
  EXPECT_EQ(fwd(op, -2.5).v, -0.5);
  EXPECT_EQ(fwd(op, 8388607.5).v, 0.5);
  EXPECT_TRUE(is_pos_zero(fwd(op, 1e30).v));
  EXPECT_TRUE(is_pos_zero(fwd(op, -3.0).v)); // -3 - (3 * -1) = -3 + 3 = +0
  EXPECT_TRUE(is_neg_zero(fwd(op, -0.0).v)); // -0 - (+0 * 0) = -0 (LibTorch: +0, a finding)
  EXPECT_TRUE(std::isnan(fwd(op, kInf).v));  // inf - inf * 1
  EXPECT_TRUE(std::isnan(fwd(op, -kInf).v)); // -inf - (inf * -1)
  EXPECT_EQ(fwd(op, 1e-40).v, leaf(1e-40).v);
  EXPECT_EQ(fwd(op, -0.3).e, 0.0);
  // Slope 1 between the nonzero integers; with one in reach, the jump plus the input's bound.
  EXPECT_EQ(op.f({2.5, 0.1}, kNone).e, 0.1);
  EXPECT_EQ(op.f({0.1, 0.2}, kNone).e, 0.2); // continuous through 0
  EXPECT_EQ(op.f({2.0, 1e-3}, kNone).e, 1.001);
  EXPECT_EQ(op.f({2.0, 5.0}, kNone).e, 2.0);
  // D: grad, across the jumps too, NaN included.
  EXPECT_EQ(grad(op, 2.0, 3.0).v, 3.0);
  EXPECT_TRUE(std::isnan(grad(op, 2.5, kNaN).v));
  EXPECT_EQ(grad(op, kInf).v, 1.0);
}

TEST(ReferenceElementary, ClampMinAndMax) {
  const Unary mn = UNARY(clamp_min), mx = UNARY(clamp_max);
  const Attrs lo0 = with_lo(0.0), hi0 = with_hi(0.0), lo_nan = with_lo(kNaN),
              hi_nan = with_hi(kNaN);
  EXPECT_EQ(fwd(mn, -1.0, lo0).v, 0.0);
  EXPECT_EQ(fwd(mn, 2.0, lo0).v, 2.0);
  EXPECT_EQ(fwd(mn, -kInf, lo0).v, 0.0);
  EXPECT_EQ(fwd(mx, kInf, hi0).v, 0.0);
  // A tie keeps x: max(-0, +0) returns its first operand.
  EXPECT_TRUE(is_neg_zero(fwd(mn, -0.0, lo0).v));
  EXPECT_TRUE(is_neg_zero(fwd(mx, -0.0, hi0).v));
  EXPECT_TRUE(is_pos_zero(fwd(mn, 0.0, with_lo(-0.0)).v));
  // NaN propagates from the input and from the bound (torch.clamp = min(max(x, lo), hi) with
  // torch.maximum's "a NaN is returned", IEEE 754-2019 maximum).
  EXPECT_TRUE(std::isnan(fwd(mn, kNaN, lo0).v));
  EXPECT_TRUE(std::isnan(fwd(mn, 2.0, lo_nan).v));
  EXPECT_TRUE(std::isnan(fwd(mx, -2.0, hi_nan).v));
  EXPECT_EQ(fwd(mn, 2.0, lo_nan).e, 0.0);
  // D: where(self >= min, grad, 0) / where(self <= max, grad, 0).
  EXPECT_EQ(grad(mn, 0.0, 1.0, lo0).v, 1.0); // passes at the bound
  EXPECT_EQ(grad(mx, 0.0, 1.0, hi0).v, 1.0);
  EXPECT_EQ(grad(mn, -1.0, 1.0, lo0).v, 0.0);
  EXPECT_EQ(grad(mn, -1.0, kInf, lo0).v, 0.0); // a where, not grad * mask: no inf * 0
  EXPECT_EQ(grad(mn, 1.0, kInf, lo0).v, kInf);
  EXPECT_EQ(grad(mn, kNaN, 1.0, lo0).v, 0.0); // NaN >= 0 is false
  EXPECT_EQ(grad(mx, kNaN, 1.0, hi0).v, 0.0);
  EXPECT_EQ(grad(mn, 2.0, 1.0, lo_nan).v, 0.0); // no comparison with a NaN bound holds
  // ... a certain zero, even for an input known to no precision.
  const Approx d = mn.b({1.0, 0.0}, {2.0, kInf}, {kNaN, 0.0}, lo_nan);
  EXPECT_EQ(d.v, 0.0);
  EXPECT_EQ(d.e, 0.0);
}

// ---- bounds ----

TEST(ReferenceElementary, BoundsSmallForExactInputs) {
  struct Case {
    Unary op;
    double x;
    bool exact; // correctly rounded: every f32 library computes the same bits
  };
  const std::vector<Case> cases = {
      {UNARY(log1p), 0.3, false},   {UNARY(log1p), -0.5, false},    {UNARY(expm1), 2.0, false},
      {UNARY(expm1), -1e-3, false}, {UNARY(log2), 3.0, false},      {UNARY(log2), 1e-40, false},
      {UNARY(log10), 7.0, false},   {UNARY(exp2), 0.3, false},      {UNARY(exp2), -100.5, false},
      {UNARY(rsqrt), 3.0, false},   {UNARY(reciprocal), 3.0, true}, {UNARY(square), 1.1, true},
      {UNARY(sign), -2.0, true},    {UNARY(floor), 2.7, true},      {UNARY(ceil), -2.7, true},
      {UNARY(round), 2.5, true},    {UNARY(trunc), -2.7, true},     {UNARY(frac), -2.7, true},
  };
  for (const Case& c : cases) {
    const Approx y = fwd(c.op, c.x);
    if (c.exact)
      EXPECT_EQ(y.e, 0.0) << c.op.name << " at " << c.x;
    else
      EXPECT_LT(y.e, 1e-6 * std::fabs(y.v)) << c.op.name << " at " << c.x;
    // Gradients are short chains of roundings on an inexact result (rsqrt's -0.5 * g * y^3
    // carries y's 4 u three times), so a little more.
    const Approx d = grad(c.op, c.x);
    EXPECT_LE(d.e, 2e-6 * std::fabs(d.v)) << c.op.name << "' at " << c.x;
  }
  EXPECT_LT(fwd(UNARY(clamp_min), 2.0, with_lo(0.5)).e, 1e-300);
}

TEST(ReferenceElementary, IndeterminateWhereTheIntervalReachesAnEdge) {
  // Poles, domain edges and f32 overflow within reach of x ± e.
  EXPECT_TRUE(indeterminate(log1p_forward({-0.9, 0.2}, kNone))); // reaches -1
  EXPECT_TRUE(indeterminate(log2_forward({1e-3, 2e-3}, kNone))); // reaches 0
  EXPECT_TRUE(indeterminate(log10_forward({1e-3, 1e-3}, kNone)));
  EXPECT_TRUE(indeterminate(rsqrt_forward({1e-3, 1e-3}, kNone)));
  EXPECT_TRUE(indeterminate(reciprocal_forward({1e-3, 2e-3}, kNone)));
  EXPECT_TRUE(indeterminate(square_forward({1.8e19, 1e18}, kNone))); // reaches 2^64
  EXPECT_TRUE(indeterminate(expm1_forward({88.7, 0.1}, kNone)));
  EXPECT_TRUE(indeterminate(exp2_forward({127.9, 0.2}, kNone)));
  // ... and not just short of them.
  EXPECT_FALSE(indeterminate(log1p_forward({-0.9, 0.05}, kNone)));
  EXPECT_FALSE(indeterminate(rsqrt_forward({1e-3, 5e-4}, kNone)));
  EXPECT_FALSE(indeterminate(exp2_forward({127.0, 0.5}, kNone)));
  // Propagated bounds: the exact image of the interval, e.g. rsqrt(4 - 0.44) - rsqrt(4).
  EXPECT_NEAR(rsqrt_forward({4.0, 0.44}, kNone).e, 1 / std::sqrt(3.56) - 0.5, 1e-6);
  EXPECT_NEAR(exp2_forward({3.0, 0.5}, kNone).e, 8 * (std::sqrt(2.0) - 1), 1e-5);
  // The kinks of the one-sided clamps make the gradient indeterminate, not the value.
  const Attrs lo0 = with_lo(0.0), hi0 = with_hi(0.0);
  EXPECT_EQ(clamp_min_forward({1e-7, 1e-6}, lo0).e, 1e-6);
  EXPECT_TRUE(indeterminate(clamp_min_backward({1.0, 0.0}, {1e-7, 1e-6}, {1e-7, 1e-6}, lo0)));
  EXPECT_TRUE(indeterminate(clamp_max_backward({1.0, 0.0}, {-1e-7, 1e-6}, {-1e-7, 1e-6}, hi0)));
  EXPECT_EQ(clamp_min_forward({-1.0, 0.5}, lo0).e, 0.0); // wholly below: the bound itself
  EXPECT_EQ(clamp_min_backward({0.0, 0.0}, {1e-7, 1e-6}, {1e-7, 1e-6}, lo0).e, 0.0); // g = 0
  // An indeterminate input makes every value indeterminate.
  const Approx any{1.5, kInf};
  for (Fwd f : {log1p_forward, expm1_forward, log2_forward, log10_forward, exp2_forward,
                rsqrt_forward, reciprocal_forward, square_forward, sign_forward, sgn_forward,
                floor_forward, ceil_forward, round_forward, trunc_forward, frac_forward})
    EXPECT_TRUE(indeterminate(f(any, kNone)));
  EXPECT_TRUE(indeterminate(clamp_min_forward(any, lo0)));
  EXPECT_TRUE(indeterminate(clamp_max_forward(any, hi0)));
}

TEST(ReferenceElementary, NonFiniteResultsAreExact) {
  EXPECT_EQ(expm1_forward({100.0, 0.0}, kNone).e, 0.0);
  EXPECT_EQ(exp2_forward({200.0, 0.0}, kNone).e, 0.0);
  EXPECT_EQ(log1p_forward({-1.0, 0.0}, kNone).e, 0.0);
  EXPECT_EQ(log2_forward({-1.0, 0.0}, kNone).e, 0.0);
  EXPECT_EQ(reciprocal_forward({1e-40, 0.0}, kNone).e, 0.0);
  EXPECT_EQ(square_forward({1e20, 0.0}, kNone).e, 0.0);
  EXPECT_EQ(frac_forward({kInf, 0.0}, kNone).e, 0.0);
}

// An inexact input whose whole interval is below zero gives NaN in every f32 library: certain,
// not indeterminate (an interval that reaches zero stays indeterminate: -inf or NaN).
TEST(ReferenceElementary, LogAndSqrtOfAWhollyNegativeIntervalAreCertain) {
  for (Approx r : {log(Approx{-2.0, 1e-3}), sqrt(Approx{-2.0, 1e-3})}) {
    EXPECT_TRUE(std::isnan(r.v));
    EXPECT_EQ(r.e, 0.0);
  }
  EXPECT_TRUE(indeterminate(log(Approx{-1e-4, 1e-3})));
  EXPECT_TRUE(indeterminate(sqrt(Approx{-1e-4, 1e-3})));
}

} // namespace
