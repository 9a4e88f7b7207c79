// Forward mode. The reference's J·u is checked against central differences of its own forward
// pass in f64 (a derivation independent of every tangent rule) and against its reverse mode
// (the identity <1, J u> = sum over leaves of <gradient, u>). LibTorch's dual tensors are then
// checked against the reference on one program per op, a planted wrong forward-mode rule is
// caught and minimised, and the oracle reports tangents as a kind of their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/runner.h"
#include "burnmark/triage/signature.h"
#include "burnmark/triage/suppress.h"
#include "burnmark/triage/triage.h"
#include "libtorch_programs.h"
#include "programs_per_op.h"
#include "tape.h"

using namespace burnmark;
using namespace burnmark::testing;

namespace {

const RunOptions kForwardMode{false, true};
const RunOptions kBothModes{true, true};

OracleOptions with_tangents(bool gradients) {
  OracleOptions o;
  o.gradients = gradients;
  o.tangents = true;
  return o;
}

// Steps that keep every perturbed leaf exact in f32: for |x| < 256 and the tangent table's
// multiples of 1/4, x ± h u only needs bits x already has room for.
constexpr double kStep = 1.0 / 4096;

// Values in f64 storage: the reference's double arithmetic, no f32 rounding in between, so a
// central difference of step 2^-12 is accurate to about 1e-7 relative on smooth programs.
TEST(ReferenceForwardMode, EveryOpsTangentMatchesCentralDifferencesOfTheReference) {
  const auto ref = make_reference_backend();
  int compared = 0;
  for (const NamedProgram& np : programs_per_op()) {
    // At a tie, AD differentiates the branch where() took, while the function (x == y ? x : y
    // is y everywhere) has the other branch's derivative: a measure-zero set the comparison
    // programs visit on purpose, where a difference quotient is no judge.
    if (has_comparison(np.program)) continue;
    const Program p = with_float_dtype(np.program, FloatDType::F64);
    SCOPED_TRACE(to_text(p));
    const Outcome jvp = ref->run(p, kForwardMode);
    ASSERT_EQ(jvp.status, Status::Ok) << jvp.message;
    ASSERT_EQ(jvp.tangent.values.size(), jvp.root.values.size());
    const Outcome plus = ref->run(perturbed_along_tangents(p, kStep), RunOptions{false});
    const Outcome minus = ref->run(perturbed_along_tangents(p, -kStep), RunOptions{false});
    const Outcome plus_half = ref->run(perturbed_along_tangents(p, kStep / 2), RunOptions{false});
    const Outcome minus_half = ref->run(perturbed_along_tangents(p, -kStep / 2), RunOptions{false});
    for (std::size_t i = 0; i < jvp.tangent.values.size(); ++i) {
      const double t = jvp.tangent.values[i];
      const double f = jvp.root.values[i];
      const double right = (plus.root.values[i] - f) / kStep;
      const double left = (f - minus.root.values[i]) / kStep;
      // Richardson's extrapolation of two central differences: error O(h^4), so the norms of
      // small fractional order (large third derivatives near 0) are still judged to 1e-5.
      const double wide = (right + left) / 2;
      const double narrow = (plus_half.root.values[i] - minus_half.root.values[i]) / kStep;
      const double central = (4 * narrow - wide) / 3;
      const double scale = std::max(1.0, std::fabs(t));
      if (!std::isfinite(t) || !(jvp.tangent.error_bound[i] < 1e300) || !std::isfinite(central))
        continue;
      // Within a step of a kink or a jump (a tie in a comparison, logit's clamp at 1 - eps) the
      // one-sided quotients differ by the jump; on a smooth program by h f'' only.
      if (std::fabs(right - left) > 0.1 * scale) continue;
      EXPECT_NEAR(t, central, 1e-5 * scale) << op_name(np.op) << " [" << i << "]";
      ++compared;
    }
  }
  EXPECT_GT(compared, 1000);
}

// Forward and reverse mode are different code paths for every linear and product op (forward
// rules on tangents vs. backward rules), and the same backward rules seeded differently for the
// rest; the identity ties them together.
TEST(ReferenceForwardMode, ContractedTangentEqualsReverseModeGradientsAlongTheTangent) {
  const auto ref = make_reference_backend();
  for (const NamedProgram& np : programs_per_op()) {
    const Program p = with_float_dtype(np.program, FloatDType::F64);
    SCOPED_TRACE(to_text(p));
    const Outcome o = ref->run(p, kBothModes);
    ASSERT_EQ(o.status, Status::Ok) << o.message;
    double forward = 0.0;
    double reverse = 0.0;
    double scale = 1.0;
    for (double t : o.tangent.values) {
      forward += t;
      scale += std::fabs(t);
    }
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
      if (p.leaves[k].dtype != DType::F32) continue;
      const HostTensor u = leaf_tangent(p.leaves[k].shape, k);
      for (std::size_t i = 0; i < u.values.size(); ++i)
        reverse += o.grads[k].values[i] * u.values[i];
    }
    if (!std::isfinite(forward) || !std::isfinite(reverse)) continue;
    EXPECT_NEAR(forward, reverse, 1e-9 * scale) << op_name(np.op);
  }
}

