// Root causes (burnmark/triage/root_cause.h): one planted fault reached through several op graphs
// and dtypes is one root cause; two faults of one op with different triggers are two; the
// known-bug list recognises a fault by its root wherever it shows.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "burnmark/ir/text.h"
#include "burnmark/triage/root_cause.h"
#include "burnmark/triage/suppress.h"
#include "burnmark/triage/triage.h"
#include "triage_fixtures.h"

using namespace burnmark;
using namespace burnmark::triage_test;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Planted fault B (exp(-inf) = 1) reached three ways.
Program exp_then_tanh() { // exp -> mul -> tanh -> sum
  Builder b;
  const Reg x = b.leaf({4}, {0.5f, -kInf, 2.0f, 1.0f});
  const Reg y = b.leaf({4}, {1.5f, 0.25f, -1.0f, 0.5f});
  const Reg e = b.op(Op::Exp, {x});
  const Reg m = b.op(Op::Mul, {e, y});
  return b.done(b.op(Op::SumAll, {b.op(Op::Tanh, {m})}));
}

Program exp_squared() { // exp -> mul(e, e): 1 where the reference has 0
  Builder b;
  const Reg x = b.leaf({3}, {-kInf, 0.25f, -0.5f});
  const Reg e = b.op(Op::Exp, {x});
  return b.done(b.op(Op::Mul, {e, e}));
}

// The root's values agree (anything times 0), but the gradient of the zeros is exp's wrong value:
// the program shows a gradient divergence, the fault is exp's forward value.
Program exp_times_zero() {
  Builder b;
  const Reg x = b.leaf({2}, {-kInf, 0.5f});
  const Reg z = b.leaf({2}, {0.0f, 0.0f});
  return b.done(b.op(Op::Mul, {b.op(Op::Exp, {x}), z}));
}

Program neg_then_exp() { // -inf made upstream: exp's operand is neg(+inf)
  Builder b;
  const Reg x = b.leaf({2}, {kInf, 0.75f});
  const Reg y = b.leaf({2}, {1.0f, -2.0f});
  const Reg n = b.op(Op::Neg, {x});
  const Reg e = b.op(Op::Exp, {n});
  return b.done(b.op(Op::Add, {e, b.op(Op::Abs, {y})}));
}

// Planted fault C (exp(1e30) = NaN), behind another op.
Program exp_of_huge_then_sqrt() {
  Builder b;
  const Reg x = b.leaf({2}, {1e30f, 0.5f});
  return b.done(b.op(Op::Sqrt, {b.op(Op::Exp, {x})}));
}

// With fault C on or off.
struct RootBench {
  explicit RootBench(bool with_fault_c = true) : planted(with_fault_c) {}
  std::unique_ptr<Backend> ref = make_reference_backend();
  PlantedBackend planted;
  Runner runner{{ref.get(), &planted}, OracleOptions{}};
};

Characterization characterized(Runner& runner, const Program& p) {
  const std::optional<Characterization> c = characterize(runner, p);
  EXPECT_TRUE(c.has_value()) << to_text(p);
  return c ? *c : Characterization{};
}

} // namespace

TEST(RootCause, OneFaultThroughThreeGraphsAndTwoDtypesIsOneRoot) {
  RootBench bench(/*with_fault_c=*/false);
  std::set<std::string> signatures, roots;
  for (const Program& p : {exp_then_tanh(), exp_times_zero(), neg_then_exp()})
    for (FloatDType d : {FloatDType::F32, FloatDType::BF16}) {
      const Program q = with_float_dtype(p, d);
      SCOPED_TRACE(to_text(q));
      const Characterization c = characterized(bench.runner, q);
      signatures.insert(c.signature.id);
      ASSERT_EQ(c.signature.roots.size(), 1u);
      const RootCause& r = c.signature.roots[0];
      EXPECT_EQ(r.library, "planted");
      EXPECT_EQ(r.kind, "forward");
      EXPECT_EQ(r.culprit, "exp");
      EXPECT_EQ(r.trigger, std::vector<std::string>{"-inf"});
      EXPECT_EQ(r.dtype, "") << "the fault shows in f32 too, so the dtype is a detail";
      EXPECT_TRUE(r.isolated);
      roots.insert(r.id);
    }
  // Graph-level signatures tell them apart (exp alone, exp -> mul; in each dtype); the root
  // joins them.
  EXPECT_GE(signatures.size(), 4u);
  EXPECT_EQ(roots.size(), 1u);
}

