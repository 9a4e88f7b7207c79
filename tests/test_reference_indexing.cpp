// The reference backend's indexing ops (gather, index_select, take_along_dim, scatter_add,
// scatter_reduce, masked_fill, index_add, index_copy, index_fill, index_put, masked_scatter):
// gradients with repeated indices against central finite differences, a scatter's sign of zero,
// and masked_fill's bound on an uncertain mask.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "reference_test_builder.h"

using namespace burnmark;
using namespace burnmark::reference_test;

// The indexing ops with repeated indices: a gather's gradient sums over the copies of an
// element; a scatter's src elements outside the index get none, and self's scattered-to
// elements none without include_self. Every scatter_reduce entry, through an index smaller than
// src.
TEST(ReferenceGradients, Indexing) {
  const std::vector<float> a = values(12, -1.5f, 0.25f);
  const auto weigh = [](Builder& b, Reg r) {
    const Shape s = b.p.shape_of(r);
    std::vector<float> w(static_cast<std::size_t>(s.numel()));
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = 0.25f * static_cast<float>((i * 7) % 5) - 0.5f;
    return b.done(b.op(Op::Mul, {r, b.leaf(s, w)}));
  };
  Attrs dim1;
  dim1.dim = 1;
  {
    Builder b;
    const Reg x = b.leaf({3, 4}, a);
    weigh(b, b.op(Op::Gather, {x, b.index_leaf({2, 5}, {3, 3, 0, 1, 3, 2, 2, 0, 1, 2})}, dim1));
    expect_gradients_match_fd(b.p);
  }
  {
    Builder b;
    const Reg x = b.leaf({3, 4}, a);
    weigh(b, b.op(Op::IndexSelect, {x, b.index_leaf({5}, {2, 0, 2, 2, 1})}, Attrs{}));
    expect_gradients_match_fd(b.p);
  }
  {
    Builder b; // indices broadcast over the input's rows, the input over the indices' columns
    const Reg x = b.leaf({3, 1}, {0.5f, -1.25f, 2.0f});
    weigh(b, b.op(Op::TakeAlongDim, {x, b.index_leaf({1, 4}, {0, 2, 2, 1})}, Attrs{}));
    expect_gradients_match_fd(b.p);
  }
  std::vector<Attrs> scatters(op_info(Op::ScatterReduce).params.begin(),
                              op_info(Op::ScatterReduce).params.end());
  scatters.push_back({});
  for (std::size_t k = 0; k < scatters.size(); ++k) {
    const Op op = k + 1 == scatters.size() ? Op::ScatterAdd : Op::ScatterReduce;
    Attrs at = scatters[k];
    at.dim = 1;
    SCOPED_TRACE(
        fmt::format("{} variant {} include_self {}", op_name(op), at.variant, at.include_self));
    Builder b;
    const Reg self = b.leaf({3, 4}, a);
    const Reg src =
        b.leaf({2, 5}, {1.25f, -0.75f, 3.5f, 0.0f, 1.75f, -2.5f, 0.625f, 2.25f, -1.0f, 0.375f});
    weigh(b, b.op(op, {self, b.index_leaf({2, 4}, {0, 0, 3, 0, 2, 2, 2, 1}), src}, at));
    expect_gradients_match_fd(b.p);
  }
  {
    Builder b;
    const Reg x = b.leaf({3, 4}, a);
    const Reg y = b.leaf({4}, {0.3125f, -1.0f, 0.0625f, 0.8125f});
    Attrs fill;
    fill.fill = -2.0;
    weigh(b, b.op(Op::MaskedFill, {x, b.op(Op::Lt, {x, y})}, fill));
    expect_gradients_match_fd(b.p);
  }
  // index_add with a repeated index, index_copy with distinct ones, index_fill repeated, along
  // dim 1 of the same [3, 4] self; source [3, 5] and [3, 3].
  const std::vector<float> source = values(15, -0.875f, 0.1875f);
  for (Op op : {Op::IndexAdd, Op::IndexCopy, Op::IndexFill}) {
    SCOPED_TRACE(op_name(op));
    Builder b;
    const Reg self = b.leaf({3, 4}, a);
    Attrs at = dim1;
    at.fill = -2.0;
    if (op == Op::IndexFill) {
      weigh(b, b.op(op, {self, b.index_leaf({3}, {2, 0, 2})}, at));
    } else {
      const bool add = op == Op::IndexAdd;
      const Reg src = b.leaf({3, add ? 5 : 3},
                             std::vector<float>(source.begin(), source.begin() + (add ? 15 : 9)));
      const Reg idx = add ? b.index_leaf({5}, {3, 0, 3, 1, 3}) : b.index_leaf({3}, {3, 0, 1});
      weigh(b, b.op(op, {self, idx, src}, at));
    }
    expect_gradients_match_fd(b.p);
  }
  // index_put along dim 0 of a [4, 3] self: distinct rows without accumulate, a row repeated
  // three times with.
  for (int accumulate : {0, 1}) {
    SCOPED_TRACE(accumulate);
    Builder b;
    const Reg self = b.leaf({4, 3}, a);
    Attrs at;
    at.variant = accumulate;
    const Reg src = b.leaf({4, 3}, std::vector<float>(source.begin(), source.begin() + 12));
    const Reg idx = accumulate ? b.index_leaf({4}, {3, 0, 3, 3}) : b.index_leaf({4}, {3, 0, 2, 1});
    weigh(b, b.op(Op::IndexPut, {self, idx, src}, at));
    expect_gradients_match_fd(b.p);
  }
  {
    // masked_scatter from a [4, 4] source on x < y with y a row broadcast over x's rows (no
    // element near the threshold, so the finite differences keep the mask).
    Builder b;
    const Reg x = b.leaf({3, 4}, a);
    const Reg y = b.leaf({4}, {-0.1f, 0.4f, 1.15f, 0.65f});
    const Reg src = b.leaf({4, 4}, values(16, -0.875f, 0.1875f));
    weigh(b, b.op(Op::MaskedScatter, {x, b.op(Op::Lt, {x, y}), src}));
    expect_gradients_match_fd(b.p);
  }
}

