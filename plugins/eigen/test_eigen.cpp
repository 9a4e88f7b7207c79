// The Eigen plugin against the reference: one small program per op (forward and every leaf
// gradient) at sizes that put elements in Eigen's packet body and in its scalar tail, with the
// oracle's compare() deciding agreement under the reference's error bounds. Special values are
// checked where the two agree by convention; where they do not, the agreeing elements are
// asserted and the difference itself is pinned, so a change on either side shows up.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"

using namespace burnmark;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Packet sizes are 4 (SSE) or 8 (AVX) floats and the Tensor executor unrolls by four packets:
// these counts leave 0 to 7 elements for the scalar tail, and 1 runs the tail alone.
constexpr std::int64_t kSizes[] = {1, 7, 8, 9, 17, 33};

// Builds a Program statement by statement, inferring each shape with BurnMark's own rules.
class Builder {
public:
  Reg leaf(Shape shape, std::vector<float> data) {
    Stmt s;
    s.kind = StmtKind::Leaf;
    s.leaf = static_cast<int>(p_.leaves.size());
    s.shape = shape;
    p_.leaves.push_back(Leaf{shape, std::move(data)});
    return push(std::move(s));
  }
  Reg op(Op op, std::vector<Reg> operands, Attrs attrs = {}) {
    std::vector<Shape> shapes;
    for (Reg r : operands)
      shapes.push_back(p_.shape_of(r));
    const ShapeResult shape = infer_shape(op, attrs, shapes);
    if (!shape.ok()) throw std::runtime_error(std::string(op_name(op)) + ": " + shape.error());
    Stmt s;
    s.instr = Instr{op, std::move(operands), attrs};
    s.shape = shape.shape();
    return push(std::move(s));
  }
  const Shape& shape_of(Reg r) const { return p_.shape_of(r); }
  Program finish(Reg root) {
    p_.root = root;
    const std::string why = validate(p_);
    if (!why.empty()) throw std::runtime_error(why);
    return p_;
  }

private:
  Reg push(Stmt s) {
    p_.stmts.push_back(std::move(s));
    return static_cast<Reg>(p_.stmts.size() - 1);
  }
  Program p_;
};

// Deterministic values in [lo, hi]; with `signed_`, each value's sign is flipped at random.
std::vector<float> values(std::int64_t n, double lo, double hi, unsigned seed,
                          bool signed_ = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) {
    x = static_cast<float>(u(rng));
    if (signed_ && (rng() & 1)) x = -x;
  }
  return v;
}

// Multiplies `y` by a fresh leaf of weights, so that every gradient reaching y is varied rather
// than all ones, then makes that the root.
Program weighted(Builder& b, Reg y, unsigned seed) {
  const Shape& s = b.shape_of(y);
  if (s.rank() == 0) return b.finish(b.op(Op::Mul, {y, b.leaf(Shape{1}, {0.75f})}));
  return b.finish(b.op(Op::Mul, {y, b.leaf(s, values(s.numel(), 0.5, 1.5, seed, true))}));
}

Attrs pow_attrs(double c) {
  Attrs a;
  a.exponent = c;
  return a;
}
Attrs clamp_attrs(double lo, double hi) {
  Attrs a;
  a.lo = lo;
  a.hi = hi;
  return a;
}
Attrs dim_attrs(int dim, bool keepdim = false) {
  Attrs a;
  a.dim = dim;
  a.keepdim = keepdim;
  return a;
}
Attrs transpose_attrs(int d0, int d1) {
  Attrs a;
  a.dim = d0;
  a.dim1 = d1;
  return a;
}
Attrs repeat_attrs(int dim, int times) {
  Attrs a;
  a.dim = dim;
  a.times = times;
  return a;
}

class EigenVsReference : public ::testing::Test {
protected:
  void SetUp() override {
    PluginLoadResult r = load_plugin_backend("eigen");
    ASSERT_TRUE(r.ok()) << r.error();
    eigen_ = r.take();
    ASSERT_EQ(eigen_->name(), "eigen");
  }