TEST(RootCause, TwoFaultsOfOneOpWithDifferentTriggersAreTwoRoots) {
  RootBench bench;
  const Characterization at_neg_inf = characterized(bench.runner, exp_squared());
  const Characterization at_huge = characterized(bench.runner, exp_of_huge_then_sqrt());
  ASSERT_EQ(at_neg_inf.signature.roots.size(), 1u);
  ASSERT_EQ(at_huge.signature.roots.size(), 1u);
  EXPECT_EQ(at_huge.signature.roots[0].culprit, "exp");
  EXPECT_EQ(at_neg_inf.signature.roots[0].trigger, std::vector<std::string>{"-inf"});
  EXPECT_EQ(at_huge.signature.roots[0].trigger, std::vector<std::string>{"huge"});
  EXPECT_NE(at_neg_inf.signature.roots[0].id, at_huge.signature.roots[0].id);
}

TEST(RootCause, TriageGroupsSignaturesUnderTheirRoots) {
  RootBench bench;
  std::vector<TriageInput> inputs;
  int n = 0;
  for (const Program& p : {exp_then_tanh(), exp_times_zero(), exp_of_huge_then_sqrt()})
    for (FloatDType d : {FloatDType::F32, FloatDType::BF16})
      inputs.push_back(TriageInput{"in" + std::to_string(n++), with_float_dtype(p, d)});
  const TriageReport report = triage(bench.runner, inputs);
  EXPECT_GE(report.groups.size(), 4u);
  ASSERT_EQ(report.roots.size(), 2u);
  // Most members first: fault B was reached by four inputs, fault C by two.
  EXPECT_EQ(report.roots[0].members, 4u);
  EXPECT_EQ(report.roots[1].members, 2u);
  std::size_t grouped = 0;
  for (const RootGroup& r : report.roots)
    for (std::size_t i : r.groups) {
      EXPECT_EQ(root_key(report.groups[i].signature.roots), r.key);
      ++grouped;
    }
  EXPECT_EQ(grouped, report.groups.size());
}

TEST(RootCause, AKnownRootIsKnownThroughAGraphTheListNeverSaw) {
  RootBench bench;
  RootBench without_c(/*with_fault_c=*/false);
  const Characterization seen = characterized(bench.runner, exp_then_tanh());
  std::string error;
  const Suppressions known = Suppressions::parse(
      seen.signature.roots[0].id + " planted-exp-neg-inf exp(-inf) is 1\n", error);
  ASSERT_EQ(error, "");
  const Characterization other =
      characterized(without_c.runner, with_float_dtype(neg_then_exp(), FloatDType::BF16));
  EXPECT_EQ(known.find_graph(other.signature), nullptr);
  const KnownBug* k = known.find(other.signature);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->anchor, "planted-exp-neg-inf");
  // The other fault of exp is not covered by that line.
  EXPECT_EQ(known.find(characterized(bench.runner, exp_of_huge_then_sqrt()).signature), nullptr);
}

TEST(RootCause, AnOpFedCorrectInputsIsNotTheCulprit) {
  // isolate_op cuts exp's computed operand into a leaf holding the reference's value, so the
  // isolated neg agrees and the isolated exp shows the fault.
  RootBench bench(/*with_fault_c=*/false);
  const Program p = neg_then_exp();
  ASSERT_EQ(p.stmts[2].instr.op, Op::Neg);
  ASSERT_EQ(p.stmts[3].instr.op, Op::Exp);
  const std::optional<Program> neg = isolate_op(bench.runner, p, 2);
  const std::optional<Program> exp = isolate_op(bench.runner, p, 3);
  ASSERT_TRUE(neg && exp);
  EXPECT_TRUE(bench.runner.check(*neg).agree());
  EXPECT_FALSE(bench.runner.check(*exp).agree());
  EXPECT_EQ(exp->leaves.size(), 1u);
  EXPECT_EQ(exp->leaves[0].data, (std::vector<double>{-kInf, -0.75}));
}

TEST(RootCause, ErrorMessagesLoseTheirNumbers) {
  EXPECT_EQ(normalize_error("The size of tensor a (15) must match the size of tensor b (5) at "
                            "non-singleton dimension 1\nException raised from foo at x.cpp:12"),
            "The size of tensor a (#) must match the size of tensor b (#) at non-singleton "
            "dimension #");
  EXPECT_EQ(normalize_error("got [2, 3] but expected shape compatible with [2, 3, 4]"),
            "got [#] but expected shape compatible with [#]");
  EXPECT_EQ(normalize_error("no numbers"), "no numbers");
}

