// The Eigen plugin's view and layout ops and scans against the reference: every dim of shapes up
// to rank 4 (kSizes puts elements in Eigen's packet body and its scalar tail), forward and every
// leaf gradient, with the oracle's compare() deciding agreement. LibTorch computes these ops as
// strided views; the chains at the end run the same compositions (a permuted, strided slice
// feeding a contraction or a scan) through Eigen's dense expressions and the reference, with no
// LibTorch in the loop. Hand-derived values pin the attribute encodings (permute's digits,
// slice's step, chunk's sizes), and cumprod's gradient at zeros and overflows, where a division
// by the input would differ from the mathematics.
#include <algorithm>
#include <numeric>

#include "eigen_test_support.h"

using namespace burnmark;
using namespace burnmark::eigen_test;

namespace {

Attrs two(int dim, int dim1) {
  Attrs a;
  a.dim = dim;
  a.dim1 = dim1;
  return a;
}
Attrs dim_index_times(int dim, int dim1, int times) {
  Attrs a = two(dim, dim1);
  a.times = times;
  return a;
}
Attrs slice_attrs(int dim, int start, int end, int step) {
  Attrs a = dim_index_times(dim, start, end);
  a.variant = step;
  return a;
}
Attrs permute_attrs(const std::vector<int>& dims) {
  Attrs a;
  a.times = permutation_code(dims);
  return a;
}

const std::vector<Shape> shapes_for(std::int64_t n) {
  return {Shape{n}, Shape{2, n}, Shape{3, n, 2}, Shape{2, 3, 2, n}};
}

} // namespace

class EigenViews : public EigenVsReference {
protected:
  // op(x) * w over a fresh leaf x of shape s.
  void check(Op op, const Shape& s, Attrs attrs, unsigned seed, double lo = 0.1, double hi = 3) {
    SCOPED_TRACE(fmt::format("{} {} dim={} dim1={} times={} variant={}", op_name(op), s.to_string(),
                             attrs.dim, attrs.dim1, attrs.times, attrs.variant));
    Builder b;
    const Reg x = b.leaf(s, values(s.numel(), lo, hi, seed, true));
    expect_agree(weighted(b, b.op(op, {x}, attrs), seed + 1));
  }
  unsigned seed_ = 1000;
};

TEST_F(EigenViews, FlipMovedimPermute) {
  for (std::int64_t n : kSizes)
    for (const Shape& s : shapes_for(n))
      for (int d = 0; d < s.rank(); ++d) {
        check(Op::Flip, s, dim_attrs(d), seed_ += 2);
        for (int e = 0; e < s.rank(); ++e)
          check(Op::Movedim, s, two(d, e), seed_ += 2);
      }
  for (std::int64_t n : {1, 9})
    for (const Shape& s : shapes_for(n)) {
      std::vector<int> dims(static_cast<std::size_t>(s.rank()));
      std::iota(dims.begin(), dims.end(), 0);
      do
        check(Op::Permute, s, permute_attrs(dims), seed_ += 2);
      while (std::next_permutation(dims.begin(), dims.end()));
    }
  // 6 sizes x (flip + movedim pairs over ranks 1..4) + 2 sizes x the 1 + 2 + 6 + 24 permutations.
  EXPECT_EQ(programs_, 6 * (2 + 6 + 12 + 20) + 2 * 33);
}

TEST_F(EigenViews, NarrowSelectSliceChunk) {
  for (std::int64_t n : kSizes)
    for (const Shape& s : shapes_for(n))
      for (int d = 0; d < s.rank(); ++d) {
        const auto size = static_cast<int>(s[d]);
        check(Op::Narrow, s, dim_index_times(d, 0, size), seed_ += 2);
        if (size > 1) check(Op::Narrow, s, dim_index_times(d, 1, size - 1), seed_ += 2);
        check(Op::Select, s, two(d, 0), seed_ += 2);
        check(Op::Select, s, two(d, size - 1), seed_ += 2);
        for (int step : {1, 2, 3}) {
          check(Op::Slice, s, slice_attrs(d, 0, size, step), seed_ += 2);
          if (size > 2) check(Op::Slice, s, slice_attrs(d, 1, size - 1, step), seed_ += 2);
        }
        for (int chunks : {1, 2, 3}) {
          const auto count = static_cast<int>(chunk_count(size, chunks));
          check(Op::Chunk, s, dim_index_times(d, 0, chunks), seed_ += 2);
          check(Op::Chunk, s, dim_index_times(d, count - 1, chunks), seed_ += 2);
        }
      }
  EXPECT_GT(programs_, 500);
}