TEST(ReferenceForwardMode, AnOperandWithoutATangentContributesNothing) {
  // where(x < y, x, y): the mask carries no tangent, and neither do index leaves of a gather.
  ProgramBuilder b;
  const Reg x = b.leaf({3}, {1.0f, -2.0f, 3.0f});
  const Reg idx = b.index_leaf({2}, {2, 0});
  const Program p = b.finish(b.op(Op::IndexSelect, {x, idx}, on_dim(0)));
  const Outcome o = make_reference_backend()->run(p, kForwardMode);
  ASSERT_EQ(o.status, Status::Ok) << o.message;
  const HostTensor u = leaf_tangent(Shape{3}, 0);
  EXPECT_EQ(o.tangent.values, (std::vector<double>{u.values[2], u.values[0]}));
}

// ---- LibTorch's dual tensors ----

// Where LibTorch 1.13.1's forward mode is wrong on these very programs (bugs.md).
struct ForwardModeDeparture {
  std::string_view statement;
  std::string_view anchor;
};
const std::vector<ForwardModeDeparture> kForwardModeDepartures = {
    {"reduce=prod", "libtorch-scatter-reduce-prod-jvp-zero"},
};

// The generator's table (op_generated_in_forward_mode) is what LibTorch lacks: an op left out
// is Unsupported there, every other op runs.
TEST(RefVsLibTorchForwardMode, LibTorchLacksForwardModeExactlyForTheOpsTheGeneratorLeavesOut) {
  const auto lt = make_libtorch_backend(1);
  std::set<Op> left_out, unsupported;
  for (const NamedProgram& np : programs_per_op()) {
    SCOPED_TRACE(to_text(np.program));
    const Outcome l = lt->run(np.program, kBothModes);
    if (!op_generated_in_forward_mode(np.op)) left_out.insert(np.op);
    if (l.status == Status::Unsupported) {
      unsupported.insert(np.op);
      EXPECT_NE(l.message.find("forward AD"), std::string::npos) << l.message;
    } else {
      EXPECT_EQ(l.status, Status::Ok) << l.message;
    }
  }
  // The generator's table is LibTorch 1.13's, which both releases run: a later release may
  // have gained formulas (said here, so the table can grow once 1.13 is dropped), never lost one.
  if (libtorch_release() == "1.13") {
    EXPECT_EQ(left_out, unsupported);
  } else {
    EXPECT_TRUE(
        std::includes(left_out.begin(), left_out.end(), unsupported.begin(), unsupported.end()));
    for (Op op : left_out)
      if (!unsupported.contains(op))
        std::printf("LibTorch %s has forward mode for %s, which 1.13 lacks\n",
                    libtorch_release().c_str(), std::string(op_name(op)).c_str());
  }
  EXPECT_FALSE(left_out.empty());
}

TEST(RefVsLibTorchForwardMode, EveryOpAgreesInForwardModeExceptItsRecordedDepartures) {
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  std::set<std::string_view> departed;
  int checked = 0;
  for (const NamedProgram& np : programs_per_op()) {
    if (!op_generated_in_forward_mode(np.op)) continue;
    const std::string text = to_text(np.program);
    SCOPED_TRACE(text);
    // Both modes at once: reverse mode must be unaffected by the dual tensors.
    const Outcome r = ref->run(np.program, kBothModes);
    const Outcome l = lt->run(np.program, kBothModes);
    ASSERT_EQ(r.status, Status::Ok) << r.message;
    ASSERT_EQ(l.status, Status::Ok) << l.message;
    const auto departure =
        std::find_if(kForwardModeDepartures.begin(), kForwardModeDepartures.end(),
                     [&](const auto& d) { return text.find(d.statement) != std::string::npos; });
    const Verdict v = compare({r, l}, with_tangents(true));
    if (departure == kForwardModeDepartures.end()) {
      EXPECT_TRUE(v.agree()) << op_name(np.op) << "\n" << format_verdict(v);
    } else {
      departed.insert(departure->anchor);
      ASSERT_FALSE(v.agree()) << departure->anchor << " no longer departs";
      for (const Divergence& d : v.divergences)
        EXPECT_EQ(d.kind, DivergenceKind::Tangent) << departure->anchor;
    }
    ++checked;
  }
  EXPECT_GE(checked, 145);
  EXPECT_EQ(departed.size(), kForwardModeDepartures.size());
}

