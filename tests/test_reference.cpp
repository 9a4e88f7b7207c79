// The reference backend: forward values of every op against math computed here, gradients
// against central finite differences, PyTorch 1.13.1's conventions at kinks and special values
// (docs/conventions.md), and the propagated error bounds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"

using namespace burnmark;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr double kU32 = 0x1p-24; // f32 unit roundoff

// Builds programs by hand, shapes inferred by the IR's own rules.
struct Builder {
  Program p;
  Reg leaf(Shape s, std::vector<float> data) {
    Stmt st;
    st.kind = StmtKind::Leaf;
    st.leaf = static_cast<int>(p.leaves.size());
    st.shape = s;
    p.leaves.push_back(Leaf{s, {data.begin(), data.end()}});
    p.stmts.push_back(st);
    return static_cast<Reg>(p.stmts.size() - 1);
  }
  Reg index_leaf(Shape s, std::vector<std::int64_t> indices) {
    Stmt st;
    st.kind = StmtKind::Leaf;
    st.leaf = static_cast<int>(p.leaves.size());
    st.shape = s;
    st.dtype = DType::I64;
    p.leaves.push_back(Leaf{s, {}, DType::I64, std::move(indices)});
    p.stmts.push_back(st);
    return static_cast<Reg>(p.stmts.size() - 1);
  }
  Reg op(Op op, std::vector<Reg> in, Attrs a = {}) {
    std::vector<Shape> shapes;
    for (Reg r : in)
      shapes.push_back(p.shape_of(r));
    const ShapeResult res = infer_shape(op, a, shapes);
    EXPECT_TRUE(res.ok()) << (res.ok() ? "" : res.error());
    Stmt st;
    st.kind = StmtKind::Op;
    st.instr = Instr{op, std::move(in), a};
    st.shape = res.ok() ? res.shape() : Shape{};
    st.dtype = result_dtype(op);
    p.stmts.push_back(st);
    return static_cast<Reg>(p.stmts.size() - 1);
  }
  Reg alias(Reg r) {
    Stmt st;
    st.kind = StmtKind::Alias;
    st.source = r;
    st.shape = p.shape_of(r);
    p.stmts.push_back(st);
    return static_cast<Reg>(p.stmts.size() - 1);
  }
  Program done(Reg root) {
    p.root = root;
    EXPECT_EQ(validate(p), "");
    return p;
  }
};

Outcome run(const Program& p, bool gradients = true) {
  static const auto backend = make_reference_backend();
  Outcome out = backend->run(p, RunOptions{gradients});
  EXPECT_EQ(out.status, Status::Ok) << out.message;
  return out;
}

Attrs exponent(double c) {
  Attrs a;
  a.exponent = c;
  return a;
}
Attrs bounds(double lo, double hi) {
  Attrs a;
  a.lo = lo;
  a.hi = hi;
  return a;
}
Attrs dim_keep(int dim, bool keep) {
  Attrs a;
  a.dim = dim;
  a.keepdim = keep;
  return a;
}
Attrs dims(int d0, int d1) {
  Attrs a;
  a.dim = d0;
  a.dim1 = d1;
  return a;
}
Attrs dim_times(int dim, int times) {
  Attrs a;
  a.dim = dim;
  a.times = times;
  return a;
}

double f32(double x) {
  return static_cast<double>(static_cast<float>(x));
}

// Values of one unary op applied to `xs` (shape [n]).
std::vector<double> unary_values(Op op, const std::vector<float>& xs, Attrs a = {}) {
  Builder b;
  const Reg x = b.leaf({static_cast<std::int64_t>(xs.size())}, xs);
  return run(b.done(b.op(op, {x}, a)), false).root.values;
}
// Gradients of one unary op (seeded with ones) at `xs`.
std::vector<double> unary_grads(Op op, const std::vector<float>& xs, Attrs a = {}) {
  Builder b;
  const Reg x = b.leaf({static_cast<std::int64_t>(xs.size())}, xs);
  return run(b.done(b.op(op, {x}, a))).grads[0].values;
}

bool same_double(double want, double got) {
  if (std::isnan(want)) return std::isnan(got);
  return want == got && std::signbit(want) == std::signbit(got);
}
#define EXPECT_SAME(want, got)                                                                     \
  EXPECT_TRUE(same_double((want), (got))) << "want " << (want) << " got " << (got)

double sum_root(const Program& p) {
  const Outcome out = run(p, false);
  double s = 0;
  for (double v : out.root.values)
    s += v;
  return s;
}