  std::vector<Outcome> run(const Program& p) {
    std::vector<Outcome> o;
    o.push_back(ref_->run(p, RunOptions{}));
    o.push_back(eigen_->run(p, RunOptions{}));
    return o;
  }

  // Both backends ran, produced a gradient per leaf, and agree everywhere within the bounds.
  void expect_agree(const Program& p) {
    const std::vector<Outcome> o = run(p);
    ASSERT_EQ(o[0].status, Status::Ok) << o[0].message << "\n" << to_text(p);
    ASSERT_EQ(o[1].status, Status::Ok) << o[1].message << "\n" << to_text(p);
    ASSERT_EQ(o[1].grads.size(), p.leaves.size()) << to_text(p);
    const Verdict v = compare(o, OracleOptions{});
    EXPECT_EQ(v.compared, 1u);
    EXPECT_TRUE(v.agree()) << format_verdict(v) << "\n" << to_text(p);
    ++programs_;
  }

  // Eigen's value of the root at `i` and d root / d leaf 0 at `i`.
  std::pair<double, double> eigen_at(const Program& p, std::size_t i) {
    const Outcome o = eigen_->run(p, RunOptions{});
    EXPECT_EQ(o.status, Status::Ok) << o.message;
    if (o.status != Status::Ok) return {0, 0};
    return {o.root.values.at(i), o.grads.at(0).values.at(i)};
  }

  std::unique_ptr<Backend> ref_ = make_reference_backend();
  std::unique_ptr<Backend> eigen_;
  int programs_ = 0;
};

// op(x) * w over [n], x drawn from [lo, hi] (random signs when signed_).
Program unary_program(Op op, Attrs attrs, std::int64_t n, double lo, double hi, bool signed_,
                      unsigned seed) {
  Builder b;
  const Reg x = b.leaf(Shape{n}, values(n, lo, hi, seed, signed_));
  return weighted(b, b.op(op, {x}, attrs), seed + 1);
}

// A one-leaf program over explicit values: op(x), seeded with ones.
Program special_program(Op op, Attrs attrs, std::vector<float> x) {
  Builder b;
  const auto n = static_cast<std::int64_t>(x.size());
  const Reg r = b.leaf(Shape{n}, std::move(x));
  return b.finish(b.op(op, {r}, attrs));
}

} // namespace

TEST_F(EigenVsReference, LoadsWithEveryOpAndGradients) {
  const Outcome o = eigen_->run(special_program(Op::Exp, {}, {0.0f}), RunOptions{});
  ASSERT_EQ(o.status, Status::Ok) << o.message;
  EXPECT_EQ(o.root.values, std::vector<double>{1.0});
  ASSERT_EQ(o.grads.size(), 1u);
  EXPECT_EQ(o.grads[0].values, std::vector<double>{1.0});
}

TEST_F(EigenVsReference, UnaryOps) {
  struct Case {
    Op op;
    double lo, hi;
    bool signed_;
  };
  const Case cases[] = {
      {Op::Neg, 0.1, 3, true},   {Op::Abs, 0.1, 3, true},     {Op::Exp, 0, 8, true},
      {Op::Exp, 60, 87, true},   {Op::Log, 1e-3, 1e3, false}, {Op::Sqrt, 1e-4, 1e4, false},
      {Op::Relu, 0.01, 3, true}, {Op::Sigmoid, 0, 8, true},   {Op::Sigmoid, 8, 40, true},
      {Op::Tanh, 0, 4, true},    {Op::Tanh, 4, 20, true},
  };
  unsigned seed = 1;
  for (const Case& c : cases)
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("{} n={} [{}, {}]", op_name(c.op), n, c.lo, c.hi));
      expect_agree(unary_program(c.op, {}, n, c.lo, c.hi, c.signed_, seed++));
    }
}

