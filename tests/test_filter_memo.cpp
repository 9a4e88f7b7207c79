// The known-bug filter's memo (Runner::memoise): a program met again is answered without a run,
// and a program that differs in anything, a new bug in the same shape of program included, is
// run and judged on its own. Driven by the planted-bug backend around the real reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/runner.h"
#include "burnmark/triage/signature.h"
#include "burnmark/triage/suppress.h"
#include "burnmark/triage/triage.h"
#include "triage_fixtures.h"

using namespace burnmark;
using namespace burnmark::triage_test;

namespace {

// exp feeding sigmoid over 12 elements: bug A (sigmoid past index 8) always shows at the
// sigmoid; with a -inf leaf, bug B (exp(-inf) = 1) shows first, at the exp.
Program exp_into_sigmoid(bool minus_inf) {
  Builder b;
  std::vector<float> data(12, 0.5f);
  if (minus_inf) data[3] = kNegInf;
  const Reg x = b.leaf({12}, data);
  const Reg e = b.op(Op::Exp, {x});
  const Reg s = b.op(Op::Sigmoid, {e});
  return b.done(b.op(Op::SumAll, {s}));
}

} // namespace

TEST(Runner, AMemoisedCheckRunsAProgramOnceAndNeverAnswersAnother) {
  Bench bench;
  bench.runner.memoise(8);
  const Program a = exp_into_sigmoid(false);
  const Verdict first = bench.runner.check(a);
  EXPECT_EQ(bench.runner.runs(), 1u);
  const Verdict again = bench.runner.check(a);
  EXPECT_EQ(bench.runner.runs(), 1u) << "the same program is answered from the memo";
  EXPECT_EQ(bench.runner.memo_hits(), 1u);
  EXPECT_EQ(divergence_classes(again), divergence_classes(first));
  EXPECT_EQ(divergence_classes(first), std::vector<std::string>{"planted:forward"}); // bug A

  // Same structure, one leaf value different: run, and judged on its own values. Bug B makes
  // exp's 4th element 1 instead of 0; sigmoid(1) != sigmoid(0), so the root still diverges,
  // and a check of the prefix ending at exp shows B where a's did not.
  const Program b = exp_into_sigmoid(true);
  ASSERT_NE(program_hash(a), program_hash(b));
  bench.runner.check(b);
  EXPECT_EQ(bench.runner.runs(), 2u);
  EXPECT_TRUE(bench.runner.check(reroot(a, 1)).agree());
  EXPECT_EQ(primary_class(bench.runner.check(reroot(b, 1))), "planted:forward");
  EXPECT_EQ(bench.runner.runs(), 4u);

  // -0 and +0 are different programs (bitwise, as Program's operator== says).
  Program z = a;
  z.leaves[0].data[0] = 0.0;
  Program nz = z;
  nz.leaves[0].data[0] = -0.0;
  bench.runner.check(z);
  bench.runner.check(nz);
  EXPECT_EQ(bench.runner.runs(), 6u);
  EXPECT_EQ(bench.runner.memo_hits(), 1u);

  // Full (8 programs): it starts over, and still answers right.
  for (int i = 0; i < 10; ++i) {
    Program p = a;
    p.leaves[0].data[1] = 0.01 * i;
    EXPECT_EQ(divergence_classes(bench.runner.check(p)), divergence_classes(first));
  }
  EXPECT_EQ(bench.runner.runs(), 16u);
}

TEST(Suppression, TheFilterAnswersARepeatWithoutRunsAndANewBugOfTheSameShapeAsNew) {
  Bench bench;
  const auto known = characterize(bench.runner, exp_into_sigmoid(false));
  ASSERT_TRUE(known.has_value());
  std::string error;
  const Suppressions list =
      Suppressions::parse(known->signature.id + " sigmoid-tail sigmoid past index 8\n", error);
  ASSERT_EQ(error, "");

  Bench fuzz;
  KnownBugFilter filter(list, fuzz.runner);
  EXPECT_EQ(filter.runs(), 0u);
  ASSERT_TRUE(filter.is_known(exp_into_sigmoid(false))) << "bug A, at the sigmoid";
  const std::size_t runs = filter.runs();
  const std::size_t hits = filter.memo_hits();
  EXPECT_GT(runs, 3u) << "analyse and one minimisation";
  // Again: analyse checks the program, the prefix ending at exp (agrees: no -inf) and the one
  // ending at the sigmoid (bug A): three checks, all from the memo; the pre-signature is cached.
  EXPECT_TRUE(filter.is_known(exp_into_sigmoid(false)));
  EXPECT_EQ(filter.runs(), runs);
  EXPECT_EQ(filter.memo_hits(), hits + 3);
  EXPECT_EQ(filter.minimisations(), 1u);
  // The same program shape with a -inf leaf: bug B at the exp, upstream of A. Not listed, so
  // not known, although its structure is the known program's.
  EXPECT_FALSE(filter.is_known(exp_into_sigmoid(true)));
  EXPECT_GT(filter.runs(), runs);
  EXPECT_EQ(filter.minimisations(), 2u);
}
