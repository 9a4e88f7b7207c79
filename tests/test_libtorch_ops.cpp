// The LibTorch backend on small fixed programs, one family of ops per test (elementwise, pow,
// clamp, broadcast binary ops, reductions, transpose, concat, repeat, matmul), against values
// computed here in plain double arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "libtorch_programs.h"
#include "libtorch_test_run.h"

using namespace burnmark;
using namespace burnmark::testing;
using namespace burnmark::libtorch_test;

TEST(LibTorch, UnaryElementwiseForwardAndGradient) {
  struct Case {
    Op op;
    bool positive_only;
    std::function<double(double)> f, df;
  };
  const std::vector<Case> cases = {
      {Op::Neg, false, [](double x) { return -x; }, [](double) { return -1.0; }},
      {Op::Abs, false, [](double x) { return std::abs(x); },
       [](double x) { return x > 0 ? 1.0 : -1.0; }},
      {Op::Exp, false, [](double x) { return std::exp(x); }, [](double x) { return std::exp(x); }},
      {Op::Log, true, [](double x) { return std::log(x); }, [](double x) { return 1 / x; }},
      {Op::Sqrt, true, [](double x) { return std::sqrt(x); },
       [](double x) { return 0.5 / std::sqrt(x); }},
      {Op::Relu, false, [](double x) { return x > 0 ? x : 0.0; },
       [](double x) { return x > 0 ? 1.0 : 0.0; }},
      {Op::Sigmoid, false, [](double x) { return 1 / (1 + std::exp(-x)); },
       [](double x) {
         const double s = 1 / (1 + std::exp(-x));
         return s * (1 - s);
       }},
      {Op::Tanh, false, [](double x) { return std::tanh(x); },
       [](double x) { return 1 - std::tanh(x) * std::tanh(x); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(op_name(c.op)));
    const std::vector<float>& data = c.positive_only ? kPositive : kMixed;
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, data);
    const Program p = b.finish(b.op(c.op, {x}));
    const Outcome out = run_ok(p);
    std::vector<double> f, df;
    for (float v : data) {
      f.push_back(c.f(v));
      df.push_back(c.df(v));
    }
    expect_values(out.root, {2, 3}, f, "forward");
    ASSERT_EQ(out.grads.size(), 1u);
    expect_values(out.grads[0], {2, 3}, df, "gradient");
  }
}

TEST(LibTorch, PowEveryGeneratorExponent) {
  for (double c : kPowExponents) {
    SCOPED_TRACE("exponent " + std::to_string(c));
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, kPositive);
    const Outcome out = run_ok(b.finish(b.op(Op::Pow, {x}, exponent(c))));
    std::vector<double> f, df;
    for (float v : kPositive) {
      f.push_back(std::pow(double{v}, c));
      df.push_back(c == 0 ? 0.0 : c * std::pow(double{v}, c - 1));
    }
    expect_values(out.root, {2, 3}, f, "forward");
    expect_values(out.grads[0], {2, 3}, df, "gradient");
  }
}

TEST(LibTorch, ClampEveryGeneratorBoundPair) {
  // Includes values exactly at the bounds of the first pair, where LibTorch 1.13 passes the
  // gradient and 2.15 blocks it (docs/conventions.md, clamp-grad-min-norm).
  const std::vector<float> data = {-2.0f, -1.0f, -0.7f, -0.2f, 0.1f, 0.4f, 1.0f, 3.0f};
  for (const ClampBounds& cb : kClampBounds) {
    SCOPED_TRACE("clamp " + std::to_string(cb.lo) + " " + std::to_string(cb.hi));
    ProgramBuilder b;
    const Reg x = b.leaf({8}, data);
    const Outcome out = run_ok(b.finish(b.op(Op::Clamp, {x}, bounds(cb.lo, cb.hi))));
    std::vector<double> f, df;
    for (float v : data) {
      if (std::isnan(cb.lo) ||
          std::isnan(cb.hi)) { // min(max(x, lo), hi) with NaN-propagating max/min
        f.push_back(std::numeric_limits<double>::quiet_NaN());
        df.push_back(0.0);
      } else if (cb.lo > cb.hi) { // documented: max wins everywhere, no gradient
        f.push_back(cb.hi);
        df.push_back(0.0);
      } else if (libtorch_release() == "1.13") { // the subgradient 1 at the bounds
        f.push_back(std::min(std::max(double{v}, cb.lo), cb.hi));
        df.push_back(v >= cb.lo && v <= cb.hi ? 1.0 : 0.0);
      } else { // 2.15: the minimum-norm subgradient 0 at the bounds (clamp-grad-min-norm)
        f.push_back(std::min(std::max(double{v}, cb.lo), cb.hi));
        df.push_back(v > cb.lo && v < cb.hi ? 1.0 : 0.0);
      }
    }
    expect_values(out.root, {8}, f, "forward");
    expect_values(out.grads[0], {8}, df, "gradient");
  }
}

