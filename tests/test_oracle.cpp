// The oracle's agreement rule at its edges, compare()'s reporting of every way a backend can be
// wrong, the report's fixed shape, and a deliberately wrong backend caught end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "burnmark/driver/driver.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/oracle/summary.h"
#include "platform_pins.h"
#if defined(BURNMARK_HAVE_REFERENCE) || defined(BURNMARK_HAVE_LIBTORCH)
#include "burnmark/backends/builtin.h"
#endif

using namespace burnmark;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTol = 1e-4;

HostTensor tensor(Shape shape, std::vector<double> values, std::vector<double> bound = {}) {
  return HostTensor{shape, std::move(values), std::move(bound)};
}

Outcome ok(std::string name, HostTensor root, std::vector<HostTensor> grads = {}) {
  Outcome o;
  o.backend = std::move(name);
  o.root = std::move(root);
  o.grads = std::move(grads);
  return o;
}

Outcome failed(std::string name, Status status, std::string message) {
  Outcome o;
  o.backend = std::move(name);
  o.status = status;
  o.message = std::move(message);
  return o;
}

OracleOptions with_gradients(bool gradients = true) {
  OracleOptions o;
  o.gradients = gradients;
  return o;
}

} // namespace

TEST(ValuesDiverge, NaNAgainstAnythingElseDiverges) {
  EXPECT_TRUE(values_diverge(kNaN, -0.0, kTol));
  EXPECT_TRUE(values_diverge(-0.0, kNaN, kTol));
  EXPECT_TRUE(values_diverge(kNaN, kInf, kTol));
  EXPECT_TRUE(values_diverge(1.0, kNaN, kTol, 1e300)); // no finite bound excuses a NaN
}

TEST(ValuesDiverge, TwoNaNsAgree) {
  EXPECT_FALSE(values_diverge(kNaN, kNaN, kTol));
  EXPECT_FALSE(values_diverge(kNaN, -kNaN, kTol));
}

TEST(ValuesDiverge, InfinitiesMustMatchExactly) {
  EXPECT_FALSE(values_diverge(kInf, kInf, kTol));
  EXPECT_FALSE(values_diverge(-kInf, -kInf, kTol));
  EXPECT_TRUE(values_diverge(kInf, -kInf, kTol));
  EXPECT_TRUE(values_diverge(kInf, 3.4e38, kTol)); // FLT_MAX-ish is not infinity
  EXPECT_TRUE(values_diverge(-3.4e38, -kInf, kTol));
  EXPECT_TRUE(values_diverge(kInf, 1e300, kTol, 1e300)); // nor does a huge bound make it so
  EXPECT_FALSE(values_diverge(0.0, -0.0, kTol));         // signed zeros are equal values
}

TEST(ValuesDiverge, ToleranceIsAbsoluteBelowOneRelativeAbove) {
  // |a|,|b| < 1: the threshold is tol itself.
  EXPECT_FALSE(values_diverge(0.5, 0.5 + 0.99e-4, kTol));
  EXPECT_TRUE(values_diverge(0.5, 0.5 + 1.01e-4, kTol));
  EXPECT_FALSE(values_diverge(0.0, -0.99e-4, kTol));
  EXPECT_TRUE(values_diverge(0.0, -1.01e-4, kTol));
  // Around 1000 the threshold is tol * max(|a|,|b|) ~ 0.1.
  EXPECT_FALSE(values_diverge(1000.0, 1000.099, kTol));
  EXPECT_TRUE(values_diverge(1000.0, 1000.101, kTol));
  EXPECT_FALSE(values_diverge(-1000.0, -1000.099, kTol));
  EXPECT_TRUE(values_diverge(-1000.0, -1000.101, kTol));
  // Around 1e30 the same rule: relative error 1e-4.
  EXPECT_FALSE(values_diverge(1e30, 1e30 * (1 + 0.99e-4), kTol));
  EXPECT_TRUE(values_diverge(1e30, 1e30 * (1 + 1.01e-4), kTol));
  // The larger magnitude sets the scale, whichever side it is on.
  EXPECT_FALSE(values_diverge(1000.099, 1000.0, kTol));
  // A different tolerance moves the edge with it.
  EXPECT_FALSE(values_diverge(0.5, 0.5 + 0.99e-2, 1e-2));
  EXPECT_TRUE(values_diverge(0.5, 0.5 + 1.01e-2, 1e-2));
}

