// Registered conventions: each has a witness program on which the reference's two sides differ,
// the judge names the convention a backend took, and a difference no convention explains stays
// a divergence.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

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

struct Witness {
  Convention convention;
  const char* program;
};

// Each convention's point, where the two sides give different values or gradients.
const std::vector<Witness>& witnesses() {
  static const std::vector<Witness> all = {
      {Convention::ClampGradOpenBelow,
       "%0 = leaf f32[2] [-1, 0.5]\n%1 = clamp %0, min=-1, max=1 : f32[2]\n"},
      {Convention::ClampGradMinNorm,
       "%0 = leaf f32[2] [1, 0.5]\n%1 = clamp_max %0, max=1 : f32[2]\n"},
      {Convention::Atan2GradOriginZero, "%0 = leaf f32[1] [0]\n%1 = atan2 %0, %0 : f32[1]\n"},
      {Convention::FmaxGradTieSplit,
       "%0 = leaf f32[1] [2]\n%1 = leaf f32[1] [2]\n%2 = fmax %0, %1 : f32[1]\n"},
      {Convention::ReluGradByProduct,
       "%0 = leaf f32[1] [-1]\n%1 = relu %0 : f32[1]\n%2 = sqrt %1 : f32[1]\n"},
      {Convention::Pow0GradByProduct,
       "%0 = leaf f32[1] [2]\n%1 = pow %0, exponent=0 : f32[1]\n%2 = leaf f32[1] [inf]\n%3 = mul "
       "%1, %2 : f32[1]\n"},
      {Convention::SgnGradSymbolicZero,
       "%0 = leaf f32[1] [1]\n%1 = acos %0 : f32[1]\n%2 = sgn %1 : f32[1]\n"},
      {Convention::Norm0GradSymbolicZero,
       "%0 = leaf f32[1] [-1]\n%1 = log1p %0 : f32[1]\n%2 = vector_norm %1, ord=0 : f32[]\n"},
      {Convention::HardtanhGradClosed,
       "%0 = leaf f32[1] [1]\n%1 = hardtanh %0, min=-1, max=1 : f32[1]\n"},
      {Convention::GateGradByProduct,
       "%0 = leaf f32[1] [-2]\n%1 = clamp %0, min=-1, max=1 : f32[1]\n%2 = leaf f32[1] [inf]\n%3 = "
       "mul %1, %2 : f32[1]\n"},
      {Convention::FtzDaz, "%0 = leaf f32[1] [1e-40]\n%1 = relu %0 : f32[1]\n"},
  };
  return all;
}

// A backend name of a library in the convention's scope ("library" for conventions of any).
std::string backend_in_scope(Convention c) {
  const std::string_view scope = convention_info(c).scope;
  return scope == "any" ? "library" : std::string(scope.substr(0, scope.find(',')));
}

} // namespace

TEST(Conventions, EveryRegisteredConventionHasAWitnessWhereTheSidesDiffer) {
  ASSERT_EQ(witnesses().size(), kConventions.size());
  for (const Witness& w : witnesses()) {
    SCOPED_TRACE(std::string(convention_info(w.convention).name));
    const Program p = parse(w.program);
    const Outcome ours = make_reference_backend()->run(p, RunOptions{true});
    const Outcome other =
        make_reference_backend(ConventionSet(w.convention))->run(p, RunOptions{true});
    EXPECT_FALSE(compare({ours, other}, OracleOptions{}).agree());
  }
}

TEST(Conventions, JudgeNamesTheConventionABackendTookAndKeepsTheDivergence) {
  for (const Witness& w : witnesses()) {
    SCOPED_TRACE(std::string(convention_info(w.convention).name));
    const Program p = parse(w.program);
    std::vector<Outcome> outcomes = {
        make_reference_backend()->run(p, RunOptions{true}),
        make_reference_backend(ConventionSet(w.convention))->run(p, RunOptions{true})};
    outcomes[1].backend = backend_in_scope(w.convention);
    const Verdict v = compare(outcomes, OracleOptions{});
    ASSERT_FALSE(v.agree());
    ConventionJudge judge(make_convention_references());
    const ConventionJudgement j = judge.judge(p, RunOptions{true}, outcomes, v, OracleOptions{});
    ASSERT_EQ(j.hits.size(), 1u);
    EXPECT_EQ(j.hits[0].backend, backend_in_scope(w.convention));
    EXPECT_EQ(j.hits[0].convention, w.convention);
    EXPECT_TRUE(j.residual.agree());
    EXPECT_FALSE(v.agree()) << "the verdict itself still reports the divergence";
    EXPECT_NE(format_conventions(j.hits).find(std::string("name=") +
                                              std::string(convention_info(w.convention).name)),
              std::string::npos);
  }
}