TEST(LibTorch, BinaryBroadcastSumsGradientOverBroadcastRows) {
  struct Case {
    Op op;
    std::function<double(double, double)> f, da, db;
  };
  const std::vector<Case> cases = {
      {Op::Add, std::plus<double>{}, [](double, double) { return 1.0; },
       [](double, double) { return 1.0; }},
      {Op::Sub, std::minus<double>{}, [](double, double) { return 1.0; },
       [](double, double) { return -1.0; }},
      {Op::Mul, std::multiplies<double>{}, [](double, double y) { return y; },
       [](double x, double) { return x; }},
      {Op::Div, std::divides<double>{}, [](double, double y) { return 1 / y; },
       [](double x, double y) { return -x / (y * y); }},
  };
  const std::vector<float> a = {1.5f, -2.0f, 0.25f, 3.0f, -0.75f, 2.5f};
  const std::vector<float> bv = {0.5f, -1.5f, 2.0f};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(op_name(c.op)));
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, a);
    const Reg y = b.leaf({3}, bv);
    const Outcome out = run_ok(b.finish(b.op(c.op, {x, y})));
    std::vector<double> f(6), ga(6), gb(3, 0.0);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        const double xv = a[static_cast<std::size_t>(i * 3 + j)],
                     yv = bv[static_cast<std::size_t>(j)];
        f[static_cast<std::size_t>(i * 3 + j)] = c.f(xv, yv);
        ga[static_cast<std::size_t>(i * 3 + j)] = c.da(xv, yv);
        gb[static_cast<std::size_t>(j)] += c.db(xv, yv);
      }
    expect_values(out.root, {2, 3}, f, "forward");
    ASSERT_EQ(out.grads.size(), 2u);
    expect_values(out.grads[0], {2, 3}, ga, "gradient of lhs");
    expect_values(out.grads[1], {3}, gb, "gradient of broadcast rhs");
  }
}

TEST(LibTorch, FullReductionsAreRankZeroAndBroadcast) {
  // y = x * sum(x): the rank-0 sum broadcasts back, so d/dx_j sum_i(x_i * S) = S + S = 2S.
  const std::vector<float> data = {0.5f, -1.0f, 2.5f};
  const double s = 2.0;
  ProgramBuilder b;
  const Reg x = b.leaf({3}, data);
  const Reg sum = b.op(Op::SumAll, {x});
  const Reg mean = b.op(Op::MeanAll, {x});
  const Reg y = b.op(Op::Mul, {x, sum});
  const Program p = b.finish(b.op(Op::Add, {y, mean}));
  const Outcome out = run_ok(p);
  EXPECT_EQ(p.shape_of(sum).rank(), 0);
  std::vector<double> f, g;
  for (float v : data) {
    f.push_back(v * s + s / 3);
    g.push_back(2 * s + 3 * (1.0 / 3)); // the mean is added to 3 outputs, each with weight 1/3
  }
  expect_values(out.root, {3}, f, "forward");
  expect_values(out.grads[0], {3}, g, "gradient");

  ProgramBuilder b2;
  const Reg x2 = b2.leaf({2, 3}, kMixed);
  const Outcome mean_out = run_ok(b2.finish(b2.op(Op::MeanAll, {x2})));
  double total = 0;
  for (float v : kMixed)
    total += v;
  expect_values(mean_out.root, Shape::scalar(), {total / 6}, "mean forward");
  expect_values(mean_out.grads[0], {2, 3}, std::vector<double>(6, 1.0 / 6), "mean gradient");
}

