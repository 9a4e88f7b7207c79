// The reference backend and LibTorch on one small program per op: both run with gradients and
// must agree on the root and on every leaf gradient. Away from kinks and special values, so a
// failure here is a bug in one of the two backends, not a convention the fuzzer should report.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/input_file.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "libtorch_programs.h"
#include "platform_pins.h"
#include "programs_per_op.h"

using namespace burnmark;
using namespace burnmark::testing;

namespace {

constexpr double kTolerance = 1e-4;

// The seed's rule, written out here rather than taken from the oracle library under test.
bool agree(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= kTolerance * std::max({1.0, std::abs(a), std::abs(b)});
}

void expect_agree(const HostTensor& ref, const HostTensor& lt, const std::string& what) {
  EXPECT_EQ(ref.shape.to_string(), lt.shape.to_string()) << what;
  ASSERT_EQ(ref.values.size(), lt.values.size()) << what;
  for (std::size_t i = 0; i < ref.values.size(); ++i)
    EXPECT_TRUE(agree(ref.values[i], lt.values[i]))
        << what << " [" << i << "]: ref " << ref.values[i] << ", libtorch " << lt.values[i];
}

} // namespace

TEST(RefVsLibTorch, EveryOpAgreesOnForwardAndEveryLeafGradient) {
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  std::set<Op> covered;
  for (const NamedProgram& np : programs_per_op()) {
    covered.insert(np.op);
    SCOPED_TRACE(to_text(np.program));
    const Outcome r = ref->run(np.program, RunOptions{true});
    const Outcome l = lt->run(np.program, RunOptions{true});
    ASSERT_EQ(r.status, Status::Ok) << r.message;
    ASSERT_EQ(l.status, Status::Ok) << l.message;
    expect_agree(r.root, l.root, "root");
    ASSERT_EQ(r.grads.size(), np.program.leaves.size());
    ASSERT_EQ(l.grads.size(), np.program.leaves.size());
    for (std::size_t g = 0; g < r.grads.size(); ++g)
      expect_agree(r.grads[g], l.grads[g], "gradient of leaf " + std::to_string(g));
  }
  for (const OpInfo& info : kOpTable)
    EXPECT_TRUE(covered.count(info.op)) << "no program for " << info.name;
}

// ---- The same programs through TorchScript (libtorch-jit) and the NNC fuser (libtorch-nnc) ----

