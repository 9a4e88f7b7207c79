// The reference backend's reductions (sum, mean, over everything or a dim) and shape ops
// (transpose, concat, repeat, the views): forward values against values worked out here,
// gradients against central finite differences, and the conventions of their gradients (mean's
// 1 / count, repeat's sum over tiles).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "reference_test_builder.h"

using namespace burnmark;
using namespace burnmark::reference_test;

TEST(ReferenceForward, Reductions) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  auto reduce = [&](Op op, Attrs at = {}) {
    Builder b;
    const Reg x = b.leaf({2, 3}, a);
    return run(b.done(b.op(op, {x}, at)), false).root;
  };
  const HostTensor sum = reduce(Op::SumAll);
  EXPECT_EQ(sum.shape.rank(), 0);
  EXPECT_EQ(sum.values, std::vector<double>{21});
  EXPECT_EQ(reduce(Op::MeanAll).values, std::vector<double>{3.5});
  EXPECT_EQ(reduce(Op::MeanAll).shape.rank(), 0);
  const HostTensor rows = reduce(Op::SumDim, dim_keep(1, true));
  EXPECT_EQ(rows.shape.to_string(), "[2,1]");
  EXPECT_EQ(rows.values, (std::vector<double>{6, 15}));
  const HostTensor cols = reduce(Op::SumDim, dim_keep(0, false));
  EXPECT_EQ(cols.shape.to_string(), "[3]");
  EXPECT_EQ(cols.values, (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(reduce(Op::MeanDim, dim_keep(1, false)).values, (std::vector<double>{2, 5}));
  EXPECT_EQ(reduce(Op::MeanDim, dim_keep(0, true)).values, (std::vector<double>{2.5, 3.5, 4.5}));
}

TEST(ReferenceForward, Layout) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  Builder b;
  const Reg x = b.leaf({2, 3}, a);
  const Reg t = b.op(Op::Transpose, {x}, dims(0, 1));
  const Program pt = b.done(t);
  EXPECT_EQ(run(pt, false).root.values, (std::vector<double>{1, 4, 2, 5, 3, 6}));

  // A rank-3 transpose of the outer and inner axes: out[k][j][i] = in[i][j][k].
  Builder b3;
  const Reg y = b3.leaf({2, 1, 3}, a);
  const Program p3 = b3.done(b3.op(Op::Transpose, {y}, dims(2, 0)));
  EXPECT_EQ(run(p3, false).root.values, (std::vector<double>{1, 4, 2, 5, 3, 6}));

  Builder bc;
  const Reg l = bc.leaf({2, 1}, {1, 2});
  const Reg r = bc.leaf({2, 2}, {3, 4, 5, 6});
  Attrs d1;
  d1.dim = 1;
  EXPECT_EQ(run(bc.done(bc.op(Op::Concat, {l, r}, d1)), false).root.values,
            (std::vector<double>{1, 3, 4, 2, 5, 6}));

  // torch's x.repeat tiles: [1,2],[3,4] repeated twice along dim 1 is [1,2,1,2],[3,4,3,4].
  Builder br;
  const Reg z = br.leaf({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run(br.done(br.op(Op::Repeat, {z}, dim_times(1, 2))), false).root.values,
            (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4}));
  Builder br0;
  const Reg z0 = br0.leaf({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(run(br0.done(br0.op(Op::Repeat, {z0}, dim_times(0, 2))), false).root.values,
            (std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST(ReferenceGradients, ReductionsAndLayout) {
  const std::vector<float> a = values(24, -1.5f, 0.125f);
  const auto one = [&](Shape s) {
    return std::vector<std::pair<Shape, std::vector<float>>>{{s, a}};
  };
  expect_gradients_match_fd(weighted(Op::SumAll, one({2, 3, 4})));
  expect_gradients_match_fd(weighted(Op::MeanAll, one({2, 3, 4})));
  for (int d = 0; d < 3; ++d)
    for (bool keep : {false, true}) {
      SCOPED_TRACE("dim " + std::to_string(d));
      expect_gradients_match_fd(weighted(Op::SumDim, one({2, 3, 4}), dim_keep(d, keep)));
      expect_gradients_match_fd(weighted(Op::MeanDim, one({2, 3, 4}), dim_keep(d, keep)));
      expect_gradients_match_fd(weighted(Op::Repeat, one({2, 3, 4}), dim_times(d, 3)));
      expect_gradients_match_fd(weighted(Op::Transpose, one({2, 3, 4}), dims(d, (d + 1) % 3)));
    }
  Attrs d1;
  d1.dim = 1;
  expect_gradients_match_fd(
      weighted(Op::Concat, {{{2, 3, 4}, a}, {{2, 1, 4}, values(8, 0.5f, 0.25f)}}, d1));
}

TEST(ReferenceGradients, Views) {
  const std::vector<float> a = values(24, -1.5f, 0.125f);
  const auto with = [](int dim, int dim1, int times) {
    Attrs at;
    at.dim = dim;
    at.dim1 = dim1;
    at.times = times;
    return at;
  };
  const std::vector<std::pair<Op, Attrs>> cases = {
      {Op::Flip, with(1, 0, 1)},     {Op::Roll, with(2, 0, -3)},  {Op::Unsqueeze, with(3, 0, 1)},
      {Op::Tril, with(0, 0, -1)},    {Op::Triu, with(0, 0, 1)},   {Op::Movedim, with(0, 2, 1)},
      {Op::Narrow, with(2, 1, 2)},   {Op::Select, with(1, 2, 0)}, {Op::Diagonal, with(1, 2, 0)},
      {Op::Diagonal, with(2, 0, -1)}};
  for (const auto& [op, at] : cases) {
    SCOPED_TRACE(std::string(op_name(op)));
    expect_gradients_match_fd(weighted(op, {{{2, 3, 4}, a}}, at));
  }
  // squeeze and expand take a dim of size 1; expand's gradient sums over the copies.
  expect_gradients_match_fd(
      weighted(Op::Squeeze, {{{2, 1, 4}, values(8, -1.0f, 0.25f)}}, with(1, 0, 1)));
  expect_gradients_match_fd(
      weighted(Op::Expand, {{{2, 1, 4}, values(8, -1.0f, 0.25f)}}, with(1, 0, 5)));
  // The shape views: reshape merging dims 0..1 and splitting dim 2 into 2 x 2, permute [2,0,1],
  // a slice with step 2 and one with step 3, the last chunk of fewer than asked (3 of 4 for a
  // dim of 3, 2 of 3 for a dim of 4), diag_embed on, above and below the diagonal.
  Attrs split = with(2, 0, 2), slice2 = with(2, 1, 4), slice3 = with(1, 0, 3);
  split.variant = 1;
  slice2.variant = 2;
  slice3.variant = 3;
  Attrs relayout_slice = with(1, 2, 1);
  relayout_slice.variant = 2;
  const std::array<int, 3> perm = {2, 0, 1};
  const std::vector<std::pair<Op, Attrs>> shape_views = {
      {Op::Reshape, with(0, 1, 1)},
      {Op::Reshape, split},
      {Op::Permute, with(0, 0, permutation_code(perm))},
      {Op::Slice, slice2},
      {Op::Slice, slice3},
      {Op::Chunk, with(1, 2, 4)},
      {Op::Chunk, with(2, 1, 3)},
      {Op::DiagEmbed, with(0, 0, 0)},
      {Op::DiagEmbed, with(0, 0, 1)},
      {Op::DiagEmbed, with(0, 0, -1)},
      // relayout (the identity on values): slice(dim=1, step=2) in layout_attrs' fields.
      {Op::Relayout, relayout_slice}};
  for (const auto& [op, at] : shape_views) {
    SCOPED_TRACE(std::string(op_name(op)) + " " + std::to_string(at.times));
    expect_gradients_match_fd(weighted(op, {{{2, 3, 4}, a}}, at));
  }
  // stack's gradient is each operand's slice of the upstream gradient (unbind).
  for (int d = 0; d <= 3; ++d) {
    SCOPED_TRACE("stack dim " + std::to_string(d));
    expect_gradients_match_fd(weighted(
        Op::Stack, {{{2, 3, 4}, a}, {{2, 3, 4}, values(24, 0.5f, -0.0625f)}}, with(d, 0, 1)));
  }
}

TEST(ReferenceConventions, MeanGradientIsOneOverCount) {
  Builder b;
  const Reg x = b.leaf({3, 2}, values(6, 0, 1));
  EXPECT_EQ(run(b.done(b.op(Op::MeanAll, {x}))).grads[0].values,
            std::vector<double>(6, f32(1.0 / 6)));
  Builder bd;
  const Reg y = bd.leaf({3, 2}, values(6, 0, 1));
  EXPECT_EQ(run(bd.done(bd.op(Op::MeanDim, {y}, dim_keep(0, false)))).grads[0].values,
            std::vector<double>(6, f32(1.0 / 3)));
}

TEST(ReferenceConventions, RepeatGradientSumsTiles) {
  Builder b;
  const Reg x = b.leaf({2}, {1, 2});
  const Reg r = b.op(Op::Repeat, {x}, dim_times(0, 3)); // [1,2,1,2,1,2]
  const Reg w = b.leaf({6}, {1, 10, 100, 1000, 10000, 100000});
  const Outcome out = run(b.done(b.op(Op::Mul, {r, w})));
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{10101, 101010}));
}