TEST(ValuesDiverge, ABoundMakesTheToleranceRelativeAndIsTheOnlyAbsoluteSlack) {
  // At 0.5 with E = 1e-3 the threshold is E + tol * max(|a|, |b|): for b = 0.5 + d it is crossed
  // at d = (E + tol * 0.5) / (1 - tol) ~ 1.05e-3, not at E + tol = 1.1e-3 (no absolute floor).
  const double bound = 1e-3;
  const double edge = bound + kTol * 0.5;
  EXPECT_TRUE(values_diverge(0.5, 0.5 + 0.99 * edge, kTol));         // outside without the bound
  EXPECT_FALSE(values_diverge(0.5, 0.5 + 0.99 * edge, kTol, bound)); // inside with it
  EXPECT_TRUE(values_diverge(0.5, 0.5 + 1.01 * edge, kTol, bound));  // and no further
  EXPECT_TRUE(values_diverge(0.5, 0.5 + bound + 0.99 * kTol, kTol, bound)); // the old edge
  // At magnitude 1000 the bound adds to the relative part, not multiplies it.
  EXPECT_FALSE(values_diverge(1000.0, 1000.0 + 0.1 + 0.99 * bound, kTol, bound));
  EXPECT_TRUE(values_diverge(1000.0, 1000.0 + 0.1001 + 1.01 * bound, kTol, bound));
}

// The planted fault of issue 29: a result wrong in every digit at magnitude 1e-5. With a tight
// reference bound (1e-12, a few ulps of 1e-5) the difference 1e-5 exceeds 1e-12 + tol * 2e-5 =
// 2.000001e-9 by far; the seed's rule (no bound) forgave anything below 1e-4.
TEST(ValuesDiverge, AWrongSmallValueWithATightBoundDiverges) {
  EXPECT_TRUE(values_diverge(1e-5, 2e-5, kTol, 1e-12));
  EXPECT_TRUE(values_diverge(1e-5, 0.0, kTol, 1e-12));
  EXPECT_TRUE(values_diverge(1e-5, -1e-5, kTol, 1e-12));
  EXPECT_FALSE(values_diverge(1e-5, 2e-5, kTol)); // no bound: the seed's absolute rule
  // Within the relative tolerance it still agrees: 1e-5 * (1 + 0.99e-4) - 1e-5 = 0.99e-9 is
  // below 1e-12 + tol * 1.0000099e-5 ~ 1.001e-9; 1.01e-4 relative (1.01e-9) is not.
  EXPECT_FALSE(values_diverge(1e-5, 1e-5 * (1 + 0.99e-4), kTol, 1e-12));
  EXPECT_TRUE(values_diverge(1e-5, 1e-5 * (1 + 1.01e-4), kTol, 1e-12));
}

// E = 0 says every correct f32 implementation computes these very bits (exact inputs, one
// correctly rounded op): the comparison is relative only, an exact zero must stay zero.
TEST(ValuesDiverge, AnExactValueIsComparedRelativelyOnly) {
  EXPECT_FALSE(values_diverge(1e-5, 1e-5 * (1 + 0.99e-4), kTol, 0.0));
  EXPECT_TRUE(values_diverge(1e-5, 1e-5 * (1 + 1.01e-4), kTol, 0.0));
  EXPECT_FALSE(values_diverge(0.0, -0.0, kTol, 0.0));
  EXPECT_TRUE(values_diverge(0.0, 1e-30, kTol, 0.0)); // 1e-30 > 0 + tol * 1e-30
}

// A bound at least the value's magnitude (the interval reaches zero: cancellation, underflow)
// says the value is zero up to rounding, its sign and relative error unknown: any value within
// the bound agrees, and the seed's absolute floor tol * max(1, |a|, |b|) is kept on top.
TEST(ValuesDiverge, ABoundReachingZeroKeepsTheAbsoluteFloor) {
  const double a = 1e-5;
  const double bound = 2e-5;                         // >= |a|
  EXPECT_FALSE(values_diverge(a, -a, kTol, bound));  // the sign flipped: within the bound
  EXPECT_FALSE(values_diverge(a, 0.0, kTol, bound)); // cancelled to zero
  EXPECT_FALSE(values_diverge(a, a + bound, kTol, bound));
  const double edge = bound + kTol; // E + tol * max(1, |a|, |b|) with |a|, |b| < 1
  EXPECT_FALSE(values_diverge(a, a + 0.99 * edge, kTol, bound));
  EXPECT_TRUE(values_diverge(a, a + 1.01 * edge, kTol, bound));
  // Exactly at the edge E = |a| the interval reaches zero too.
  EXPECT_FALSE(values_diverge(a, a + 0.99 * (a + kTol), kTol, a));
  // Just below it (E < |a|) the reference knows the sign: relative, no floor.
  EXPECT_TRUE(values_diverge(a, -a, kTol, 0.99 * a));
}