// Two conventions in one program (LibTorch 2.15's clamp blocks the gradient at its bound, then
// fmin splits a tie): no single switch explains it, all of them together do (found by the
// version-differential campaign, which called it a regression).
TEST(Conventions, TwoConventionsInOneProgramAreExplainedTogether) {
  const Program p =
      parse("%0 = leaf f32[1] [0]\n%1 = leaf f32[1] [0]\n%2 = clamp %1, min=0, max=1 : f32[1]\n"
            "%3 = fmin %2, %0 : f32[1]\nroot %3\n");
  std::vector<Outcome> outcomes = {
      make_reference_backend()->run(p, RunOptions{true}),
      make_all_conventions_references().front().second->run(p, RunOptions{true})};
  outcomes[1].backend = "library";
  const Verdict v = compare(outcomes, OracleOptions{});
  ASSERT_FALSE(v.agree());
  ConventionJudge single(make_convention_references());
  EXPECT_TRUE(single.judge(p, RunOptions{true}, outcomes, v, OracleOptions{}).hits.empty());
  ConventionJudge judge(make_convention_references(), make_all_conventions_references());
  const ConventionJudgement j = judge.judge(p, RunOptions{true}, outcomes, v, OracleOptions{});
  EXPECT_TRUE(j.residual.agree());
  const auto took = [&](Convention c) {
    return std::any_of(j.hits.begin(), j.hits.end(),
                       [&](const ConventionHit& h) { return h.convention == c; });
  };
  EXPECT_TRUE(took(Convention::ClampGradMinNorm));
  EXPECT_TRUE(took(Convention::FmaxGradTieSplit));
}

TEST(Conventions, ADifferenceNoConventionExplainsStaysADivergence) {
  const Program p = parse(witnesses().front().program);
  std::vector<Outcome> outcomes = {make_reference_backend()->run(p, RunOptions{true}),
                                   make_reference_backend()->run(p, RunOptions{true})};
  outcomes[1].backend = "library";
  outcomes[1].root.values[1] = 42.0; // clamp(0.5) is 0.5 on both sides of every convention
  const Verdict v = compare(outcomes, OracleOptions{});
  ASSERT_FALSE(v.agree());
  ConventionJudge judge(make_convention_references());
  const ConventionJudgement j = judge.judge(p, RunOptions{true}, outcomes, v, OracleOptions{});
  EXPECT_TRUE(j.hits.empty());
  EXPECT_FALSE(j.residual.agree());
}

// A convention the reference's own side takes is shown too: a backend that agrees on a program
// reaching the point took the reference's side (side=reference), and a program that reaches no
// convention point shows nothing.
TEST(Conventions, AgreeingOnAConventionPointShowsTheReferencesSide) {
  ConventionJudge judge(make_convention_references());
  for (const Witness& w : witnesses()) {
    SCOPED_TRACE(std::string(convention_info(w.convention).name));
    const Program p = parse(w.program);
    std::vector<Outcome> outcomes = {make_reference_backend()->run(p, RunOptions{true}),
                                     make_reference_backend()->run(p, RunOptions{true})};
    outcomes[1].backend = backend_in_scope(w.convention);
    const Verdict v = compare(outcomes, OracleOptions{});
    ASSERT_TRUE(v.agree());
    const std::vector<ConventionHit> hits =
        judge.reference_sides(p, RunOptions{true}, outcomes, v, OracleOptions{});
    ASSERT_FALSE(hits.empty());
    EXPECT_TRUE(std::any_of(hits.begin(), hits.end(), [&](const ConventionHit& h) {
      return h.backend == outcomes[1].backend && h.convention == w.convention &&
             h.side == ConventionSide::Reference;
    }));
    EXPECT_NE(format_conventions(hits).find("side=reference doc=https://"), std::string::npos);
  }
  const Program plain = parse("%0 = leaf f32[2] [1, 2]\n%1 = exp %0 : f32[2]\n");
  std::vector<Outcome> outcomes = {make_reference_backend()->run(plain, RunOptions{true}),
                                   make_reference_backend()->run(plain, RunOptions{true})};
  outcomes[1].backend = "library";
  const Verdict v = compare(outcomes, OracleOptions{});
  EXPECT_TRUE(judge.reference_sides(plain, RunOptions{true}, outcomes, v, OracleOptions{}).empty());
}