TEST(LibTorch, DimReductionsWithAndWithoutKeepdim) {
  // x[2,3,4] reduced over dim 1, then weighted by w so the gradient's layout is visible:
  // grad x[i,j,k] = w[i,k] (sum) or w[i,k] / 3 (mean); grad w = the reduction itself.
  std::vector<float> xd(24), wd(8);
  for (std::size_t i = 0; i < 24; ++i)
    xd[i] = 0.25f * static_cast<float>(i) - 2.5f;
  for (std::size_t i = 0; i < 8; ++i)
    wd[i] = 1.0f + 0.5f * static_cast<float>(i);
  for (Op op : {Op::SumDim, Op::MeanDim})
    for (bool keep : {false, true}) {
      SCOPED_TRACE(std::string(op_name(op)) + (keep ? " keepdim" : ""));
      const Shape rshape = keep ? Shape{2, 1, 4} : Shape{2, 4};
      ProgramBuilder b;
      const Reg x = b.leaf({2, 3, 4}, xd);
      const Reg w = b.leaf(rshape, wd);
      const Reg r = b.op(op, {x}, dim_keep(1, keep));
      const Outcome out = run_ok(b.finish(b.op(Op::Mul, {r, w})));
      const double scale = op == Op::MeanDim ? 1.0 / 3 : 1.0;
      std::vector<double> red(8, 0.0), gx(24);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 4; ++k) {
            red[static_cast<std::size_t>(i * 4 + k)] +=
                scale * xd[static_cast<std::size_t>(i * 12 + j * 4 + k)];
            gx[static_cast<std::size_t>(i * 12 + j * 4 + k)] =
                scale * wd[static_cast<std::size_t>(i * 4 + k)];
          }
      std::vector<double> f(8);
      for (std::size_t i = 0; i < 8; ++i)
        f[i] = red[i] * wd[i];
      expect_values(out.root, rshape, f, "forward");
      expect_values(out.grads[0], {2, 3, 4}, gx, "gradient of x");
      expect_values(out.grads[1], rshape, red, "gradient of w");
    }
}

TEST(LibTorch, TransposeMovesValuesAndGradientBack) {
  std::vector<float> xd(24), wd(24);
  for (std::size_t i = 0; i < 24; ++i) {
    xd[i] = static_cast<float>(i) - 7.0f;
    wd[i] = 0.5f + static_cast<float>(i % 5);
  }
  ProgramBuilder b;
  const Reg x = b.leaf({2, 3, 4}, xd);
  const Reg w = b.leaf({4, 3, 2}, wd);
  const Reg t = b.op(Op::Transpose, {x}, two_dims(0, 2));
  const Outcome out = run_ok(b.finish(b.op(Op::Mul, {t, w})));
  std::vector<double> f(24), gx(24), gw(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const auto xi = static_cast<std::size_t>(i * 12 + j * 4 + k);
        const auto ti = static_cast<std::size_t>(k * 6 + j * 2 + i);
        f[ti] = xd[xi] * wd[ti];
        gx[xi] = wd[ti];
        gw[ti] = xd[xi];
      }
  expect_values(out.root, {4, 3, 2}, f, "forward");
  expect_values(out.grads[0], {2, 3, 4}, gx, "gradient of x");
  expect_values(out.grads[1], {4, 3, 2}, gw, "gradient of w");
}

TEST(LibTorch, ConcatSplitsTheGradient) {
  const std::vector<float> ad = {1, 2, 3, 4, 5, 6}, bd = {-1, -2, -3, -4};
  const std::vector<float> wd = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, -0.5f, -1.5f, -2.5f, -3.5f, -4.5f};
  ProgramBuilder b;
  const Reg a = b.leaf({2, 3}, ad);
  const Reg c = b.leaf({2, 2}, bd);
  const Reg w = b.leaf({2, 5}, wd);
  const Reg cat = b.op(Op::Concat, {a, c}, on_dim(1));
  const Outcome out = run_ok(b.finish(b.op(Op::Mul, {cat, w})));
  std::vector<double> f(10), ga(6), gb(4);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) {
      const auto o = static_cast<std::size_t>(i * 5 + j);
      const double v = j < 3 ? ad[static_cast<std::size_t>(i * 3 + j)]
                             : bd[static_cast<std::size_t>(i * 2 + j - 3)];
      f[o] = v * wd[o];
      (j < 3 ? ga[static_cast<std::size_t>(i * 3 + j)]
             : gb[static_cast<std::size_t>(i * 2 + j - 3)]) = wd[o];
    }
  expect_values(out.root, {2, 5}, f, "forward");
  expect_values(out.grads[0], {2, 3}, ga, "gradient of first");
  expect_values(out.grads[1], {2, 2}, gb, "gradient of second");
  expect_values(
      out.grads[2], {2, 5},
      [&] {
        std::vector<double> v;
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 5; ++j)
            v.push_back(j < 3 ? ad[static_cast<std::size_t>(i * 3 + j)]
                              : bd[static_cast<std::size_t>(i * 2 + j - 3)]);
        return v;
      }(),
      "gradient of weight");
}

