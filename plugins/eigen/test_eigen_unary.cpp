// The unary ops past the first vocabulary (eigen_unary.cpp) against the reference: values and
// gradients over ordinary inputs at sizes that reach Eigen's packet body and its scalar tail,
// every op's edge values (op_tables.h) plus NaN, ±inf, ±0 and ±1e-40 in both places, and the
// measured places where Eigen 3.4's own functors differ, pinned as they are.
#include <algorithm>
#include <tuple>

#include "eigen_test_support.h"

using namespace burnmark;
using namespace burnmark::eigen_test;

namespace {

constexpr double kNanD = std::numeric_limits<double>::quiet_NaN();
constexpr double kInfD = std::numeric_limits<double>::infinity();

// Every unary op the plugin maps past the first vocabulary.
constexpr Op kNewUnaryOps[] = {
    Op::Sin,      Op::Cos,      Op::Tan,   Op::Asin,  Op::Acos,       Op::Atan,    Op::Sinh,
    Op::Cosh,     Op::Asinh,    Op::Acosh, Op::Atanh, Op::Erf,        Op::Erfc,    Op::Log1p,
    Op::Expm1,    Op::Log2,     Op::Log10, Op::Rsqrt, Op::Reciprocal, Op::Square,  Op::Sign,
    Op::Sgn,      Op::Floor,    Op::Ceil,  Op::Round, Op::Lgamma,     Op::Digamma, Op::ClampMin,
    Op::ClampMax, Op::Hardtanh, Op::Relu6};

// The attribute sets the generator draws for `op` (one default set for ops without any).
std::vector<Attrs> params_of(Op op) {
  std::vector<Attrs> p(op_info(op).params.begin(), op_info(op).params.end());
  if (p.empty()) p.push_back(Attrs{});
  return p;
}

// Differences from the reference at special values, measured with Eigen 3.4.0 (SSE2 packets of
// 4 floats): element 0 of body_and_tail is computed by the packet body, element 8 by the scalar
// tail. Each is reported by the oracle. The library is not patched for any of them.
struct KnownDifference {
  const char* what;
  Op op;
  float x;
  Pinned eigen;
};
const KnownDifference kKnownDifferences[] = {
    // plog2 is plog scaled, and plog clamps its argument to FLT_MIN in the packet body (as log's
    // pinned difference in test_eigen.cpp); the reference gives -132.877.
    {"log2 of a subnormal is log2(FLT_MIN) = -126 in the body",
     Op::Log2,
     1e-40f,
     {-126.0, -132.877136, kInfD, kInfD}},
    // prsqrt (EIGEN_FAST_MATH: rsqrtps and one Newton step) treats a subnormal as zero in the
    // body: rsqrt(1e-40) is +inf (reference 1.00000266e20), rsqrt(-1e-40) is -inf where a
    // negative argument gives NaN; the scalar tail's 1 / sqrt(x) is right.
    {"rsqrt of a subnormal is +inf in the body",
     Op::Rsqrt,
     1e-40f,
     {kInfD, 1.00000266e20, -kInfD, -kInfD}},
    {"rsqrt of a negative subnormal is -inf in the body",
     Op::Rsqrt,
     -1e-40f,
     {-kInfD, kNanD, kInfD, kNanD}},
    // Eigen's digamma returns NaN at ±0, as at its other poles (the negative integers); PyTorch
    // documents digamma(+0) = -inf (since 1.8), and -0 is the limit from below, +inf. lgamma's
    // gradient, grad * digamma(x), inherits it.
    {"digamma(+0) is NaN", Op::Digamma, 0.0f, {kNanD, kNanD, kInfD, kInfD}},
    {"digamma(-0) is NaN", Op::Digamma, -0.0f, {kNanD, kNanD, kInfD, kInfD}},
    {"lgamma'(+0) is digamma(+0) = NaN", Op::Lgamma, 0.0f, {kInfD, kInfD, kNanD, kNanD}},
    {"lgamma'(-0) is digamma(-0) = NaN", Op::Lgamma, -0.0f, {kInfD, kInfD, kNanD, kNanD}},
    // digamma's gradient is Eigen's polygamma(1, x) = zeta(2, x): NaN at +inf (the limit is 0)
    // and +inf at -inf (no limit: the reference gives NaN).
    {"polygamma(1, +inf) is NaN", Op::Digamma, kInf, {kInfD, kInfD, kNanD, kNanD}},
    {"polygamma(1, -inf) is +inf", Op::Digamma, -kInf, {kNanD, kNanD, kInfD, kInfD}},
    // Below about -7, polygamma(1, x) goes wrong: Eigen's zeta(s, q) is documented for q > 0 only,
    // and its Euler-Maclaurin tail starts from q + 9, still negative there. Exact trigamma values:
    // 9.74476624 at -7.5, 316.694214 at -127.056488 (forward digamma stays right).
    {"polygamma(1, -7.5) is 6.781, not 9.745",
     Op::Digamma,
     -7.5f,
     {2.080091, 2.080091, 6.78111458, 6.78111458}},
    {"polygamma(1, -127.05649) is -0.00784, not 316.69",
     Op::Digamma,
     -127.05649f,
     {22.3651943, 22.3651943, -0.00783962384, -0.00783962384}},
    // Wrong below 1 where the reference bounds the value tightly, seen since issue 29's relative
    // rule (the absolute 1e-4 forgave them): digamma at its positive root rounds to 0 (exact
    // -1.2036e-8; bugs.md eigen-digamma-near-root), so does lgamma's gradient there;
    // polygamma(1, x) underflows to 0 for huge x (exact 1/x: 1e-30 at 1e30, 2.45e-37 at
    // 4.085e36).
    {"digamma(1.4616321) is 0", Op::Digamma, 1.4616321f, {0.0, 0.0, 0.967672288, 0.967672288}},
    {"lgamma'(1.4616321) is 0", Op::Lgamma, 1.4616321f, {-0.121486291, -0.121486291, 0.0, 0.0}},
    {"polygamma(1, 1e30) is 0", Op::Digamma, 1e30f, {69.0775528, 69.0775528, 0.0, 0.0}},
    {"polygamma(1, 4.085e36) is 0", Op::Digamma, 4.085e36f, {84.3003845, 84.3003845, 0.0, 0.0}},
};

bool is_known_difference(Op op, float x) {
  return std::any_of(std::begin(kKnownDifferences), std::end(kKnownDifferences),
                     [&](const KnownDifference& k) {
                       return k.op == op && k.x == x && std::signbit(k.x) == std::signbit(x);
                     });
}

} // namespace