TEST_F(EigenVsReference, PowEveryExponent) {
  unsigned seed = 100;
  for (double c : kPowExponents)
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("pow {} n={}", c, n));
      expect_agree(unary_program(Op::Pow, pow_attrs(c), n, 0.05, 4, false, seed++));
      // Negative bases are only real for integral exponents.
      if (c == std::floor(c))
        expect_agree(unary_program(Op::Pow, pow_attrs(c), n, 0.05, 4, true, seed++));
    }
}

TEST_F(EigenVsReference, ClampEveryBoundPair) {
  unsigned seed = 200;
  for (const ClampBounds& bounds : kClampBounds)
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(fmt::format("clamp [{}, {}] n={}", bounds.lo, bounds.hi, n));
      expect_agree(
          unary_program(Op::Clamp, clamp_attrs(bounds.lo, bounds.hi), n, 0, 2, true, seed++));
    }
}

TEST_F(EigenVsReference, BinaryOpsWithBroadcasting) {
  unsigned seed = 300;
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div})
    for (std::int64_t n : kSizes) {
      // (a shape, b shape): equal, scalar-like, row, 3-D against 2-D, both sides broadcasting.
      const std::pair<Shape, Shape> shapes[] = {
          {Shape{n}, Shape{n}},
          {Shape{n}, Shape{1}},
          {Shape{1}, Shape{n}},
          {Shape{2, n}, Shape{n}},
          {Shape{3, 1, n}, Shape{2, 1}},
          {Shape{n, 1}, Shape{1, 3}},
          {Shape{2, 1, 3, n}, Shape{4, 1, 1}},
      };
      for (const auto& [sa, sb] : shapes) {
        SCOPED_TRACE(fmt::format("{} {} {}", op_name(op), sa.to_string(), sb.to_string()));
        Builder b;
        const Reg a = b.leaf(sa, values(sa.numel(), 0.1, 3, seed++, true));
        // Divisors kept away from zero, where the quotient's bound is infinite.
        const Reg c = b.leaf(sb, values(sb.numel(), op == Op::Div ? 0.5 : 0.1, 3, seed++, true));
        expect_agree(weighted(b, b.op(op, {a, c}), seed++));
      }
      // A rank-0 operand (a full sum) broadcast against a tensor.
      Builder b;
      const Reg a = b.leaf(Shape{n}, values(n, 0.5, 2, seed++, true));
      const Reg s = b.op(Op::SumAll, {b.leaf(Shape{3}, values(3, 1, 2, seed++))});
      expect_agree(weighted(b, b.op(op, {a, s}), seed++));
    }
}

TEST_F(EigenVsReference, Reductions) {
  unsigned seed = 400;
  for (std::int64_t n : kSizes) {
    for (Op op : {Op::SumAll, Op::MeanAll}) {
      expect_agree(unary_program(op, {}, n, 0.1, 3, true, seed++));
      Builder b;
      const Reg x = b.leaf(Shape{2, 3, n}, values(6 * n, 0.1, 3, seed++, true));
      expect_agree(weighted(b, b.op(op, {x}), seed++));
    }
    for (Op op : {Op::SumDim, Op::MeanDim})
      for (const Shape& s : {Shape{n}, Shape{3, n}, Shape{2, n, 3}, Shape{2, 3, 2, n}})
        for (int dim = 0; dim < s.rank(); ++dim)
          for (bool keepdim : {false, true}) {
            SCOPED_TRACE(
                fmt::format("{} {} dim={} keepdim={}", op_name(op), s.to_string(), dim, keepdim));
            Builder b;
            const Reg x = b.leaf(s, values(s.numel(), 0.1, 3, seed++, true));
            expect_agree(weighted(b, b.op(op, {x}, dim_attrs(dim, keepdim)), seed++));
          }
  }
}

