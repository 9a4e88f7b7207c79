// The reference backend's tape, whatever the ops: an aliased leaf keeps its gradient, an
// unreached leaf gets zeros, a root leaf and a forward-only run, large programs after small ones
// reusing nothing stale, and the cost of a 20-op program, forward and backward.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <utility>
#include <vector>

#include "reference_test_builder.h"

using namespace burnmark;
using namespace burnmark::reference_test;

// The tape frees node buffers above 16,384 elements when the next program starts (so a large
// program does not set a fuzzing process's memory for good): a large program after a small one
// and again after that must still give x * x exactly, and its gradient 2x.
TEST(ReferenceGradients, LargeProgramsAfterSmallOnesReuseNothingStale) {
  const std::int64_t n = 16 * 16 * 16 * 8; // above the kept size
  std::vector<float> big(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i % 97) - 48.0F;
  const auto square = [](Shape shape, std::vector<float> data) {
    Builder b;
    const Reg x = b.leaf(std::move(shape), std::move(data));
    return b.done(b.op(Op::Mul, {x, x}));
  };
  for (int round = 0; round < 2; ++round) {
    const Outcome large = run(square({16, 16, 16, 8}, big));
    ASSERT_EQ(large.root.values.size(), big.size());
    for (std::size_t i = 0; i < big.size(); ++i) {
      ASSERT_EQ(large.root.values[i], double{big[i]} * big[i]) << i;
      ASSERT_EQ(large.grads[0].values[i], 2.0 * big[i]) << i;
    }
    const Outcome small = run(square({3}, {1.5, -2, 0.25}));
    EXPECT_EQ(small.root.values, (std::vector<double>{2.25, 4, 0.0625}));
  }
}

TEST(ReferenceGradients, AliasedLeafKeepsItsGradient) {
  const ParseResult parsed = parse_program("%0 = leaf f32[3] [1.5, -2, 0.25]\n"
                                           "%1 = alias %0 : f32[3]\n"
                                           "%2 = mul %0, %1 : f32[3]\n"
                                           "root %2\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const Outcome out = run(parsed.program());
  ASSERT_EQ(out.grads.size(), 1u);
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{3, -4, 0.5}));
}

TEST(ReferenceGradients, UnreachedLeafGetsZeros) {
  Builder b;
  const Reg x = b.leaf({2}, {1, 2});
  b.leaf({3}, {4, 5, 6});
  const Outcome out = run(b.done(b.op(Op::Exp, {x})));
  ASSERT_EQ(out.grads.size(), 2u);
  EXPECT_EQ(out.grads[1].values, std::vector<double>(3, 0.0));
  EXPECT_EQ(out.grads[1].shape.to_string(), "[3]");
}

TEST(ReferenceGradients, RootLeafAndForwardOnly) {
  Builder b;
  const Reg x = b.leaf({2}, {1, 2});
  const Program p = b.done(x);
  EXPECT_EQ(run(p).grads[0].values, (std::vector<double>{1, 1}));
  EXPECT_TRUE(run(p, false).grads.empty());
}

TEST(ReferencePerformance, TwentyOpProgramOn16x16) {
  Builder b;
  const Reg x = b.leaf({16, 16}, values(256, -2.0f, 1.0f / 64));
  const Reg y = b.leaf({16, 16}, values(256, 0.5f, 1.0f / 128));
  const Reg z = b.leaf({16}, values(16, 1.0f, 0.25f));
  Reg r = b.op(Op::Mul, {x, y});
  r = b.op(Op::Add, {r, z});
  r = b.op(Op::Tanh, {r});
  r = b.op(Op::Matmul, {r, y});
  r = b.op(Op::Sigmoid, {r});
  r = b.op(Op::Transpose, {r}, dims(0, 1));
  r = b.op(Op::Sub, {r, x});
  r = b.op(Op::Exp, {r});
  r = b.op(Op::Div, {r, y});
  r = b.op(Op::Relu, {r});
  r = b.op(Op::Clamp, {r}, bounds(-1, 1));
  r = b.op(Op::Pow, {r}, exponent(2));
  r = b.op(Op::Add, {r, y});
  r = b.op(Op::Sqrt, {r});
  r = b.op(Op::Log, {r});
  r = b.op(Op::Abs, {r});
  r = b.op(Op::Neg, {r});
  r = b.op(Op::SumDim, {r}, dim_keep(1, true));
  r = b.op(Op::Mul, {r, x});
  r = b.op(Op::MeanAll, {r});
  const Program p = b.done(r);
  const auto backend = make_reference_backend();
  backend->run(p, RunOptions{true}); // warm the arena
  constexpr int kRuns = 200;
  // CPU time, not wall time: the machine is shared.
  const std::clock_t start = std::clock();
  for (int i = 0; i < kRuns; ++i)
    backend->run(p, RunOptions{true});
  const double us = 1e6 * static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC / kRuns;
  std::printf("reference: %.1f us per 20-op 16x16 program, forward and backward\n", us);
  EXPECT_LT(us, 1000.0); // generous: the machine is shared; the target is well under 100 us
}
