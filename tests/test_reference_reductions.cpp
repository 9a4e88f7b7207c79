// The row formulas of the reductions, scans and normalisers (approx_reduce.h, approx_norm.h,
// approx_scan.h, approx_normalize.h): gradients against central differences, the values at ties,
// zeros, infinities and overflow (each expected value from the mathematics, IEEE 754,
// derivatives.yaml's documented choices or plain arithmetic — never from the implementation),
// and the bounds: tight for exact well-conditioned rows, wide or infinite where a float
// implementation may honestly differ.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "approx_normalize.h"
#include "approx_scan.h"

namespace burnmark::ref {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

std::vector<Approx> row(std::initializer_list<double> values) {
  std::vector<Approx> r;
  for (double v : values)
    r.push_back({v, 0.0});
  return r;
}
std::vector<double> values_of(const std::vector<Approx>& r) {
  std::vector<double> v;
  for (const Approx& a : r)
    v.push_back(a.v);
  return v;
}

using Reduce = std::function<Approx(Row)>;
using ReduceGrad = std::function<void(Row, Approx, Approx, RowOut)>;
using Map = std::function<void(Row, RowOut)>;
using MapGrad = std::function<void(Row, Row, Row, RowOut)>;

// d f / d x_j by central differences against the backward with g = 1.
void expect_reduce_gradient(const Reduce& f, const ReduceGrad& df, std::vector<double> at) {
  std::vector<Approx> x;
  for (double v : at)
    x.push_back({v, 0.0});
  std::vector<Approx> dx(x.size());
  df(Row(x), f(Row(x)), Approx{1.0, 0.0}, RowOut(dx));
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double h = 1e-2 * std::max(std::fabs(at[j]), 0.1); // forward values are f32
    std::vector<Approx> up = x, down = x;
    up[j].v += h;
    down[j].v -= h;
    const double fd = (f(Row(up)).v - f(Row(down)).v) / (2 * h);
    EXPECT_NEAR(dx[j].v, fd, 2e-3 * std::max(1.0, std::fabs(fd))) << "element " << j;
    EXPECT_TRUE(std::isfinite(dx[j].e)) << "element " << j;
  }
}

// The gradient of sum_k w_k f(x)_k for a row-to-row f, with weights w as the upstream gradient.
void expect_map_gradient(const Map& f, const MapGrad& df, std::vector<double> at) {
  std::vector<Approx> x, w;
  for (std::size_t i = 0; i < at.size(); ++i) {
    x.push_back({at[i], 0.0});
    w.push_back({1.0 + 0.25 * static_cast<double>(i), 0.0});
  }
  const auto weighted = [&](const std::vector<Approx>& in) {
    std::vector<Approx> y(in.size());
    f(Row(in), RowOut(y));
    double s = 0;
    for (std::size_t k = 0; k < y.size(); ++k)
      s += w[k].v * y[k].v;
    return s;
  };
  std::vector<Approx> y(x.size()), dx(x.size());
  f(Row(x), RowOut(y));
  df(Row(x), Row(y), Row(w), RowOut(dx));
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double h = 1e-2 * std::max(std::fabs(at[j]), 0.1); // forward values are f32
    std::vector<Approx> up = x, down = x;
    up[j].v += h;
    down[j].v -= h;
    const double fd = (weighted(up) - weighted(down)) / (2 * h);
    EXPECT_NEAR(dx[j].v, fd, 2e-3 * std::max(1.0, std::fabs(fd))) << "element " << j;
    EXPECT_TRUE(std::isfinite(dx[j].e)) << "element " << j;
  }
}

const std::vector<double> kRow = {0.75, -1.375, 2.25, -0.375, 0.875};