TEST_F(EigenVsReference, LayoutOps) {
  unsigned seed = 500;
  for (std::int64_t n : kSizes) {
    for (const Shape& s : {Shape{2, n}, Shape{3, n, 2}, Shape{2, 3, 2, n}})
      for (int d0 = 0; d0 < s.rank(); ++d0)
        for (int d1 = d0 + 1; d1 < s.rank(); ++d1) {
          SCOPED_TRACE(fmt::format("transpose {} {} {}", s.to_string(), d0, d1));
          Builder b;
          const Reg x = b.leaf(s, values(s.numel(), 0.1, 3, seed++, true));
          expect_agree(weighted(b, b.op(Op::Transpose, {x}, transpose_attrs(d0, d1)), seed++));
        }
    for (const Shape& s : {Shape{n}, Shape{2, n}, Shape{n, 3, 2}, Shape{2, 1, n, 2}})
      for (int dim = 0; dim < s.rank(); ++dim) {
        SCOPED_TRACE(fmt::format("concat/repeat {} dim={}", s.to_string(), dim));
        Shape other = s;
        other[dim] = 3;
        Builder b;
        const Reg x = b.leaf(s, values(s.numel(), 0.1, 3, seed++, true));
        const Reg y = b.leaf(other, values(other.numel(), 0.1, 3, seed++, true));
        expect_agree(weighted(b, b.op(Op::Concat, {x, y}, dim_attrs(dim)), seed++));
        Builder r;
        const Reg z = r.leaf(s, values(s.numel(), 0.1, 3, seed++, true));
        expect_agree(weighted(r,
                              r.op(Op::Repeat, {z},
                                   repeat_attrs(dim, static_cast<int>(std::min<std::int64_t>(
                                                         2 + dim % 3, kMaxDim / s[dim])))),
                              seed++));
      }
  }
}