TEST(Compare, AllAgreeingBackendsGiveAnEmptyVerdict) {
  const Outcome ref = ok("ref", tensor({2}, {1.0, 2.0}), {tensor({2}, {0.5, 0.25})});
  const Outcome other = ok("other", tensor({2}, {1.0, 2.0 + 1e-6}), {tensor({2}, {0.5, 0.25})});
  const Verdict v = compare({ref, other}, with_gradients());
  EXPECT_TRUE(v.agree());
  EXPECT_EQ(v.reference, "ref");
  EXPECT_EQ(v.compared, 1u);
  EXPECT_TRUE(v.skipped.empty());
  EXPECT_EQ(v.indeterminate, 0u);
}

TEST(Compare, EveryWrongBackendIsReportedEachInItsOwnWay) {
  const Outcome ref = ok("ref", tensor({2, 3}, {0, 1, 2, 3, 4, 5}),
                         {tensor({2, 3}, {1, 1, 1, 1, 1, 1}), tensor({3}, {2, 2, 2})});
  std::vector<Outcome> outs = {ref};
  outs.push_back(ref);
  outs.back().backend = "good";

  outs.push_back(ref); // wrong forward at 2, 4, 5; gradients fine
  outs.back().backend = "badfwd";
  outs.back().root.values = {0, 1, 7, 3, kNaN, -kInf};

  outs.push_back(ref); // wrong gradient of leaf 1 only
  outs.back().backend = "badgrad";
  outs.back().grads[1].values = {2, 2.5, 2};

  outs.push_back(failed("raises", Status::Error, "boom\nsecond line with \"quotes\""));
  outs.push_back(failed("lacks", Status::Unsupported, "matmul"));

  outs.push_back(ref); // transposed root: same element count, other shape
  outs.back().backend = "transposed";
  outs.back().root.shape = Shape{3, 2};

  outs.push_back(ref); // right shape, too few values
  outs.back().backend = "short";
  outs.back().grads[0].values.pop_back();

  const Verdict v = compare(outs, with_gradients());
  ASSERT_EQ(v.divergences.size(), 5u) << format_verdict(v);
  EXPECT_EQ(v.compared, 6u);
  ASSERT_EQ(v.skipped.size(), 1u);
  EXPECT_EQ(v.skipped[0], "lacks");

  const Divergence& fwd = v.divergences[0];
  EXPECT_EQ(fwd.backend, "badfwd");
  EXPECT_EQ(fwd.kind, DivergenceKind::Forward);
  EXPECT_EQ(fwd.leaf, -1);
  EXPECT_EQ(fwd.count, 3u);
  EXPECT_EQ(fwd.first_index, 2u);
  EXPECT_EQ(fwd.expected, 2.0);
  EXPECT_EQ(fwd.actual, 7.0);

  const Divergence& grad = v.divergences[1];
  EXPECT_EQ(grad.backend, "badgrad");
  EXPECT_EQ(grad.kind, DivergenceKind::Gradient);
  EXPECT_EQ(grad.leaf, 1);
  EXPECT_EQ(grad.count, 1u);
  EXPECT_EQ(grad.first_index, 1u);
  EXPECT_EQ(grad.expected, 2.0);
  EXPECT_EQ(grad.actual, 2.5);

  EXPECT_EQ(v.divergences[2].backend, "raises");
  EXPECT_EQ(v.divergences[2].kind, DivergenceKind::Error);
  EXPECT_NE(v.divergences[2].detail.find("boom"), std::string::npos);

  EXPECT_EQ(v.divergences[3].backend, "transposed");
  EXPECT_EQ(v.divergences[3].kind, DivergenceKind::Shape);
  EXPECT_EQ(v.divergences[3].leaf, -1);
  EXPECT_NE(v.divergences[3].detail.find("[3,2]"), std::string::npos);

  EXPECT_EQ(v.divergences[4].backend, "short");
  EXPECT_EQ(v.divergences[4].kind, DivergenceKind::Shape);
  EXPECT_EQ(v.divergences[4].leaf, 0);
  EXPECT_NE(v.divergences[4].detail.find("5 values"), std::string::npos);
}