// Central differences of sum(root) in each leaf element, against the backend's gradients. h is
// a power of two so that x ± h stays exact for the test's short-mantissa inputs.
void expect_gradients_match_fd(const Program& p, double h = 0x1p-7, double tol = 5e-3) {
  const Outcome out = run(p);
  ASSERT_EQ(out.grads.size(), p.leaves.size());
  for (std::size_t l = 0; l < p.leaves.size(); ++l) {
    for (std::size_t i = 0; i < p.leaves[l].data.size(); ++i) {
      Program plus = p;
      Program minus = p;
      const float x = p.leaves[l].data[i];
      plus.leaves[l].data[i] = static_cast<float>(x + h);
      minus.leaves[l].data[i] = static_cast<float>(x - h);
      ASSERT_EQ(static_cast<double>(plus.leaves[l].data[i]) - x, h)
          << "pick inputs with x + h exact";
      const double fd = (sum_root(plus) - sum_root(minus)) / (2 * h);
      const double g = out.grads[l].values[i];
      EXPECT_NEAR(g, fd, tol * std::max(1.0, std::fabs(fd)))
          << "leaf " << l << " element " << i << " of\n"
          << to_text(p);
    }
  }
}

// One op on the given operand leaves, times a weight leaf of the result's shape so that the
// upstream gradient is not uniform (a wrong permutation or slice would otherwise go unseen).
Program weighted(Op op, const std::vector<std::pair<Shape, std::vector<float>>>& operands,
                 Attrs a = {}) {
  Builder b;
  std::vector<Reg> regs;
  for (const auto& [shape, data] : operands)
    regs.push_back(b.leaf(shape, data));
  const Reg r = b.op(op, regs, a);
  const Shape s = b.p.shape_of(r);
  std::vector<float> w(static_cast<std::size_t>(s.numel()));
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = 0.25f * static_cast<float>((i * 7) % 5) - 0.5f;
  // A rank-0 result is weighted by a [1] leaf (leaves have rank 1..4).
  const Reg weight = b.leaf(s.rank() == 0 ? Shape{1} : s, w);
  return b.done(b.op(Op::Mul, {r, weight}));
}

// Short-mantissa values (multiples of 1/16) so that perturbations by 2^-7 are exact.
std::vector<float> values(std::int64_t n, float lo, float step) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = lo + step * static_cast<float>(i);
  return v;
}

} // namespace

// ---------------------------------------------------------------- forward values

TEST(ReferenceForward, ElementwiseBinaryBroadcast) {
  const std::vector<float> a = {0.5f, -1.25f, 2.0f, 1.5f, -0.75f, 3.0f};
  const std::vector<float> c = {1.5f, -2.0f, 0.1f};
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    Builder b;
    const Reg x = b.leaf({2, 3}, a);
    const Reg y = b.leaf({3}, c);
    const Outcome out = run(b.done(b.op(op, {x, y})), false);
    ASSERT_EQ(out.root.shape.to_string(), "[2,3]");
    for (std::size_t i = 0; i < 6; ++i) {
      const double u = a[i];
      const double v = c[i % 3];
      const double want = op == Op::Add   ? u + v
                          : op == Op::Sub ? u - v
                          : op == Op::Mul ? u * v
                                          : u / v;
      EXPECT_SAME(f32(want), out.root.values[i]);
    }
  }
}

TEST(ReferenceForward, ElementwiseUnary) {
  const std::vector<float> xs = {0.5f, 1.75f, 3.0f, 0.1f};
  const std::vector<float> signed_xs = {-2.5f, -0.5f, 0.25f, 4.0f};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double x = xs[i];
    const double s = signed_xs[i];
    EXPECT_SAME(f32(-s), unary_values(Op::Neg, signed_xs)[i]);
    EXPECT_SAME(f32(std::fabs(s)), unary_values(Op::Abs, signed_xs)[i]);
    EXPECT_SAME(f32(std::exp(s)), unary_values(Op::Exp, signed_xs)[i]);
    EXPECT_SAME(f32(std::log(x)), unary_values(Op::Log, xs)[i]);
    EXPECT_SAME(f32(std::sqrt(x)), unary_values(Op::Sqrt, xs)[i]);
    EXPECT_SAME(f32(s > 0 ? s : 0.0), unary_values(Op::Relu, signed_xs)[i]);
    EXPECT_SAME(f32(1 / (1 + std::exp(-s))), unary_values(Op::Sigmoid, signed_xs)[i]);
    EXPECT_SAME(f32(std::tanh(s)), unary_values(Op::Tanh, signed_xs)[i]);
    EXPECT_SAME(f32(std::min(std::max(s, -1.0), 1.0)),
                unary_values(Op::Clamp, signed_xs, bounds(-1, 1))[i]);
    EXPECT_SAME(f32(std::pow(x, 1.5)), unary_values(Op::Pow, xs, exponent(1.5))[i]);
    EXPECT_SAME(f32(f32(s * s) * s), unary_values(Op::Pow, signed_xs, exponent(3))[i]);
    EXPECT_SAME(f32(1 / f32(std::sqrt(x))), unary_values(Op::Pow, xs, exponent(-0.5))[i]);
  }
}

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