TEST_F(EigenViews, ReshapesAndExpand) {
  for (std::int64_t n : kSizes) {
    for (const Shape& s : shapes_for(n)) {
      for (int d = 0; d <= s.rank() && s.rank() < 4; ++d)
        check(Op::Unsqueeze, s, dim_attrs(d), seed_ += 2);
      for (int d = 0; d < s.rank(); ++d)
        for (int e = d + 1; e < s.rank(); ++e) {
          std::int64_t merged = 1;
          for (int i = d; i <= e; ++i)
            merged *= s[i];
          if (merged <= kMaxDim) check(Op::Reshape, s, two(d, e), seed_ += 2); // flatten(d, e)
        }
      // relayout is the identity on values: every other element along dim 0 of a larger buffer.
      if (s.rank() >= 1) {
        LeafLayout every_other;
        every_other.kind = LayoutKind::Slice;
        every_other.step = 2;
        check(Op::Relayout, s, layout_attrs(every_other), seed_ += 2);
      }
      for (int d = 0; d < s.rank() && s.rank() < 4; ++d)
        for (int parts : {1, 2, 3})
          if (s[d] % parts == 0) {
            Attrs a = dim_index_times(d, 0, parts);
            a.variant = 1; // split dim d into parts x (size / parts)
            check(Op::Reshape, s, a, seed_ += 2);
          }
    }
    for (const Shape& s : {Shape{1}, Shape{n, 1}, Shape{2, 1, n}, Shape{1, 3, 1, n}})
      for (int d = 0; d < s.rank(); ++d)
        if (s[d] == 1) {
          check(Op::Squeeze, s, dim_attrs(d), seed_ += 2);
          check(Op::Expand, s, dim_index_times(d, 0, 5), seed_ += 2);
          check(Op::Expand, s, dim_index_times(d, 0, 1), seed_ += 2);
        }
    for (const Shape& s : {Shape{n}, Shape{2, n}, Shape{3, n, 2}})
      for (int d = 0; d <= s.rank(); ++d) {
        SCOPED_TRACE(fmt::format("stack {} dim={}", s.to_string(), d));
        Builder b;
        const Reg x = b.leaf(s, values(s.numel(), 0.1, 3, seed_++, true));
        const Reg y = b.leaf(s, values(s.numel(), 0.1, 3, seed_++, true));
        expect_agree(weighted(b, b.op(Op::Stack, {x, y}, dim_attrs(d)), seed_++));
      }
  }
}

TEST_F(EigenViews, Scans) {
  for (std::int64_t n : kSizes)
    for (const Shape& s : shapes_for(n))
      for (int d = 0; d < s.rank(); ++d) {
        check(Op::Cumsum, s, dim_attrs(d), seed_ += 2);
        // Factors near 1 keep long products in range (zeros: CumprodGradientAtZerosAndOverflows).
        check(Op::Cumprod, s, dim_attrs(d), seed_ += 2, 0.7, 1.4);
      }
}

