// The reference backend's test programs, shared by tests/test_reference_*.cpp (the test_reference
// executable): a builder whose shapes come from the IR's own rules, a run on one reference backend
// per process, and the checks those files make — exact f32 values, gradients against central
// finite differences of the backend's own forward.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"

namespace burnmark::reference_test {

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr double kInfD = std::numeric_limits<double>::infinity();
inline constexpr double kU32 = 0x1p-24; // f32 unit roundoff

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

inline Outcome run(const Program& p, bool gradients = true) {
  static const auto backend = make_reference_backend();
  Outcome out = backend->run(p, RunOptions{gradients});
  EXPECT_EQ(out.status, Status::Ok) << out.message;
  return out;
}

inline Attrs exponent(double c) {
  Attrs a;
  a.exponent = c;
  return a;
}
inline Attrs bounds(double lo, double hi) {
  Attrs a;
  a.lo = lo;
  a.hi = hi;
  return a;
}
inline Attrs dim_keep(int dim, bool keep) {
  Attrs a;
  a.dim = dim;
  a.keepdim = keep;
  return a;
}
inline Attrs dims(int d0, int d1) {
  Attrs a;
  a.dim = d0;
  a.dim1 = d1;
  return a;
}
inline Attrs dim_times(int dim, int times) {
  Attrs a;
  a.dim = dim;
  a.times = times;
  return a;
}

inline double f32(double x) {
  return static_cast<double>(static_cast<float>(x));
}

// Values of one unary op applied to `xs` (shape [n]).
inline std::vector<double> unary_values(Op op, const std::vector<float>& xs, Attrs a = {}) {
  Builder b;
  const Reg x = b.leaf({static_cast<std::int64_t>(xs.size())}, xs);
  return run(b.done(b.op(op, {x}, a)), false).root.values;
}
// Gradients of one unary op (seeded with ones) at `xs`.
inline std::vector<double> unary_grads(Op op, const std::vector<float>& xs, Attrs a = {}) {
  Builder b;
  const Reg x = b.leaf({static_cast<std::int64_t>(xs.size())}, xs);
  return run(b.done(b.op(op, {x}, a))).grads[0].values;
}

inline bool same_double(double want, double got) {
  if (std::isnan(want)) return std::isnan(got);
  return want == got && std::signbit(want) == std::signbit(got);
}
#define EXPECT_SAME(want, got)                                                                     \
  EXPECT_TRUE(same_double((want), (got))) << "want " << (want) << " got " << (got)

inline double sum_root(const Program& p) {
  const Outcome out = run(p, false);
  double s = 0;
  for (double v : out.root.values)
    s += v;
  return s;
}

// Central differences of sum(root) in each leaf element, against the backend's gradients. h is
// a power of two so that x ± h stays exact for the test's short-mantissa inputs.
inline void expect_gradients_match_fd(const Program& p, double h = 0x1p-7, double tol = 5e-3) {
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
inline Program weighted(Op op, const std::vector<std::pair<Shape, std::vector<float>>>& operands,
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
inline std::vector<float> values(std::int64_t n, float lo, float step) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = lo + step * static_cast<float>(i);
  return v;
}

} // namespace burnmark::reference_test