// ---------------------------------------------------------------- gradients vs finite differences

TEST(ReferenceGradients, BinaryOpsWithBroadcasting) {
  const std::vector<float> a = values(6, -1.25f, 0.5f);
  const std::vector<float> c = {1.5f, -2.0f, 0.75f};
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    SCOPED_TRACE(std::string(op_name(op)));
    expect_gradients_match_fd(weighted(op, {{{2, 3}, a}, {{3}, c}}));
    expect_gradients_match_fd(weighted(op, {{{2, 1}, {1.25f, -0.5f}}, {{1, 3}, c}}));
  }
}

TEST(ReferenceGradients, UnaryOpsAwayFromKinks) {
  const std::vector<float> pos = values(6, 0.375f, 0.3125f);
  const std::vector<float> mixed = {-1.5f, -0.625f, 0.3125f, 0.875f, 1.25f, 2.0f};
  const std::vector<float> clamp_in = {-1.5f, -0.625f, 0.125f, 0.5f, 1.25f, 2.0f};
  const auto one = [](const std::vector<float>& xs) {
    return std::vector<std::pair<Shape, std::vector<float>>>{{{6}, xs}};
  };
  for (Op op : {Op::Neg, Op::Abs, Op::Exp, Op::Relu, Op::Sigmoid, Op::Tanh}) {
    SCOPED_TRACE(std::string(op_name(op)));
    expect_gradients_match_fd(weighted(op, one(mixed)));
  }
  expect_gradients_match_fd(weighted(Op::Log, one(pos)));
  expect_gradients_match_fd(weighted(Op::Sqrt, one(pos)));
  expect_gradients_match_fd(weighted(Op::Clamp, one(clamp_in), bounds(-1, 1)));
  expect_gradients_match_fd(weighted(Op::Clamp, one(clamp_in), bounds(-0.5, 0.25)));
  expect_gradients_match_fd(weighted(Op::Clamp, one(clamp_in), bounds(0.5, -0.5)));
  for (double c : kPowExponents) {
    SCOPED_TRACE("pow " + std::to_string(c));
    expect_gradients_match_fd(weighted(Op::Pow, one(pos), exponent(c)));
    if (c == std::floor(c)) expect_gradients_match_fd(weighted(Op::Pow, one(mixed), exponent(c)));
  }
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

TEST(ReferenceGradients, BroadcastOperandGetsSummedGradient) {
  Builder b;
  const Reg x = b.leaf({2, 3}, values(6, 0, 1));
  const Reg y = b.leaf({3}, {1, 2, 3});
  const Outcome out = run(b.done(b.op(Op::Add, {x, y})));
  EXPECT_EQ(out.grads[0].values, std::vector<double>(6, 1.0));
  EXPECT_EQ(out.grads[1].values, std::vector<double>(3, 2.0));
  EXPECT_EQ(out.grads[1].shape.to_string(), "[3]");
}

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

// ---------------------------------------------------------------- conventions at kinks and special
// values

TEST(ReferenceConventions, Abs) {
  // sgn(±0) = 0 is the subgradient at the kink; at NaN the derivative is NaN (sign(NaN) is NaN).
  const auto g = unary_grads(Op::Abs, {0.0f, -0.0f, kNaN, -3.0f, 2.0f});
  EXPECT_EQ(g[0], 0);
  EXPECT_EQ(g[1], 0);
  EXPECT_TRUE(std::isnan(g[2]));
  EXPECT_EQ(g[3], -1);
  EXPECT_EQ(g[4], 1);
}

TEST(ReferenceConventions, Relu) {
  const auto v = unary_values(Op::Relu, {kNaN, -1.0f, 0.0f, 2.0f});
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0);
  EXPECT_SAME(-0.0, unary_values(Op::Relu, {-0.0f})[0]); // clamp_min keeps x unless x < 0
  const auto g = unary_grads(Op::Relu, {kNaN, -1.0f, 0.0f, -0.0f, 2.0f});
  EXPECT_EQ(g, (std::vector<double>{1, 0, 0, 0, 1}));
}