TEST(ReferenceReductions, GradientsMatchCentralDifferences) {
  expect_reduce_gradient(prod_forward, prod_backward, kRow);
  for (int c : {0, 1}) {
    expect_reduce_gradient([c](Row x) { return var_forward(x, c); },
                           [c](Row x, Approx, Approx g, RowOut d) { var_backward(x, g, c, d); },
                           kRow);
    expect_reduce_gradient(
        [c](Row x) { return std_forward(x, c); },
        [c](Row x, Approx y, Approx g, RowOut d) { std_backward(x, y, g, c, d); }, kRow);
  }
  expect_reduce_gradient(logsumexp_forward, logsumexp_backward, kRow);
  for (double p : {1.0, 2.0, 3.0, 0.5}) {
    SCOPED_TRACE(p);
    expect_reduce_gradient(
        [p](Row x) { return vector_norm_forward(x, p); },
        [p](Row x, Approx y, Approx g, RowOut d) { vector_norm_backward(x, y, g, p, d); }, kRow);
  }
}

TEST(ReferenceReductions, ScanAndNormaliserGradientsMatchCentralDifferences) {
  std::vector<Approx> t1, t2;
  expect_map_gradient(
      cumsum_forward, [&](Row, Row, Row g, RowOut d) { cumsum_backward(g, d, t1, t2); }, kRow);
  expect_map_gradient(
      cumprod_forward, [&](Row x, Row, Row g, RowOut d) { cumprod_backward(x, g, d, t1); }, kRow);
  expect_map_gradient(
      logcumsumexp_forward,
      [&](Row x, Row y, Row g, RowOut d) { logcumsumexp_backward(x, y, g, d, t1); }, kRow);
  expect_map_gradient(
      softmax_forward, [&](Row, Row y, Row g, RowOut d) { softmax_backward(y, g, d, t1); }, kRow);
  expect_map_gradient(
      log_softmax_forward, [](Row, Row y, Row g, RowOut d) { log_softmax_backward(y, g, d); },
      kRow);
  for (double p : {2.0, 1.0, 3.0}) {
    SCOPED_TRACE(p);
    expect_map_gradient(
        [p](Row x, RowOut y) { normalize_forward(x, p, y); },
        [&, p](Row x, Row, Row g, RowOut d) { normalize_backward(x, g, p, d, t1, t2); }, kRow);
  }
}

TEST(ReferenceReductions, CosineSimilarityGradientMatchesCentralDifferences) {
  const std::vector<Approx> a = row({0.75, -1.375, 2.25}), b = row({1.5, 0.5, -0.25});
  std::vector<Approx> terms, ga, t2, via, da(3);
  cosine_side_backward(Row(a), Row(b), Approx{1.0, 0.0}, RowOut(da), ga, t2, via);
  for (std::size_t j = 0; j < 3; ++j) {
    std::vector<Approx> up = a, down = a;
    up[j].v += 1e-2;
    down[j].v -= 1e-2;
    const double fd =
        (cosine_forward(Row(up), Row(b), terms).v - cosine_forward(Row(down), Row(b), terms).v) /
        2e-2;
    EXPECT_NEAR(da[j].v, fd, 1e-3);
  }
  // Parallel vectors: exactly 1 up to rounding.
  EXPECT_NEAR(cosine_forward(Row(a), Row(a), terms).v, 1.0, 1e-6);
}