// Ordinary inputs in each op's domain, away from poles, domain edges and the rounding ops'
// jumps (random doubles rounded to f32 are never exactly an integer or a half here).
TEST_F(EigenVsReference, NewUnaryOpsAgreeInTheBodyAndTheTail) {
  struct Case {
    Op op;
    double lo, hi;
    bool signed_;
  };
  const Case cases[] = {
      {Op::Sin, 0, 6.3, true},        {Op::Sin, 10, 1e4, true},
      {Op::Cos, 0, 6.3, true},        {Op::Cos, 10, 1e4, true},
      {Op::Tan, 0, 1.5, true},        {Op::Asin, 0, 0.99, true},
      {Op::Acos, 0, 0.99, true},      {Op::Atan, 0, 50, true},
      {Op::Sinh, 0, 5, true},         {Op::Sinh, 5, 88, true},
      {Op::Cosh, 0, 5, true},         {Op::Cosh, 5, 88, true},
      {Op::Asinh, 0, 1e3, true},      {Op::Acosh, 1.01, 1e3, false},
      {Op::Atanh, 0, 0.99, true},     {Op::Erf, 0, 4, true},
      {Op::Erfc, 0, 9, true},         {Op::Log1p, -0.99, 50, false},
      {Op::Expm1, 0, 10, true},       {Op::Expm1, 10, 88, true},
      {Op::Log2, 1e-3, 1e3, false},   {Op::Log10, 1e-3, 1e3, false},
      {Op::Rsqrt, 1e-3, 1e3, false},  {Op::Reciprocal, 0.1, 10, true},
      {Op::Square, 0, 100, true},     {Op::Sign, 0.01, 3, true},
      {Op::Sgn, 0.01, 3, true},       {Op::Floor, 0, 20, true},
      {Op::Ceil, 0, 20, true},        {Op::Round, 0, 20, true},
      {Op::Lgamma, 0.05, 30, false},  {Op::Lgamma, -6, -0.05, false},
      {Op::Digamma, 0.05, 30, false}, {Op::Digamma, -6, -0.05, false},
      {Op::Relu6, 0, 8, true},
  };
  unsigned seed = 1000;
  for (const Case& c : cases)
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("{} n={} [{}, {}]", op_name(c.op), n, c.lo, c.hi));
      expect_agree(unary_program(c.op, {}, n, c.lo, c.hi, c.signed_, seed++));
    }
}

