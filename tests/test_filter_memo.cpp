// The known-bug filter's memo (Runner::memoise): a program met again is answered without a run,
// and a program that differs in anything, a new bug in the same shape of program included, is
// run and judged on its own. Driven by the planted-bug backend around the real reference.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"
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
  bench.runner.memoise({8, 1u << 20});
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

// The byte bound holds however large the programs: a 12-element program with its verdict takes
// a kilobyte or two, so an 8 KB memo holds a few of them (not the 1,000 its entry bound
// allows), and a program whose leaf alone is larger than the memo is never kept.
TEST(Runner, TheMemoIsBoundedInBytesAsWellAsInEntries) {
  Bench bench;
  bench.runner.memoise({1000, 8192});
  for (int i = 0; i < 40; ++i) {
    Program p = exp_into_sigmoid(false);
    p.leaves[0].data[1] = 0.01 * i;
    bench.runner.check(p);
    EXPECT_LE(bench.runner.memo_bytes(), 8192u);
  }
  const std::size_t bytes_of_one =
      12 * sizeof(double); // the leaf's values alone, a lower bound on an entry
  EXPECT_GT(bench.runner.memo_bytes(), bytes_of_one) << "small programs are kept";

  Builder b;
  const Reg x = b.leaf({40, 40}, std::vector<float>(40 * 40, 0.5f)); // 12,800 bytes of values
  const Program big = b.done(b.op(Op::SumAll, {b.op(Op::Exp, {x})}));
  const std::size_t runs = bench.runner.runs();
  bench.runner.check(big);
  bench.runner.check(big);
  EXPECT_EQ(bench.runner.runs(), runs + 2) << "larger than the whole memo: run each time";
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

// Runner::upstream_gradient reads an op's upstream gradient from one backward pass of the whole
// program (the reference's node gradients); the definition it stands for is the gradient of the
// register cut into a leaf holding the reference's values. Both, on every float op register of
// the corpus's programs in every dtype.
TEST(Runner, UpstreamGradientsFromOneBackwardPassAreTheCutProgramsGradients) {
  const std::unique_ptr<Backend> ref = make_reference_backend();
  int compared = 0;
  for (const char* dir : {"programs", "programs-bf16", "programs-f16", "programs-f64"})
    for (const auto& entry : std::filesystem::directory_iterator(
             std::string(BURNMARK_TEST_SOURCE_DIR) + "/corpus/" + dir)) {
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      ParseResult parsed = parse_program(text.str());
      ASSERT_TRUE(parsed.ok()) << entry.path() << ": " << parsed.error();
      const Program& p = parsed.program();
      SCOPED_TRACE(entry.path().string());
      Runner runner({ref.get()}, OracleOptions{});
      for (Reg r = 0; r < p.root; ++r) {
        const Stmt& s = p.stmts[static_cast<std::size_t>(r)];
        if (s.kind != StmtKind::Op || s.dtype != DType::F32) continue;
        const std::optional<std::vector<double>> fast = runner.upstream_gradient(p, r);
        const std::optional<std::vector<double>> values = runner.values(p, r);
        ASSERT_TRUE(values.has_value());
        const Program cut = cut_to_leaf(p, r, *values);
        const std::optional<std::vector<double>> slow =
            runner.leaf_gradient(cut, cut.stmts[static_cast<std::size_t>(r)].leaf);
        ASSERT_EQ(fast.has_value(), slow.has_value()) << "register " << r;
        if (!fast) continue;
        ASSERT_EQ(fast->size(), slow->size());
        for (std::size_t i = 0; i < fast->size(); ++i) {
          const double a = (*fast)[i], b = (*slow)[i];
          EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b)))
              << "register " << r << " element " << i << ": " << a << " vs " << b;
        }
        ++compared;
      }
    }
  EXPECT_GT(compared, 300) << compared;
}