namespace {

// The program with its root squared, so that even a one-op program has a chain of two
// elementwise ops for the fuser to group (NNC fuses nothing smaller).
Program squared_root(Program p) {
  Stmt s;
  s.kind = StmtKind::Op;
  s.instr.op = Op::Mul;
  s.instr.operands = {p.root, p.root};
  s.shape = p.shape_of(p.root);
  p.stmts.push_back(s);
  p.root = static_cast<Reg>(p.stmts.size() - 1);
  return p;
}

// Where a JIT path takes the other side of a registered convention, or has a recorded bug
// (bugs.md, "LibTorch 1.13.1: TorchScript and the NNC fuser"), on these ordinary programs. A
// program matches an entry when its text contains `statement`. For a convention the test checks
// that the reference switched to that side agrees; for a bug, that the divergence is still there,
// so a LibTorch upgrade that fixes one is noticed here and its entry updated.
struct JitDeparture {
  std::string_view statement;
  std::optional<Convention> convention; // nullopt: a bug
  std::string_view anchor;              // the bugs.md entry, or the convention's name
};

// TorchScript's symbolic derivatives multiply the upstream gradient (NaN here, from the NaN bound)
// by clamp's mask.
const std::vector<JitDeparture> kJitDepartures = {
    {"clamp %0, min=nan", Convention::GateGradByProduct, "gate-grad-by-product"},
    {"clamp %0, min=-1, max=nan", Convention::GateGradByProduct, "gate-grad-by-product"},
    {"softplus %0, beta=1, threshold=0", std::nullopt, "libtorch-jit-softplus-grad-threshold"},
    {"softplus %0, beta=10, threshold=2", std::nullopt, "libtorch-jit-softplus-grad-from-result"},
};
// NNC's own lowerings, on top of the above.
const std::vector<JitDeparture> kNncDepartures = {
    {"clamp %0, min=nan", std::nullopt, "libtorch-nnc-clamp-nan-bound"},
    {"clamp %0, min=-1, max=nan", std::nullopt, "libtorch-nnc-clamp-nan-bound"},
    {"softplus %0, beta=1, threshold=0", std::nullopt, "libtorch-jit-softplus-grad-threshold"},
    {"softplus %0, beta=10, threshold=2", std::nullopt, "libtorch-jit-softplus-grad-from-result"},
    {"frac %0", std::nullopt, "libtorch-nnc-frac-floor"},
};
// The in-place forms' own backward formulas (celu_ from its result); on 1.13.1, masked_scatter_
// into a destination laid out with its dims reversed takes source in memory order.
std::vector<JitDeparture> inplace_departures() {
  std::vector<JitDeparture> d = {
      {"celu %0, alpha=0.1", std::nullopt, "libtorch-inplace-celu-grad-from-result"},
  };
  if (libtorch_release() == "1.13")
    d.push_back({"= masked_scatter ", std::nullopt, "libtorch-masked-scatter-noncontiguous-self"});
  return d;
}

bool outcome_agrees(const Outcome& ref, const Outcome& other, bool gradients) {
  std::vector<Outcome> pair = {ref, other};
  return compare(pair, OracleOptions{.tolerance = kDefaultTolerance, .gradients = gradients})
      .agree();
}

// Every op's program through `variant`, which must agree with the reference except where a
// departure is recorded. `square` squares each root first (the JIT variants: see squared_root).
void expect_every_op_through(Backend& variant, const std::vector<JitDeparture>& departures,
                             bool square) {
  const auto ref = make_reference_backend();
  for (const NamedProgram& np : programs_per_op()) {
    const Program program = square ? squared_root(np.program) : np.program;
    const std::string text = to_text(program);
    SCOPED_TRACE(text);
    const auto departure = std::find_if(departures.begin(), departures.end(), [&](const auto& d) {
      return text.find(d.statement) != std::string::npos;
    });
    for (bool gradients : {false, true}) {
      const Outcome r = ref->run(program, RunOptions{gradients});
      const Outcome j = variant.run(program, RunOptions{gradients});
      ASSERT_EQ(r.status, Status::Ok) << r.message;
      ASSERT_EQ(j.status, Status::Ok) << j.message;
      ASSERT_EQ(j.grads.size(), gradients ? program.leaves.size() : 0);
      if (departure == departures.end()) {
        EXPECT_TRUE(outcome_agrees(r, j, gradients)) << variant.name() << ": " << op_name(np.op);
        continue;
      }
      if (!gradients && departure->convention) {
        // A convention about gradients leaves the forward values alone.
        EXPECT_TRUE(outcome_agrees(r, j, false)) << departure->anchor;
      } else if (departure->convention) {
        const auto other_side = make_reference_backend(ConventionSet(*departure->convention));
        EXPECT_FALSE(outcome_agrees(r, j, true)) << departure->anchor << " no longer departs";
        EXPECT_TRUE(outcome_agrees(other_side->run(program, RunOptions{true}), j, true))
            << departure->anchor << " does not explain it";
      } else if (gradients) {
        EXPECT_FALSE(outcome_agrees(r, j, true)) << departure->anchor << " no longer diverges";
      }
    }
  }
}

// A chain of elementwise ops on one leaf: what every fuser groups.
Program elementwise_chain() {
  ProgramBuilder b;
  const Reg x = b.leaf({2, 3}, {0.5f, -1.25f, 2.0f, -0.3f, 1.7f, -2.2f});
  const Reg y = b.op(Op::Sigmoid, {b.op(Op::Mul, {x, x})});
  return b.finish(b.op(Op::Add, {b.op(Op::Tanh, {y}), x}));
}

} // namespace

TEST(RefVsLibTorchJit, EveryOpCompilesToTorchScriptAndAgreesExceptItsRecordedDepartures) {
  expect_every_op_through(*make_libtorch_jit_backend(false), kJitDepartures, true);
}

TEST(RefVsLibTorchJit, EveryOpThroughTheNncFuserAgreesExceptItsRecordedDepartures) {
  expect_every_op_through(*make_libtorch_jit_backend(true), kNncDepartures, true);
}

TEST(RefVsLibTorchJit, TheNncVariantFusesAndThePlainOneDoesNot) {
  const Program chain = elementwise_chain();
  const auto nnc = make_libtorch_jit_backend(true);
  const auto jit = make_libtorch_jit_backend(false);
  ASSERT_EQ(nnc->run(chain, RunOptions{false}).status, Status::Ok);
  ASSERT_EQ(jit->run(chain, RunOptions{false}).status, Status::Ok);
  EXPECT_GE(jit_graph_counts(*nnc).fusion_groups, 1) << nnc->note();
  EXPECT_EQ(jit_graph_counts(*jit).fusion_groups, 0) << jit->note();
  // Profiled and specialised: the executor guards the optimised code on the types it saw.
  EXPECT_GE(jit_graph_counts(*nnc).type_guards, 1) << nnc->note();
  // The eager backend is untouched by the fuser settings of the two variants.
  EXPECT_EQ(jit_graph_counts(*make_libtorch_backend(1)).fusion_groups, 0);
}