// d prod / d x_j is the product of the others, also where the whole product leaves the f32
// range (LibTorch's grad * result / x_j does not; bugs.md).
TEST(ReferenceReductions, ProdGradientIsTheProductOfTheOthers) {
  std::vector<Approx> dx(2);
  const auto tiny = row({1e-30, 1e-20});
  const Approx p = prod_forward(Row(tiny));
  EXPECT_EQ(p.v, 0.0); // 1e-50 rounds to 0 in f32
  prod_backward(Row(tiny), p, Approx{1.0, 0.0}, RowOut(dx));
  EXPECT_NEAR(dx[0].v, 1e-20, 1e-26);
  EXPECT_NEAR(dx[1].v, 1e-30, 1e-36);
  EXPECT_LT(dx[0].e, 1e-25);

  std::vector<Approx> d3(3);
  const auto zero = row({2, 0, 3});
  prod_backward(Row(zero), prod_forward(Row(zero)), Approx{1.0, 0.0}, RowOut(d3));
  EXPECT_EQ(values_of(std::vector<Approx>(d3.begin(), d3.end())), (std::vector<double>{0, 6, 0}));

  const auto inf = row({kInf, 2});
  prod_backward(Row(inf), prod_forward(Row(inf)), Approx{1.0, 0.0}, RowOut(dx));
  EXPECT_EQ(dx[0].v, 2.0); // d (x * 2) / dx, as mul's backward gives
  EXPECT_EQ(dx[1].v, kInf);

  // 1e30 * 1e20 overflows before * 1e-30 in one order and not in another.
  EXPECT_TRUE(indeterminate(prod_forward(Row(row({1e30, 1e20, 1e-30})))));
  // Zero with an infinity is NaN in every order.
  EXPECT_TRUE(std::isnan(prod_forward(Row(row({0, kInf, 3}))).v));
}

TEST(ReferenceReductions, ExtremaSplitTiesAsDocumented) {
  std::vector<Approx> d(3), d4(4);
  const auto ties = row({1, 3, 3});
  const Approx g{1.0, 0.0};
  max_all_backward(Row(ties), g, true, RowOut(d));
  EXPECT_EQ(values_of({d.begin(), d.end()}), (std::vector<double>{0, 0.5, 0.5}));
  amax_backward(Row(ties), g, true, RowOut(d));
  EXPECT_EQ(values_of({d.begin(), d.end()}), (std::vector<double>{0, 0.5, 0.5}));
  // torch.max(dim) documents the index of the first maximal value.
  max_dim_backward(Row(ties), g, true, RowOut(d));
  EXPECT_EQ(values_of({d.begin(), d.end()}), (std::vector<double>{0, 1, 0}));
  // A NaN row: max is NaN; max's backward spreads over the NaNs, amax's formula is NaN.
  const auto nans = row({1, kNan, 3, kNan});
  EXPECT_TRUE(std::isnan(extreme_of(Row(nans), true).value.v));
  max_all_backward(Row(nans), g, true, RowOut(d4));
  EXPECT_EQ(values_of({d4.begin(), d4.end()}), (std::vector<double>{0, 0.5, 0, 0.5}));
  amax_backward(Row(nans), g, true, RowOut(d4));
  for (const Approx& a : d4)
    EXPECT_TRUE(std::isnan(a.v));
  max_dim_backward(Row(nans), g, true, RowOut(d4));
  EXPECT_EQ(values_of({d4.begin(), d4.end()}), (std::vector<double>{0, 1, 0, 0}));
  // A near tie whose bounds overlap: which element wins is not known.
  const std::vector<Approx> near = {{3.0, 1e-6}, {3.0000005, 0.0}};
  std::vector<Approx> d2(2);
  max_dim_backward(Row(near), g, true, RowOut(d2));
  EXPECT_TRUE(indeterminate(d2[0]) && indeterminate(d2[1]));
  // The value's bound is exact interval arithmetic: the max lies in [3.0000005, 3 + 1e-6].
  EXPECT_NEAR(extreme_of(Row(near), true).value.e, 5e-7, 1e-9);
}