TEST(ReferenceConventions, Clamp) {
  const std::vector<float> xs = {-1.0f, 1.0f, kNaN, -2.0f, 0.5f, 3.0f};
  const auto v = unary_values(Op::Clamp, xs, bounds(-1, 1));
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], -1);
  EXPECT_EQ(v[5], 1);
  EXPECT_EQ(unary_grads(Op::Clamp, xs, bounds(-1, 1)), (std::vector<double>{1, 1, 0, 0, 1, 0}));
  EXPECT_SAME(-0.0, unary_values(Op::Clamp, {-0.0f}, bounds(0, 1))[0]); // x kept on a tie
  // lo > hi: hi everywhere (NaN still propagates), gradient 0 everywhere.
  const auto inverted = unary_values(Op::Clamp, xs, bounds(0.5, -0.5));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i == 2)
      EXPECT_TRUE(std::isnan(inverted[i]));
    else
      EXPECT_EQ(inverted[i], -0.5);
  }
  EXPECT_EQ(unary_grads(Op::Clamp, xs, bounds(0.5, -0.5)), std::vector<double>(6, 0.0));
}

TEST(ReferenceConventions, SqrtAndLogAtZero) {
  const auto sg = unary_grads(Op::Sqrt, {0.0f, -0.0f, 4.0f});
  EXPECT_EQ(sg[0], kInfD);
  EXPECT_EQ(sg[1], -kInfD);
  EXPECT_EQ(sg[2], 0.25);
  EXPECT_SAME(-0.0, unary_values(Op::Sqrt, {-0.0f})[0]);
  const auto lg = unary_grads(Op::Log, {0.0f, -0.0f, -2.0f});
  EXPECT_EQ(lg[0], kInfD);
  EXPECT_EQ(lg[1], -kInfD);
  EXPECT_EQ(lg[2], -0.5); // finite 1/x although the forward is NaN
  const auto lv = unary_values(Op::Log, {0.0f, -2.0f});
  EXPECT_EQ(lv[0], -kInfD);
  EXPECT_TRUE(std::isnan(lv[1]));
}

TEST(ReferenceConventions, ZeroUpstreamTimesInfiniteSlopeIsNaN) {
  // sqrt'(0) = inf; with an upstream gradient of exactly 0 the rule computes 0 / (2 * 0) = NaN.
  Builder b;
  const Reg x = b.leaf({1}, {0.0f});
  const Reg s = b.op(Op::Sqrt, {x});
  const Reg w = b.leaf({1}, {0.0f});
  const Outcome out = run(b.done(b.op(Op::Mul, {s, w})));
  EXPECT_TRUE(std::isnan(out.grads[0].values[0]));
}

TEST(ReferenceConventions, DivisionByZero) {
  Builder b;
  const Reg x = b.leaf({3}, {1.0f, -1.0f, 0.0f});
  const Reg y = b.leaf({3}, {0.0f, 0.0f, 0.0f});
  const Outcome out = run(b.done(b.op(Op::Div, {x, y})));
  EXPECT_EQ(out.root.values[0], kInfD);
  EXPECT_EQ(out.root.values[1], -kInfD);
  EXPECT_TRUE(std::isnan(out.root.values[2]));
  EXPECT_EQ(out.grads[0].values, std::vector<double>(3, kInfD)); // grad / other = 1 / 0
  // -grad * ((self / other) / other): -(inf / 0) = -inf, -(-inf / 0) = +inf, NaN stays NaN.
  EXPECT_EQ(out.grads[1].values[0], -kInfD);
  EXPECT_EQ(out.grads[1].values[1], kInfD);
  EXPECT_TRUE(std::isnan(out.grads[1].values[2]));
}

TEST(ReferenceConventions, ExpGradientIsTheRoundedResult) {
  const auto g = unary_grads(Op::Exp, {89.0f, 1.0f});
  EXPECT_EQ(g[0], kInfD);
  EXPECT_EQ(g[1], f32(std::exp(1.0)));
}