TEST(RefVsLibTorchJit, WithGradientsTheJitsOwnAutodiffTakesOver) {
  const Program chain = elementwise_chain();
  for (bool fuse : {false, true}) {
    const auto jit = make_libtorch_jit_backend(fuse);
    ASSERT_EQ(jit->run(chain, RunOptions{true}).status, Status::Ok);
    EXPECT_GE(jit_graph_counts(*jit).differentiable_graphs, 1) << jit->note();
    EXPECT_GE(jit_graph_counts(*jit).type_guards, 1) << jit->note();
  }
}

TEST(RefVsLibTorchJit, AnOpTheJitCannotRunIsAnErrorOutcomeNotACrash) {
  // A singular matrix: linalg_inv raises inside the TorchScript function, as it does eagerly.
  ProgramBuilder b;
  const Reg x = b.leaf({2, 2}, {1, 2, 2, 4});
  const Program p = b.finish(b.op(Op::Inv, {x}));
  const Outcome o = make_libtorch_jit_backend(false)->run(p, RunOptions{true});
  EXPECT_EQ(o.status, Status::Error);
  EXPECT_NE(o.message.find("singular"), std::string::npos) << o.message;
}

TEST(RefVsLibTorchStrided, EveryOpAgreesWithEveryTensorInAnotherLayout) {
  expect_every_op_through(*make_libtorch_strided_backend(), {}, false);
}

TEST(RefVsLibTorchInplace, EveryOpAgreesThroughItsInPlaceForm) {
  expect_every_op_through(*make_libtorch_inplace_backend(), inplace_departures(), false);
}

TEST(RefVsLibTorchJit, AnUnusedStatementThatRaisesStillRaisesAsInEager) {
  // inv of a singular matrix whose result nothing uses: eager runs it and raises; the JIT must
  // not drop it as dead code (torchscript_source returns unused results).
  ProgramBuilder b;
  const Reg x = b.leaf({2, 2}, {1, 2, 2, 4});
  b.op(Op::Inv, {x});
  const Program p = b.finish(b.op(Op::Neg, {x}));
  EXPECT_EQ(make_libtorch_backend(1)->run(p, RunOptions{true}).status, Status::Error);
  for (bool fuse : {false, true})
    EXPECT_EQ(make_libtorch_jit_backend(fuse)->run(p, RunOptions{true}).status, Status::Error);
}

// ---- The same programs in bf16 and f16 ----

namespace {

bool every_op_generated_at(const Program& p, FloatDType d) {
  for (const Stmt& s : p.stmts)
    if (s.kind == StmtKind::Op && !op_generated_at(s.instr.op, d)) return false;
  return true;
}

// Reduced-precision results a LibTorch release gets wrong on these very programs (bugs.md).
struct DtypeDeparture {
  std::string_view release; // libtorch_release()
  FloatDType dtype;
  std::string_view statement;
  std::string_view anchor;
};
const std::vector<DtypeDeparture> kDtypeDepartures = {
    {"1.13", FloatDType::BF16, "gelu %0, approximate=tanh", "libtorch-bf16-gelu-tanh-cancellation"},
};

} // namespace

// The generator's dtype table (op_generated_at) is what LibTorch lacks: every program whose ops
// are all generated at a dtype runs there, and every op left out fails there on some program
// (clamp with a NaN bound fills NaN without the f16 kernel it lacks).
TEST(RefVsLibTorchDtypes, LibTorchLacksExactlyTheOpsTheGeneratorLeavesOut) {
  const auto lt = make_libtorch_backend(1);
  for (FloatDType d : {FloatDType::BF16, FloatDType::F16}) {
    std::set<Op> left_out, failed;
    for (const NamedProgram& np : programs_per_op()) {
      const Program p = with_float_dtype(np.program, d);
      SCOPED_TRACE(to_text(p));
      const Outcome l = lt->run(p, RunOptions{true});
      if (every_op_generated_at(p, d)) EXPECT_EQ(l.status, Status::Ok) << l.message;
      if (op_generated_at(np.op, d)) continue;
      left_out.insert(np.op);
      if (l.status == Status::Error) failed.insert(np.op);
    }
    // The generator's table is LibTorch 1.13's, which both releases run: a later release may
    // have gained kernels (said here), never lost one.
    if (libtorch_release() == "1.13") {
      EXPECT_EQ(left_out, failed) << float_dtype_name(d);
    } else {
      EXPECT_TRUE(std::includes(left_out.begin(), left_out.end(), failed.begin(), failed.end()))
          << float_dtype_name(d);
      for (Op op : left_out)
        if (!failed.contains(op))
          std::printf("LibTorch %s runs %s in %s, which 1.13 lacks\n", libtorch_release().c_str(),
                      std::string(op_name(op)).c_str(), std::string(float_dtype_name(d)).c_str());
    }
    EXPECT_FALSE(left_out.empty());
  }
}

