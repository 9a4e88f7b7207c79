// The onednn plugin's fix-and-continue patches (onednn_patches.h) beyond what the gate's minimal
// programs show: each rewrites only its affected elements (the rest keep oneDNN's own value bit
// for bit), the rows of a reduction or softmax one by one, and a broadcast operand by the right
// index. Expected values come from the mathematics (IEEE 754's NaN propagation, limits, bugs.md's
// mpmath values), never from the plugin's output.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "test_onednn_common.h"

namespace burnmark::onednn_test {
namespace {

std::unique_ptr<Backend> load(std::vector<PluginPatch> patches) {
  PluginLoadOptions options;
  options.patches = std::move(patches);
  PluginLoadResult r = load_plugin_backend("onednn", options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? r.take() : nullptr;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

struct OffOn {
  Outcome off, on;
};

OffOn run_both(const std::string& id, const std::string& text) {
  const auto off = load({}), on = load({{"onednn", id}});
  if (!off || !on) return {};
  const Program p = parse(text);
  OffOn r{off->run(p, RunOptions{true}), on->run(p, RunOptions{true})};
  EXPECT_EQ(r.off.status, Status::Ok) << r.off.message;
  EXPECT_EQ(r.on.status, Status::Ok) << r.on.message;
  return r;
}

// Element i of the patched result is oneDNN's own (the same bits as with the patch off).
void expect_untouched(const std::vector<double>& off, const std::vector<double>& on,
                      std::size_t i) {
  ASSERT_LT(i, on.size());
  EXPECT_TRUE(same_bits(off[i], on[i])) << i << ": " << off[i] << " vs " << on[i];
}

constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

// NaN at both ends of 9 (oneDNN's vector body and its tail), ordinary values between: only the
// NaNs change.
TEST(OnednnPatches, ExpRewritesOnlyTheNans) {
  const OffOn r =
      run_both("onednn-exp-nan", "%0 = leaf f32[9] [nan, 0.5, -3, 1, 2, 0, -0, 7, nan]\n"
                                 "%1 = exp %0 : f32[9]\nroot %1\n");
  const auto& v = r.on.root.values;
  ASSERT_EQ(v.size(), 9u);
  EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[8]));
  for (std::size_t i = 1; i < 8; ++i)
    expect_untouched(r.off.root.values, v, i);
}

// relu's gradient at NaN is passed (threshold_backward zeroes where the result is <= 0 only);
// at -1 it stays 0 and at 2 it stays 1, oneDNN's own.
TEST(OnednnPatches, ReluPassesTheGradientAtNanOnly) {
  const OffOn r = run_both("onednn-relu-nan", "%0 = leaf f32[3] [nan, -1, 2]\n"
                                              "%1 = relu %0 : f32[3]\nroot %1\n");
  ASSERT_EQ(r.on.grads.size(), 1u);
  EXPECT_EQ(r.on.grads[0].values[0], 1.0);
  expect_untouched(r.off.grads[0].values, r.on.grads[0].values, 1);
  expect_untouched(r.off.grads[0].values, r.on.grads[0].values, 2);
}

// Rows one by one: a row with a NaN is NaN, a row of -inf has max -inf, an ordinary row keeps
// oneDNN's max.
TEST(OnednnPatches, ReductionRowsArePatchedOneByOne) {
  const std::string text = "%0 = leaf f32[3,3] [1, nan, 3, 1, 2, 3, -inf, -inf, -inf]\n"
                           "%1 = amax_dim %0, dim=1, keepdim=false : f32[3]\nroot %1\n";
  const OffOn nan = run_both("onednn-amax-drops-nan", text);
  EXPECT_TRUE(std::isnan(nan.on.root.values[0]));
  expect_untouched(nan.off.root.values, nan.on.root.values, 1);
  expect_untouched(nan.off.root.values, nan.on.root.values, 2);
  const OffOn init = run_both("onednn-reduction-max-init", text);
  EXPECT_EQ(init.on.root.values[2], -kInf);
  expect_untouched(init.off.root.values, init.on.root.values, 0);
  expect_untouched(init.off.root.values, init.on.root.values, 1);
}

TEST(OnednnPatches, SoftmaxRowWithNanIsNanOtherRowsUntouched) {
  const OffOn r =
      run_both("onednn-softmax-nan-row", "%0 = leaf f32[2,3] [nan, 1, 2, 0, 1, 2]\n"
                                         "%1 = softmax %0, dim=1 : f32[2,3]\nroot %1\n");
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(std::isnan(r.on.root.values[i])) << i;
  for (std::size_t i = 3; i < 6; ++i)
    expect_untouched(r.off.root.values, r.on.root.values, i);
}

// maximum of [[nan], [1]] and [0, 5, 7] broadcast to [2, 3]: the NaN first operand reaches the
// whole first row, the second row is oneDNN's.
TEST(OnednnPatches, MaximumFollowsTheBroadcastOperand) {
  const OffOn r = run_both("onednn-maximum-nan-first", "%0 = leaf f32[2,1] [nan, 1]\n"
                                                       "%1 = leaf f32[3] [0, 5, 7]\n"
                                                       "%2 = maximum %0, %1 : f32[2,3]\nroot %2\n");
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(std::isnan(r.on.root.values[i])) << i;
  for (std::size_t i = 3; i < 6; ++i)
    expect_untouched(r.off.root.values, r.on.root.values, i);
}

// The norm of [1e20, 1e20] is 1e20 √2 (f32: 1.41421360e20); the row [3, 4] keeps oneDNN's 5.
TEST(OnednnPatches, NormRewritesOnlyRowsWhosePowersOverflow) {
  const OffOn r = run_both("onednn-norm-powers-overflow",
                           "%0 = leaf f32[2,2] [1e20, 1e20, 3, 4]\n"
                           "%1 = vector_norm_dim %0, ord=2, dim=1, keepdim=false : f32[2]\n"
                           "root %1\n");
  EXPECT_EQ(r.on.root.values[0], static_cast<double>(static_cast<float>(1e20 * std::sqrt(2.0))));
  expect_untouched(r.off.root.values, r.on.root.values, 1);
}

// gelu(-3.75) = -3.31565e-4 (bugs.md, mpmath); the positive input keeps oneDNN's value.
TEST(OnednnPatches, GeluErfRewritesTheNegativeSideOnly) {
  const OffOn r = run_both("onednn-gelu-erf-cancellation",
                           "%0 = leaf f32[2] [-3.75, 1.5]\n"
                           "%1 = gelu %0, approximate=none : f32[2]\nroot %1\n");
  EXPECT_NEAR(r.on.root.values[0], -3.31565e-4, 1e-9);
  expect_untouched(r.off.root.values, r.on.root.values, 1);
}

// d/dx x^2 = 2x: +inf at +inf, and -6.4527430e19 at -3.2263715e19 where x^2 overflows f32; the
// ordinary 3 keeps oneDNN's 6.
TEST(OnednnPatches, PowGradientAtInfinityAndWhereThePowerOverflows) {
  const std::string text = "%0 = leaf f32[3] [inf, -3.2263715e19, 3]\n"
                           "%1 = pow %0, exponent=2 : f32[3]\nroot %1\n";
  const OffOn inf = run_both("onednn-pow-grad-inf", text);
  EXPECT_EQ(inf.on.grads[0].values[0], kInf);
  expect_untouched(inf.off.grads[0].values, inf.on.grads[0].values, 2);
  const OffOn big = run_both("onednn-pow2-grad-overflow", text);
  EXPECT_EQ(big.on.grads[0].values[1],
            static_cast<double>(static_cast<float>(2.0 * static_cast<double>(-3.2263715e19f))));
  expect_untouched(big.off.grads[0].values, big.on.grads[0].values, 2);
}

// The three rows seen on some ISAs only (their gate is `not-here` elsewhere): what the patch
// gives is the mathematics' value on every ISA, whatever oneDNN's kernel does without it.

// log(1) = +0 exactly; log(1 + 2^-23) = log1p(2^-23), log(0.5) = -ln 2, log(2) = ln 2, each
// rounded once; 3 is outside [0.5, 2] and keeps oneDNN's value.
TEST(OnednnPatches, LogIsExactlyZeroAtOneAndCorrectlyRoundedNearIt) {
  const OffOn r = run_both("onednn-log-one", "%0 = leaf f32[5] [1, 1.00000012, 0.5, 2, 3]\n"
                                             "%1 = log %0 : f32[5]\nroot %1\n");
  const auto& v = r.on.root.values;
  ASSERT_EQ(v.size(), 5u);
  EXPECT_TRUE(v[0] == 0.0 && !std::signbit(v[0])) << v[0];
  EXPECT_EQ(v[1], static_cast<double>(static_cast<float>(std::log1p(0x1p-23))));
  EXPECT_EQ(v[2], static_cast<double>(static_cast<float>(-M_LN2)));
  EXPECT_EQ(v[3], static_cast<double>(static_cast<float>(M_LN2)));
  expect_untouched(r.off.root.values, v, 4);
  // log's gradient g / x reads the input only: 1 at x = 1.
  EXPECT_EQ(r.on.grads[0].values[0], 1.0);
}

// alpha = 0: beta C + 0 · (A @ B) is beta C exactly, even where the f32 A @ B overflows (row 0:
// 3e38 + 3e38), with C broadcast along the rows; a row holding a NaN, and a row that cannot
// overflow, keep oneDNN's value.
TEST(OnednnPatches, AddmmWithAlphaZeroIsBetaTimesInput) {
  const std::string text = "%0 = leaf f32[2] [1, -2]\n"
                           "%1 = leaf f32[3,2] [3e38, 3e38, 1, 2, nan, 1]\n"
                           "%2 = leaf f32[2,2] [1, 1, 1, 1]\n"
                           "%3 = addmm %0, %1, %2, beta=2, alpha=0 : f32[3,2]\nroot %3\n";
  {
    // Under avx2 and sse41 oneDNN 2.6 has no primitive for an output scale of 0: not run, with
    // the patch on or off (the gate's `not-here`), so there is no value to check.
    const auto off = load({}), on = load({{"onednn", "onednn-addmm-alpha-zero-overflow"}});
    ASSERT_TRUE(off && on);
    const Program p = parse(text);
    if (off->run(p, RunOptions{true}).status == Status::Unsupported) {
      EXPECT_EQ(on->run(p, RunOptions{true}).status, Status::Unsupported);
      std::printf("addmm with alpha = 0 not run on %s\n", off->platform().c_str());
      return;
    }
  }
  const OffOn r = run_both("onednn-addmm-alpha-zero-overflow", text);
  const auto& v = r.on.root.values;
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0], 2.0);
  EXPECT_EQ(v[1], -4.0);
  EXPECT_EQ(v[2], 2.0);
  EXPECT_EQ(v[3], -4.0);
  expect_untouched(r.off.root.values, v, 2);
  expect_untouched(r.off.root.values, v, 3);
  // 0 · NaN is NaN, which the patch never rewrites: oneDNN's own value stays (NaN under
  // AVX-512; avx2 skips the product and gives 2, -4, as LibTorch does).
  expect_untouched(r.off.root.values, v, 4);
  expect_untouched(r.off.root.values, v, 5);
}

