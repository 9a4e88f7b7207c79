// The onednn plugin's activations where oneDNN 2.6's formulas cancel: values thousands of ulps
// (up to 100%) from the exact ones, found when the oracle became relative below 1 (issue 29;
// bugs.md, oneDNN table). Each is pinned by a property its formula gives on every ISA's kernel
// (expect_pinned: checked where kOnednnMeasuredOn says, reported elsewhere), and the reference's
// value is checked against the exact one (mpmath, 50 digits).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "test_onednn_common.h"

using namespace burnmark;
using burnmark::onednn_test::Backends;
using burnmark::onednn_test::Pair;

namespace {

std::string unary(const std::string& values, int n, const std::string& op) {
  const std::string t = "f32[" + std::to_string(n) + "]";
  return "%0 = leaf " + t + " [" + values + "]\n%1 = " + op + " : " + t + "\nroot %1\n";
}

// oneDNN's value at index i is further than `rel` (relative) from `exact`; the reference's value
// is `exact` rounded to f32 (within 1e-6 relative, i.e. well inside its own few ulps).
void expect_off(Backends& b, const std::string& text, std::size_t i, double exact, double rel) {
  const std::string what =
      "more than " + onednn_test::shown(rel) + " relative off " + onednn_test::shown(exact);
  const Pair p = onednn_test::expect_pinned(b, text, false, i, what, [=](double v) {
    return std::fabs(v - exact) > rel * std::fabs(exact);
  });
  EXPECT_NEAR(p.ref, exact, 1e-6 * std::fabs(exact)) << text;
}

// oneDNN's value at index i is a zero (of either sign) where the exact value is not.
void expect_zero(Backends& b, const std::string& text, std::size_t i, double exact) {
  const Pair p = onednn_test::expect_pinned(b, text, false, i, "0 (a zero of either sign)",
                                            [](double v) { return v == 0; });
  EXPECT_NEAR(p.ref, exact, 1e-6 * std::fabs(exact)) << text;
}

} // namespace

// soft_relu is n ln2 + log(2^-n + e^r) with n = round(x / ln2): for x << 0 the two terms are about
// x and -x and cancel, leaving a few ulps of |x| (logsigmoid(x) = -soft_relu(-x)).
// corpus/bugs/onednn-soft-relu-cancellation.txt.
TEST(OnednnKnownDifference, SoftReluCancelsForLargeNegativeArguments) {
  Backends b;
  const std::string ls = unary("7.5, 15, 20", 3, "logsigmoid %0");
  expect_off(b, ls, 0, -5.529314753607964e-4, 3e-4); // measured -5.5313e-4, 3430 ulp
  expect_zero(b, ls, 1, -3.059022737141e-7);
  // logsigmoid < 0 everywhere; oneDNN's is +1.9e-6 at 20.
  const Pair p =
      onednn_test::expect_pinned(b, ls, false, 2, "positive", [](double v) { return v > 0; });
  EXPECT_NEAR(p.ref, -2.061153620314e-9, 1e-15);
  expect_off(b, unary("-7.5", 1, "softplus %0, beta=1, threshold=20"), 0, 5.529314753607964e-4,
             3e-4);
}

// gelu_erf is S + S erf(x / sqrt 2), S = x / 2, with Abramowitz and Stegun's erf (about 1e-7
// absolute): 1 + erf cancels for x < 0. gelu_tanh is 0.5 x (1 + tanh(u)): the same.
// corpus/bugs/onednn-gelu-erf-cancellation.txt, onednn-gelu-tanh-cancellation.txt.
TEST(OnednnKnownDifference, GeluCancelsForNegativeArguments) {
  Backends b;
  const std::string erf = unary("-3.75, -7.5", 2, "gelu %0, approximate=none");
  expect_off(b, erf, 0, -3.315648195030145e-4, 2e-4); // measured 4.1e-4 relative
  expect_zero(b, erf, 1, -2.393168754683172e-13);
  const std::string tanh = unary("-4, -7.5", 2, "gelu %0, approximate=tanh");
  expect_off(b, tanh, 0, -7.024594819243e-5, 5e-4); // measured 1.2e-3 relative
  expect_zero(b, tanh, 1, -4.016268217514e-18);
}

// mish is x ((e^x + 1)^2 - 1) / ((e^x + 1)^2 + 1): the rounding of e^x + 1 (6e-8) against 2 e^x.
// corpus/bugs/onednn-mish-negative-tail.txt (MishTailIsInaccurate: -15 and -20).
TEST(OnednnKnownDifference, MishCancelsForNegativeArguments) {
  Backends b;
  expect_off(b, unary("-7.5", 1, "mish %0"), 0, -4.146985642582228e-3, 1.1e-4); // 1.3e-4
}

// elu is alpha (exp(x) - 1), without expm1: near 0- exp(x) rounds to within 6e-8 of 1.
// corpus/bugs/onednn-elu-expm1.txt.
TEST(OnednnKnownDifference, EluCancelsNearZero) {
  Backends b;
  const std::string text = unary("-1e-6, -1e-30", 2, "elu %0, alpha=1");
  // f32(-1e-6) = -9.999999974752427e-7; expm1 of it.
  expect_off(b, text, 0, -9.999994974752427e-7, 5e-3); // measured -1.01328e-6, 1.3% off
  expect_zero(b, text, 1, -1.0000000031710769e-30);
}

// log_softmax's value is about 2e-6 off (17 ulp of the log-sum-exp 3.31; inside the oracle's
// 1e-4 relative), and its backward g - exp(y) sum(g) cancels that into the gradient: 0.0052528
// under sse41 (5.7e-4 relative), 0.0052507 under avx512 (1.7e-4, inside the reference's bound
// there) for the exact 0.00524985. corpus/bugs/onednn-log-softmax-grad-cancellation.txt.
TEST(OnednnKnownDifference, LogSoftmaxGradientCancelsItsForwardError) {
  Backends b;
  const std::string text = "%0 = leaf f32[3] [3.2, -1.92, 1.04]\n%1 = leaf f32[3] [1.45, -0.47, "
                           "0.64]\n%2 = log_softmax %0, dim=0 : f32[3]\n%3 = mul %2, %1 : "
                           "f32[3]\nroot %3\n";
  const double exact = 0.00524985039922;
  const Pair g =
      onednn_test::expect_pinned(b, text, true, 0, "more than 1e-4 relative off",
                                 [=](double v) { return std::fabs(v - exact) > 1e-4 * exact; });
  // The reference differentiates at its f32-rounded forward value (y0 within 3.7e-9): 1.4e-6.
  EXPECT_NEAR(g.ref, exact, 3e-6 * exact);
  // Whatever this ISA's kernel gives, the oracle's verdict fits it.
  ASSERT_TRUE(b.dnn);
  const Program p = onednn_test::parse(text);
  const RunOptions o{.gradients = true};
  EXPECT_TRUE(burnmark::testing::verdict_fits_values(b.ref->run(p, o), b.dnn->run(p, o),
                                                     OracleOptions{.gradients = true}));
}