TEST(Compare, OneBackendWrongInForwardAndSeveralGradientsGivesOneEntryPerTensor) {
  const Outcome ref =
      ok("ref", tensor({}, {1}), {tensor({1}, {1}), tensor({1}, {2}), tensor({1}, {3})});
  Outcome bad = ref;
  bad.backend = "bad";
  bad.root.values[0] = 2;
  bad.grads[0].values[0] = -1;
  bad.grads[2].values[0] = kNaN;
  const Verdict v = compare({ref, bad}, with_gradients());
  ASSERT_EQ(v.divergences.size(), 3u);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Forward);
  EXPECT_EQ(v.divergences[1].leaf, 0);
  EXPECT_EQ(v.divergences[2].leaf, 2);
  EXPECT_TRUE(std::isnan(v.divergences[2].actual));
}

TEST(Compare, GradientCountMismatchIsAShapeDivergence) {
  const Outcome ref = ok("ref", tensor({1}, {1}), {tensor({1}, {1}), tensor({1}, {1})});
  Outcome bad = ref;
  bad.backend = "bad";
  bad.grads.pop_back();
  const Verdict v = compare({ref, bad}, with_gradients());
  ASSERT_EQ(v.divergences.size(), 1u);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Shape);
}

TEST(Compare, ForwardOnlyIgnoresGradients) {
  const Outcome ref = ok("ref", tensor({1}, {1}), {tensor({1}, {1})});
  Outcome other = ref;
  other.backend = "other";
  other.grads.clear();
  EXPECT_TRUE(compare({ref, other}, with_gradients(false)).agree());
  EXPECT_FALSE(compare({ref, other}, with_gradients(true)).agree());
}

TEST(Compare, ErrorAgainstOkEitherWay) {
  const Outcome good = ok("ref", tensor({1}, {1}));
  const Outcome raised = failed("ref", Status::Error, "reference blew up");

  Outcome lt_raises = failed("libtorch", Status::Error, "shape mismatch");
  Verdict v = compare({good, lt_raises}, with_gradients());
  ASSERT_EQ(v.divergences.size(), 1u);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Error);
  EXPECT_EQ(v.divergences[0].detail, "shape mismatch");

  Outcome lt_ok = good;
  lt_ok.backend = "libtorch";
  v = compare({raised, lt_ok, lt_raises}, with_gradients());
  ASSERT_EQ(v.divergences.size(), 1u); // the backend that also raised agrees
  EXPECT_EQ(v.divergences[0].backend, "libtorch");
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Error);
  EXPECT_NE(v.divergences[0].detail.find("reference blew up"), std::string::npos);
}

TEST(Compare, UnsupportedIsSkippedNeverADivergence) {
  const Outcome ref = ok("ref", tensor({1}, {1}));
  const Verdict v =
      compare({ref, failed("eigen", Status::Unsupported, "matmul")}, with_gradients());
  EXPECT_TRUE(v.agree());
  EXPECT_EQ(v.compared, 0u);
  ASSERT_EQ(v.skipped.size(), 1u);
  EXPECT_EQ(v.skipped[0], "eigen");

  // A reference that cannot run the program leaves nothing to judge against.
  Outcome other = ref;
  other.backend = "other";
  const Verdict w =
      compare({failed("ref", Status::Unsupported, "matmul"), other}, with_gradients());
  EXPECT_TRUE(w.agree());
  ASSERT_EQ(w.skipped.size(), 1u);
  EXPECT_EQ(w.skipped[0], "ref");
}

TEST(Compare, IndeterminateElementsAreCountedNotJudged) {
  // Element 1 sits on a kink the reference cannot resolve in f32 (bound +inf): any answer goes,
  // even NaN. Element 2 has a finite bound that does not cover the difference.
  const Outcome ref =
      ok("ref", tensor({3}, {0, 0, 1}, {0, kInf, 1e-3}), {tensor({3}, {1, 0, 1}, {0, kInf, kInf})});
  Outcome other = ok("libtorch", tensor({3}, {0, kNaN, 1.5}), {tensor({3}, {1, 1, -7})});
  const Verdict v = compare({ref, other}, with_gradients());
  ASSERT_EQ(v.divergences.size(), 1u) << format_verdict(v);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Forward);
  EXPECT_EQ(v.divergences[0].first_index, 2u);
  EXPECT_EQ(v.divergences[0].count, 1u);
  EXPECT_EQ(v.indeterminate, 3u);
  ASSERT_EQ(v.indeterminate_by_backend.size(), 1u);
  EXPECT_EQ(v.indeterminate_by_backend[0].backend, "libtorch");
  EXPECT_EQ(v.indeterminate_by_backend[0].count, 3u);
}