// Where the agreement below was measured: each kernel set LibTorch 1.13 and 2.15 have on an
// Intel CPU with AVX-512 (ATEN_CPU_CAPABILITY=default, avx2, avx512), oneDNN uncapped.
const std::set<std::string> kDtypesMeasuredOn = {
    "LibTorch 1.13 DEFAULT on GenuineIntel, oneDNN avx512",
    "LibTorch 1.13 AVX2 on GenuineIntel, oneDNN avx512",
    "LibTorch 1.13 AVX512 on GenuineIntel, oneDNN avx512",
    "LibTorch 2.15 DEFAULT on GenuineIntel, oneDNN avx512",
    "LibTorch 2.15 AVX2 on GenuineIntel, oneDNN avx512",
    "LibTorch 2.15 AVX512 on GenuineIntel, oneDNN avx512"};

// In bf16, f16 and f64 the reference rounds and bounds in the dtype; LibTorch agrees with it on
// every op it has, forward and backward, except where a departure is recorded, on the platforms
// where that was measured.
TEST(RefVsLibTorchDtypes, EveryOpLibTorchHasAgreesInBf16F16AndF64) {
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  std::set<std::pair<FloatDType, Op>> checked;
  for (FloatDType d : {FloatDType::BF16, FloatDType::F16, FloatDType::F64})
    for (const NamedProgram& np : programs_per_op()) {
      const Program p = with_float_dtype(np.program, d);
      if (!every_op_generated_at(p, d)) continue;
      const std::string text = to_text(p);
      SCOPED_TRACE(text);
      const Outcome r = ref->run(p, RunOptions{true});
      const Outcome l = lt->run(p, RunOptions{true});
      ASSERT_EQ(r.status, Status::Ok) << r.message;
      ASSERT_EQ(l.status, Status::Ok) << l.message;
      const bool departs =
          std::any_of(kDtypeDepartures.begin(), kDtypeDepartures.end(), [&](const auto& dep) {
            return dep.release == libtorch_release() && dep.dtype == d &&
                   text.find(dep.statement) != std::string::npos;
          });
      const bool agrees = outcome_agrees(r, l, true);
      if (agrees != !departs && !kDtypesMeasuredOn.contains(lt->platform())) {
        // Another processor's kernels rounded otherwise (issue 27 saw bf16 gelu differ on an
        // AMD EPYC): a fact to report, and the verdict must fit the values LibTorch gave.
        burnmark::testing::report_unpinned(lt->platform(),
                                           std::string(op_name(np.op)) + " in " +
                                               std::string(float_dtype_name(d)) +
                                               (agrees ? " agrees: " : " diverges: ") + text);
        EXPECT_TRUE(burnmark::testing::verdict_fits_values(r, l, OracleOptions{}));
      } else {
        EXPECT_EQ(agrees, !departs) << op_name(np.op) << " on " << lt->platform();
      }
      checked.insert({d, np.op});
    }
  // Most of the vocabulary runs in bf16; f16 on the CPU has far less.
  EXPECT_GE(std::count_if(checked.begin(), checked.end(),
                          [](const auto& c) { return c.first == FloatDType::BF16; }),
            140);
  EXPECT_GE(std::count_if(checked.begin(), checked.end(),
                          [](const auto& c) { return c.first == FloatDType::F16; }),
            55);
  EXPECT_EQ(std::count_if(checked.begin(), checked.end(),
                          [](const auto& c) { return c.first == FloatDType::F64; }),
            static_cast<std::ptrdiff_t>(kOpCount));
}

