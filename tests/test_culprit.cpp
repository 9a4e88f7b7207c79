// analyse()'s culprit (burnmark/triage/runner.h) for a fault in a view's backward: flip's gradient
// returned un-flipped (planted fault D) maps the ones a re-rooted prefix is seeded with to ones,
// so only the prefix weighted by the reference's upstream gradient shows it at flip; a plain
// prefix shows it first at the op downstream. Forward faults keep their culprit.
#include <gtest/gtest.h>

#include <limits>

#include "burnmark/ir/text.h"
#include "burnmark/triage/root_cause.h"
#include "burnmark/triage/triage.h"
#include "triage_fixtures.h"

using namespace burnmark;
using namespace burnmark::triage_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// A backend with fault D (and A, B) beside the reference.
struct FlipBench {
  std::unique_ptr<Backend> ref = make_reference_backend();
  PlantedBackend planted{ExtraFaults{.flip_backward_unflipped = true}};
  Runner runner{{ref.get(), &planted}, OracleOptions{}};
};

// x -> [neg ->] flip -> mul(y) -> sum. x's gradient is flip(y) (negated after neg): y is not a
// palindrome, so fault D's un-flipped y differs from it. Finite values without -0, so fault D's
// forward value is exact (see PlantedBackend).
struct FlipProgram {
  Program program;
  Reg flip = -1, mul = -1;
};

FlipProgram flip_then_mul(bool neg_first) {
  Builder b;
  FlipProgram out;
  Reg x = b.leaf({4}, {0.5f, -1.25f, 2.0f, 3.5f});
  const Reg y = b.leaf({4}, {0.5f, 1.5f, -2.0f, 3.0f});
  if (neg_first) x = b.op(Op::Neg, {x});
  out.flip = b.op(Op::Flip, {x}); // dim 0
  out.mul = b.op(Op::Mul, {out.flip, y});
  out.program = b.done(b.op(Op::SumAll, {out.mul}));
  return out;
}

std::size_t ops_before_root(const Program& p) {
  std::size_t n = 0;
  for (Reg r = 0; r < p.root; ++r)
    n += p.stmts[static_cast<std::size_t>(r)].kind == StmtKind::Op;
  return n;
}

} // namespace

TEST(Culprit, AViewsWrongBackwardIsLabelledAtTheView) {
  for (bool neg_first : {false, true}) {
    FlipBench bench;
    const FlipProgram fp = flip_then_mul(neg_first);
    SCOPED_TRACE(to_text(fp.program));
    // Why a plain prefix cannot tell: seeded with ones, flip's prefix agrees and mul's (whose
    // gradient into flip is y, not ones) already diverges.
    EXPECT_FALSE(has_class(bench.runner.check(reroot(fp.program, fp.flip)), "planted:gradient"));
    EXPECT_TRUE(has_class(bench.runner.check(reroot(fp.program, fp.mul)), "planted:gradient"));

    const std::size_t before = bench.runner.runs();
    const std::optional<Finding> f = analyse(bench.runner, fp.program);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->primary, "planted:gradient");
    EXPECT_EQ(f->culprit, fp.flip);
    EXPECT_EQ(f->culprit_label, "flip");
    // neg, before flip, was weighted by a gradient that is not ones (flip(y)) and is correct: not
    // the culprit. The bound: the program's check, then per op up to the culprit one plain check,
    // and one weighted check after two reference-only runs.
    EXPECT_LE(bench.runner.runs() - before, 1 + 4 * ops_before_root(fp.program));
  }
}

TEST(Culprit, RootCausesNameTheViewToo) {
  FlipBench bench;
  const std::optional<Characterization> c =
      characterize(bench.runner, flip_then_mul(/*neg_first=*/true).program);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->finding.culprit_label, "flip");
  ASSERT_EQ(c->signature.roots.size(), 1u);
  const RootCause& root = c->signature.roots[0];
  EXPECT_EQ(root.library, "planted");
  EXPECT_EQ(root.kind, "gradient");
  EXPECT_EQ(root.culprit, "flip");
  EXPECT_TRUE(root.isolated);
  EXPECT_TRUE(root.trigger.empty()) << "ordinary values: no special class is needed";
}

TEST(Culprit, ACorrectFlipIsNotFlagged) {
  // The same programs, the backend without fault D: nothing diverges, so there is no culprit.
  Bench bench;
  for (bool neg_first : {false, true})
    EXPECT_FALSE(analyse(bench.runner, flip_then_mul(neg_first).program).has_value());
}

TEST(Culprit, AForwardFaultKeepsItsOp) {
  FlipBench bench;
  // Fault A (sigmoid past index 8) downstream of the faulty flip: the forward class comes first
  // and its culprit is sigmoid, as before weighted prefixes existed.
  {
    Builder b;
    std::vector<float> xs, ys;
    for (int i = 0; i < 12; ++i) {
      xs.push_back(0.25f * static_cast<float>(i) - 1.0f);
      ys.push_back(0.5f + 0.125f * static_cast<float>(i));
    }
    const Reg x = b.leaf({12}, xs);
    const Reg m = b.op(Op::Mul, {b.op(Op::Flip, {x}), b.leaf({12}, ys)});
    const Program p = b.done(b.op(Op::SumAll, {b.op(Op::Sigmoid, {m})}));
    const std::optional<Finding> f = analyse(bench.runner, p);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->primary, "planted:forward");
    EXPECT_EQ(f->culprit_label, "sigmoid");
  }
  // Fault B (exp(-inf) = 1) seen only in a gradient: times zero, the root agrees and z's gradient
  // (exp's value) does not. A weighted prefix at exp shows it only on its upstream-gradient leaf,
  // which is not judged, so the culprit stays the mul that exposes it, not flip or exp.
  {
    Builder b;
    const Reg x = b.leaf({2}, {0.5f, -kInf});
    const Reg e = b.op(Op::Exp, {b.op(Op::Flip, {x})});
    const Program p = b.done(b.op(Op::Mul, {e, b.leaf({2}, {0.0f, 0.0f})}));
    Bench plain; // fault D off: flip's backward of a -inf operand is not what is tested here
    const std::optional<Finding> f = analyse(plain.runner, p);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->primary, "planted:gradient");
    EXPECT_EQ(f->culprit, p.root);
    EXPECT_EQ(f->culprit_label, "mul");
  }
}