// log_softmax's gradient is g - softmax(x) sum(g): for sum(log_softmax(x) * w), g = w, computed
// here in double from the f32 inputs; its elements sum to 0 (softmax sums to 1). Element 0 is
// bugs.md's 0.00524985 (oneDNN: 0.0052528 under sse41, 0.0052507 under avx512).
TEST(OnednnPatches, LogSoftmaxGradientIsGMinusSoftmaxTimesSumOfG) {
  const OffOn r = run_both("onednn-log-softmax-grad-cancellation",
                           "%0 = leaf f32[3] [3.2, -1.92, 1.04]\n"
                           "%1 = leaf f32[3] [1.45, -0.47, 0.64]\n"
                           "%2 = log_softmax %0, dim=0 : f32[3]\n%3 = mul %2, %1 : f32[3]\n"
                           "root %3\n");
  const double x[3] = {3.2f, -1.92f, 1.04f}, w[3] = {1.45f, -0.47f, 0.64f};
  double e[3], sum_e = 0.0, sum_w = 0.0;
  for (int j = 0; j < 3; ++j) {
    e[j] = std::exp(x[j] - x[0]);
    sum_e += e[j];
    sum_w += w[j];
  }
  ASSERT_EQ(r.on.grads.size(), 2u);
  const auto& dx = r.on.grads[0].values;
  double total = 0.0;
  for (int j = 0; j < 3; ++j) {
    const double want = w[j] - e[j] / sum_e * sum_w;
    // g itself is oneDNN's (mul's backward of y * w is w exactly); rounded once from double.
    EXPECT_NEAR(dx[j], want, 1e-7 * std::fabs(want)) << j;
    total += dx[j];
  }
  EXPECT_NEAR(dx[0], 0.00524985, 5e-9);
  EXPECT_NEAR(total, 0.0, 1e-7);
}

} // namespace burnmark::onednn_test