TEST(ReferenceReductions, VarianceAndStdAtTheirEdges) {
  EXPECT_TRUE(std::isnan(var_forward(Row(row({2.0})), 1).v)); // 0 / 0
  EXPECT_EQ(var_forward(Row(row({2.0})), 0).v, 0.0);
  const auto flat = row({2, 2, 2});
  const Approx s = std_forward(Row(flat), 1);
  EXPECT_EQ(s.v, 0.0);
  std::vector<Approx> d(3);
  std_backward(Row(flat), s, Approx{1.0, 0.0}, 1, RowOut(d)); // masked to 0 at std == 0
  for (const Approx& a : d)
    EXPECT_EQ(a.v, 0.0);
  // std of [1e20, -1e20] is sqrt(2) 1e20, representable although its variance is not.
  const Approx big = std_forward(Row(row({1e20, -1e20})), 1);
  EXPECT_NEAR(big.v, std::sqrt(2.0) * 1e20, 1e14);
  EXPECT_TRUE(std::isfinite(big.v));
  EXPECT_TRUE(std::isinf(var_forward(Row(row({1e20, -1e20})), 1).v));
  // A huge common offset: a float algorithm cannot resolve the spread, and the bound says so.
  const Approx offset = var_forward(Row(row({1e8, 1e8 + 8, 1e8 - 8})), 0);
  EXPECT_NEAR(offset.v, 128.0 / 3, 1e-4);
  EXPECT_GT(offset.e, 1.0);
  EXPECT_TRUE(std::isnan(var_forward(Row(row({1, kInf})), 0).v));
}

// In f64 double has no headroom: rows near either end of its range must not overflow or
// underflow where the variance or the deviation is representable.
TEST(ReferenceReductions, F64VarianceAndStdNearTheEndsOfTheRange) {
  const StorageScope f64(FloatDType::F64);
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(var_forward(Row(row({max, max})), 0).v, 0.0); // the mean is max, not inf
  EXPECT_EQ(std_forward(Row(row({max, max, max})), 1).v, 0.0);
  EXPECT_EQ(var_forward(Row(row({max, max, max, max, max})), 1).v, 0.0);
  EXPECT_DOUBLE_EQ(std_forward(Row(row({1e200, -1e200})), 0).v, 1e200);
  EXPECT_TRUE(std::isinf(var_forward(Row(row({1e200, -1e200})), 0).v)); // 1e400
  EXPECT_DOUBLE_EQ(std_forward(Row(row({1e-200, -1e-200})), 0).v, 1e-200);
  EXPECT_DOUBLE_EQ(var_forward(Row(row({1e-160, -1e-160})), 0).v, 1e-320); // subnormal
  // The spread of a huge common offset: var([3e150, 1e150], correction 1) = 2e300.
  EXPECT_NEAR(var_forward(Row(row({3e150, 1e150})), 1).v, 2e300, 1e286);
}

TEST(ReferenceReductions, NormsDoNotOverflowWhereTheNormIsRepresentable) {
  const auto big = row({1e20, 1e20});
  const Approx r = vector_norm_forward(Row(big), 2);
  EXPECT_NEAR(r.v, std::sqrt(2.0) * 1e20, 1e14);
  std::vector<Approx> d(2);
  vector_norm_backward(Row(big), r, Approx{1.0, 0.0}, 2, RowOut(d));
  EXPECT_NEAR(d[0].v, std::sqrt(0.5), 1e-6);
  // ord 3 at [1e20, -3, 0]: x |x| / norm^2, which is 1 for the big element.
  const auto mixed = row({1e20, -3, 0});
  const Approx r3 = vector_norm_forward(Row(mixed), 3);
  std::vector<Approx> d3(3);
  vector_norm_backward(Row(mixed), r3, Approx{1.0, 0.0}, 3, RowOut(d3));
  EXPECT_NEAR(d3[0].v, 1.0, 1e-6);
  // ord 0 counts nonzeros; NaN is nonzero.
  EXPECT_EQ(vector_norm_forward(Row(row({0, 2, -0.0, kNan})), 0).v, 2.0);
  // ord inf spreads the gradient over the ties, with their signs.
  vector_norm_backward(Row(row({-2, 2, 1})), Approx{2.0, 0.0}, Approx{1.0, 0.0}, kInf, RowOut(d3));
  EXPECT_EQ(values_of({d3.begin(), d3.end()}), (std::vector<double>{-0.5, 0.5, 0}));
  // At a zero row the ord-2 gradient is derivatives.yaml's 0 (a subgradient).
  vector_norm_backward(Row(row({0, 0})), Approx{0.0, 0.0}, Approx{1.0, 0.0}, 2, RowOut(d));
  EXPECT_EQ(values_of({d.begin(), d.end()}), (std::vector<double>{0, 0}));
  // ord 0.5 at a zero element: derivatives.yaml's 0 is a numeric factor of the product with the
  // upstream gradient, so a finite gradient gives 0 there and an infinite one NaN (0 * inf),
  // while the nonzero element gets grad * (|x| / norm)^(p-1) = -inf * 1.
  const auto half_zero = row({0, 1});
  const Approx r05 = vector_norm_forward(Row(half_zero), 0.5);
  vector_norm_backward(Row(half_zero), r05, Approx{1.0, 0.0}, 0.5, RowOut(d));
  EXPECT_EQ(d[0].v, 0.0);
  vector_norm_backward(Row(half_zero), r05, Approx{-kInf, 0.0}, 0.5, RowOut(d));
  EXPECT_TRUE(std::isnan(d[0].v));
  EXPECT_EQ(d[1].v, -kInf);
  // Squares below the normal range: the norm of [1e-25, 1e-25] is sqrt(2) 1e-25, not 0.
  EXPECT_NEAR(vector_norm_forward(Row(row({1e-25, 1e-25})), 2).v, std::sqrt(2.0) * 1e-25, 1e-31);
}