TEST(Compare, OnlyTheReferencesBoundCounts) {
  const Outcome ref = ok("ref", tensor({1}, {0.5}, {0.01}));
  Outcome other = ok("plugin", tensor({1}, {0.5 + 0.009}));
  EXPECT_TRUE(compare({ref, other}, with_gradients()).agree()); // 0.009 < 0.01 + 1e-4 * 0.509
  other.root.values = {0.5 + 0.015};
  EXPECT_FALSE(compare({ref, other}, with_gradients()).agree()); // 0.015 > 0.01 + 1e-4 * 0.515
  // A bound of the wrong length on the reference is ignored rather than read out of range: no
  // bound, the seed's rule, 0.009 > 1e-4.
  Outcome bad_ref = ref;
  bad_ref.root.error_bound = {0.01, 0.01};
  other.root.values = {0.5 + 0.009};
  EXPECT_FALSE(compare({bad_ref, other}, with_gradients()).agree());
}

// A backend under test that bounds its own wrong values must not excuse them: a planted kernel
// 10 % off that reports a bound covering the error (or +inf, "indeterminate") is flagged, and the
// bound it sent is shown in the detail. The same backend with correct values agrees.
TEST(Compare, ABackendsOwnBoundNeverExcusesIt) {
  const Outcome ref = ok("ref", tensor({3}, {1, 2, 4}, {0, 0, 0}));
  Outcome plugin = ok("plugin", tensor({3}, {1.1, 2.2, 4.4}, {0.2, kInf, 1.0}));
  const Verdict v = compare({ref, plugin}, with_gradients());
  ASSERT_EQ(v.divergences.size(), 1u) << format_verdict(v);
  EXPECT_EQ(v.divergences[0].count, 3u);
  EXPECT_EQ(v.indeterminate, 0u);
  EXPECT_NE(v.divergences[0].detail.find("own bound 0.2 "), std::string::npos)
      << v.divergences[0].detail;
  plugin.root.values = {1, 2, 4};
  EXPECT_TRUE(compare({ref, plugin}, with_gradients()).agree());
}

TEST(FormatVerdict, FixedShapeLines) {
  const Outcome ref = ok("ref", tensor({3}, {1, 2, 3}), {tensor({3}, {0.5, 0.5, 0.5})});
  Outcome lt = ref;
  lt.backend = "libtorch";
  lt.grads[0].values = {0.5, 0.5, kNaN};
  const Outcome err = failed("plug", Status::Error, "line one \"q\"\nline two");
  const Outcome uns = failed("eigen", Status::Unsupported, "matmul");
  const Verdict v = compare({ref, lt, err, uns}, with_gradients());
  EXPECT_EQ(
      format_verdict(v),
      "DIVERGENCE backend=libtorch kind=gradient leaf=0 count=1 first_index=2 expected=0.5 "
      "actual=nan detail=\"\"\n"
      "DIVERGENCE backend=plug kind=error leaf=-1 count=0 first_index=0 expected=nan actual=nan "
      "detail=\"line one 'q'\"\n"
      "SKIPPED backend=eigen\n"
      "VERDICT reference=ref compared=2 divergences=2 skipped=1 indeterminate=0 result=diverge\n");
  EXPECT_EQ(
      format_verdict(compare({ref, ref}, with_gradients())),
      "VERDICT reference=ref compared=1 divergences=0 skipped=0 indeterminate=0 result=agree\n");
}

// Version-differential runs: a backend that diverges where its baseline (an older release of the
// same library) agrees is a regression, one line per kind; a baseline that diverges too, or was
// not compared, makes none.
TEST(Compare, ABackendWrongWhereItsBaselineAgreesIsARegression) {
  const Outcome ref = ok("ref", tensor({2}, {1, 2}), {tensor({2}, {1, 1})});
  Outcome now = ref;
  now.backend = "libtorch";
  now.root.values = {1, 3};
  now.grads[0].values = {0, 1};
  Outcome then = ref;
  then.backend = "libtorch@1.13";
  OracleOptions options = with_gradients();
  options.baselines = {{"libtorch", "libtorch@1.13"}};
  const Verdict v = compare({ref, now, then}, options);
  ASSERT_EQ(v.regressions.size(), 2u);
  EXPECT_EQ(v.regressions[0].backend, "libtorch");
  EXPECT_EQ(v.regressions[0].baseline, "libtorch@1.13");
  EXPECT_EQ(v.regressions[0].kind, DivergenceKind::Forward);
  EXPECT_EQ(v.regressions[1].kind, DivergenceKind::Gradient);
  EXPECT_EQ(format_verdict(v),
            "DIVERGENCE backend=libtorch kind=forward leaf=-1 count=1 first_index=1 expected=2 "
            "actual=3 detail=\"\"\n"
            "DIVERGENCE backend=libtorch kind=gradient leaf=0 count=1 first_index=0 expected=1 "
            "actual=0 detail=\"\"\n"
            "REGRESSION backend=libtorch baseline=libtorch@1.13 kind=forward\n"
            "REGRESSION backend=libtorch baseline=libtorch@1.13 kind=gradient\n"
            "VERDICT reference=ref compared=2 divergences=2 skipped=0 indeterminate=0 "
            "result=diverge\n");
  // The baseline wrong too: an old bug, not a regression.
  Outcome then_wrong = then;
  then_wrong.root.values = {1, 4};
  EXPECT_TRUE(compare({ref, now, then_wrong}, options).regressions.empty());
  // The baseline not run (unsupported, or absent): nothing to say.
  EXPECT_TRUE(compare({ref, now, failed("libtorch@1.13", Status::Unsupported, "x")}, options)
                  .regressions.empty());
  EXPECT_TRUE(compare({ref, now}, options).regressions.empty());
  // Without the pair, the same outcomes are plain divergences.
  EXPECT_TRUE(compare({ref, now, then}, with_gradients()).regressions.empty());
  // The other direction (the older release wrong, the newer right) is a fix, not a regression.
  Outcome old_wrong = then_wrong;
  Outcome new_right = now;
  new_right.root = ref.root;
  new_right.grads = ref.grads;
  EXPECT_TRUE(compare({ref, new_right, old_wrong}, options).regressions.empty());
}