TEST(ReferenceConventions, PowForward) {
  const auto p0 = unary_values(Op::Pow, {kNaN, 0.0f, -3.0f}, exponent(0));
  EXPECT_EQ(p0, std::vector<double>(3, 1.0));
  // C99 F.9.4.4: pow(-0, y) is +0 for y > 0 and +inf for y < 0 when y is not an odd integer;
  // pow(-inf, y) is +inf for y > 0 and +0 for y < 0 (not sqrt's -0, and sqrt(-inf)'s NaN).
  EXPECT_SAME(0.0, unary_values(Op::Pow, {-0.0f}, exponent(0.5))[0]);
  EXPECT_SAME(kInfD,
              unary_values(Op::Pow, {-std::numeric_limits<float>::infinity()}, exponent(0.5))[0]);
  EXPECT_SAME(0.0,
              unary_values(Op::Pow, {-std::numeric_limits<float>::infinity()}, exponent(-0.5))[0]);
  EXPECT_TRUE(std::isnan(unary_values(Op::Pow, {-1.0f}, exponent(0.5))[0]));
  EXPECT_EQ(unary_values(Op::Pow, {-0.0f}, exponent(-0.5))[0], kInfD);
  EXPECT_EQ(unary_values(Op::Pow, {0.0f}, exponent(-1))[0], kInfD);
  EXPECT_EQ(unary_values(Op::Pow, {-0.0f}, exponent(-1))[0], -kInfD);
  // x^-2 is not LibTorch's 1/(x*x), whose x*x overflows f32 from 2^64: with x = f32(1e20) =
  // 1e20 + 2004087734272, 1/x^2 = 9.99999960e-41 = 71362.38 * 2^-149, a subnormal, rounded to
  // 71362 steps (x^-2 = 1e-40 (1 - 2 * 2.004e-8); 1e-40 / 2^-149 = 71362.38).
  EXPECT_SAME(71362 * 0x1p-149, unary_values(Op::Pow, {1e20f}, exponent(-2))[0]);
  // Past 2^75 x^-2 is below half the smallest subnormal: 0.
  EXPECT_SAME(0.0, unary_values(Op::Pow, {1e23f}, exponent(-2))[0]);
  EXPECT_EQ(unary_values(Op::Pow, {1e20f}, exponent(2))[0], kInfD);
  EXPECT_EQ(unary_values(Op::Pow, {-2.0f}, exponent(3))[0], -8.0);
  EXPECT_TRUE(std::isnan(unary_values(Op::Pow, {kNaN}, exponent(1))[0]));
}

TEST(ReferenceConventions, PowBackward) {
  EXPECT_EQ(unary_grads(Op::Pow, {kNaN, 0.0f, 2.0f}, exponent(0)), std::vector<double>(3, 0.0));
  EXPECT_EQ(unary_grads(Op::Pow, {kNaN, 0.0f}, exponent(1)), std::vector<double>(2, 1.0));
  // 0.5 * pow(x, -0.5), and pow(-0, -0.5) is +inf (C99), so both zeros give +inf.
  const auto half = unary_grads(Op::Pow, {0.0f, -0.0f}, exponent(0.5));
  EXPECT_EQ(half[0], kInfD);
  EXPECT_EQ(half[1], kInfD);
  EXPECT_EQ(unary_grads(Op::Pow, {0.0f, -0.0f}, exponent(-1)), std::vector<double>(2, -kInfD));
  const auto m2 = unary_grads(Op::Pow, {0.0f, -0.0f}, exponent(-2));
  EXPECT_EQ(m2[0], -kInfD);
  EXPECT_EQ(m2[1], kInfD);
  // grad * (c * x^(c-1)) with x^(c-1) through the same fast paths: c = 3 uses x*x.
  EXPECT_EQ(unary_grads(Op::Pow, {-2.0f}, exponent(3))[0], 12.0);
  // d/dx x^-1 = -x^-2: at f32(1e20) -71362 * 2^-149 (PowForward), not the -0 of 1/(x*x) once
  // x*x has overflowed (issue 14's four-backend campaign: oneDNN and Eigen give the subnormal).
  EXPECT_SAME(-71362 * 0x1p-149, unary_grads(Op::Pow, {1e20f}, exponent(-1))[0]);
}