// Planted fault E: neg(+0) = +0. No op diverges alone (the oracle compares ±0 as equal, and 1/x
// fed the reference's -0 is right), so before zero-sign roots every graph was its own root.
TEST(RootCause, AZeroOfTheWrongSignIsTheOpThatMadeIt) {
  std::unique_ptr<Backend> ref = make_reference_backend();
  PlantedBackend planted{ExtraFaults{.neg_zero_positive = true}};
  Runner runner{{ref.get(), &planted}, OracleOptions{}};
  const auto through = [](Op downstream) {
    Builder b;
    const Reg x = b.leaf({2}, {0.0f, 0.5f});
    const Reg n = b.op(Op::Neg, {x});
    if (downstream == Op::Div) return b.done(b.op(Op::Div, {b.leaf({2}, {1.0f, 1.0f}), n}));
    return b.done(b.op(downstream, {n}));
  };
  std::set<std::string> roots;
  for (const Program& p : {through(Op::Reciprocal), through(Op::Div),
                           with_float_dtype(through(Op::Reciprocal), FloatDType::F16)}) {
    SCOPED_TRACE(to_text(p));
    const Characterization c = characterized(runner, p);
    ASSERT_EQ(c.signature.roots.size(), 1u);
    const RootCause& r = c.signature.roots[0];
    EXPECT_EQ(r.kind, "forward");
    EXPECT_EQ(r.culprit, "neg");
    // +0 is the input the fault needs; 0.5 in its place gives no zero at all.
    EXPECT_EQ(r.trigger, std::vector<std::string>{"0"});
    EXPECT_TRUE(r.zero_sign);
    EXPECT_TRUE(r.isolated);
    EXPECT_EQ(r.dtype, "");
    roots.insert(r.id);
  }
  EXPECT_EQ(roots.size(), 1u);
}

// Without the fault the same programs agree, and a zero-sign root is never made from nothing.
TEST(RootCause, ACorrectZeroSignIsNoFinding) {
  std::unique_ptr<Backend> ref = make_reference_backend();
  PlantedBackend planted{ExtraFaults{}};
  Runner runner{{ref.get(), &planted}, OracleOptions{}};
  Builder b;
  const Reg x = b.leaf({2}, {0.0f, 0.5f});
  const Program p = b.done(b.op(Op::Reciprocal, {b.op(Op::Neg, {x})}));
  EXPECT_TRUE(runner.check(p).agree());
}

TEST(RootCause, TheCulpritOfAnUnminimisedProgramHasTheMinimisedProgramsRoot) {
  // culprit_roots() on the program as the fuzzer met it gives the root that characterising
  // (minimising, then isolating every op) gives, for each graph, dtype and trigger; where the
  // culprit analyse() finds is not the op at fault it declines.
  RootBench bench;
  int answered = 0;
  for (const Program& p :
       {exp_then_tanh(), exp_times_zero(), neg_then_exp(), exp_of_huge_then_sqrt()})
    for (FloatDType d : {FloatDType::F32, FloatDType::BF16}) {
      const Program q = with_float_dtype(p, d);
      SCOPED_TRACE(to_text(q));
      const std::optional<Finding> f = analyse(bench.runner, q);
      ASSERT_TRUE(f.has_value());
      const auto roots = culprit_roots(bench.runner, q, f->verdict, f->culprit);
      const Characterization c = characterized(bench.runner, q);
      ASSERT_EQ(c.signature.roots.size(), 1u);
      if (f->culprit_label == "exp") {
        ASSERT_TRUE(roots.has_value());
        ASSERT_EQ(roots->size(), 1u);
        EXPECT_EQ((*roots)[0].text, c.signature.roots[0].text);
        ++answered;
      } else {
        // exp_times_zero: the root's values agree, so the gradient class's earliest prefix is
        // the mul, which is right when fed exp's correct value.
        EXPECT_EQ(f->culprit_label, "mul");
        EXPECT_FALSE(roots.has_value());
      }
    }
  EXPECT_EQ(answered, 6);
}

