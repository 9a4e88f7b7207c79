// The ftz-daz convention (conventions.def): the reference switched to it reads subnormal inputs
// and writes subnormal results as zeros of their sign, in values and gradients, with bounds that
// still cover the IEEE value; normal results stay bit-identical; and the judge explains the
// flush only for the library that documents it (JAX), not for another showing the same flush.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"
#include "burnmark/triage/conventions.h"

using namespace burnmark;

namespace {

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) throw std::runtime_error(r.error());
  return r.program();
}

Outcome plain(const Program& p) {
  return make_reference_backend()->run(p, RunOptions{true});
}
Outcome flushing(const Program& p) {
  return make_reference_backend(ConventionSet(Convention::FtzDaz))->run(p, RunOptions{true});
}
bool reached(const Outcome& o) {
  return ConventionSet::from_bits(o.conventions_reached).has(Convention::FtzDaz);
}

} // namespace

// FLT_MIN * 0.5 = 2^-127, subnormal: IEEE keeps it, the flushing side gives 0 of its sign, with a
// bound covering 2^-127 (XLA keeps a subnormal where it simplifies an op away). The gradients
// (0.5 and +-FLT_MIN) are normal: untouched.
TEST(FtzDaz, ASubnormalResultIsZeroOfItsSign) {
  const Program p = parse("%0 = leaf f32[2] [1.1754944e-38, -1.1754944e-38]\n"
                          "%1 = leaf f32[2] [0.5, 0.5]\n%2 = mul %0, %1 : f32[2]\nroot %2\n");
  ASSERT_EQ(p.leaves[0].data[0], FLT_MIN);
  const Outcome ieee = plain(p);
  const Outcome ftz = flushing(p);
  ASSERT_EQ(ftz.status, Status::Ok) << ftz.message;
  EXPECT_EQ(ieee.root.values, (std::vector<double>{0x1p-127, -0x1p-127}));
  EXPECT_TRUE(reached(ieee));
  ASSERT_EQ(ftz.root.values.size(), 2u);
  EXPECT_EQ(ftz.root.values[0], 0.0);
  EXPECT_FALSE(std::signbit(ftz.root.values[0]));
  EXPECT_EQ(ftz.root.values[1], 0.0);
  EXPECT_TRUE(std::signbit(ftz.root.values[1]));
  for (double e : ftz.root.error_bound)
    EXPECT_GE(e, 0x1p-127);
  ASSERT_EQ(ftz.grads.size(), 2u);
  EXPECT_EQ(ftz.grads[0].values, (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(ftz.grads[1].values, (std::vector<double>{FLT_MIN, -FLT_MIN}));
  // The oracle: the flushed zeros agree with the flushing side, not with IEEE's.
  Outcome zeros = ieee;
  zeros.backend = "jax";
  zeros.root.values = {0.0, -0.0};
  EXPECT_FALSE(compare({ieee, zeros}, OracleOptions{}).agree());
  EXPECT_TRUE(compare({ftz, zeros}, OracleOptions{}).agree());
}

// A subnormal leaf is read as 0 (DAZ): x + 0 and x * 1e30 are 0 on the flushing side, where IEEE
// gives x and x * 1e30 ~ 1e-10; the bounds cover the IEEE values.
TEST(FtzDaz, ASubnormalLeafIsReadAsZero) {
  const Program p =
      parse("%0 = leaf f32[1] [1e-40]\n%1 = leaf f32[1] [0]\n"
            "%2 = leaf f32[1] [1e30]\n%3 = add %0, %1 : f32[1]\n"
            "%4 = mul %0, %2 : f32[1]\n%5 = concat %3, %4, dim=0 : f32[2]\nroot %5\n");
  const double x = p.leaves[0].data[0];
  ASSERT_GT(x, 0.0);
  ASSERT_LT(x, FLT_MIN);
  const Outcome ieee = plain(p);
  const Outcome ftz = flushing(p);
  ASSERT_EQ(ftz.status, Status::Ok) << ftz.message;
  ASSERT_EQ(ieee.root.values.size(), 2u);
  EXPECT_EQ(ieee.root.values[0], x);
  EXPECT_NEAR(ieee.root.values[1], x * 1e30, 1e-6 * x * 1e30);
  EXPECT_EQ(ftz.root.values, (std::vector<double>{0.0, 0.0}));
  EXPECT_GE(ftz.root.error_bound[0], x);
  EXPECT_GE(ftz.root.error_bound[1], ieee.root.values[1]);
}

// A gradient is flushed like a value: log's gradient 1 / x at x = 3e38 is 3.3e-39, subnormal.
TEST(FtzDaz, ASubnormalGradientIsZero) {
  const Program p = parse("%0 = leaf f32[1] [3e38]\n%1 = log %0 : f32[1]\nroot %1\n");
  const Outcome ieee = plain(p);
  const Outcome ftz = flushing(p);
  ASSERT_EQ(ftz.grads.size(), 1u);
  EXPECT_NEAR(ieee.grads[0].values[0], 1 / p.leaves[0].data[0], 1e-6 / 3e38);
  EXPECT_EQ(ftz.grads[0].values, std::vector<double>{0.0});
  EXPECT_EQ(ftz.root.values, ieee.root.values); // log(3e38) = 88.6: normal
}

// Where nothing reaches the subnormal range, the flushing side is the reference, bit for bit,
// values, bounds and gradients, and the point is not reached (the judge does not run it).
TEST(FtzDaz, NormalResultsStayBitIdentical) {
  const Program p = parse("%0 = leaf f32[2,2] [0.5, -1, 1.5, 0.25]\n%1 = leaf f32[2] [1, -0.5]\n"
                          "%2 = exp %0 : f32[2,2]\n%3 = add %2, %1 : f32[2,2]\n"
                          "%4 = matmul %3, %2 : f32[2,2]\n%5 = sum %4 : f32[]\nroot %5\n");
  const Outcome ieee = plain(p);
  const Outcome ftz = flushing(p);
  EXPECT_FALSE(reached(ieee));
  EXPECT_EQ(ftz.root.values, ieee.root.values);
  EXPECT_EQ(ftz.root.error_bound, ieee.root.error_bound);
  ASSERT_EQ(ftz.grads.size(), ieee.grads.size());
  for (std::size_t k = 0; k < ftz.grads.size(); ++k) {
    EXPECT_EQ(ftz.grads[k].values, ieee.grads[k].values);
    EXPECT_EQ(ftz.grads[k].error_bound, ieee.grads[k].error_bound);
  }
}

// f16's subnormals (below 2^-14) are normal in f32, which XLA computes f16 in: not flushed.
TEST(FtzDaz, F16SubnormalsAreNotFlushed) {
  const Program p = parse("dtype f16\n%0 = leaf f16[1] [9.5367431640625e-07]\n%1 = leaf f16[1] "
                          "[1]\n%2 = mul %0, %1 : f16[1]\n"
                          "root %2\n");
  ASSERT_GT(p.leaves[0].data[0], 0.0);
  ASSERT_LT(p.leaves[0].data[0], 0x1p-14);
  const Outcome ieee = plain(p);
  EXPECT_FALSE(reached(ieee));
  EXPECT_EQ(flushing(p).root.values, ieee.root.values);
}

// The campaign's cumprod (-0.9137255 * FLT_MIN is subnormal; JAX gives -0): ftz-daz explains it
// for jax, whose documentation makes the flush intended, and not for onednn, whose bf16 kernels
// flush the same way undocumented: there the divergence stays a finding.
TEST(FtzDaz, ExplainsTheFlushOnlyForTheLibraryDocumentingIt) {
  const Program p = parse("%0 = leaf f32[1,1,2] [-0.9137255, 1.1754944e-38]\n"
                          "%1 = cumprod %0, dim=2 : f32[1,1,2]\nroot %1\n");
  const Outcome ieee = plain(p);
  ASSERT_EQ(ieee.root.values.size(), 2u);
  ASSERT_LT(std::fabs(ieee.root.values[1]), FLT_MIN); // the product is subnormal
  for (const char* backend : {"jax", "onednn", "libtorch", "child:jax"}) {
    SCOPED_TRACE(backend);
    Outcome flushed = ieee; // the same values and gradients, the subnormal product flushed
    flushed.backend = backend;
    flushed.root.values[1] = -0.0;
    flushed.root.error_bound.clear(); // a backend's own bound is never used
    const Verdict v = compare({ieee, flushed}, OracleOptions{});
    ASSERT_FALSE(v.agree());
    ConventionJudge judge(make_convention_references(), make_all_conventions_references());
    const ConventionJudgement j = judge.judge(p, RunOptions{true}, {ieee, flushed}, v, {});
    const bool documented = std::string(backend) == "jax" || std::string(backend) == "child:jax";
    if (documented) {
      ASSERT_EQ(j.hits.size(), 1u);
      EXPECT_EQ(j.hits[0].convention, Convention::FtzDaz);
      EXPECT_TRUE(j.residual.agree());
    } else {
      EXPECT_TRUE(j.hits.empty());
      EXPECT_FALSE(j.residual.agree());
    }
  }
}

// A program meeting JAX's documented flush and a fault of its own: relu of [2, subnormal] where
// the backend's relu(2) is 3 (a made-up fault no convention covers) and relu(1e-40) is flushed to 0
// (so relu'(0) = 0). Measured from JAX's own side of ftz-daz, only the element at 2 is left: that
// divergence alone is signed, so a known row's root can match it. For onednn, whose flush is
// undocumented, nothing is measured from the flushing side. (relu's gradient at NaN, the campaign's
// first instance of this, is now explained whole: JAX's all-at-once reference, below.)
TEST(FtzDaz, WhatIsLeftFromTheFlushingSideIsTheBackendsOwnDivergence) {
  const Program p = parse("%0 = leaf f32[2] [2, 1e-40]\n%1 = relu %0 : f32[2]\nroot %1\n");
  const Outcome ieee = plain(p);
  ASSERT_EQ(ieee.grads.size(), 1u);
  ASSERT_EQ(ieee.grads[0].values.size(), 2u);
  ASSERT_EQ(ieee.root.values[0], 2.0);
  ASSERT_EQ(ieee.grads[0].values[1], 1.0); // relu'(1e-40) = 1
  for (const char* backend : {"jax", "onednn"}) {
    SCOPED_TRACE(backend);
    Outcome flushed = ieee;
    flushed.backend = backend;
    flushed.root.values = {3.0, 0.0};     // the fault at 2, the flush at 1e-40
    flushed.grads[0].values = {1.0, 0.0}; // relu'(0) = 0 at the flushed input
    flushed.root.error_bound.clear();
    flushed.grads[0].error_bound.clear();
    const Verdict v = compare({ieee, flushed}, OracleOptions{});
    ASSERT_EQ(v.divergences.size(), 2u); // the forward at 0 and 1, the gradient at 1
    ConventionJudge judge(make_convention_references(), make_all_conventions_references());
    const ConventionJudgement j = judge.judge(p, RunOptions{true}, {ieee, flushed}, v, {});
    if (std::string(backend) == "jax") {
      ASSERT_EQ(j.hits.size(), 1u);
      EXPECT_EQ(j.hits[0].convention, Convention::FtzDaz);
      ASSERT_EQ(j.residual.divergences.size(), 1u);
      const Divergence& d = j.residual.divergences[0];
      EXPECT_EQ(d.kind, DivergenceKind::Forward);
      EXPECT_EQ(d.count, 1u);
      EXPECT_EQ(d.first_index, 0u);
    } else {
      EXPECT_TRUE(j.hits.empty());
      EXPECT_EQ(j.residual.divergences.size(), 2u);
    }
  }
}

// The last JAX campaign's clamp_max([-1e-40, 0, 1], max=1): JAX flushes the subnormal (ftz-daz,
// its library's convention) and blocks the gradient at the bound (clamp-grad-min-norm, every
// library's). Neither switch alone explains both; JAX's all-at-once reference, which holds its
// own conventions with every library's, does, and names both. For onednn, whose flush is
// undocumented, the flush stays a divergence.
TEST(FtzDaz, ALibrarysOwnConventionJoinsEveryLibrarysInOneProgram) {
  const Program p =
      parse("%0 = leaf f32[3] [-1e-40, 0, 1]\n%1 = clamp_max %0, max=1 : f32[3]\nroot %1\n");
  const Outcome ieee = plain(p);
  ASSERT_EQ(ieee.grads.size(), 1u);
  ASSERT_EQ(ieee.grads[0].values.size(), 3u);
  ASSERT_EQ(ieee.grads[0].values[2], 1.0) << "the reference passes the gradient at x = max";
  for (const char* backend : {"jax", "onednn"}) {
    SCOPED_TRACE(backend);
    Outcome both = ieee;
    both.backend = backend;
    both.root.values[0] = -0.0;    // the flushed -1e-40
    both.grads[0].values[2] = 0.0; // blocked at x = max
    both.root.error_bound.clear();
    both.grads[0].error_bound.clear();
    const Verdict v = compare({ieee, both}, OracleOptions{});
    ASSERT_EQ(v.divergences.size(), 2u); // the forward at 0, the gradient at 2
    ConventionJudge judge(make_convention_references(), make_all_conventions_references());
    const ConventionJudgement j = judge.judge(p, RunOptions{true}, {ieee, both}, v, {});
    const auto took = [&](Convention c) {
      return std::any_of(j.hits.begin(), j.hits.end(),
                         [&](const ConventionHit& h) { return h.convention == c; });
    };
    if (std::string(backend) == "jax") {
      EXPECT_TRUE(j.residual.agree());
      EXPECT_TRUE(took(Convention::FtzDaz));
      EXPECT_TRUE(took(Convention::ClampGradMinNorm));
    } else {
      EXPECT_FALSE(took(Convention::FtzDaz));
      EXPECT_FALSE(j.residual.agree());
    }
  }
}
