// The planted-fault fixtures of tools/bench.sh (plugins/planted): each diverges from the real
// reference in its planted case and agrees in a nearby ordinary one, and the fault-free build of
// the same kernels agrees with the reference on generated programs, so that the first divergence
// a fuzz run finds with a fixture is its planted fault and time-to-find measures search.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"

using namespace burnmark;

namespace {

std::unique_ptr<Backend> load(const std::string& name) {
  PluginLoadResult r = load_plugin_backend(name);
  if (!r.ok()) ADD_FAILURE() << r.error();
  return r.ok() ? r.take() : nullptr;
}

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) ADD_FAILURE() << r.error() << "\n" << text;
  return r.ok() ? r.program() : Program{};
}

// The real reference and one fixture, run on a program and judged by the real oracle (values
// and gradients, the default tolerance).
class Planted : public ::testing::Test {
protected:
  std::unique_ptr<Backend> ref_ = make_reference_backend();
  std::vector<Outcome> outcomes_ = std::vector<Outcome>(2);

  Verdict judge(Backend& fixture, const std::string& text) {
    const Program p = parse(text);
    outcomes_[0] = ref_->run(p, RunOptions{});
    outcomes_[1] = fixture.run(p, RunOptions{});
    EXPECT_EQ(outcomes_[0].status, Status::Ok) << outcomes_[0].message << "\n" << text;
    EXPECT_EQ(outcomes_[1].status, Status::Ok) << outcomes_[1].message << "\n" << text;
    return compare(outcomes_, OracleOptions{});
  }
  // The program diverges in its root values (the faults are in forward values only).
  void expect_forward_divergence(Backend& fixture, const std::string& text) {
    const Verdict v = judge(fixture, text);
    ASSERT_FALSE(v.agree()) << text;
    for (const Divergence& d : v.divergences)
      EXPECT_EQ(d.kind, DivergenceKind::Forward) << text << format_verdict(v);
  }
  void expect_agreement(Backend& fixture, const std::string& text) {
    const Verdict v = judge(fixture, text);
    EXPECT_TRUE(v.agree()) << text << format_verdict(v);
  }
};

// n values in [-2, 2) that are exact in float32 (multiples of 1/8).
std::string values(int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i)
    s += (i ? ", " : "") + std::to_string(-2.0 + (i % 32) / 8.0);
  return s + "]";
}

std::string exp_of(const std::string& shape, int n) {
  return "%0 = leaf f32" + shape + " " + values(n) + "\n%1 = exp %0 : f32" + shape + "\nroot %1\n";
}

} // namespace

TEST_F(Planted, TailExpIsWrongOnlyOnTheTailOfRowsLongerThanEight) {
  const std::unique_ptr<Backend> tail = load("planted_tail");
  ASSERT_TRUE(tail);
  expect_forward_divergence(*tail, exp_of("[2,11]", 22));
  // Exactly the tail: elements 8..10 of each row, where 1 + x + x²/2 replaces exp(x).
  const std::vector<double>& got = outcomes_[1].root.values;
  ASSERT_EQ(got.size(), 22u);
  for (int i = 0; i < 22; ++i) {
    const double x = -2.0 + i / 8.0;
    if (i % 11 < 8)
      EXPECT_NEAR(got[i], std::exp(x), 1e-6 * std::exp(x)) << i;
    else
      EXPECT_NEAR(got[i], 1 + x + x * x / 2, 1e-6) << i;
  }
  expect_forward_divergence(*tail, exp_of("[9]", 9));
  // Nearby: a whole number of vectors, a row of one partial vector, and the fault-free ops.
  expect_agreement(*tail, exp_of("[2,16]", 32));
  expect_agreement(*tail, exp_of("[3,7]", 21));
  expect_agreement(*tail, exp_of("[11,8]", 88));
  expect_agreement(*tail, "%0 = leaf f32[11] " + values(11) + "\n%1 = neg %0 : f32[11]\nroot %1\n");
}

TEST_F(Planted, SubnormalMulIsWrongOnlyWithASubnormalOrNegativeZeroOperand) {
  const std::unique_ptr<Backend> subnormal = load("planted_subnormal");
  ASSERT_TRUE(subnormal);
  const auto mul = [](const std::string& a) {
    return "%0 = leaf f32[3] " + a +
           "\n%1 = leaf f32[3] [4, 5, 6]\n%2 = mul %0, %1 : f32[3]\nroot %2\n";
  };
  // 1e-40 is subnormal in float32 (below 2^-126 ≈ 1.18e-38); the last product, 3 * 6, is lost.
  expect_forward_divergence(*subnormal, mul("[1e-40, 2, 3]"));
  EXPECT_EQ(outcomes_[0].root.values[2], 18.0);
  EXPECT_EQ(outcomes_[1].root.values[2], 0.0);
  expect_forward_divergence(*subnormal, mul("[-0, 2, 3]"));
  // Nearby: the smallest normal float32 (2^-126), +0, and a subnormal through another op.
  expect_agreement(*subnormal, mul("[1.1754944e-38, 2, 3]"));
  expect_agreement(*subnormal, mul("[0, 2, 3]"));
  expect_agreement(*subnormal, "%0 = leaf f32[3] [1e-40, -0, 3]\n%1 = leaf f32[3] [4, 5, 6]\n"
                               "%2 = add %0, %1 : f32[3]\nroot %2\n");
}

