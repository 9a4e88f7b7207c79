// The reference backend's matrix products (matmul with broadcast batches, mm, mv, dot, outer,
// bmm, addmm) and trace: forward values against sums computed here, gradients against central
// finite differences, and the sign of a zero dot product left uncertain where libraries differ.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "reference_test_builder.h"

using namespace burnmark;
using namespace burnmark::reference_test;

TEST(ReferenceForward, MatmulWithBroadcastBatch) {
  // a: [2,1,2,3] (two batches), b: [3,3,2] (three batches) -> [2,3,2,2].
  const std::vector<float> av = values(12, -1.5f, 0.25f);
  const std::vector<float> bv = values(18, 2.0f, -0.25f);
  Builder b;
  const Reg x = b.leaf({2, 1, 2, 3}, av);
  const Reg y = b.leaf({3, 3, 2}, bv);
  const Outcome out = run(b.done(b.op(Op::Matmul, {x, y})), false);
  ASSERT_EQ(out.root.shape.to_string(), "[2,3,2,2]");
  for (int i0 = 0; i0 < 2; ++i0)
    for (int i1 = 0; i1 < 3; ++i1)
      for (int m = 0; m < 2; ++m)
        for (int n = 0; n < 2; ++n) {
          double s = 0;
          for (int k = 0; k < 3; ++k)
            s += double(av[i0 * 6 + m * 3 + k]) * bv[i1 * 6 + k * 2 + n];
          EXPECT_SAME(f32(s), out.root.values[((i0 * 3 + i1) * 2 + m) * 2 + n]);
        }
}

// A dot product whose every term is -0 is -0 in a library that adds the terms without a +0
// accumulator (a single multiply, a pairwise tree) and +0 in one that starts from +0 (a BLAS):
// the reference leaves that zero's sign uncertain (a bound above 0), but not where one term is
// +0 (then every order gives +0, so the bound stays 0).
TEST(ReferenceForward, MatmulOfNegativeZeroProductsHasAnUncertainSign) {
  const auto matmul = [](std::vector<float> a, std::vector<float> b) {
    Builder p;
    const auto k = static_cast<std::int64_t>(a.size());
    const Reg x = p.leaf({1, k}, std::move(a));
    const Reg y = p.leaf({k, 1}, std::move(b));
    return run(p.done(p.op(Op::Matmul, {x, y})), false).root;
  };
  const HostTensor one_term = matmul({-1}, {0});
  ASSERT_EQ(one_term.error_bound.size(), 1u);
  EXPECT_EQ(one_term.values[0], 0.0);
  EXPECT_GT(one_term.error_bound[0], 0.0);
  const HostTensor all_negative = matmul({-1, 2}, {0, -0.0F});
  EXPECT_GT(all_negative.error_bound[0], 0.0);
  const HostTensor one_positive = matmul({-1, 2}, {0, 0});
  EXPECT_EQ(one_positive.values[0], 0.0);
  EXPECT_FALSE(std::signbit(one_positive.values[0]));
  EXPECT_EQ(one_positive.error_bound[0], 0.0);
}

TEST(ReferenceGradients, MatmulWithBroadcastBatch) {
  expect_gradients_match_fd(weighted(
      Op::Matmul, {{{3, 4}, values(12, -1.5f, 0.25f)}, {{4, 2}, values(8, 1.0f, -0.25f)}}));
  expect_gradients_match_fd(weighted(Op::Matmul, {{{2, 1, 2, 3}, values(12, -1.5f, 0.25f)},
                                                  {{3, 3, 2}, values(18, 2.0f, -0.25f)}}));
  expect_gradients_match_fd(weighted(
      Op::Matmul, {{{2, 3}, values(6, -0.5f, 0.25f)}, {{2, 3, 2}, values(12, 1.0f, -0.125f)}}));
}

TEST(ReferenceGradients, LinearAlgebra) {
  const std::vector<float> m = values(6, -1.25f, 0.5f);
  const std::vector<float> n = values(12, 0.75f, -0.125f);
  const std::vector<float> u = {0.5f, -1.5f, 2.25f};
  expect_gradients_match_fd(weighted(Op::Mm, {{{2, 3}, m}, {{3, 4}, n}}));
  expect_gradients_match_fd(weighted(Op::Mv, {{{2, 3}, m}, {{3}, u}}));
  expect_gradients_match_fd(weighted(Op::Dot, {{{3}, u}, {{3}, {1.25f, 0.5f, -0.75f}}}));
  expect_gradients_match_fd(weighted(Op::Outer, {{{2}, {1.25f, -0.75f}}, {{3}, u}}));
  expect_gradients_match_fd(weighted(Op::Trace, {{{3, 2}, m}}));
  expect_gradients_match_fd(weighted(
      Op::Bmm, {{{2, 3, 2}, values(12, -1.5f, 0.25f)}, {{2, 2, 4}, values(16, 1.0f, -0.125f)}}));
  for (const Attrs& at : kAddmmParams) {
    SCOPED_TRACE(at.beta);
    expect_gradients_match_fd(
        weighted(Op::Addmm, {{{4}, {0.5f, -1.0f, 2.0f, 0.25f}}, {{2, 3}, m}, {{3, 4}, n}}, at));
  }
}