TEST(Summary, LongTensorsAreTruncatedKeepingBothEnds) {
  std::vector<double> v(100);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i);
  EXPECT_EQ(format_values(tensor({100}, v), 6), "[0, 1, 2, ... (94 more) ... 97, 98, 99]");
  EXPECT_EQ(format_values(tensor({3}, {0.5, kNaN, -kInf}), 6), "[0.5, nan, -inf]");
  EXPECT_EQ(format_values(tensor({}, {}), 6), "[]");
}

// ---------------------------------------------------------------------------------------------
// A deliberately wrong backend, TEST ONLY: a tiny reverse-mode framework for a handful of ops
// whose relu' at exactly 0 is 1 instead of PyTorch's 0. It runs through the real driver
// (FrameworkBackend / run_program), so the test shows the whole path catches a one-element
// gradient bug at a kink.

namespace {

class ToyFramework {
public:
  using Tensor = int; // index into nodes_

  explicit ToyFramework(bool wrong_relu_at_zero) : wrong_(wrong_relu_at_zero) {}

  void reset(const Program&) { nodes_.clear(); }
  Tensor leaf(const Leaf& leaf, bool) { return push(leaf.shape, leaf.data); }
  Tensor alias(const Tensor& t) { return t; }
  Tensor apply(const Instr& instr, std::span<const Tensor* const> in, const Shape& shape) {
    const int a = *in[0];
    const int b = in.size() > 1 ? *in[1] : -1;
    auto same_shape = [&] {
      if (!(nodes_[a].shape == nodes_[b].shape)) throw std::runtime_error("toy: no broadcasting");
    };
    std::vector<double> out;
    switch (instr.op) {
    case Op::Add:
      same_shape();
      for (std::size_t i = 0; i < val(a).size(); ++i)
        out.push_back(val(a)[i] + val(b)[i]);
      return push(shape, std::move(out), [a, b](ToyFramework& f, const std::vector<double>& g) {
        f.accumulate(a, g);
        f.accumulate(b, g);
      });
    case Op::Mul:
      same_shape();
      for (std::size_t i = 0; i < val(a).size(); ++i)
        out.push_back(val(a)[i] * val(b)[i]);
      return push(shape, std::move(out), [a, b](ToyFramework& f, const std::vector<double>& g) {
        std::vector<double> ga(g.size()), gb(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
          ga[i] = g[i] * f.val(b)[i];
          gb[i] = g[i] * f.val(a)[i];
        }
        f.accumulate(a, ga);
        f.accumulate(b, gb);
      });
    case Op::Relu:
      for (double x : val(a))
        out.push_back(x > 0 ? x : 0.0);
      return push(shape, std::move(out), [a, this](ToyFramework& f, const std::vector<double>& g) {
        std::vector<double> ga(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
          const double x = f.val(a)[i];
          ga[i] = (x > 0 || (wrong_ && x == 0)) ? g[i] : 0.0;
        }
        f.accumulate(a, ga);
      });
    case Op::SumAll: {
      double s = 0;
      for (double x : val(a))
        s += x;
      return push(shape, {s}, [a](ToyFramework& f, const std::vector<double>& g) {
        f.accumulate(a, std::vector<double>(f.val(a).size(), g[0]));
      });
    }
    // A toy: the ops it does not implement are simply refused.
    default: break;
    }
    throw std::runtime_error("toy: op not implemented");
  }
  void backward(const Tensor& root) {
    accumulate(root, std::vector<double>(val(root).size(), 1.0));
    for (int n = root; n >= 0; --n)
      if (!nodes_[n].grad.empty() && nodes_[n].back) nodes_[n].back(*this, nodes_[n].grad);
  }
  std::optional<HostTensor> grad(const Tensor& t) {
    if (nodes_[t].grad.empty()) return std::nullopt;
    return HostTensor{nodes_[t].shape, nodes_[t].grad, {}};
  }
  HostTensor read(const Tensor& t) { return HostTensor{nodes_[t].shape, nodes_[t].value, {}}; }

private:
  using Back = std::function<void(ToyFramework&, const std::vector<double>&)>;
  struct Node {
    Shape shape;
    std::vector<double> value;
    std::vector<double> grad;
    Back back;
  };