TEST(ReferenceReductions, LogSumExpAndSoftmaxAtInfinities) {
  EXPECT_EQ(logsumexp_forward(Row(row({-kInf, -kInf}))).v, -kInf);
  EXPECT_EQ(logsumexp_forward(Row(row({kInf, 1}))).v, kInf);
  EXPECT_TRUE(std::isnan(logsumexp_forward(Row(row({kNan, 1}))).v));
  EXPECT_NEAR(logsumexp_forward(Row(row({0, 0}))).v, std::log(2.0), 1e-7);
  std::vector<Approx> y(2), d(2), t;
  // The gradient's weights exp(x_j - result) at x_j = result = ±inf: their limits. The row's only
  // +inf takes the whole weight; one element is the identity; two infinities of a sign split it
  // in any proportion, so no value (NaN).
  const Approx g{1.0, 0.0};
  logsumexp_backward(Row(row({kInf, 1})), Approx{kInf, 0.0}, g, RowOut(d));
  EXPECT_EQ(values_of(d), (std::vector<double>{1, 0}));
  logsumexp_backward(Row(row({kInf, kInf})), Approx{kInf, 0.0}, g, RowOut(d));
  EXPECT_TRUE(std::isnan(d[0].v) && std::isnan(d[1].v));
  logsumexp_backward(Row(row({-kInf, -kInf})), Approx{-kInf, 0.0}, g, RowOut(d));
  EXPECT_TRUE(std::isnan(d[0].v) && std::isnan(d[1].v));
  std::vector<Approx> one(1);
  logsumexp_backward(Row(row({-kInf})), Approx{-kInf, 0.0}, g, RowOut(one));
  EXPECT_EQ(one[0].v, 1.0);
  logsumexp_backward(Row(row({-kInf, 0})), Approx{0.0, 0.0}, g, RowOut(d));
  EXPECT_EQ(values_of(d), (std::vector<double>{0, 1}));
  softmax_forward(Row(row({-kInf, 1})), RowOut(y));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 1}));
  softmax_forward(Row(row({-kInf, -kInf})), RowOut(y)); // exp(-inf - -inf): NaN
  EXPECT_TRUE(std::isnan(y[0].v) && std::isnan(y[1].v));
  softmax_forward(Row(row({kInf, 1})), RowOut(y));
  EXPECT_TRUE(std::isnan(y[0].v) && std::isnan(y[1].v));
  log_softmax_forward(Row(row({-kInf, 0})), RowOut(y));
  EXPECT_EQ(values_of(y), (std::vector<double>{-kInf, 0}));
  const auto ones = row({1, 1});
  log_softmax_backward(Row(y), Row(ones), RowOut(d)); // g - exp(y) sum(g)
  EXPECT_EQ(values_of(d), (std::vector<double>{1, -1}));
}