// A scatter group of -0s: added onto self's -0 it stays -0 (IEEE addition); without self the
// accumulation starts from +0, as a reduction's does.
TEST(ReferenceValues, ScatterSumOfNegativeZerosKeepsSelfsSign) {
  for (bool with_self : {true, false}) {
    Builder b;
    const Reg self = b.leaf({1}, {-0.0f});
    const Reg src = b.leaf({2}, {-0.0f, -0.0f});
    Attrs at;
    at.variant = static_cast<int>(ScatterReduction::Sum);
    at.include_self = with_self;
    const Outcome out =
        run(b.done(b.op(Op::ScatterReduce, {self, b.index_leaf({2}, {0, 0}), src}, at)));
    ASSERT_EQ(out.root.values.size(), 1u);
    EXPECT_EQ(out.root.values[0], 0.0);
    EXPECT_EQ(std::signbit(out.root.values[0]), with_self);
  }
}

// masked_fill on a mask whose comparison is uncertain (xlogy(1, 1) = 0 only within its bound, so
// xlogy of it is indeterminate) is indeterminate, as where is; a certain mask is exact.
TEST(ReferenceValues, MaskedFillOnAnUncertainMaskIsIndeterminate) {
  const ParseResult p = parse_program("%0 = leaf f32[1] [1]\n"
                                      "%1 = xlogy %0, %0 : f32[1]\n"
                                      "%2 = xlogy %1, %1 : f32[1]\n"
                                      "%3 = ne %2, %1 : bool[1]\n"
                                      "%4 = masked_fill %1, %3, value=0.5 : f32[1]\n"
                                      "root %4\n");
  ASSERT_TRUE(p.ok()) << p.error();
  const Outcome out = run(p.program());
  EXPECT_TRUE(std::isinf(out.root.error_bound.at(0)));
  const ParseResult q = parse_program("%0 = leaf f32[2] [1, -2]\n"
                                      "%1 = leaf f32[2] [0, 0]\n"
                                      "%2 = lt %0, %1 : bool[2]\n"
                                      "%3 = masked_fill %0, %2, value=0.5 : f32[2]\n"
                                      "root %3\n");
  ASSERT_TRUE(q.ok()) << q.error();
  const Outcome exact = run(q.program());
  EXPECT_EQ(exact.root.values, (std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(exact.root.error_bound, (std::vector<double>{0.0, 0.0}));
  EXPECT_EQ(exact.grads.at(0).values, (std::vector<double>{1.0, 0.0}));
}
