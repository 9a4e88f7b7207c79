// The reference's gradients of the scans cumprod and logcumsumexp at infinite elements, where
// their formulas meet inf * 0 or inf - inf but the mathematics has a limit (the weight 1 of a
// prefix's only +inf; cumprod's polynomial in Horner's form), and where it has none (NaN). Every
// expected value is derived by hand in the comment above it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"

namespace burnmark {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

// Runs `op` along dim 0 of the leaf `values`, scaled by `weights` when given (so the upstream
// gradient of the scan is w), and returns the leaf's gradient with its bound.
HostTensor scan_gradient(const std::string& op, const std::string& values, std::size_t n,
                         const std::string& weights = "") {
  const std::string shape = "f32[" + std::to_string(n) + "]";
  std::string text =
      "%0 = leaf " + shape + " [" + values + "]\n%1 = " + op + " %0, dim=0 : " + shape + "\n";
  if (weights.empty()) {
    text += "root %1\n";
  } else {
    text += "%2 = leaf " + shape + " [" + weights + "]\n%3 = mul %1, %2 : " + shape + "\nroot %3\n";
  }
  const ParseResult parsed = parse_program(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error() << "\n" << text;
  if (!parsed.ok()) return {};
  const Outcome out = make_reference_backend()->run(parsed.program(), RunOptions{});
  EXPECT_EQ(out.status, Status::Ok) << out.message;
  EXPECT_FALSE(out.grads.empty());
  return out.grads.empty() ? HostTensor{} : out.grads.at(0);
}

// Each element as expected: NaN for NaN, otherwise the same value, judged (a finite bound), and
// exact (bound 0) where the expected value is infinite or NaN, as IEEE values must match.
void expect_gradient(const HostTensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.values.size(), want.size());
  ASSERT_EQ(got.error_bound.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("element " + std::to_string(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got.values[i])) << got.values[i];
    } else {
      EXPECT_EQ(got.values[i], want[i]);
    }
    EXPECT_TRUE(std::isfinite(got.error_bound[i])) << "not judged";
    if (!std::isfinite(want[i])) EXPECT_EQ(got.error_bound[i], 0.0);
  }
}

// ---- logcumsumexp: dx_j = sum_{k >= j} g_k w_kj, w_kj = exp(x_j - y_k) ----

// One element: y = x, the identity, whose derivative is 1 at +inf as anywhere.
TEST(LogcumsumexpAtInfinity, OneElementIsTheIdentity) {
  expect_gradient(scan_gradient("logcumsumexp", "inf", 1), {1});
  expect_gradient(scan_gradient("logcumsumexp", "-inf", 1), {1});
}

// x = [1, inf, 2, 3]: y = [1, inf, inf, inf]. The +inf is the only one in prefixes 1..3, its
// weight exp(x_1) / (e + exp(x_1) + ...) tends to 1 in each: dx_1 = 3. The finite elements'
// weights in those prefixes tend to 0: dx_0 = w_00 = 1 (prefix 0 is x_0 alone), dx_2 = dx_3 = 0.
TEST(LogcumsumexpAtInfinity, TheOnlyInfinityOfAPrefixTakesWeightOne) {
  expect_gradient(scan_gradient("logcumsumexp", "1, inf, 2, 3", 4), {1, 3, 0, 0});
}

// The upstream gradient weights each prefix: x = [0, inf], w = [2, 3]: dx_0 = 2 w_00 + 3 w_10
// = 2 * 1 + 3 * 0 = 2, dx_1 = 3 w_11 = 3.
TEST(LogcumsumexpAtInfinity, UpstreamGradientScalesTheLimitWeights) {
  expect_gradient(scan_gradient("logcumsumexp", "0, inf", 2, "2, 3"), {2, 3});
}

// x = [1, inf, 2, inf]: prefix 3 holds two +inf, whose weights exp(x_1) / (exp(x_1) + exp(x_3)
// + ...) and exp(x_3) / (...) depend on how x_1 - x_3 behaves as both grow: every split of 1
// between them is a limit, so neither weight has a value, and dx_1 (w_11 + w_21 + w_31) and
// dx_3 (w_33) are NaN. dx_0 = 1 and dx_2 = 0 as above.
TEST(LogcumsumexpAtInfinity, SeveralInfinitiesInAPrefixHaveNoLimit) {
  expect_gradient(scan_gradient("logcumsumexp", "1, inf, 2, inf", 4), {1, kNan, 0, kNan});
}

// x = [-inf, 0]: y = [-inf, 0]. w_00 = 1 (prefix 0 is the identity, even at -inf, where the
// formula has exp(-inf - -inf) = NaN); w_10 = exp(-inf - 0) = 0: dx_0 = 1, dx_1 = w_11 = 1.
TEST(LogcumsumexpAtInfinity, LeadingMinusInfinityIsTheIdentityInItsOwnPrefix) {
  expect_gradient(scan_gradient("logcumsumexp", "-inf, 0", 2), {1, 1});
}