// The bound of x^-2 where LibTorch's 1/(x*x) overflows: the exact subnormal is judged, so the
// fast path's 0 diverges (its error 1e-40 is the value itself) and a correctly rounded
// neighbour does not.
TEST(ReferenceConventions, PowMinusTwoKeepsItsSubnormals) {
  const auto run_pow = [](float x, double c) {
    Builder b;
    const Reg r = b.leaf({1}, {x});
    return run(b.done(b.op(Op::Pow, {r}, exponent(c))));
  };
  const Outcome fwd = run_pow(1e20f, -2);
  const double v = fwd.root.values[0], e = fwd.root.error_bound[0];
  EXPECT_SAME(71362 * 0x1p-149, v);
  EXPECT_LT(e, 0x1p-149); // below one subnormal step: an exact rounding
  const Outcome grad = run_pow(1e20f, -1);
  EXPECT_LT(grad.grads[0].error_bound[0], 0x1p-149);
  // Just inside the range (x*x = 2^126 at x = 2^63) the steps are exact: 1/x^2 = 2^-126.
  EXPECT_SAME(0x1p-126, unary_values(Op::Pow, {0x1p63f}, exponent(-2))[0]);
  // Below 2^-63 x*x is subnormal; x = 1.5 * 2^-64: x^-2 = 2^128 / 2.25, a normal float that
  // 1/(x*x) meets exactly as well (2.25 * 2^-128 is a subnormal multiple of 2^-149).
  EXPECT_SAME(static_cast<double>(static_cast<float>(0x1p128 / 2.25)),
              unary_values(Op::Pow, {1.5f * 0x1p-64f}, exponent(-2))[0]);
}

TEST(ReferenceConventions, SigmoidTanhFollowTheirF32Formulas) {
  const std::vector<float> xs = {-3.0f, 0.0f, 0.7f, 5.0f};
  const auto sg = unary_grads(Op::Sigmoid, xs);
  const auto tg = unary_grads(Op::Tanh, xs);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double y = f32(1 / (1 + std::exp(-double(xs[i]))));
    EXPECT_SAME(f32(f32(1 - y) * y), sg[i]);
    const double t = f32(std::tanh(double(xs[i])));
    EXPECT_SAME(f32(1 - f32(t * t)), tg[i]);
  }
}