TEST_F(EigenVsReference, RepeatTilesRatherThanInterleaves) {
  Builder b;
  const Reg x = b.leaf(Shape{3}, {1, 2, 3});
  const Program p = b.finish(b.op(Op::Repeat, {x}, repeat_attrs(0, 2)));
  const Outcome o = eigen_->run(p, RunOptions{});
  ASSERT_EQ(o.status, Status::Ok) << o.message;
  EXPECT_EQ(o.root.values, (std::vector<double>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(o.grads[0].values, (std::vector<double>{2, 2, 2}));
}

TEST_F(EigenVsReference, Matmul) {
  unsigned seed = 600;
  for (std::int64_t n : kSizes) {
    const std::pair<Shape, Shape> shapes[] = {
        {Shape{n, 5}, Shape{5, 3}},
        {Shape{4, n}, Shape{n, 9}},
        {Shape{3, 2}, Shape{2, n}},
        {Shape{2, n, 4}, Shape{2, 4, 3}},
        {Shape{2, 1, n, 4}, Shape{3, 4, 2}},
        {Shape{n, 4}, Shape{2, 4, 3}},
        {Shape{3, 1, 2, n}, Shape{1, 2, n, 5}},
    };
    for (const auto& [sa, sb] : shapes) {
      SCOPED_TRACE(fmt::format("matmul {} {}", sa.to_string(), sb.to_string()));
      Builder b;
      const Reg a = b.leaf(sa, values(sa.numel(), 0.1, 2, seed++, true));
      const Reg c = b.leaf(sb, values(sb.numel(), 0.1, 2, seed++, true));
      expect_agree(weighted(b, b.op(Op::Matmul, {a, c}), seed++));
    }
  }
}

// Reuse of one register (its gradients accumulate) and an alias, through a chain of ops.
TEST_F(EigenVsReference, ChainsAndSharedRegisters) {
  Builder b;
  const Reg x = b.leaf(Shape{3, 9}, values(27, 0.2, 2, 700, true));
  const Reg w = b.leaf(Shape{9, 4}, values(36, 0.2, 2, 701, true));
  const Reg h = b.op(Op::Tanh, {b.op(Op::Matmul, {x, w})});
  const Reg s = b.op(Op::Sigmoid, {b.op(Op::Mul, {h, h})});
  const Reg t = b.op(Op::Transpose, {s}, transpose_attrs(0, 1));
  const Reg m = b.op(Op::MeanDim, {t}, dim_attrs(1, true));
  const Reg c = b.op(Op::Concat, {m, b.op(Op::SumDim, {t}, dim_attrs(1, true))}, dim_attrs(0));
  expect_agree(b.finish(b.op(Op::SumAll, {b.op(Op::Add, {c, b.op(Op::Exp, {c})})})));
}

// Special values where Eigen and LibTorch's conventions coincide, placed both at the start
// (packet body) and at the end (scalar tail) of a 9-element tensor.
TEST_F(EigenVsReference, SpecialValuesThatAgree) {
  auto both_ends = [](float v, float filler) {
    std::vector<float> x(9, filler);
    x.front() = v;
    x.back() = v;
    return x;
  };
  struct Case {
    Op op;
    Attrs attrs;
    float value, filler;
  };
  const Case cases[] = {
      {Op::Exp, {}, kInf, 1},
      {Op::Exp, {}, -kInf, 1},
      {Op::Exp, {}, kNan, 1},
      {Op::Exp, {}, 100, 1},
      {Op::Exp, {}, -110, 1},
      {Op::Log, {}, kInf, 1},
      {Op::Log, {}, -1, 1},
      {Op::Log, {}, kNan, 1},
      {Op::Sqrt, {}, -1, 1},
      {Op::Sqrt, {}, 0, 1},
      {Op::Sqrt, {}, kNan, 1},
      {Op::Tanh, {}, kInf, 1},
      {Op::Tanh, {}, -kInf, 1},
      {Op::Tanh, {}, kNan, 1},
      {Op::Relu, {}, kNan, 1},
      {Op::Relu, {}, -kInf, 1},
      {Op::Relu, {}, 0, 1},
      {Op::Abs, {}, -kInf, 1},
      {Op::Sigmoid, {}, kInf, 1},
      {Op::Sigmoid, {}, -kInf, 1},
      {Op::Sigmoid, {}, -100, 1},
      {Op::Clamp, clamp_attrs(-1, 1), kNan, 0.5f},
      {Op::Clamp, clamp_attrs(-1, 1), 1, 0.5f},
      {Op::Clamp, clamp_attrs(-1, 1), -1, 0.5f},
      {Op::Clamp, clamp_attrs(0.5, -0.5), kNan, 0},
      {Op::Clamp, clamp_attrs(0.5, -0.5), 0.5f, 0},
      {Op::Pow, pow_attrs(0.5), -1, 1},
      {Op::Pow, pow_attrs(1.5), -1, 1},
      {Op::Pow, pow_attrs(2), -kInf, 1},
      {Op::Pow, pow_attrs(-1), kInf, 1},
      {Op::Pow, pow_attrs(3), kNan, 1},
      {Op::Neg, {}, kNan, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{} at {}", op_name(c.op), c.value));
    expect_agree(special_program(c.op, c.attrs, both_ends(c.value, c.filler)));
  }
}

namespace {

// [v, 1.5 x 7, v]: element 0 is computed by Eigen's packet body, element 8 by its scalar tail.
Program body_and_tail(Op op, Attrs attrs, float v) {
  std::vector<float> x(9, 1.5f);
  x.front() = v;
  x.back() = v;
  return special_program(op, attrs, std::move(x));
}

struct Pinned {
  double body_value, tail_value, body_grad, tail_grad;
};

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)) ||
         (std::isfinite(a) && std::fabs(a - b) <= 1e-5 * std::fabs(b));
}

} // namespace