// corpus/programs-bf16, -f16 and -f64: every program is in its directory's dtype, is a seed the
// generator can produce at that dtype (corpus/regenerate.sh encodes them), and replays in
// agreement, gradients included.
TEST(RefVsLibTorchDtypes, EachDtypesCorpusReplaysInAgreement) {
  const char* env = std::getenv("BURNMARK_SOURCE_DIR");
  const std::filesystem::path root = env ? env : BURNMARK_FALLBACK_SOURCE_DIR;
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  for (FloatDType d : {FloatDType::BF16, FloatDType::F16, FloatDType::F64}) {
    const std::filesystem::path dir =
        root / "corpus" / ("programs-" + std::string(float_dtype_name(d)));
    ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
    GeneratorOptions options;
    options.dtypes = {d};
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".txt") continue;
      ++files;
      std::string error;
      const std::optional<std::string> text = read_input_file(entry.path().string(), error);
      ASSERT_TRUE(text) << error;
      const ParseResult parsed = parse_program(*text);
      ASSERT_TRUE(parsed.ok()) << entry.path() << ": " << parsed.error();
      const Program& p = parsed.program();
      SCOPED_TRACE(entry.path().string());
      EXPECT_EQ(p.float_dtype, d);
      const EncodeResult e = encode(p, options);
      ASSERT_TRUE(e.ok()) << e.error();
      EXPECT_EQ(generate(e.bytes(), options), p);
      const Outcome r = ref->run(p, RunOptions{true});
      const Outcome l = lt->run(p, RunOptions{true});
      ASSERT_EQ(r.status, Status::Ok) << r.message;
      ASSERT_EQ(l.status, Status::Ok) << l.message;
      EXPECT_TRUE(outcome_agrees(r, l, true));
    }
    EXPECT_GE(files, 5) << dir;
  }
}

// f64 programs at f64's own edges, with values no f32 holds: the reference (double arithmetic,
// IEEE 754 overflow and gradual underflow) gets the expected results, and LibTorch's f64 kernels
// agree with it, gradients included.
TEST(RefVsLibTorchDtypes, F64ProgramsAgreeAtF64sOwnEdges) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* text;
    std::vector<double> root;
  };
  const Case cases[] = {
      {"%0 = leaf f64[5] [709.78, 710, -745, -746, 1e-310]\n%1 = exp %0 : f64[5]\n",
       {std::exp(709.78), kInf, 5e-324, 0.0, 1.0}},
      {"%0 = leaf f64[3] [1e-310, 5e-324, -2.2250738585072014e-308]\n%1 = leaf f64[1] [2]\n"
       "%2 = mul %0, %1 : f64[3]\n",
       {2e-310, 1e-323, -0x1p-1021}},
      {"%0 = leaf f64[2] [1e+300, -1e+300]\n%1 = mul %0, %0 : f64[2]\n", {kInf, kInf}},
      {"%0 = leaf f64[2] [1e+308, 1e+308]\n%1 = sum %0 : f64[]\n", {kInf}},
      {"%0 = leaf f64[3] [710.47, -710.47, 711]\n%1 = cosh %0 : f64[3]\n",
       {std::cosh(710.47), std::cosh(710.47), kInf}},
      {"%0 = leaf f64[3] [710.47, -710.47, 711]\n%1 = sinh %0 : f64[3]\n",
       {std::sinh(710.47), -std::sinh(710.47), kInf}},
      {"%0 = leaf f64[3] [3.5e+38, -1e+39, 1e-39]\n%1 = square %0 : f64[3]\n",
       {3.5e38 * 3.5e38, 1e78, 1e-78}},
      // Both means overflow in a naive sum; the variance is 0.
      {"%0 = leaf f64[2,2] [1.7976931348623157e+308, 0, 1.7976931348623157e+308, 0]\n"
       "%1 = var_dim %0, dim=0, keepdim=false, correction=0 : f64[2]\n",
       {0.0, 0.0}},
  };
  const auto ref = make_reference_backend();
  const auto lt = make_libtorch_backend(1);
  for (const Case& c : cases) {
    const ParseResult parsed = parse_program(std::string("dtype f64\n") + c.text);
    ASSERT_TRUE(parsed.ok()) << parsed.error();
    const Program& p = parsed.program();
    SCOPED_TRACE(to_text(p));
    const Outcome r = ref->run(p, RunOptions{true});
    const Outcome l = lt->run(p, RunOptions{true});
    ASSERT_EQ(r.status, Status::Ok) << r.message;
    ASSERT_EQ(l.status, Status::Ok) << l.message;
    ASSERT_EQ(r.root.values.size(), c.root.size());
    for (std::size_t i = 0; i < c.root.size(); ++i)
      EXPECT_TRUE(agree(r.root.values[i], c.root[i]))
          << "[" << i << "]: ref " << r.root.values[i] << ", expected " << c.root[i];
    expect_agree(r.root, l.root, "root");
    ASSERT_EQ(r.grads.size(), l.grads.size());
    for (std::size_t k = 0; k < r.grads.size(); ++k)
      expect_agree(r.grads[k], l.grads[k], "gradient of leaf " + std::to_string(k));
    EXPECT_TRUE(outcome_agrees(r, l, true));
  }
}
