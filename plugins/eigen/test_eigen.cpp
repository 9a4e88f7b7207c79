// The Eigen plugin against the reference: one small program per op (forward and every leaf
// gradient) at sizes that put elements in Eigen's packet body and in its scalar tail, with the
// oracle's compare() deciding agreement under the reference's error bounds. Special values are
// checked where the two agree by convention; where they do not, the agreeing elements are
// asserted and the difference itself is pinned, so a change on either side shows up.
#include <dlfcn.h>

#include "burnmark/plugin/plugin.h"
#include "burnmark/util/cpu_vendor.h"
#include "eigen_test_support.h"

using namespace burnmark;
using namespace burnmark::eigen_test;

TEST_F(EigenVsReference, LoadsWithEveryOpAndGradients) {
  const Outcome o = eigen_->run(special_program(Op::Exp, {}, {0.0f}), RunOptions{});
  ASSERT_EQ(o.status, Status::Ok) << o.message;
  EXPECT_EQ(o.root.values, std::vector<double>{1.0});
  ASSERT_EQ(o.grads.size(), 1u);
  EXPECT_EQ(o.grads[0].values, std::vector<double>{1.0});
}

// The first vocabulary and exactly the later ops Eigen has a functor or Tensor method for are
// declared; the host skips programs with any other op (and with the ops added to ops.def later).
// The platform line names the packets and the CPU vendor, whose rsqrtps Eigen's sqrt starts
// from (eigen_test_support.h pins values to kEigenMeasuredOn).
TEST_F(EigenVsReference, PlatformNamesThePacketsAndTheVendor) {
  const std::string platform = eigen_->platform();
#ifndef BURNMARK_TEST_EIGEN_NATIVE
  EXPECT_TRUE(platform.starts_with("Eigen 3.") && platform.find(" SSE2 on ") != std::string::npos)
      << platform;
#endif
  EXPECT_TRUE(platform.ends_with(" on " + cpu_vendor())) << platform;
}

TEST(EigenPlugin, DeclaresExactlyTheMappedOps) {
  void* h = dlopen(BURNMARK_EIGEN_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto entry = reinterpret_cast<BurnmarkPluginEntryFn>(dlsym(h, BURNMARK_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  const BurnmarkPluginV1* t = entry(BURNMARK_PLUGIN_ABI_VERSION);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->computes_gradients, 1);
  // Findings in packet bodies hold for one instruction set: the description names it. The
  // default build is the x86-64 baseline.
  const std::string description = t->description;
#ifndef BURNMARK_TEST_EIGEN_NATIVE
  EXPECT_NE(description.find("packets: SSE2"), std::string::npos) << description;
#else
  EXPECT_NE(description.find("packets: "), std::string::npos) << description;
#endif
  std::vector<std::string> later;
  for (std::uint32_t i = 0; i < t->num_ops; ++i) {
    const auto op = op_from_stable_id(t->ops[i].op);
    ASSERT_TRUE(op.has_value()) << t->ops[i].op;
    // f32 only, contiguous copies (ABI v4 declarations).
    EXPECT_EQ(t->ops[i].dtypes, BURNMARK_DTYPES_F32);
    EXPECT_EQ(t->ops[i].strided_inputs, 0);
    if (t->ops[i].op < 22)
      EXPECT_EQ(t->ops[i].op, i);
    else
      later.emplace_back(op_name(*op));
  }
  const std::vector<std::string> want = {
      "sin",        "cos",      "tan",     "asin",    "acos",       "atan",    "sinh",
      "cosh",       "asinh",    "acosh",   "atanh",   "erf",        "erfc",    "log1p",
      "expm1",      "log2",     "log10",   "rsqrt",   "reciprocal", "square",  "sign",
      "sgn",        "floor",    "ceil",    "round",   "lgamma",     "digamma", "clamp_min",
      "clamp_max",  "hardtanh", "relu6",   "maximum", "minimum",    "fmax",    "fmin",
      "pow_tensor", "fmod",     "lt",      "le",      "gt",         "ge",      "eq",
      "ne",         "where",    "cumsum",  "cumprod", "mm",         "mv",      "dot",
      "outer",      "addmm",    "trace",   "flip",    "unsqueeze",  "squeeze", "movedim",
      "narrow",     "select",   "expand",  "reshape", "permute",    "slice",   "stack",
      "chunk",      "bmm",      "relayout"};
  EXPECT_EQ(later, want);
  EXPECT_EQ(t->num_ops, 22u + want.size());
  dlclose(h);
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
      // Eigen's pow follows C99 pow, as the reference does (pinned all the same: LibTorch's and
      // oneDNN's sqrt paths differ here, corpus/bugs/libtorch-pow-half-negzero.txt).
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
    expect_pinned(body_and_tail(c.op, c.attrs, c.x), c.eigen);
  }
}