// Differences from the reference (and from LibTorch 1.13.1, checked with the CLI) at special
// values, each pinned to what Eigen 3.4.0 computes in its packet body and in its scalar tail, so
// that a fix on either side is noticed. The filler elements in between must still agree. The
// report that goes with this plugin judges each one.
TEST_F(EigenVsReference, KnownDivergencesAtSpecialValues) {
  constexpr double kNanD = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInfD = std::numeric_limits<double>::infinity();
  struct Case {
    const char* what;
    Op op;
    Attrs attrs;
    float x;
    Pinned eigen;
  };
  const Case cases[] = {
      // EIGEN_FAST_MATH psqrt (rsqrt + one Newton step) in the packet body only.
      {"sqrt(+inf) is NaN in the body", Op::Sqrt, {}, kInf, {kNanD, kInfD, kNanD, 0.0}},
      {"sqrt(-0) is +0 in the body, so its gradient is +inf",
       Op::Sqrt,
       {},
       -0.0f,
       {0.0, -0.0, kInfD, -kInfD}},
      {"sqrt of a subnormal flushes to 0 in the body",
       Op::Sqrt,
       {},
       1e-40f,
       {0.0, 1e-20, kInfD, 5.00001e19}},
      {"sqrt of a negative subnormal is +inf in the body",
       Op::Sqrt,
       {},
       -1e-40f,
       {kInfD, kNanD, 0.0, kNanD}},
      // plog clamps its argument to FLT_MIN in the packet body.
      {"log of a subnormal is log(FLT_MIN) in the body",
       Op::Log,
       {},
       1e-40f,
       {-87.33654, -92.10341, kInfD, kInfD}},
      // (abs'(NaN) is NaN in Eigen and in the reference alike: sign(NaN) is NaN; LibTorch's 0
      // is its own bug, corpus/bugs/eigen-abs-grad-nan.txt.)
      // Eigen's pow follows C99 pow; LibTorch's fast paths call sqrt / rsqrt.
      {"pow(-0, 0.5) is +0, gradient +inf",
       Op::Pow,
       pow_attrs(0.5),
       -0.0f,
       {0.0, 0.0, kInfD, kInfD}},
      {"pow(-inf, 0.5) is +inf", Op::Pow, pow_attrs(0.5), -kInf, {kInfD, kInfD, 0.0, 0.0}},
      {"pow(-0, -0.5) is +inf", Op::Pow, pow_attrs(-0.5), -0.0f, {kInfD, kInfD, -kInfD, -kInfD}},
      {"pow(-inf, -0.5) is +0", Op::Pow, pow_attrs(-0.5), -kInf, {0.0, 0.0, -0.0, -0.0}},
      {"pow'(-inf, 1.5) is +inf", Op::Pow, pow_attrs(1.5), -kInf, {kInfD, kInfD, kInfD, kInfD}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Program p = body_and_tail(c.op, c.attrs, c.x);
    const std::vector<Outcome> o = run(p);
    ASSERT_EQ(o[0].status, Status::Ok);
    ASSERT_EQ(o[1].status, Status::Ok);
    // The difference is real: the oracle reports it.
    EXPECT_FALSE(compare(o, OracleOptions{}).agree()) << to_text(p);
    const auto& root = o[1].root.values;
    const auto& grad = o[1].grads.at(0).values;
    EXPECT_PRED2(same, root[0], c.eigen.body_value);
    EXPECT_PRED2(same, root[8], c.eigen.tail_value);
    EXPECT_PRED2(same, grad[0], c.eigen.body_grad);
    EXPECT_PRED2(same, grad[8], c.eigen.tail_grad);
    for (std::size_t i = 1; i < 8; ++i) {
      EXPECT_FALSE(values_diverge(o[0].root.values[i], root[i], kDefaultTolerance)) << i;
      EXPECT_FALSE(values_diverge(o[0].grads[0].values[i], grad[i], kDefaultTolerance)) << i;
    }
  }
}