// Hand-derived: the attribute encodings reach Eigen as the ops mean them.
TEST_F(EigenViews, EncodingsByHand) {
  auto run_one = [&](Op op, Shape s, Attrs a) {
    std::vector<float> x(static_cast<std::size_t>(s.numel()));
    std::iota(x.begin(), x.end(), 0.0f);
    Builder b;
    const Program p = b.finish(b.op(op, {b.leaf(s, x)}, a));
    const Outcome o = eigen_->run(p, RunOptions{});
    EXPECT_EQ(o.status, Status::Ok) << o.message;
    return o;
  };
  // permute(x, [2, 0, 1]) of a [2, 1, 3] tensor: y[i, j, 0] = x[j, 0, i] = 3 j + i.
  Outcome o = run_one(Op::Permute, Shape{2, 1, 3}, permute_attrs({2, 0, 1}));
  EXPECT_EQ(o.root.values, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // movedim(x, 0, 2) of [2, 1, 3]: y[0, i, j] = x[j, 0, i].
  o = run_one(Op::Movedim, Shape{2, 1, 3}, two(0, 2));
  EXPECT_EQ(o.root.values, (std::vector<double>{0, 3, 1, 4, 2, 5}));
  // x[1:8:3] of 0..9, its gradient ones at the elements taken.
  o = run_one(Op::Slice, Shape{10}, slice_attrs(0, 1, 8, 3));
  EXPECT_EQ(o.root.values, (std::vector<double>{1, 4, 7}));
  EXPECT_EQ(o.grads[0].values, (std::vector<double>{0, 1, 0, 0, 1, 0, 0, 1, 0, 0}));
  // chunk(5 rows, 4 chunks) makes chunks of 2, 2, 1: chunk 2 is row 4.
  o = run_one(Op::Chunk, Shape{5, 2}, dim_index_times(0, 2, 4));
  EXPECT_EQ(o.root.values, (std::vector<double>{8, 9}));
  // narrow(dim 1, start 1, length 2) of [[0 1 2] [3 4 5]].
  o = run_one(Op::Narrow, Shape{2, 3}, dim_index_times(1, 1, 2));
  EXPECT_EQ(o.root.values, (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(o.grads[0].values, (std::vector<double>{0, 1, 1, 0, 1, 1}));
  // select(dim 0, index 1) of the same: the second row.
  o = run_one(Op::Select, Shape{2, 3}, two(0, 1));
  EXPECT_EQ(o.root.values, (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(o.grads[0].values, (std::vector<double>{0, 0, 0, 1, 1, 1}));
  // flip and cumsum along dim 1; cumsum's gradient of ones counts the prefixes each element is in.
  o = run_one(Op::Flip, Shape{2, 3}, dim_attrs(1));
  EXPECT_EQ(o.root.values, (std::vector<double>{2, 1, 0, 5, 4, 3}));
  o = run_one(Op::Cumsum, Shape{2, 3}, dim_attrs(1));
  EXPECT_EQ(o.root.values, (std::vector<double>{0, 1, 3, 3, 7, 12}));
  EXPECT_EQ(o.grads[0].values, (std::vector<double>{3, 2, 1, 3, 2, 1}));
}

// cumprod's gradient at zeros and overflows, where a formula that divides by the input (LibTorch's
// without zeros) loses it: the plugin forms the products of the others directly, so it agrees
// with the mathematics (derived by hand in each row) where LibTorch's division fails.
TEST_F(EigenViews, CumprodGradientAtZerosAndOverflows) {
  constexpr double kInfD = std::numeric_limits<double>::infinity();
  struct Case {
    std::vector<float> x, g;
    std::vector<double> math_grad;
  };
  const Case cases[] = {
      // dx = [g0 + g1 x1 + g2 x1 x2, g1 x0 + g2 x0 x2, g2 x0 x1].
      {{2, 0, 3}, {1, 1, 1}, {1, 8, 0}},
      {{2, 3, 0}, {1, 1, 1}, {1 + 3 + 0, 2 + 0, 6}},
      {{0, 2, 3}, {1, 1, 1}, {9, 0, 0}},
      // dx0 = g0 + g1 x1 = 1 + 1e60 (inf in f32), dx1 = g1 x0 = -1e30.
      {{1, -1e30f}, {1, -1e30f}, {kInfD, -1.0000000150474662e30}},
      // dx0 = 1 + x1 = 3, dx1 = x0 = inf.
      {{kInf, 2}, {1, 1}, {3, kInfD}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("cumprod of [{}]", fmt::join(c.x, ", ")));
    Builder b;
    const auto n = static_cast<std::int64_t>(c.x.size());
    const Reg y = b.op(Op::Cumprod, {b.leaf(Shape{n}, c.x)}, dim_attrs(0));
    const Program p = b.finish(b.op(Op::SumAll, {b.op(Op::Mul, {y, b.leaf(Shape{n}, c.g)})}));
    const std::vector<Outcome> o = run(p);
    ASSERT_EQ(o[0].status, Status::Ok) << o[0].message;
    ASSERT_EQ(o[1].status, Status::Ok) << o[1].message;
    for (std::size_t j = 0; j < c.x.size(); ++j) {
      EXPECT_PRED2(same, o[1].grads[0].values[j], c.math_grad[j]) << j;
      EXPECT_PRED2(same, o[0].grads[0].values[j], c.math_grad[j]) << j;
    }
  }
}

// Chains LibTorch runs on strided views (a transpose's columns, a stepped slice of them, a
// select of a permuted tensor) through Eigen's dense expressions, against the reference.
TEST_F(EigenViews, StridedChains) {
  for (std::int64_t n : {1, 7, 9}) {
    SCOPED_TRACE(fmt::format("n={}", n));
    {
      // [6, n] -> transpose [n, 6] -> every second column [n, 3] -> mm [3, 4] -> cumsum rows.
      Builder b;
      const Reg x = b.leaf(Shape{6, n}, values(6 * n, 0.2, 2, seed_++, true));
      const Reg w = b.leaf(Shape{3, 4}, values(12, 0.2, 2, seed_++, true));
      const Reg t = b.op(Op::Transpose, {x}, two(0, 1));
      const Reg s = b.op(Op::Slice, {t}, slice_attrs(1, 1, 6, 2));
      const Reg c = b.op(Op::Cumsum, {b.op(Op::Mm, {s, w})}, dim_attrs(0));
      expect_agree(weighted(b, c, seed_++));
    }
    {
      // Rank 4: permute, select a slab, flip it, narrow, then mv.
      Builder b;
      const Reg x = b.leaf(Shape{2, 3, 4, n}, values(24 * n, 0.2, 2, seed_++, true));
      const Reg p = b.op(Op::Permute, {x}, permute_attrs({3, 1, 0, 2})); // [n, 3, 2, 4]
      const Reg s = b.op(Op::Select, {p}, two(2, 1));                    // [n, 3, 4]
      const Reg f = b.op(Op::Flip, {s}, dim_attrs(2));
      const Reg m = b.op(Op::Narrow, {b.op(Op::Reshape, {f}, two(0, 1))}, // [3n, 4] -> [3n, 3]
                         dim_index_times(1, 1, 3));
      const Reg v = b.leaf(Shape{3}, values(3, 0.2, 2, seed_++, true));
      expect_agree(weighted(b, b.op(Op::Mv, {m, v}), seed_++));
    }
    {
      // expand a column, chunk it, stack with a movedim'd copy, cumprod along the stack.
      Builder b;
      const Reg x = b.leaf(Shape{n, 1}, values(n, 0.7, 1.4, seed_++, true));
      const Reg e = b.op(Op::Expand, {x}, dim_index_times(1, 0, 4)); // [n, 4]
      const Reg c = b.op(Op::Chunk, {e}, dim_index_times(1, 1, 2));  // [n, 2]
      const Reg u = b.op(Op::Unsqueeze, {c}, dim_attrs(0));          // [1, n, 2]
      const Reg m = b.op(Op::Squeeze, {b.op(Op::Movedim, {u}, two(0, 2))}, dim_attrs(2));
      const Reg st = b.op(Op::Stack, {c, m}, dim_attrs(1)); // [n, 2, 2]
      expect_agree(weighted(b, b.op(Op::Cumprod, {st}, dim_attrs(1)), seed_++));
    }
  }
}