// Every convention names the documentation that makes its point a choice (issue 29: a behaviour
// without one is not a convention but a finding): PyTorch's for conventions of any library (the
// reference's other side is LibTorch's), the scoped library's own otherwise.
TEST(Conventions, EveryConventionHasItsLibrarysDocumentationLink) {
  for (const ConventionInfo& c : kConventions) {
    SCOPED_TRACE(std::string(c.name));
    if (c.scope == "any")
      EXPECT_TRUE(c.doc.starts_with("https://pytorch.org/docs/") ||
                  c.doc.starts_with("https://github.com/pytorch/pytorch/"))
          << c.doc;
    else if (c.scope == "jax")
      EXPECT_TRUE(c.doc.starts_with("https://docs.jax.dev/")) << c.doc;
    else
      ADD_FAILURE() << "no documentation site known for scope " << c.scope;
  }
}

TEST(Conventions, ScopeNamesTheLibrariesAConventionAppliesTo) {
  const ConventionInfo any{Convention::ClampGradMinNorm, "a", "", "", "any"};
  const ConventionInfo two{Convention::FtzDaz, "b", "", "", "jax,xla"};
  EXPECT_TRUE(convention_applies_to(any, "onednn"));
  EXPECT_TRUE(convention_applies_to(two, "jax"));
  EXPECT_TRUE(convention_applies_to(two, "xla"));
  EXPECT_FALSE(convention_applies_to(two, "ja"));
  EXPECT_FALSE(convention_applies_to(two, "libtorch"));
  EXPECT_FALSE(convention_applies_to(convention_info(Convention::FtzDaz), "onednn"));
  // The all-at-once reference mixes no library's own conventions into another's.
  EXPECT_FALSE(ConventionSet::unscoped().has(Convention::FtzDaz));
  EXPECT_TRUE(ConventionSet::unscoped().has(Convention::ClampGradMinNorm));
}

// inv([[0]]) has no inverse: the reference raises. JAX under jit returns [[inf]] (its documented
// design: no value-dependent errors without checkify), which is that convention for a JAX backend
// and stays an error divergence for any other library, whose errors are its own.
TEST(Conventions, JaxReturningValuesWhereTheReferenceRaisesIsItsDocumentedDesign) {
  const Program p = parse("%0 = leaf f32[1,1] [0]\n%1 = inv %0 : f32[1,1]\nroot %1\n");
  const Outcome ref = make_reference_backend()->run(p, RunOptions{true});
  ASSERT_EQ(ref.status, Status::Error) << "a singular matrix has no inverse";
  for (const char* backend : {"jax", "child:jax", "libtorch"}) {
    SCOPED_TRACE(backend);
    Outcome values;
    values.backend = backend;
    values.status = Status::Ok;
    values.root.shape = {1, 1};
    values.root.values = {std::numeric_limits<double>::infinity()};
    const Verdict v = compare({ref, values}, OracleOptions{});
    ASSERT_EQ(v.divergences.size(), 1u);
    ASSERT_EQ(v.divergences[0].kind, DivergenceKind::Error);
    ConventionJudge judge(make_convention_references(), make_all_conventions_references());
    const ConventionJudgement j = judge.judge(p, RunOptions{true}, {ref, values}, v, {});
    if (std::string(backend) != "libtorch") {
      EXPECT_TRUE(j.residual.agree());
      ASSERT_EQ(j.hits.size(), 1u);
      EXPECT_EQ(j.hits[0].backend_convention, &kJaxNoValueErrors);
      EXPECT_NE(format_conventions(j.hits).find("name=jax-no-value-errors"), std::string::npos);
    } else {
      EXPECT_FALSE(j.residual.agree());
      EXPECT_TRUE(j.hits.empty());
    }
  }
}
