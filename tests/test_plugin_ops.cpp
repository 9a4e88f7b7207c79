// A plugin's op list drives the generator (BURNMARK_OPS=auto), and the example plugin is correct
// at IEEE special values: relu(NaN) = NaN with the gradient passed, and the oracle finds no
// divergence from the real reference on NaN, ±inf and -0 through its six ops.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/config/config.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"

using namespace burnmark;

namespace {

// plugins/example/example_plugin.cpp's kOps, written out by hand.
const std::set<Op> kExampleOps = {Op::Add, Op::Sub, Op::Mul, Op::Neg, Op::Relu, Op::Exp};

std::unique_ptr<Backend> load(const char* name) {
  PluginLoadResult r = load_plugin_backend(name);
  if (!r.ok()) ADD_FAILURE() << r.error();
  return r.ok() ? r.take() : nullptr;
}

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) ADD_FAILURE() << r.error() << "\n" << text;
  return r.ok() ? r.program() : Program{};
}

std::set<Op> as_set(const std::vector<Op>& ops) {
  return {ops.begin(), ops.end()};
}

} // namespace

TEST(PluginOps, TheExamplePluginListsItsSixOpsAndTheReferenceEveryOp) {
  const std::unique_ptr<Backend> example = load("example");
  ASSERT_TRUE(example);
  const std::optional<std::vector<Op>> ops = example->supported_ops();
  ASSERT_TRUE(ops.has_value());
  EXPECT_EQ(as_set(*ops), kExampleOps);
  EXPECT_FALSE(make_reference_backend()->supported_ops().has_value());
}

TEST(PluginOps, AutoDrawsThePluginsOpsAllAndAListOverrideIt) {
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(make_reference_backend());
  Config c = default_config();
  // LibTorch or the reference alone: no restriction, the decoding as it always was.
  EXPECT_TRUE(generator_options(c, backends).ops.empty());
  EXPECT_EQ(op_set_text(c, backends), "");
  backends.push_back(load("example"));
  ASSERT_TRUE(backends.back());
  EXPECT_EQ(as_set(generator_options(c, backends).ops), kExampleOps);
  EXPECT_EQ(op_set_text(c, backends), "add,sub,mul,neg,exp,relu (the ops of example)");
  c.ops.kind = OpSelection::Kind::All;
  EXPECT_TRUE(generator_options(c, backends).ops.empty());
  c.ops = OpSelection{OpSelection::Kind::List, {Op::Mul, Op::Sin}};
  EXPECT_EQ(generator_options(c, backends).ops, (std::vector<Op>{Op::Mul, Op::Sin}));
}

TEST(PluginOps, SeveralPluginsDrawTheIntersectionOfTheirLists) {
  // The reference as a plugin lists every op; with the example beside it, the example's six.
  std::vector<std::unique_ptr<Backend>> backends;
  backends.push_back(make_reference_backend());
  backends.push_back(load("ref"));
  ASSERT_TRUE(backends.back());
  const std::optional<std::vector<Op>> all = backends.back()->supported_ops();
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), kOpCount);
  backends.push_back(load("example"));
  ASSERT_TRUE(backends.back());
  EXPECT_EQ(as_set(generator_options(default_config(), backends).ops), kExampleOps);
}

TEST(ExamplePluginSpecials, ReluPropagatesNanAndPassesItsGradient) {
  const std::unique_ptr<Backend> example = load("example");
  ASSERT_TRUE(example);
  // relu(x) = max(x, 0) with IEEE 754's NaN-propagating maximum (PyTorch's relu); its backward
  // is threshold_backward(grad, result, 0) = result <= 0 ? 0 : grad, which passes at NaN.
  const Program p = parse("%0 = leaf f32[4] [nan, -1, 2, -inf]\n"
                          "%1 = relu %0 : f32[4]\n"
                          "root %1\n");
  const Outcome o = example->run(p, RunOptions{});
  ASSERT_EQ(o.status, Status::Ok) << o.message;
  EXPECT_TRUE(std::isnan(o.root.values[0]));
  EXPECT_EQ(o.root.values[1], 0.0);
  EXPECT_EQ(o.root.values[2], 2.0);
  EXPECT_EQ(o.root.values[3], 0.0);
  ASSERT_EQ(o.grads.size(), 1u);
  EXPECT_EQ(o.grads[0].values, (std::vector<double>{1, 0, 1, 0}));
}

TEST(ExamplePluginSpecials, AgreesWithTheReferenceOnNanInfAndNegativeZeroThroughEveryOp) {
  std::vector<Outcome> outcomes(2);
  const std::unique_ptr<Backend> ref = make_reference_backend();
  const std::unique_ptr<Backend> example = load("example");
  ASSERT_TRUE(example);
  const OracleOptions oracle; // values and gradients
  const auto check = [&](const Program& p, const std::string& what) {
    outcomes[0] = ref->run(p, RunOptions{});
    outcomes[1] = example->run(p, RunOptions{});
    ASSERT_EQ(outcomes[0].status, Status::Ok) << what << outcomes[0].message;
    ASSERT_EQ(outcomes[1].status, Status::Ok) << what << outcomes[1].message;
    const Verdict v = compare(outcomes, oracle);
    ASSERT_TRUE(v.agree()) << what << format_verdict(v);
  };
  // Each op on every pair of the special values (and 0, ±1, 2), so that inf - inf, 0 * inf,
  // exp(±inf), relu(-0) and NaN in either operand all occur, with gradients through each.
  const std::string a = "[nan, inf, -inf, -0, 0, 1, -1, 2]";
  const std::string col = "[nan, inf, -inf, -0, 0, 1, -1, 2]";
  for (const char* op : {"add", "sub", "mul"})
    check(parse("%0 = leaf f32[8,1] " + a + "\n%1 = leaf f32[8] " + col + "\n%2 = " + op +
                " %0, %1 : f32[8,8]\nroot %2\n"),
          op);
  for (const char* op : {"neg", "relu", "exp"})
    check(parse("%0 = leaf f32[8] " + a + "\n%1 = " + op + " %0 : f32[8]\nroot %1\n"), op);
  // Generated programs over the six ops with a third of the leaf entries special.
  GeneratorOptions g;
  g.ops.assign(kExampleOps.begin(), kExampleOps.end());
  g.special_rate = 0.3;
  g.min_ops = 2;
  std::mt19937 rng(3131);
  int with_nan = 0;
  for (int i = 0; i < 1500; ++i) {
    std::vector<std::uint8_t> bytes(16 + rng() % 200);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    const Program p = generate(bytes, g);
    check(p, to_text(p));
    if (HasFatalFailure()) return;
    for (double v : outcomes[0].root.values)
      if (std::isnan(v)) {
        ++with_nan;
        break;
      }
  }
  EXPECT_GT(with_nan, 100); // the special values did reach the results
}