TEST_F(Planted, BroadcastSubIsWrongOnlyWhenARankThreeOperandIsBroadcast) {
  const std::unique_ptr<Backend> broadcast = load("planted_broadcast");
  ASSERT_TRUE(broadcast);
  const auto sub = [](const std::string& a, int na, const std::string& b, int nb,
                      const std::string& out) {
    return "%0 = leaf f32" + a + " " + values(na) + "\n%1 = leaf f32" + b + " " + values(nb) +
           "\n%2 = sub %0, %1 : f32" + out + "\nroot %2\n";
  };
  expect_forward_divergence(*broadcast, sub("[2,3,4]", 24, "[2,1,4]", 8, "[2,3,4]"));
  // b - a in place of a - b: the reference's values negated.
  for (std::size_t i = 0; i < outcomes_[0].root.values.size(); ++i)
    EXPECT_EQ(outcomes_[1].root.values[i], -outcomes_[0].root.values[i]) << i;
  expect_forward_divergence(*broadcast, sub("[1,3,1]", 3, "[2,3,4]", 24, "[2,3,4]"));
  // Nearby: same shapes, a rank-2 broadcast, and a rank-1 operand broadcast to rank 3.
  expect_agreement(*broadcast, sub("[2,3,4]", 24, "[2,3,4]", 24, "[2,3,4]"));
  expect_agreement(*broadcast, sub("[3,4]", 12, "[1,4]", 4, "[3,4]"));
  expect_agreement(*broadcast, sub("[2,3,4]", 24, "[4]", 4, "[2,3,4]"));
}

TEST_F(Planted, ComposeSumIsWrongOnlyWhenExpFeedsIt) {
  const std::unique_ptr<Backend> compose = load("planted_compose");
  ASSERT_TRUE(compose);
  const std::string leaf = "%0 = leaf f32[2,3] [0, 1, -1, 0.5, 2, -2]\n";
  expect_forward_divergence(*compose,
                            leaf + "%1 = exp %0 : f32[2,3]\n%2 = sum %1 : f32[]\nroot %2\n");
  // The last element, exp(-2), is dropped.
  const double all = 1 + std::exp(1.0) + std::exp(-1.0) + std::exp(0.5) + std::exp(2.0);
  EXPECT_NEAR(outcomes_[0].root.values[0], all + std::exp(-2.0), 1e-6 * all);
  EXPECT_NEAR(outcomes_[1].root.values[0], all, 1e-6 * all);
  expect_forward_divergence(*compose, leaf + "%1 = exp %0 : f32[2,3]\n%2 = alias %1 : f32[2,3]\n"
                                             "%3 = sum %2 : f32[]\nroot %3\n");
  // Nearby: sum of a leaf, sum of exp through another op, exp of a sum.
  expect_agreement(*compose, leaf + "%1 = sum %0 : f32[]\nroot %1\n");
  expect_agreement(*compose, leaf + "%1 = exp %0 : f32[2,3]\n%2 = relu %1 : f32[2,3]\n"
                                    "%3 = sum %2 : f32[]\nroot %3\n");
  expect_agreement(*compose, leaf + "%1 = sum %0 : f32[]\n%2 = exp %1 : f32[]\nroot %2\n");
}

TEST_F(Planted, TheFaultFreeKernelsAgreeOnEveryPlantedCaseAndOnGeneratedPrograms) {
  const std::unique_ptr<Backend> clean = load("planted_clean");
  ASSERT_TRUE(clean);
  expect_agreement(*clean, exp_of("[2,11]", 22));
  expect_agreement(*clean, "%0 = leaf f32[3] [1e-40, -0, 3]\n%1 = leaf f32[3] [4, 5, 6]\n"
                           "%2 = mul %0, %1 : f32[3]\nroot %2\n");
  expect_agreement(*clean, "%0 = leaf f32[2,3,4] " + values(24) + "\n%1 = leaf f32[2,1,4] " +
                               values(8) + "\n%2 = sub %0, %1 : f32[2,3,4]\nroot %2\n");
  expect_agreement(*clean, "%0 = leaf f32[2,3] [0, 1, -1, 0.5, 2, -2]\n%1 = exp %0 : f32[2,3]\n"
                           "%2 = sum %1 : f32[]\nroot %2\n");
  // Programs as the fuzz target draws them (BURNMARK_OPS=auto gives the fixtures' seven ops),
  // with a fifth of the leaf entries special and edge values in, so NaN, ±inf, -0 and
  // subnormals reach every kernel.
  GeneratorOptions g;
  const std::optional<std::vector<Op>> ops = clean->supported_ops();
  ASSERT_TRUE(ops.has_value());
  EXPECT_EQ(ops->size(), 7u);
  g.ops = *ops;
  g.special_rate = 0.2;
  g.min_ops = 3;
  std::mt19937 rng(30);
  for (int i = 0; i < 1500; ++i) {
    std::vector<std::uint8_t> bytes(16 + rng() % 300);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    const Program p = generate(bytes, g);
    outcomes_[0] = ref_->run(p, RunOptions{});
    outcomes_[1] = clean->run(p, RunOptions{});
    ASSERT_EQ(outcomes_[1].status, Status::Ok) << outcomes_[1].message << "\n" << to_text(p);
    if (outcomes_[0].status != Status::Ok) continue;
    const Verdict v = compare(outcomes_, OracleOptions{});
    ASSERT_TRUE(v.agree()) << to_text(p) << format_verdict(v);
  }
}