TEST(RootCause, TheFilterAnswersAKnownRootAtTheCulpritWithoutMinimising) {
  RootBench bench;
  const Characterization seen = characterized(bench.runner, exp_then_tanh());
  std::string error;
  Suppressions known = Suppressions::parse(
      seen.signature.roots[0].id + " planted-exp-neg-inf exp(-inf) is 1\n", error);
  ASSERT_EQ(error, "");
  KnownBugFilter filter(std::move(known), Runner{{bench.ref.get(), &bench.planted}, {}});
  // A graph the list never saw, with the known fault at its culprit: answered by the root.
  const KnownBug* k = filter.match(neg_then_exp());
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->anchor, "planted-exp-neg-inf");
  EXPECT_EQ(filter.root_answers(), 1u);
  EXPECT_EQ(filter.minimisations(), 0u);
  // The other fault of exp has a root the list does not name: minimised, and not known.
  EXPECT_EQ(filter.match(exp_of_huge_then_sqrt()), nullptr);
  EXPECT_EQ(filter.minimisations(), 1u);
}

TEST(RootCause, AZeroOfTheWrongSignIsLeftToTheFullCharacterisation) {
  // No op diverges alone (the oracle takes -0 for +0), so the culprit cannot answer: the filter
  // minimises, where the zero-sign rule finds neg.
  std::unique_ptr<Backend> ref = make_reference_backend();
  PlantedBackend planted{ExtraFaults{.neg_zero_positive = true}};
  Runner runner{{ref.get(), &planted}, OracleOptions{}};
  Builder b;
  const Reg x = b.leaf({2}, {0.0f, 0.5f});
  const Program p = b.done(b.op(Op::Reciprocal, {b.op(Op::Neg, {x})}));
  const std::optional<Finding> f = analyse(runner, p);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(culprit_roots(runner, p, f->verdict, f->culprit).has_value());
}

namespace {

// A backend under another name: the planted faults as torch-compile or as libtorch, the honest
// reference as libtorch.
class Renamed final : public Backend {
public:
  Renamed(std::string name, Backend& inner) : name_(std::move(name)), inner_(inner) {}
  const std::string& name() const override { return name_; }
  Outcome run(const Program& p, const RunOptions& options) override {
    Outcome out = inner_.run(p, options);
    out.backend = name_;
    return out;
  }

private:
  std::string name_;
  Backend& inner_;
};

} // namespace

// Issue 32: a torch-compile root says who is wrong. Fault B planted in the compiled backend only
// is a compile bug (eager within the reference's bound); planted in both, it is eager's fault,
// which compile reproduces, known when eager's root is.
TEST(RootCause, ACompiledRootSaysWhetherEagerIsWrongToo) {
  const std::unique_ptr<Backend> ref = make_reference_backend();
  const std::unique_ptr<Backend> honest = make_reference_backend();
  PlantedBackend planted_eager, planted_compiled;
  Renamed eager_ok("libtorch", *honest), eager_bad("libtorch", planted_eager);
  Renamed compiled("torch-compile", planted_compiled);

  Runner compile_bug_runner({ref.get(), &eager_ok, &compiled}, OracleOptions{});
  const Characterization compile_bug = characterized(compile_bug_runner, exp_then_tanh());
  ASSERT_EQ(compile_bug.signature.roots.size(), 1u);
  const RootCause& only = compile_bug.signature.roots[0];
  EXPECT_EQ(only.library, "torch-compile");
  EXPECT_EQ(only.compile, "compiled-outside");
  EXPECT_TRUE(only.text.ends_with("|compile=compiled-outside")) << only.text;
  EXPECT_NE(root_words(only).find(" compile=compiled-outside"), std::string::npos);

  Runner shared_runner({ref.get(), &eager_bad, &compiled}, OracleOptions{});
  const Characterization shared = characterized(shared_runner, exp_then_tanh());
  ASSERT_EQ(shared.signature.roots.size(), 2u);
  const RootCause& eager_root = shared.signature.roots[0]; // ordered by library
  const RootCause& compiled_root = shared.signature.roots[1];
  EXPECT_EQ(eager_root.library, "libtorch");
  EXPECT_EQ(eager_root.compile, "");
  EXPECT_EQ(compiled_root.compile, "both-outside-alike");
  // One Inductor fault and one fault compile shares with eager are two groups.
  EXPECT_NE(compiled_root.id, only.id);
  EXPECT_EQ(listed_root_ids(shared.signature.roots), std::vector<std::string>{eager_root.id});

  // A list naming eager's root knows the shared finding, not the compile bug.
  std::string error;
  const Suppressions known =
      Suppressions::parse(eager_root.id + " planted-exp-neg-inf exp(-inf) is 1\n", error);
  ASSERT_EQ(error, "");
  const KnownBug* k = known.find(shared.signature);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->anchor, "planted-exp-neg-inf");
  EXPECT_EQ(known.find(compile_bug.signature), nullptr);
}