  const std::vector<double>& val(int n) const { return nodes_[n].value; }
  int push(const Shape& s, std::vector<double> v, Back back = {}) {
    nodes_.push_back(Node{s, std::move(v), {}, std::move(back)});
    return static_cast<int>(nodes_.size()) - 1;
  }
  void accumulate(int n, const std::vector<double>& g) {
    auto& acc = nodes_[n].grad;
    if (acc.empty()) acc.assign(g.size(), 0.0);
    for (std::size_t i = 0; i < g.size(); ++i)
      acc[i] += g[i];
  }

  bool wrong_;
  std::vector<Node> nodes_;
};
static_assert(Framework<ToyFramework>);

// relu(x * y) with products exactly 0 at elements 1 and 3: relu'(0) decides d/dx there.
constexpr const char* kKinkProgram = "# burnmark program v1\n"
                                     "%0 = leaf f32[4] [-1, 0, 2, 0]\n"
                                     "%1 = leaf f32[4] [1, 2, 3, 4]\n"
                                     "%2 = mul %0, %1 : f32[4]\n"
                                     "%3 = relu %2 : f32[4]\n"
                                     "%4 = sum %3 : f32[]\n"
                                     "root %4\n";

Program kink_program() {
  ParseResult r = parse_program(kKinkProgram);
  if (!r.ok()) ADD_FAILURE() << r.error();
  return r.program();
}

} // namespace

TEST(WrongBackend, HonestToyAgreesWithItselfAndTheWrongOneIsCaught) {
  // Independent of the real reference, so it runs before that library exists: the honest toy
  // is the reference here, with hand-derived expectations checked first.
  const Program p = kink_program();
  FrameworkBackend<ToyFramework> honest("toy", false);
  FrameworkBackend<ToyFramework> wrong("toy-relu0", true);
  RunOptions run;
  std::vector<Outcome> outs = {honest.run(p, run), wrong.run(p, run)};
  ASSERT_EQ(outs[0].status, Status::Ok) << outs[0].message;
  EXPECT_EQ(outs[0].root.values, std::vector<double>{6.0});
  EXPECT_EQ(outs[0].grads[0].values, (std::vector<double>{0, 0, 3, 0}));
  EXPECT_EQ(outs[0].grads[1].values, (std::vector<double>{0, 0, 2, 0}));

  const Verdict v = compare(outs, with_gradients());
  ASSERT_EQ(v.divergences.size(), 1u) << format_verdict(v);
  const Divergence& d = v.divergences[0];
  EXPECT_EQ(d.backend, "toy-relu0");
  EXPECT_EQ(d.kind, DivergenceKind::Gradient);
  EXPECT_EQ(d.leaf, 0);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.first_index, 1u);
  EXPECT_EQ(d.expected, 0.0);
  EXPECT_EQ(d.actual, 2.0);
}

#if defined(BURNMARK_HAVE_REFERENCE)
TEST(WrongBackend, CaughtAgainstTheRealReference) {
  const Program p = kink_program();
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(make_reference_backend());
#if defined(BURNMARK_HAVE_LIBTORCH)
  backends.push_back(make_libtorch_backend(1));
#endif
  backends.push_back(std::make_unique<FrameworkBackend<ToyFramework>>("toy-relu0", true));
  backends.push_back(std::make_unique<FrameworkBackend<ToyFramework>>("toy", false));
  std::vector<Outcome> outs;
  for (auto& b : backends)
    outs.push_back(b->run(p, RunOptions{}));
  const Verdict v = compare(outs, with_gradients());
  // Only the wrong toy disagrees; the honest toy (and LibTorch) match the reference exactly at
  // the kink, so the catch is the relu'(0) convention and nothing else.
  ASSERT_EQ(v.divergences.size(), 1u) << format_verdict(v);
  EXPECT_EQ(v.divergences[0].backend, "toy-relu0");
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Gradient);
  EXPECT_EQ(v.divergences[0].leaf, 0);
  EXPECT_EQ(v.divergences[0].first_index, 1u);
  EXPECT_EQ(v.divergences[0].count, 2u);
}
#endif