TEST(ReferenceConventions, ExpOverflowsWhereF32Does) {
  const auto v = unary_values(Op::Exp, {88.0f, 89.0f});
  EXPECT_TRUE(std::isfinite(v[0]));
  EXPECT_EQ(v[1], kInfD);
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

// ---------------------------------------------------------------- error bounds

TEST(ReferenceErrorBounds, LeavesAndExactOpsOnExactInputsHaveZeroBound) {
  Builder b;
  const Reg x = b.leaf({3}, {1.5f, 2.0f, -0.25f});
  const Reg y = b.leaf({3}, {0.1f, 3.0f, 7.0f});
  const Outcome out = run(b.done(b.op(Op::Mul, {x, y})));
  EXPECT_EQ(out.root.error_bound, std::vector<double>(3, 0.0));
  EXPECT_EQ(out.grads[0].error_bound, std::vector<double>(3, 0.0));
}

TEST(ReferenceErrorBounds, TinyForWellConditionedPrograms) {
  Builder b;
  const Reg x = b.leaf({4, 4}, values(16, 0.5f, 0.125f));
  const Reg y = b.leaf({4}, {1.0f, 2.0f, 0.5f, 1.5f});
  const Reg m = b.op(Op::Mul, {b.op(Op::Exp, {x}), y});
  const Reg r = b.op(Op::SumDim, {m}, dim_keep(1, false));
  const Outcome out = run(b.done(r));
  for (std::size_t i = 0; i < out.root.values.size(); ++i) {
    EXPECT_GT(out.root.error_bound[i], 0.0);
    EXPECT_LT(out.root.error_bound[i], 1e-6 * std::fabs(out.root.values[i]));
  }
  for (const HostTensor& g : out.grads)
    for (std::size_t i = 0; i < g.values.size(); ++i)
      EXPECT_LT(g.error_bound[i], 1e-6 * std::fabs(g.values[i]));
}

TEST(ReferenceErrorBounds, SmallForLongerWellConditionedChains) {
  Builder b;
  const Reg x = b.leaf({4, 4}, values(16, 0.5f, 0.125f));
  const Reg y = b.leaf({4}, {1.0f, 2.0f, 0.5f, 1.5f});
  const Reg m = b.op(Op::Mul, {b.op(Op::Exp, {x}), y});
  const Reg t = b.op(Op::Tanh, {b.op(Op::Sqrt, {m})});
  const Reg l = b.op(Op::Log, {b.op(Op::Add, {t, m})});
  const Reg r = b.op(Op::Sqrt, {b.op(Op::SumDim, {l}, dim_keep(1, false))});
  const Outcome out = run(b.done(r));
  // Each op adds a few ulps: far below the oracle's 1e-4, so it stays as strict as it can be.
  for (std::size_t i = 0; i < out.root.values.size(); ++i)
    EXPECT_LT(out.root.error_bound[i], 1e-5 * std::fabs(out.root.values[i]));
  for (const HostTensor& g : out.grads)
    for (std::size_t i = 0; i < g.values.size(); ++i)
      EXPECT_LT(g.error_bound[i], 1e-5 * std::fabs(g.values[i]));
}

TEST(ReferenceErrorBounds, ExactOpsOnExactInputsStayExactEvenWhenTheyCancel) {
  // Correctly rounded ops on exact inputs give the same bits in every f32 library.
  Builder b;
  const Reg x = b.leaf({1}, {1e-3f});
  const Reg big = b.leaf({1}, {1e4f});
  const Outcome out = run(b.done(b.op(Op::Sub, {b.op(Op::Add, {x, big}), big})));
  EXPECT_EQ(out.root.error_bound[0], 0.0);
}

TEST(ReferenceErrorBounds, LargeAfterCancellation) {
  // x = exp(-7) carries a transcendental's rounding; each round trip through 1e4 then loses
  // everything below 1e4's ulp (~1e-3): far beyond the oracle's fixed 1e-4 tolerance.
  Builder b;
  const Reg x = b.op(Op::Exp, {b.leaf({1}, {-7.0f})});
  const Reg big = b.leaf({1}, {1e4f});
  Reg r = x;
  for (int i = 0; i < 3; ++i)
    r = b.op(Op::Sub, {b.op(Op::Add, {r, big}), big});
  const Outcome out = run(b.done(r));
  const double v = out.root.values[0];
  const double bound = out.root.error_bound[0];
  EXPECT_GT(bound, 1e-4 * std::max(1.0, std::fabs(v)));
  EXPECT_LE(std::fabs(v - std::exp(-7.0)), bound); // covers the distance to the exact answer
  EXPECT_LT(bound, 3 * 2 * 4 * kU32 * 1e4);        // of the order of 1e4's rounding, not arbitrary
}

// exp(0) is 1 here but only within Sleef's ulps elsewhere, so (y + 1e4) - 1e4 - y is exactly 0
// here while another f32 implementation may land a rounding step either side of 0.
static Reg zero_up_to_rounding(Builder& b) {
  const Reg y = b.op(Op::Exp, {b.leaf({1}, {0.0f})});
  const Reg big = b.leaf({1}, {1e4f});
  return b.op(Op::Sub, {b.op(Op::Sub, {b.op(Op::Add, {y, big}), big}), y});
}

TEST(ReferenceErrorBounds, InfiniteForSqrtOfZeroUpToRounding) {
  Builder b;
  const Reg s = b.op(Op::Sqrt, {zero_up_to_rounding(b)});
  const Outcome out = run(b.done(s));
  EXPECT_EQ(out.root.values[0], 0.0);
  EXPECT_EQ(out.root.error_bound[0], kInfD); // value, sign (NaN) and slope indeterminate
  EXPECT_EQ(out.grads[0].error_bound[0], kInfD);
}

TEST(ReferenceErrorBounds, InfiniteAtKinksAndPolesWithinTheInterval) {
  Builder b;
  const Reg zero = zero_up_to_rounding(b);
  const Reg relu = b.op(Op::Relu, {zero});
  const Reg inv = b.op(Op::Div, {b.leaf({1}, {1.0f}), zero});
  const Reg ab = b.op(Op::Abs, {zero});
  const Reg cat = b.op(Op::Concat, {b.op(Op::Concat, {relu, ab}, {}), inv}, {});
  const Outcome out = run(b.done(cat));
  EXPECT_LT(out.root.error_bound[0], 1e-2); // relu's and abs's values are continuous at the kink
  EXPECT_LT(out.root.error_bound[1], 1e-2);
  EXPECT_EQ(out.root.error_bound[2], kInfD);     // division by an interval containing 0
  EXPECT_EQ(out.grads[0].error_bound[0], kInfD); // the gradient jumps at the kink
}

TEST(ReferenceErrorBounds, NonFiniteValuesMustMatchExactly) {
  Builder b;
  const Reg x = b.leaf({3}, {100.0f, kNaN, -1.0f});
  const Reg y = b.leaf({3}, {0.3f, 0.3f, 0.3f});
  const Outcome out = run(b.done(b.op(Op::Log, {b.op(Op::Mul, {b.op(Op::Exp, {x}), y})})));
  EXPECT_EQ(out.root.values[0], kInfD);
  EXPECT_TRUE(std::isnan(out.root.values[1]));
  EXPECT_TRUE(std::isfinite(out.root.values[2]));
  EXPECT_EQ(out.root.error_bound[0], 0.0);
  EXPECT_EQ(out.root.error_bound[1], 0.0);
  EXPECT_GT(out.root.error_bound[2], 0.0);
}

TEST(ReferenceErrorBounds, SubnormalTranscendentalMayBeZeroElsewhere) {
  // The correctly rounded sigmoid(-100) is 3.7e-44; LibTorch's 1 / (1 + exp(100)) is 0. The bound
  // covers 0, so the log of it is indeterminate rather than a false divergence.
  Builder b;
  const Reg s = b.op(Op::Sigmoid, {b.leaf({1}, {-100.0f})});
  const Reg l = b.op(Op::Log, {s});
  const Outcome sig = run(b.done(s));
  EXPECT_EQ(sig.root.values[0], f32(1 / (1 + std::exp(100.0))));
  EXPECT_GE(sig.root.error_bound[0], sig.root.values[0]);
  EXPECT_EQ(run(b.done(l)).root.error_bound[0], kInfD);
}

TEST(ReferenceErrorBounds, CoverOtherF32Implementations) {
  // A float sum in sequential order, float matmul and glibc's expf/logf must land within the
  // bound of the reference's correctly rounded values.
  std::vector<float> xs(1200);
  std::uint32_t seed = 12345;
  for (float& x : xs) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / 16777216.0f * 20.0f - 9.0f;
  }
  Builder b;
  const Reg x = b.leaf({40, 30}, xs);
  const Reg e = b.op(Op::Exp, {x});
  const Reg s = b.op(Op::SumAll, {e});
  const Outcome out = run(b.done(s));
  float acc = 0;
  for (float v : xs)
    acc += std::exp(v); // float overload: an independent f32 implementation
  EXPECT_LE(std::fabs(double(acc) - out.root.values[0]), out.root.error_bound[0]);

  Builder bm;
  const std::vector<float> av(xs.begin(), xs.begin() + 48 * 8);
  const std::vector<float> bv(xs.begin() + 400, xs.begin() + 400 + 8 * 16);
  const Reg a = bm.leaf({48, 8}, av);
  const Reg c = bm.leaf({8, 16}, bv);
  const Outcome mm = run(bm.done(bm.op(Op::Matmul, {a, c})));
  for (int i = 0; i < 48; ++i)
    for (int j = 0; j < 16; ++j) {
      float dot = 0;
      for (int k = 0; k < 8; ++k)
        dot += av[i * 8 + k] * bv[k * 16 + j];
      const std::size_t o = static_cast<std::size_t>(i * 16 + j);
      EXPECT_LE(std::fabs(double(dot) - mm.root.values[o]), mm.root.error_bound[o])
          << i << "," << j;
    }
}

