// det, slogdet and inv in the reference (linalg_det.h): values against hand-computed
// determinants and inverses, gradients against central differences at regular matrices and
// against the hand-derived cofactor matrix adj(A)^T at singular ones, the documented (0, -inf) of
// slogdet, inv's error outcome, and the bounds (tight when well conditioned, indeterminate where a
// determinant may be 0 in f32). Expected values come from the mathematics, never from the code.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/oracle/oracle.h"
#include "libtorch_programs.h"

using namespace burnmark;
using burnmark::testing::ProgramBuilder;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Outcome run(const Program& p, bool gradients = true) {
  static const auto backend = make_reference_backend();
  return backend->run(p, RunOptions{gradients});
}

Program one_op(Op op, Shape s, std::vector<float> data) {
  ProgramBuilder b;
  return b.finish(b.op(op, {b.leaf(s, std::move(data))}));
}

// op(A) times a weight of its shape, so that every gradient element differs.
Program weighted(Op op, Shape s, std::vector<float> data) {
  ProgramBuilder b;
  const Reg r = b.op(op, {b.leaf(s, std::move(data))});
  const Shape rs = b.shape(r).rank() == 0 ? Shape{1} : b.shape(r);
  std::vector<float> w(static_cast<std::size_t>(rs.numel()));
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = 0.75f + 0.25f * static_cast<float>(i % 3);
  return b.finish(b.op(Op::Mul, {r, b.leaf(rs, w)}));
}

double sum_root(const Program& p) {
  double s = 0;
  for (double v : run(p, false).root.values)
    s += v;
  return s;
}

// Central differences of sum(root) in every element of leaf 0, with h a power of two so that the
// short-mantissa inputs stay exact.
void expect_fd(const Program& p, double h = 0x1p-8, double tol = 2e-3) {
  const Outcome out = run(p);
  ASSERT_EQ(out.status, Status::Ok) << out.message;
  for (std::size_t i = 0; i < p.leaves[0].data.size(); ++i) {
    Program up = p, down = p;
    up.leaves[0].data[i] = static_cast<float>(p.leaves[0].data[i] + h);
    down.leaves[0].data[i] = static_cast<float>(p.leaves[0].data[i] - h);
    const double fd = (sum_root(up) - sum_root(down)) / (2 * h);
    EXPECT_NEAR(out.grads[0].values[i], fd, tol * std::max(1.0, std::fabs(fd))) << "element " << i;
    EXPECT_TRUE(std::isfinite(out.grads[0].error_bound[i])) << "element " << i;
  }
}

// Multiples of 1/16, regular and not close to singular.
const std::vector<float> kA3 = {1.5f, -0.5f, 0.25f, 0.75f, 2.0f, -1.0f, -0.25f, 0.5f, 1.25f};
const std::vector<float> kA4 = {2.0f,  0.5f, -0.25f, 0.0f,  0.25f, 1.5f,   0.5f,  -0.5f,
                                -1.0f, 0.0f, 1.75f,  0.25f, 0.5f,  -0.75f, 0.25f, 1.25f};

TEST(ReferenceDet, ValuesAreTheLeibnizExpansion) {
  // 1.5 * 2 - (-0.5) * 0.25 = 3.125.
  EXPECT_EQ(run(one_op(Op::Det, {2, 2}, {1.5f, -0.5f, 0.25f, 2.0f}), false).root.values[0], 3.125);
  // Expansion along the first row: 1.5 (2*1.25 + 0.5) + 0.5 (0.75*1.25 - 0.25) + 0.25 (0.375 +
  // 0.5).
  EXPECT_DOUBLE_EQ(run(one_op(Op::Det, {3, 3}, kA3), false).root.values[0],
                   1.5 * 3.0 + 0.5 * 0.6875 + 0.25 * 0.875);
  // Upper triangular: the product of the diagonal; a batch keeps one value per matrix.
  const Outcome tri =
      run(one_op(Op::Det, {2, 2, 2}, {2.0f, 7.0f, 0.0f, -3.0f, 0.5f, 0, 0, 4.0f}), false);
  ASSERT_EQ(tri.root.shape, (Shape{2}));
  EXPECT_EQ(tri.root.values[0], -6.0);
  EXPECT_EQ(tri.root.values[1], 2.0);
  EXPECT_EQ(run(one_op(Op::Det, {1, 1}, {-0.75f}), false).root.values[0], -0.75);
}

TEST(ReferenceDet, GradientsMatchFiniteDifferencesAtRegularMatrices) {
  expect_fd(weighted(Op::Det, {2, 2}, {1.5f, -0.5f, 0.25f, 2.0f}));
  expect_fd(weighted(Op::Det, {3, 3}, kA3));
  expect_fd(weighted(Op::Det, {4, 4}, kA4));
  expect_fd(weighted(Op::Det, {1, 1}, {0.625f}));
  std::vector<float> batch = kA3;
  batch.insert(batch.end(), {1.0f, 0.5f, 0.0f, -0.5f, 1.0f, 0.25f, 0.0f, 0.25f, 2.0f});
  expect_fd(weighted(Op::Det, {2, 3, 3}, batch));
}