#if defined(BURNMARK_HAVE_REFERENCE)
// Issue 29's planted fault end to end: the real reference computes 1e-3 * 1e-2 ~ 1e-5 with a
// bound of a few ulps (one correctly rounded product of exact leaves: at most 2 u |z| ~ 1.2e-12,
// docs/conventions.md), so a backend twice the value is caught although the difference, 1e-5,
// is far below the seed's absolute 1e-4. The same outcome without the reference's bounds (a
// reference that sends none) falls back to the seed's rule and agrees.
TEST(WrongBackend, AWrongSmallValueIsCaughtWhereTheReferenceBoundsIt) {
  ParseResult r = parse_program("# burnmark program v1\n"
                                "%0 = leaf f32[2] [0.001, 0.5]\n"
                                "%1 = leaf f32[2] [0.01, 0.25]\n"
                                "%2 = mul %0, %1 : f32[2]\n"
                                "root %2\n");
  ASSERT_TRUE(r.ok()) << r.error();
  const Outcome ref = make_reference_backend()->run(r.program(), RunOptions{});
  ASSERT_EQ(ref.status, Status::Ok) << ref.message;
  ASSERT_EQ(ref.root.error_bound.size(), 2u);
  EXPECT_NEAR(ref.root.values[0], 1e-5, 1e-11);
  EXPECT_LE(ref.root.error_bound[0], 1e-11);
  EXPECT_EQ(ref.root.values[1], 0.125); // exact
  Outcome wrong = ref;
  wrong.backend = "wrong";
  wrong.root.error_bound.clear();
  wrong.root.values[0] *= 2;
  const Verdict v = compare({ref, wrong}, with_gradients(false));
  ASSERT_EQ(v.divergences.size(), 1u) << format_verdict(v);
  EXPECT_EQ(v.divergences[0].first_index, 0u);
  EXPECT_EQ(v.divergences[0].count, 1u);
  Outcome unbounded = ref;
  unbounded.root.error_bound.clear();
  EXPECT_TRUE(compare({unbounded, wrong}, with_gradients(false)).agree());
}
#endif

// platform_pins.h's check for a pinned test on a platform where the library gave another value:
// the verdict must fit the values, element by element with the oracle's own rule.
TEST(PlatformPins, TheVerdictFitsTheValuesWhateverTheLibraryGave) {
  const Outcome ref =
      ok("ref", tensor({3}, {kNaN, 1.0, -0.0}, {0, 0, kInf}), {tensor({3}, {1, 2, 3})});
  // As measured: -inf where the reference has NaN (a divergence), and the same value as the
  // reference elsewhere; another platform: NaN there too (agreement), or a value off by more
  // than the tolerance only where the bound is infinite (indeterminate, no divergence).
  for (const std::vector<double>& got :
       {std::vector<double>{-kInf, 1.0, 0.0}, std::vector<double>{kNaN, 1.0, 0.0},
        std::vector<double>{kNaN, 1.0, 5.0}}) {
    const Outcome lib = ok("lib", tensor({3}, got), {tensor({3}, {1, 2, 3})});
    EXPECT_TRUE(burnmark::testing::verdict_fits_values(ref, lib));
    EXPECT_EQ(compare({ref, lib}, OracleOptions{}).agree(),
              !burnmark::testing::tensor_leaves_bound(ref.root, lib.root, kDefaultTolerance));
  }
  EXPECT_TRUE(burnmark::testing::tensor_leaves_bound(ref.root, tensor({3}, {-kInf, 1, 0}),
                                                     kDefaultTolerance));
  EXPECT_FALSE(burnmark::testing::tensor_leaves_bound(ref.root, tensor({3}, {kNaN, 1, 7}),
                                                      kDefaultTolerance));
  // A gradient that leaves the bound is a divergence of that leaf.
  const Outcome off = ok("lib", tensor({3}, {kNaN, 1, 0}), {tensor({3}, {1, 2, 4})});
  EXPECT_FALSE(compare({ref, off}, OracleOptions{}).agree());
  EXPECT_TRUE(burnmark::testing::verdict_fits_values(ref, off));
}