// d/dx (reciprocal(x) * x) = 1/x - x/x^2 = 0 exactly; in f32 it is y + (-x * (y * y)) by D's
// formula (-2^-23 at 0.75: y * y rounds down) and y + (-x / (x * x)) by oneDNN's (0 at 0.75).
// Both round a correct formula, so the reference's bound must span them although every input
// is exact (issue 29: the relative rule gives no absolute slack besides the bound).
TEST(ReferenceErrorBounds, ReciprocalGradientCoversAnyRoundingOrder) {
  const std::vector<float> xs = {0.75f, -1.25f, 0.3f, 3.5f, -0.6f, 7.5f, 0.1f};
  Builder b;
  const Reg x = b.leaf({7}, xs);
  const Outcome out = run(b.done(b.op(Op::Mul, {b.op(Op::Reciprocal, {x}), x})));
  ASSERT_EQ(out.grads.size(), 1u);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const float v = xs[i];
    const float y = 1.0f / v;
    const float by_division = y + (-v / (v * v)); // g = x for the reciprocal's input
    const float by_product = y + (-(v * y) * y);
    EXPECT_LE(std::fabs(double(by_division) - out.grads[0].values[i]), out.grads[0].error_bound[i])
        << v;
    EXPECT_LE(std::fabs(double(by_product) - out.grads[0].values[i]), out.grads[0].error_bound[i])
        << v;
    EXPECT_LE(out.grads[0].error_bound[i], 8 * 0x1p-24 / std::fabs(v)) << v; // a few ulps of 1/x
  }
}

// ---------------------------------------------------------------- cost

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