// d det / dA = adj(A)^T, the cofactors, a polynomial: defined at singular matrices too.
TEST(ReferenceDet, GradientAtSingularMatricesIsTheCofactorMatrix) {
  // [[1, 2], [2, 4]]: cofactors [[4, -2], [-2, 1]].
  Outcome out = run(one_op(Op::Det, {2, 2}, {1, 2, 2, 4}));
  EXPECT_EQ(out.root.values[0], 0.0);
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{4, -2, -2, 1}));
  // Bounded (an f32 implementation computes the cofactors of a matrix within rounding of A),
  // and well below the cofactors themselves, so a zero gradient there is a divergence.
  for (double e : out.grads[0].error_bound)
    EXPECT_LT(e, 1e-4);
  // [[0]]: d a / d a = 1 (pytorch#80761 reported LibTorch's 0).
  out = run(one_op(Op::Det, {1, 1}, {0.0f}));
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{1}));
  EXPECT_LT(out.grads[0].error_bound[0], 1e-6);
  // Rows (1, 2, 3), (1, 2, 3), (0, 1, 4): rank 2. Row 0's cofactors are the 2x2 minors of rows
  // 1 and 2 with alternating signs: 5, -4, 1; row 1's the same minors with the opposite signs;
  // row 2's minors hold the two equal rows, so 0.
  out = run(one_op(Op::Det, {3, 3}, {1, 2, 3, 1, 2, 3, 0, 1, 4}));
  EXPECT_EQ(out.root.values[0], 0.0);
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{5, -4, 1, -5, 4, -1, 0, 0, 0}));
  for (double e : out.grads[0].error_bound)
    EXPECT_LT(e, 1e-3);
  // Rank 1 in a 3x3 (every row equal): every 2x2 minor is singular, so the gradient is 0.
  out = run(one_op(Op::Det, {3, 3}, {0.5f, -1, 2, 0.5f, -1, 2, 0.5f, -1, 2}));
  EXPECT_EQ(out.grads[0].values, std::vector<double>(9, 0.0));
  // A zero row: det is exactly 0 and its gradient the cofactors of that row.
  out = run(one_op(Op::Det, {2, 2}, {0, 0, 3, -2}));
  EXPECT_EQ(out.root.values[0], 0.0);
  // The zero's sign is the other pivots' product's (LibTorch gives -0 here): uncertain, so an op
  // with a pole at 0 after it is indeterminate.
  EXPECT_GT(out.root.error_bound[0], 0.0);
  EXPECT_LT(out.root.error_bound[0], 1e-40);
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{-2, -3, 0, 0}));
}

TEST(ReferenceDet, BoundsTightWhenWellConditionedAndWideNearSingular) {
  Outcome out = run(one_op(Op::Det, {4, 4}, kA4));
  const double d = out.root.values[0];
  EXPECT_GT(out.root.error_bound[0], 0.0); // an f32 LU rounds even exact inputs
  EXPECT_LT(out.root.error_bound[0], 1e-5 * std::fabs(d));
  // [[3, 0.3f], [1, 0.1f]]: det = 3 * 0.1f - 0.3f = -7.45e-9, but an f32 LU's rounding of
  // 0.3f - (1/3) * 3 * 0.1f is of the order of 2^-24 * 0.3: the bound must reach past it.
  out = run(one_op(Op::Det, {2, 2}, {3.0f, 0.3f, 1.0f, 0.1f}));
  EXPECT_NEAR(out.root.values[0], 3.0 * 0.1f - 0.3f, 1e-15);
  EXPECT_GT(out.root.error_bound[0], 2e-8);
  EXPECT_LT(out.root.error_bound[0], 1e-6);
}

TEST(ReferenceDet, NonFiniteEntries) {
  // NaN reaches a pivot in any elimination order: NaN, exactly.
  Outcome out = run(one_op(Op::Det, {2, 2}, {1, std::nanf(""), 0, 1}));
  EXPECT_TRUE(std::isnan(out.root.values[0]));
  EXPECT_EQ(out.root.error_bound[0], 0.0);
  // An infinity: inf or NaN depending on the order of elimination.
  out = run(one_op(Op::Det, {2, 2}, {std::numeric_limits<float>::infinity(), 1, 1, 1}));
  EXPECT_EQ(out.root.error_bound[0], kInf);
  EXPECT_EQ(out.grads[0].error_bound[0], kInf);
}

TEST(ReferenceSlogdet, ValuesGradientsAndTheDocumentedMinusInfinity) {
  const Outcome out = run(one_op(Op::Slogdet, {2, 2}, {1.5f, -0.5f, 0.25f, 2.0f}));
  EXPECT_NEAR(out.root.values[0], std::log(3.125), 1e-7);
  // d log|det| / dA = A^-T = [[2, -0.25], [0.5, 1.5]] / 3.125.
  const std::vector<double> want = {0.64, -0.08, 0.16, 0.48};
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(out.grads[0].values[i], want[i], 1e-7);
  expect_fd(weighted(Op::Slogdet, {3, 3}, kA3));
  expect_fd(weighted(Op::Slogdet, {4, 4}, kA4));
  // A negative determinant: log of its magnitude.
  EXPECT_NEAR(run(one_op(Op::Slogdet, {2, 2}, {0, 1, 2, 0}), false).root.values[0], std::log(2.0),
              1e-7);
}