// Every op's program through a LibTorch variant in forward mode, apart from the recorded
// departure, which every variant shares.
// `departing`: statements (as text) whose program this variant gets wrong by a recorded bug
// (bugs.md): they must still diverge, so that a fix is noticed.
void expect_every_op_agrees_in_forward_mode(Backend& variant,
                                            const std::vector<std::string_view>& departing = {}) {
  const auto ref = make_reference_backend();
  for (const NamedProgram& np : programs_per_op()) {
    if (!op_generated_in_forward_mode(np.op)) continue;
    const std::string text = to_text(np.program);
    if (text.find("reduce=prod") != std::string::npos) continue;
    SCOPED_TRACE(text);
    const Outcome r = ref->run(np.program, kBothModes);
    const Outcome l = variant.run(np.program, kBothModes);
    ASSERT_EQ(l.status, Status::Ok) << l.message;
    const Verdict v = compare({r, l}, with_tangents(true));
    if (std::any_of(departing.begin(), departing.end(),
                    [&](std::string_view d) { return text.find(d) != std::string::npos; }))
      EXPECT_FALSE(v.agree()) << variant.name() << ": " << op_name(np.op) << " no longer diverges";
    else
      EXPECT_TRUE(v.agree()) << variant.name() << ": " << op_name(np.op) << "\n"
                             << format_verdict(v);
  }
}

TEST(RefVsLibTorchForwardMode, EveryOpAgreesInForwardModeWithEveryTensorInAnotherLayout) {
  expect_every_op_agrees_in_forward_mode(*make_libtorch_strided_backend());
}

TEST(RefVsLibTorchForwardMode, EveryOpAgreesInForwardModeThroughItsInPlaceForm) {
  // celu_ takes its derivative from the result (libtorch-inplace-celu-grad-from-result); on
  // 1.13.1 masked_scatter_ into a reversed-dims view takes source in memory order
  // (libtorch-masked-scatter-noncontiguous-self).
  std::vector<std::string_view> departing = {"celu %0, alpha=0.1"};
  if (libtorch_release() == "1.13") departing.push_back("= masked_scatter ");
  expect_every_op_agrees_in_forward_mode(*make_libtorch_inplace_backend(), departing);
}

TEST(RefVsLibTorchForwardMode, TangentsThroughAWholeGraphAgree) {
  // Elementwise, broadcasting, a normaliser, a product and a reduction in one program.
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  ProgramBuilder b;
  const Reg x = b.leaf({2, 3}, {0.5f, -1.25f, 2.0f, -0.3f, 1.7f, -2.2f});
  const Reg y = b.leaf({3}, {1.5f, 0.25f, -0.75f});
  const Reg s = b.op(Op::Softmax, {b.op(Op::Mul, {b.op(Op::Tanh, {x}), y})}, on_dim(1));
  const Reg m = b.op(Op::Matmul, {s, b.op(Op::Transpose, {x}, two_dims(0, 1))});
  const Program p = b.finish(b.op(Op::Logsumexp, {m}, dim_keep(0, false)));
  const Verdict v = compare({ref->run(p, kBothModes), lt->run(p, kBothModes)}, with_tangents(true));
  EXPECT_TRUE(v.agree()) << format_verdict(v);
}