// Every bound the generator draws, NaN bounds included, with inputs on both sides of them.
TEST_F(EigenVsReference, ClampMinMaxAndHardtanhEveryParameter) {
  unsigned seed = 1100;
  for (Op op : {Op::ClampMin, Op::ClampMax, Op::Hardtanh})
    for (const Attrs& a : params_of(op))
      for (std::int64_t n : kSizes) {
        SCOPED_TRACE(fmt::format("{} lo={} hi={} n={}", op_name(op), a.lo, a.hi, n));
        expect_agree(unary_program(op, a, n, 0, 4, true, seed++));
      }
}

// Each op's own edge values (op_tables.h) and the general special values, in the packet body
// and in the scalar tail, agree with the reference, except the pinned differences below.
TEST_F(EigenVsReference, NewUnaryOpsAtTheirEdgeValues) {
  const float general[] = {kNan, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, 1.0f, -1.0f};
  for (Op op : kNewUnaryOps) {
    std::vector<float> xs(std::begin(general), std::end(general));
    xs.insert(xs.end(), op_info(op).edges.begin(), op_info(op).edges.end());
    for (const Attrs& a : params_of(op))
      for (float x : xs) {
        if (is_known_difference(op, x)) continue;
        SCOPED_TRACE(fmt::format("{} lo={} hi={} at {}", op_name(op), a.lo, a.hi, x));
        expect_agree(body_and_tail(op, a, x));
      }
  }
  EXPECT_GT(programs_, 400);
}

TEST_F(EigenVsReference, NewUnaryOpsKnownDifferences) {
  for (const KnownDifference& k : kKnownDifferences) {
    SCOPED_TRACE(k.what);
    expect_pinned(body_and_tail(k.op, {}, k.x), k.eigen);
  }
  // exp's floor in the packet body (DifferencesTheOracleDoesNotSee below) made visible: erf'(x)
  // is 3.3e-39 instead of 0 at x = -4.2e37, and the product rule multiplies it by x, so the
  // gradient of x * erf(x) is -1.139 in the body instead of -1. Found by fuzz_autograd.
  SCOPED_TRACE("x * erf(x) at -4.2e37");
  std::vector<float> x(9, 1.5f);
  x.front() = x.back() = -4.2036835e37f;
  Builder b;
  const Reg r = b.leaf(Shape{9}, std::move(x));
  expect_pinned(b.finish(b.op(Op::Mul, {r, b.op(Op::Erf, {r})})),
                {4.20368354e37, 4.20368354e37, -1.13937223, -1.0});
}