TEST(LibTorch, RepeatTilesAndSumsTheGradient) {
  // Tiled, not interleaved: repeat([a,b], 3) along a dim is [a,b,a,b,a,b].
  const std::vector<float> xd = {1, 2, 3, 4, 5, 6};
  for (int dim : {0, 1}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const int times = 3;
    const int rows = dim == 0 ? 2 * times : 2, cols = dim == 1 ? 3 * times : 3;
    std::vector<float> wd(static_cast<std::size_t>(rows * cols));
    for (std::size_t i = 0; i < wd.size(); ++i)
      wd[i] = 0.25f * static_cast<float>(i) + 1.0f;
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, xd);
    const Reg w = b.leaf({rows, cols}, wd);
    const Reg r = b.op(Op::Repeat, {x}, dim_times(dim, times));
    const Outcome out = run_ok(b.finish(b.op(Op::Mul, {r, w})));
    std::vector<double> f(wd.size()), gx(6, 0.0);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        const auto o = static_cast<std::size_t>(i * cols + j);
        const auto src = static_cast<std::size_t>((i % 2) * 3 + j % 3);
        f[o] = xd[src] * wd[o];
        gx[src] += wd[o];
      }
    expect_values(out.root, {rows, cols}, f, "forward");
    expect_values(out.grads[0], {2, 3}, gx, "gradient");
  }
}

TEST(LibTorch, MatmulPlainAndBatchBroadcast) {
  // out[n] = A[n or 0] @ B[n or 0], weighted by W; grad A = W B^T, grad B = A^T W, each summed
  // over the batch entries that broadcast it.
  struct Case {
    Shape a, b, out;
    int na, nb, n;
  };
  const int m = 2, k = 3, q = 4;
  for (const Case& c :
       {Case{{2, 3}, {3, 4}, {2, 4}, 1, 1, 1}, Case{{2, 2, 3}, {3, 4}, {2, 2, 4}, 2, 1, 2},
        Case{{1, 2, 3}, {2, 3, 4}, {2, 2, 4}, 1, 2, 2}}) {
    SCOPED_TRACE(c.a.to_string() + " @ " + c.b.to_string());
    std::vector<float> ad(static_cast<std::size_t>(c.a.numel())),
        bd(static_cast<std::size_t>(c.b.numel())), wd(static_cast<std::size_t>(c.out.numel()));
    for (std::size_t i = 0; i < ad.size(); ++i)
      ad[i] = 0.5f * static_cast<float>(i) - 1.0f;
    for (std::size_t i = 0; i < bd.size(); ++i)
      bd[i] = 1.0f - 0.25f * static_cast<float>(i);
    for (std::size_t i = 0; i < wd.size(); ++i)
      wd[i] = static_cast<float>(i % 3) + 0.5f;
    ProgramBuilder b;
    const Reg ra = b.leaf(c.a, ad);
    const Reg rb = b.leaf(c.b, bd);
    const Reg rw = b.leaf(c.out, wd);
    const Outcome out = run_ok(b.finish(b.op(Op::Mul, {b.op(Op::Matmul, {ra, rb}), rw})));
    std::vector<double> f(wd.size()), ga(ad.size(), 0.0), gb(bd.size(), 0.0);
    for (int n = 0; n < c.n; ++n) {
      const int an = c.na == 1 ? 0 : n, bn = c.nb == 1 ? 0 : n;
      const auto A = [&](int i, int j) { return static_cast<std::size_t>(an * m * k + i * k + j); };
      const auto B = [&](int i, int j) { return static_cast<std::size_t>(bn * k * q + i * q + j); };
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < q; ++j) {
          const auto o = static_cast<std::size_t>(n * m * q + i * q + j);
          double acc = 0;
          for (int t = 0; t < k; ++t) {
            acc += double{ad[A(i, t)]} * bd[B(t, j)];
            ga[A(i, t)] += double{wd[o]} * bd[B(t, j)];
            gb[B(t, j)] += double{ad[A(i, t)]} * wd[o];
          }
          f[o] = acc * wd[o];
        }
    }
    expect_values(out.root, c.out, f, "forward");
    expect_values(out.grads[0], c.a, ga, "gradient of lhs");
    expect_values(out.grads[1], c.b, gb, "gradient of rhs");
  }
}