TEST(RefVsLibTorchForwardMode, ASingularSlogdetMayRaiseButASingularDetMayNot) {
  // logabsdet is -inf at a singular matrix and has no derivative: LibTorch 2.15's JVP raises
  // there (linalg.solve), which is as correct as an inf (found by the 2.15 forward-mode campaign).
  // det is a polynomial with a JVP everywhere (tr(adj(A) dA)): its raising is a finding
  // (bugs.md, libtorch-det-jvp-singular-raises; 1.13.1 gives 0, also a finding).
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  for (const Op op : {Op::Slogdet, Op::Det}) {
    SCOPED_TRACE(std::string(op_name(op)));
    ProgramBuilder b;
    const Program p = b.finish(b.op(op, {b.leaf({1, 1}, {0.0f})}));
    const Outcome r = ref->run(p, kBothModes);
    ASSERT_EQ(r.status, Status::Ok) << r.message;
    EXPECT_EQ(r.error_possible, op == Op::Slogdet);
    const Verdict v = compare({r, lt->run(p, kBothModes)}, with_tangents(true));
    EXPECT_EQ(v.agree(), op == Op::Slogdet) << format_verdict(v);
  }
  // LibTorch computes the tangent of a statement nothing reads as well, so a dead singular
  // slogdet raises too; the reference knows.
  ProgramBuilder b;
  const Reg root = b.op(Op::Neg, {b.leaf({1}, {0.0f})});
  b.op(Op::Slogdet, {b.leaf({1, 1}, {0.0f})});
  const Program dead = b.finish(root);
  const Outcome r = ref->run(dead, kBothModes);
  EXPECT_TRUE(r.error_possible);
  const Verdict v = compare({r, lt->run(dead, kBothModes)}, with_tangents(true));
  EXPECT_TRUE(v.agree()) << format_verdict(v);
}

// ---- A planted wrong forward-mode rule ----

// The reference with sigmoid's tangent scaled by 1.25 from flat index 4 on, as a wrong JVP rule
// in a vectorised tail would be: values and gradients stay right, only J·u is wrong.
class WrongSigmoidJvp {
public:
  using Tensor = ref::ReferenceFramework::Tensor;
  void reset(const Program& p) { inner_.reset(p); }
  Tensor leaf(const Leaf& l, bool g) { return inner_.leaf(l, g); }
  Tensor alias(const Tensor& t) { return inner_.alias(t); }
  Tensor apply(const Instr& instr, std::span<const Tensor* const> ops, const Shape& shape) {
    const Tensor t = inner_.apply(instr, ops, shape);
    if (instr.op != Op::Sigmoid) return t;
    HostTensor wrong = inner_.tangent(t);
    for (std::size_t i = 4; i < wrong.values.size(); ++i)
      wrong.values[i] *= 1.25;
    return inner_.dual(t, wrong);
  }
  void backward(const Tensor& t) { inner_.backward(t); }
  std::optional<HostTensor> grad(const Tensor& t) { return inner_.grad(t); }
  HostTensor read(const Tensor& t) { return inner_.read(t); }
  Tensor dual(const Tensor& t, const HostTensor& u) { return inner_.dual(t, u); }
  HostTensor tangent(const Tensor& t) { return inner_.tangent(t); }

private:
  ref::ReferenceFramework inner_;
};

Program long_sigmoid_program() {
  ProgramBuilder b;
  const Reg a =
      b.leaf({4, 3}, {0.3f, -0.7f, 1.1f, 2.5f, -3.0f, 0.05f, 0.9f, -0.4f, 1.7f, -2.2f, 0.6f, 3.3f});
  const Reg c = b.leaf({3}, {0.5f, -1.5f, 2.0f});
  const Reg t = b.op(Op::Tanh, {b.op(Op::Mul, {a, c})});
  const Reg e = b.op(Op::Add, {t, b.op(Op::Exp, {c})});
  const Reg s = b.op(Op::Sigmoid, {b.op(Op::Neg, {e})});
  const Reg m = b.op(Op::Mul, {s, b.op(Op::Abs, {a})});
  return b.finish(b.op(Op::SumDim, {b.op(Op::Square, {m})}, dim_keep(1, true)));
}

TEST(PlantedForwardMode, AWrongJvpRuleIsCaughtAsATangentDivergenceAndMinimisedToItsOp) {
  const auto ref = make_reference_backend();
  FrameworkBackend<WrongSigmoidJvp> planted("planted-jvp");
  const Program p = long_sigmoid_program();
  // Reverse mode alone cannot see it.
  EXPECT_TRUE(
      compare({ref->run(p, RunOptions{true}), planted.run(p, RunOptions{true})}, OracleOptions{})
          .agree());
  Runner runner({ref.get(), &planted}, with_tangents(true));
  const Verdict v = runner.check(p);
  ASSERT_FALSE(v.agree());
  EXPECT_EQ(primary_class(v), "planted-jvp:tangent");
  const std::optional<Characterization> c = characterize(runner, p);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->finding.culprit_label, "sigmoid");
  EXPECT_EQ(c->signature.ops, std::vector<std::string>{"sigmoid"});
  EXPECT_EQ(c->signature.kinds, std::vector<std::string>{"planted-jvp:tangent"});
  EXPECT_LE(c->minimized.stmts.size(), 3U) << to_text(c->minimized);
}