// Differences the oracle does not report, because it counts ±0 as equal and compares values
// with a tolerance of 1e-4 (absolute below 1), but a consumer would see (1 / x, log x, a
// comparison): pinned so the report can name them. IEEE 754 / C99 Annex F give -0 for floor(-0),
// ceil(-0), ceil(-0.5) and rint(-0); clamp_min(-0, 0) keeps x on the tie (the reference, and
// LibTorch's x < lo ? lo : x).
TEST_F(EigenVsReference, DifferencesTheOracleDoesNotSee) {
  struct Case {
    const char* what;
    Op op;
    Attrs attrs;
    float x;
    Pinned eigen;
  };
  const Case cases[] = {
      // SSE2 has no roundps: Eigen's generic pfloor / pceil / print add and subtract 2^23 in the
      // body, which loses the sign of a zero result.
      {"floor(-0) is +0 in the body", Op::Floor, {}, -0.0f, {0.0, -0.0, 0.0, 0.0}},
      {"ceil(-0) is +0 in the body", Op::Ceil, {}, -0.0f, {0.0, -0.0, 0.0, 0.0}},
      {"ceil(-0.5) is +0 in the body", Op::Ceil, {}, -0.5f, {0.0, -0.0, 0.0, 0.0}},
      {"rint(-0) is +0 in the body", Op::Round, {}, -0.0f, {0.0, -0.0, 0.0, 0.0}},
      // pmax<PropagateNaN> returns its second operand, the bound, on the tie -0 == +0 in the
      // body; the scalar tail keeps x. The same holds for relu and clamp (first vocabulary),
      // which call the same functor.
      {"clamp_min(-0, 0) is +0 in the body",
       Op::ClampMin,
       clamp_attrs(0, 0),
       -0.0f,
       {0.0, -0.0, 1.0, 1.0}},
      {"clamp_max(-0, 0) is +0 in the body",
       Op::ClampMax,
       clamp_attrs(0, 0),
       -0.0f,
       {0.0, -0.0, 1.0, 1.0}},
      {"relu(-0) is +0 in the body", Op::Relu, {}, -0.0f, {0.0, -0.0, 0.0, 0.0}},
      {"clamp(-0, 0, 1) is +0 in the body",
       Op::Clamp,
       clamp_attrs(0, 1),
       -0.0f,
       {0.0, -0.0, 1.0, 1.0}},
      // pexp clamps its argument to -88.723 in the body, so exp has no gradual underflow there:
      // every x below gives exp(-88.723) = 2.938e-39 (exp(-inf) included), where the tail gives
      // the subnormal or 0. erf's and erfc's gradients, which call exp, inherit it.
      {"exp(-inf) is 2.938e-39 in the body",
       Op::Exp,
       {},
       -kInf,
       {2.93826504e-39, 0.0, 2.93826504e-39, 0.0}},
      {"exp(-100) is 2.938e-39 in the body",
       Op::Exp,
       {},
       -100.0f,
       {2.93826504e-39, 3.78350585e-44, 2.93826504e-39, 3.78350585e-44}},
      {"erf'(inf) is 3.3e-39 in the body", Op::Erf, {}, kInf, {1.0, 1.0, 3.31547777e-39, 0.0}},
      {"erfc'(11) is -3.3e-39 in the body", Op::Erfc, {}, 11.0f, {0.0, 0.0, -3.31547777e-39, -0.0}},
      // psqrt (EIGEN_FAST_MATH: rsqrtps, one Newton step, times x) is not correctly rounded in
      // the body, even for perfect squares: sqrt(4) = 1.9999999, sqrt(1) = 0.99999994 (one
      // ulp). Within the tolerance, but a comparison, fmin or acosh downstream turns it into a
      // different branch (test_eigen_binary.cpp, SqrtOfOneFeedingAComparison).
      {"sqrt(4) is 1.9999999 in the body", Op::Sqrt, {}, 4.0f, {1.99999988, 2.0, 0.25000003, 0.25}},
      {"sqrt(1) is 0.99999994 in the body", Op::Sqrt, {}, 1.0f, {0.99999994, 1.0, 0.50000006, 0.5}},
      // Eigen's float digamma is a few ulps off (6 at 0.5: the exact value is -1.96351004), which
      // digamma's steep slope near 0 amplifies when a second digamma follows.
      {"digamma(0.5) is 6 ulp low",
       Op::Digamma,
       {},
       0.5f,
       {-1.96351075, -1.96351075, 4.93480206, 4.93480206}},
      // polygamma(1, 1e30) = 0 and digamma(1.4616321) = 0 were here until issue 29's relative
      // rule made the oracle see them: kKnownDifferences.
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    expect_pinned(body_and_tail(c.op, c.attrs, c.x), c.eigen, /*oracle_sees=*/false);
  }
}

// Where Eigen's functors agree with the reference at poles and domain edges that are easy to
// get wrong, asserted as values (the edge-value sweep above only asks the oracle).
TEST_F(EigenVsReference, NewUnaryOpsSpecialValuesAsValues) {
  struct Case {
    Op op;
    float x;
    double value, grad;
  };
  const Case cases[] = {
      {Op::Atanh, 1.0f, kInfD, kInfD},
      {Op::Atanh, -1.0f, -kInfD, kInfD},
      {Op::Asin, 1.0f, 1.57079637, kInfD},
      {Op::Acos, 1.0f, 0.0, -kInfD},
      {Op::Acosh, 1.0f, 0.0, kInfD},
      {Op::Log1p, -1.0f, -kInfD, kInfD},
      {Op::Reciprocal, -0.0f, -kInfD, -kInfD},
      {Op::Rsqrt, 0.0f, kInfD, -kInfD},
      {Op::Sign, kNan, kNanD, 0.0},
      {Op::Sgn, -0.0f, 0.0, 0.0},
      {Op::Round, 2.5f, 2.0, 0.0},
      {Op::Round, -0.5f, -0.0, 0.0},
      {Op::Lgamma, -2.0f, kInfD, kNanD},
      {Op::Digamma, 1.0f, -0.577215672, 1.64493407},

      {Op::Expm1, -kInf, -1.0, 0.0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} at {}", op_name(c.op), c.x));
    const Program p = body_and_tail(c.op, {}, c.x);
    expect_agree(p);
    for (std::size_t i : {0u, 8u}) {
      const auto [value, grad] = eigen_at(p, i);
      EXPECT_PRED2(same, value, c.value) << i;
      EXPECT_PRED2(same, grad, c.grad) << i;
    }
  }
}