TEST(ReferenceReductions, ScansThroughZerosAndInfinities) {
  std::vector<Approx> y(5), d(5), t;
  const auto zeros = row({2, 0, 3, 0, 5});
  cumprod_forward(Row(zeros), RowOut(y));
  EXPECT_EQ(values_of(y), (std::vector<double>{2, 0, 0, 0, 0}));
  // dx_j = sum over k >= j of the product of x_0..x_k without x_j.
  cumprod_backward(Row(zeros), Row(row({1, 1, 1, 1, 1})), RowOut(d), t);
  EXPECT_EQ(values_of(d), (std::vector<double>{1, 8, 0, 0, 0}));
  std::vector<Approx> y4(4);
  logcumsumexp_forward(Row(row({-kInf, 1, kInf, 2})), RowOut(y4));
  EXPECT_EQ(values_of(y4), (std::vector<double>{-kInf, 1, kInf, kInf}));
  std::vector<Approx> y3(3);
  logcumsumexp_forward(Row(row({1, kNan, 2})), RowOut(y3));
  EXPECT_EQ(y3[0].v, 1);
  EXPECT_TRUE(std::isnan(y3[1].v) && std::isnan(y3[2].v));
  // cumsum's bound grows with the prefix; the first prefix is exact.
  cumsum_forward(Row(row({0.1, 0.2, 0.3, 0.4, 0.5})), RowOut(y));
  EXPECT_EQ(y[0].e, 0.0);
  EXPECT_GT(y[4].e, 0.0);
  EXPECT_LT(y[4].e, 1e-6);
}

TEST(ReferenceReductions, NormalizeOfAZeroRowDividesByEps) {
  std::vector<Approx> y(2), d(2), t1, t2;
  const auto zero = row({0, 0});
  normalize_forward(Row(zero), 2, RowOut(y));
  EXPECT_EQ(values_of(y), (std::vector<double>{0, 0}));
  normalize_backward(Row(zero), Row(row({1, 1})), 2, RowOut(d), t1, t2);
  // x / max(||x||, 1e-12) with the clamp active: the gradient is 1 / eps (eps as an f32).
  const double inv_eps = 1.0 / static_cast<double>(static_cast<float>(1e-12));
  EXPECT_NEAR(d[0].v, inv_eps, inv_eps * 1e-6);
}

} // namespace
} // namespace burnmark::ref

namespace burnmark::ref {
namespace {

// An indeterminate element leaves the extreme unknown: a zero upstream gradient still gives zeros
// (its shares are 0 wherever they go), any other is indeterminate; never a certain NaN from a
// count of zero extreme elements.
TEST(ReferenceReductions, ExtremaOfAnIndeterminateRow) {
  const std::vector<Approx> row = {{-1e30, 0.0}, {-1.2e-8, kInf}, {2.0, 0.0}};
  std::vector<Approx> dx(row.size());
  for (const auto& backward : std::vector<std::function<void(Approx)>>{
           [&](Approx g) { amax_backward(row, g, true, dx); },
           [&](Approx g) { max_all_backward(row, g, true, dx); },
           [&](Approx g) { max_dim_backward(row, g, false, dx); }}) {
    backward({0.0, 0.0});
    for (const Approx& d : dx)
      EXPECT_TRUE(d.v == 0 && d.e == 0);
    backward({1.0, 0.0});
    for (const Approx& d : dx)
      EXPECT_TRUE(indeterminate(d));
  }
}

} // namespace
} // namespace burnmark::ref