TEST(PlantedForwardMode, OneFaultThroughTwoGraphsSharesItsCulpritIdAndOneLineKnowsBoth) {
  // Two minimal programs that keep different upstream ops (as maximum's fault needs an infinite
  // upstream tangent): different signatures, one culprit id, one known-bug line for both.
  const auto ref = make_reference_backend();
  FrameworkBackend<WrongSigmoidJvp> planted("planted-jvp");
  Runner runner({ref.get(), &planted}, with_tangents(true));
  std::vector<Signature> found;
  for (Op upstream : {Op::Tanh, Op::Exp}) {
    ProgramBuilder b;
    const Reg x = b.leaf({6}, {0.5f, -1.0f, 0.25f, 1.5f, -0.75f, 2.0f});
    const Program p = b.finish(b.op(Op::Sigmoid, {b.op(upstream, {x})}));
    const Verdict v = runner.check(p);
    ASSERT_FALSE(v.agree());
    Signature sig = make_signature(p, v);
    sig.culprit_id = culprit_signature_id(p, sig, "sigmoid");
    found.push_back(sig);
  }
  EXPECT_NE(found[0].id, found[1].id);
  EXPECT_EQ(found[0].culprit_id, found[1].culprit_id);
  std::string error;
  const Suppressions known =
      Suppressions::parse(found[0].culprit_id + " planted-sigmoid-jvp the planted fault\n", error);
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_TRUE(known.matches(found[0]));
  EXPECT_TRUE(known.matches(found[1]));
  // characterize fills it from the culprit it found.
  const std::optional<Characterization> c = characterize(runner, long_sigmoid_program());
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->signature.culprit_id, culprit_signature_id(c->minimized, c->signature, "sigmoid"));
}

// ---- The oracle ----

TEST(ForwardModeOracle, ATangentDivergenceHasItsOwnKindAndIsComparedOnlyWhenAsked) {
  Outcome ref, got;
  ref.backend = "ref";
  got.backend = "other";
  ref.root = got.root = HostTensor{Shape{2}, {1.0, 2.0}, {}};
  ref.tangent = HostTensor{Shape{2}, {0.5, 3.0}, {}};
  got.tangent = HostTensor{Shape{2}, {0.5, 3.5}, {}};
  OracleOptions forward_only;
  forward_only.gradients = false;
  EXPECT_TRUE(compare({ref, got}, forward_only).agree());
  const Verdict v = compare({ref, got}, with_tangents(false));
  ASSERT_EQ(v.divergences.size(), 1U);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Tangent);
  EXPECT_EQ(v.divergences[0].first_index, 1U);
  EXPECT_NE(format_verdict(v).find("kind=tangent"), std::string::npos);
}

TEST(ForwardModeOracle, ABackendWithoutForwardModeIsSkippedNotJudged) {
  const Program p = long_sigmoid_program();
  const auto jit = make_libtorch_jit_backend(false);
  const Outcome o = jit->run(p, kForwardMode);
  EXPECT_EQ(o.status, Status::Unsupported);
  const Verdict v =
      compare({make_reference_backend()->run(p, kForwardMode), o}, with_tangents(false));
  EXPECT_TRUE(v.agree());
  EXPECT_EQ(v.skipped, std::vector<std::string>{o.backend});
}

TEST(LeafTangent, IsNonzeroExactInEveryDtypeAndDiffersBetweenLeaves) {
  const HostTensor a = leaf_tangent(Shape{4, 4}, 0);
  const HostTensor b = leaf_tangent(Shape{4, 4}, 1);
  EXPECT_NE(a.values, b.values);
  for (double v : a.values) {
    EXPECT_NE(v, 0.0);
    for (FloatDType d : kFloatDTypes)
      EXPECT_EQ(round_to(v, d), v) << float_dtype_name(d);
  }
}

} // namespace