TEST(ReferenceSlogdet, SingularMatrices) {
  // Documented: "When a matrix has a determinant of zero, it returns (0, -inf)". A zero row is a
  // zero pivot in any LU, so -inf exactly; the gradient there is undefined (log|det| is -inf
  // and PyTorch documents none): indeterminate.
  Outcome out = run(one_op(Op::Slogdet, {2, 2}, {0, 0, 1, 2}));
  EXPECT_EQ(out.root.values[0], -kInf);
  EXPECT_EQ(out.root.error_bound[0], 0.0);
  for (double e : out.grads[0].error_bound)
    EXPECT_EQ(e, kInf);
  // Equal rows: det is 0, but an f32 LU's pivot may round to a tiny nonzero value, so -inf or a
  // large negative value: indeterminate.
  out = run(one_op(Op::Slogdet, {2, 2}, {3, 0.3f, 3, 0.3f}));
  EXPECT_EQ(out.root.error_bound[0], kInf);
}

// Found by the first fuzz run: 1 / 3e38 is subnormal, and slogdet of it is finite (a 1x1 matrix
// needs no elimination, so nothing can overflow on the way).
TEST(ReferenceInv, HugeOneByOne) {
  ProgramBuilder b;
  const Reg x = b.op(Op::Inv, {b.leaf({1, 1}, {3e38f})});
  const Outcome out = run(b.finish(b.op(Op::Slogdet, {x})), false);
  EXPECT_NEAR(out.root.values[0], -std::log(3e38), 1e-4);
  EXPECT_TRUE(std::isfinite(out.root.error_bound[0]));
}

TEST(ReferenceInv, ValuesAndGradients) {
  // [[2, 1], [1, 1]]^-1 = [[1, -1], [-1, 2]].
  const Outcome out = run(one_op(Op::Inv, {2, 2}, {2, 1, 1, 1}));
  ASSERT_EQ(out.status, Status::Ok);
  const std::vector<double> want = {1, -1, -1, 2};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(out.root.values[i], want[i], 1e-12);
    EXPECT_LT(out.root.error_bound[i], 1e-5);
  }
  // d sum(X) / dA = -X^T 1 X^T: X^T = X here, X 1 = column sums (0, 1), so -[[0], [1]] [0, 1].
  const std::vector<double> grad = {0, 0, 0, -1};
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_NEAR(out.grads[0].values[i], grad[i], 1e-6);
  expect_fd(weighted(Op::Inv, {3, 3}, kA3));
  expect_fd(weighted(Op::Inv, {4, 4}, kA4), 0x1p-10);
  expect_fd(weighted(Op::Inv, {1, 1}, {0.625f}), 0x1p-10);
}

// LibTorch raises "linalg.inv: The diagonal element k is zero" when its LU meets an exact zero
// pivot: certain for a zero row or column, a matter of rounding for other singular matrices.
TEST(ReferenceInv, SingularMatricesRaiseOrMayRaise) {
  Outcome out = run(one_op(Op::Inv, {2, 2, 2}, {1, 2, 3, 4, 0, 1, 0, 1})); // matrix 1: zero column
  EXPECT_EQ(out.status, Status::Error);
  out = run(one_op(Op::Inv, {3, 3}, {1, 2, 3, 1, 2, 3, 0, 1, 4}));
  EXPECT_EQ(out.status, Status::Ok);
  EXPECT_TRUE(out.error_possible);
  for (double e : out.root.error_bound)
    EXPECT_EQ(e, kInf);
  out = run(one_op(Op::Inv, {2, 2}, {2, 1, 1, 1}));
  EXPECT_FALSE(out.error_possible);
}

// The oracle: a backend's error where the reference says a correct implementation may raise is
// indeterminate; where the reference is sure there is no error, or sure there is one, a
// disagreement stays a divergence.
TEST(ReferenceInv, OracleJudgesErrorOutcomes) {
  Outcome ref;
  ref.backend = "ref";
  ref.root = HostTensor{Shape{1}, {0.0}, {kInf}};
  Outcome raised;
  raised.backend = "libtorch";
  raised.status = Status::Error;
  raised.message = "linalg.inv: The diagonal element 2 is zero";
  ref.error_possible = true;
  Verdict v = compare({ref, raised}, OracleOptions{});
  EXPECT_TRUE(v.divergences.empty());
  EXPECT_EQ(v.indeterminate, 1u);
  ref.error_possible = false;
  v = compare({ref, raised}, OracleOptions{});
  ASSERT_EQ(v.divergences.size(), 1u);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Error);
  Outcome ref_raised = raised;
  ref_raised.backend = "ref";
  Outcome values = ref;
  values.backend = "libtorch";
  v = compare({ref_raised, values}, OracleOptions{});
  ASSERT_EQ(v.divergences.size(), 1u);
}

} // namespace