// x = [-inf, -inf, 0]: prefix 1 is two -inf, whose weights (each exp(x_i) / (exp(x_0) +
// exp(x_1))) depend on how both fall: no limit, so dx_0 = w_00 + w_10 + w_20 and dx_1 are NaN;
// dx_2 = w_22 = exp(0 - 0) = 1.
TEST(LogcumsumexpAtInfinity, SeveralMinusInfinitiesInAPrefixHaveNoLimit) {
  expect_gradient(scan_gradient("logcumsumexp", "-inf, -inf, 0", 3), {kNan, kNan, 1});
}

// ---- cumprod: dx_j = sum_{k >= j} g_k prod_{i <= k, i != j} x_i ----

// The brief's program: x = [inf, 0, 0], g = 1. dx_0 = 1 + x_1 + x_1 x_2 = 1. dx_1 = x_0 +
// x_0 x_2 = x_0 (1 + x_2): 1 + x_2 tends to 1, so the product tends to +inf on every path.
// dx_2 = x_0 x_1 = inf * 0 has no limit: NaN.
TEST(CumprodAtInfinity, InfinityBeforeZerosFactorsOut) {
  expect_gradient(scan_gradient("cumprod", "inf, 0, 0", 3), {1, kInf, kNan});
}

// The sign follows the factored form: x = [-inf, 0, 0] gives dx_1 = -inf (1 + 0) = -inf.
TEST(CumprodAtInfinity, NegativeInfinityKeepsItsSign) {
  expect_gradient(scan_gradient("cumprod", "-inf, 0, 0", 3), {1, -kInf, kNan});
}

// x = [inf, 2, 0, 3]: dx_0 = 1 + 2 + 2*0 + 2*0*3 = 3; dx_1 = x_0 (1 + x_2 + x_2 x_3) = inf * 1;
// dx_2 = x_0 x_1 (1 + x_3) = inf * 2 * 4 = inf; dx_3 = x_0 x_1 x_2 = inf * 0: NaN.
TEST(CumprodAtInfinity, ZeroAfterAFiniteFactor) {
  expect_gradient(scan_gradient("cumprod", "inf, 2, 0, 3", 4), {3, kInf, kInf, kNan});
}

// The infinity after j: x = [2, inf, 0, 0]: dx_0 = 1 + x_1 (1 + x_2 (1 + x_3)) = 1 + inf * 1 =
// inf (the sum of products has inf * 0 in its last two terms); dx_1 = x_0 (1 + 0 + 0) = 2;
// dx_2 = x_0 x_1 (1 + x_3) = inf; dx_3 = x_0 x_1 x_2 = inf * 0: NaN.
TEST(CumprodAtInfinity, InfinityInsideTheSumFactorsOutToo) {
  expect_gradient(scan_gradient("cumprod", "2, inf, 0, 0", 4), {kInf, 2, kInf, kNan});
}

// Zeros on both sides: x = [0, inf, 0]: dx_0 = 1 + x_1 (1 + x_2) = inf; dx_1 = x_0 (1 + x_2)
// = 0 * 1 = 0; dx_2 = x_0 x_1 = 0 * inf: NaN.
TEST(CumprodAtInfinity, ZerosAroundTheInfinity) {
  expect_gradient(scan_gradient("cumprod", "0, inf, 0", 3), {kInf, 0, kNan});
}

// A zero before the infinity: x = [0, 0, inf]. dx_0 = 1 + x_1 (1 + x_2) = 1 + 0 * inf: x_1 x_2
// has no limit, NaN; dx_1 = x_0 (1 + x_2) = 0 * inf: NaN; dx_2 = x_0 x_1 = 0.
TEST(CumprodAtInfinity, ZeroTimesALaterInfinityHasNoLimit) {
  expect_gradient(scan_gradient("cumprod", "0, 0, inf", 3), {kNan, kNan, 0});
}

// Several zeros, no infinity (the products of the others, no division): x = [2, 0, 3, 0, 5].
// dx_0 = 1 + x_1 (...) = 1; dx_1 = x_0 (1 + x_2 + x_2 x_3 + x_2 x_3 x_4) = 2 (1 + 3) = 8;
// dx_2 = x_0 x_1 (...) = 0, and dx_3 = dx_4 = 0 (x_1 is a factor of each).
TEST(CumprodAtInfinity, SeveralZerosWithoutInfinity) {
  expect_gradient(scan_gradient("cumprod", "2, 0, 3, 0, 5", 5), {1, 8, 0, 0, 0});
}

// The factored form is NaN where it meets inf * 0 itself: x = [inf, 0, 1], w = [0, 1, -1].
// dx_1 = x_0 (w_1 + x_2 w_2) = inf * (1 - 1): the coefficient is 0 only at this point (x_2 =
// 1 + e makes it -e, and x_0 = c / e gives any limit -c), so NaN. dx_0 = w_0 + x_1 (w_1 + x_2
// w_2) = 0; dx_2 = x_0 x_1 w_2 = inf * 0: NaN.
TEST(CumprodAtInfinity, VanishingCoefficientTimesInfinityHasNoLimit) {
  expect_gradient(scan_gradient("cumprod", "inf, 0, 1", 3, "0, 1, -1"), {0, kNan, kNan});
}

} // namespace
} // namespace burnmark
