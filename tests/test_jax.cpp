// The JAX backend's emitter and runner: every op of ops.def has JAX source or an unsupported
// name, a hand-made program's source is exactly the one worked out by hand, and every corpus
// program (f32 and f64) and every per-op program, run through runner_jax.py in the jax venv
// (jitted, every mode: root, gradients, J·u, H·v), agrees with the reference through the
// oracle, up to the JAX behaviours listed below.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/conventions.h"
#include "programs_per_op.h"
#include "python_source.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) throw std::runtime_error(r.error());
  return r.program();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(JaxSource, EveryOpHasSourceOrAnUnsupportedName) {
  std::set<Op> seen;
  for (const auto& [op, program] : burnmark::testing::programs_per_op()) {
    seen.insert(op);
    std::vector<Program> variants = {program};
    // Every scatter_reduce reduction, with and without self.
    if (op == Op::ScatterReduce)
      for (int v = 0; v < static_cast<int>(kScatterReduceNames.size()); ++v)
        for (bool self : {false, true}) {
          Program p = program;
          for (Stmt& s : p.stmts)
            if (s.kind == StmtKind::Op && s.instr.op == Op::ScatterReduce) {
              s.instr.attrs.variant = v;
              s.instr.attrs.include_self = self;
            }
          variants.push_back(p);
        }
    for (const Program& p : variants) {
      const PythonFunction fn = jax_function(p);
      EXPECT_NE(fn.source.empty(), fn.unsupported.empty()) << op_name(op) << "\n" << to_text(p);
      if (!fn.source.empty()) {
        EXPECT_EQ(fn.source.rfind("def program(", 0), 0u) << fn.source;
        EXPECT_NE(fn.source.find(fmt::format("return r{}\n", p.root)), std::string::npos);
      }
    }
  }
  EXPECT_EQ(seen.size(), kOpCount) << "programs_per_op misses an op";
}

TEST(JaxSource, OnlyScatterReduceProdIsUnsupported) {
  // The one op form JAX cannot differentiate the way PyTorch does (see jax_source.cpp).
  Program p = parse("%0 = leaf f32[3] [1, 2, 3]\n%1 = leaf i64[2] [0, 0]\n"
                    "%2 = leaf f32[2] [4, 5]\n"
                    "%3 = scatter_reduce %0, %1, %2, dim=0, reduce=prod, include_self=true : "
                    "f32[3]\nroot %3\n");
  const PythonFunction fn = jax_function(p);
  EXPECT_EQ(fn.unsupported, "scatter_reduce prod");
  EXPECT_EQ(fn.source, "");
}

TEST(JaxSource, HandWrittenProgram) {
  const Program p = parse("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n"
                          "%1 = alias %0 : f32[2,3]\n"
                          "%2 = leaf f32[3] [0.5, -1, 2]\n"
                          "%3 = clamp %1, min=-0.5, max=inf : f32[2,3]\n"
                          "%4 = pow %3, exponent=2 : f32[2,3]\n"
                          "%5 = mul %4, %2 : f32[2,3]\n"
                          "%6 = sum_dim %5, dim=1, keepdim=true : f32[2,1]\n"
                          "%7 = select %0, dim=0, index=1 : f32[3]\n"
                          "%8 = repeat %7, dim=0, times=2 : f32[6]\n"
                          "root %6\n");
  const PythonFunction fn = jax_function(p);
  EXPECT_EQ(fn.unsupported, "");
  // Worked out from the JAX documentation: parameters in leaf order, the alias a plain name,
  // float literals always with a '.', unused statements kept.
  EXPECT_EQ(fn.source,
            "def program(r0, r2):\n"
            "    r1 = r0\n"
            "    r3 = lax.clamp(jnp.asarray(-0.5, r1.dtype), r1, jnp.asarray(jnp.inf, r1.dtype))\n"
            "    r4 = jnp.power(r3, 2.0)\n"
            "    r5 = jnp.multiply(r4, r2)\n"
            "    r6 = jnp.sum(r5, axis=1, keepdims=True)\n"
            "    r7 = lax.index_in_dim(r0, 1, axis=0, keepdims=False)\n"
            "    r8 = jnp.tile(r7, (2,))\n"
            "    return r6\n");
}

// ---- the corpus through JAX ----

fs::path jax_python() {
  if (const char* exe = std::getenv("BURNMARK_JAX_PYTHON_EXE"); exe && *exe) return exe;
  return fs::path(BURNMARK_TEST_SOURCE_DIR) / ".deps" / ("jax-" BURNMARK_JAX_VERSION) / "bin" /
         "python";
}

json hexed(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values)
    out.push_back(fmt::format("{:a}", v));
  return out;
}

HostTensor host(const json& t) {
  HostTensor h;
  for (std::int64_t d : t[0].get<std::vector<std::int64_t>>())
    h.shape.push_back(d);
  for (const auto& v : t[1])
    h.values.push_back(std::strtod(v.get<std::string>().c_str(), nullptr));
  return h;
}

struct Case {
  std::string name;
  Program program;
};

std::vector<Case> corpus_cases() {
  std::vector<Case> cases;
  for (const char* dir : {"corpus/programs", "corpus/programs-f64"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(BURNMARK_TEST_SOURCE_DIR) / dir))
      if (e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files)
      cases.push_back({fmt::format("{}/{}", dir, f.filename().string()), parse(read_file(f))});
  }
  return cases;
}

std::vector<Case> per_op_cases() {
  std::vector<Case> cases;
  std::map<Op, int> seen; // named by op and their place among its programs
  for (auto& [op, program] : burnmark::testing::programs_per_op())
    cases.push_back({fmt::format("per-op {}/{}", op_name(op), seen[op]++), program});
  return cases;
}

// The divergences JAX shows on these programs that are JAX's own behaviour, not the emitter's
// mistake (each reported to the lead): case name -> the kinds expected.
const std::map<std::string, std::set<DivergenceKind>>& known_jax_behaviours() {
  using K = DivergenceKind;
  static const std::map<std::string, std::set<DivergenceKind>> known = {
      // XLA's CPU kernels flush f32 subnormals to zero: relu(1e-40) = 0, and relu's gradient
      // there 0 (1e-40 > 0 is false once flushed). JAX's relu'(NaN) is 0 (its custom JVP
      // selects on x > 0), the reference's 1 (threshold_backward passes g unless result <= 0).
      // JAX's abs'(±0) is 1 (select on x >= 0), the reference's 0 (sgn(0)): both subgradients;
      // the tangents show the same three choices.
      {"corpus/programs/special_values_unary.txt", {K::Forward, K::Gradient, K::Tangent}},
      {"corpus/programs-f64/special_values_unary.txt", {K::Gradient, K::Tangent}},
      // JAX's expm1 JVP is g * (expm1(x) + 1), which cancels for x << 0: celu'(-1.3) with
      // alpha 0.1 is exp(-13) = 2.26033e-6, JAX 2.26498e-6 (elu and selu share it).
      {"per-op celu/3", {K::Gradient, K::Tangent, K::Hvp}},
      // scatter_reduce amin under jax.jit: a self element that is not the group's minimum gets
      // -2^-23 (times g) instead of 0; op by op JAX gives the exact 0.
      {"per-op scatter_reduce/18", {K::Gradient}},
  };
  return known;
}

// Runs `cases` through runner_jax.py (one Python process, jit as in a campaign) and the
// reference, and expects exactly the known disagreements among them.
void expect_agreement(const std::vector<Case>& cases, const std::string& label) {
  const fs::path python = jax_python();
  json request = {{"cases", json::array()}};
  std::vector<std::size_t> sent; // indices into cases of the supported ones
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const Program& p = cases[c].program;
    const PythonFunction fn = jax_function(p);
    if (fn.source.empty()) continue;
    json leaves = json::array(), tangents = json::array();
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
      const Leaf& leaf = p.leaves[k];
      std::vector<std::int64_t> shape(leaf.shape.data(), leaf.shape.data() + leaf.shape.rank());
      if (leaf.dtype == DType::I64) {
        leaves.push_back({"i64", shape, leaf.indices});
        tangents.push_back(nullptr);
      } else {
        leaves.push_back({"float", shape, hexed(leaf.data)});
        tangents.push_back(hexed(leaf_tangent(leaf.shape, k).values));
      }
    }
    request["cases"].push_back({{"source", fn.source},
                                {"dtype", std::string(float_dtype_name(p.float_dtype))},
                                {"leaves", leaves},
                                {"tangents", tangents},
                                {"hessian", true}});
    sent.push_back(c);
  }
  const fs::path dir = burnmark::testing::scratch_dir("jax_" + label);
  std::ofstream(dir / "cases.json") << request.dump();
  const std::string command = fmt::format(
      "'{}' '{}/tests/jax_run_cases.py' '{}/src/backends/python' '{}' '{}' 2>'{}'", python.string(),
      BURNMARK_TEST_SOURCE_DIR, BURNMARK_TEST_SOURCE_DIR, (dir / "cases.json").string(),
      (dir / "results.json").string(), (dir / "stderr.txt").string());
  ASSERT_EQ(std::system(command.c_str()), 0) << command << "\n" << read_file(dir / "stderr.txt");
  const json answer = json::parse(read_file(dir / "results.json"));
  const json& results = answer["results"];
  ASSERT_EQ(results.size(), sent.size());

  RegistryOptions options;
  BackendsResult made = make_backends("ref", options);
  ASSERT_TRUE(made.ok()) << made.error();
  std::unique_ptr<Backend> ref = std::move(made.take()[0]);

  std::map<std::string, std::set<DivergenceKind>> seen;
  std::string report;
  for (std::size_t k = 0; k < sent.size(); ++k) {
    const Case& c = cases[sent[k]];
    const json& r = results[k];
    Outcome jax;
    jax.backend = "jax";
    if (r["status"] == "ok") {
      jax.root = host(r["root"]);
      for (const json& g : r["grads"])
        jax.grads.push_back(host(g));
      jax.tangent = host(r["tangent"]);
      for (const json& h : r["hvp"])
        jax.hvp.push_back(host(h));
    } else {
      jax.status = r["status"] == "error" ? Status::Error : Status::Unsupported;
      jax.message = r["message"].get<std::string>();
    }
    // Every mode at once: gradients, J·u and H·v (docs/conventions.md, forward mode and second
    // order, for what the reference leaves unjudged).
    Outcome reference = run_backend(*ref, c.program, RunOptions{true, true, true});
    reference.backend = "ref";
    OracleOptions judge;
    judge.tangents = judge.hessian = true;
    const Verdict v = compare({reference, jax}, judge);
    if (v.agree()) continue;
    for (const Divergence& d : v.divergences)
      seen[c.name].insert(d.kind);
    report += fmt::format("== {}\n{}{}", c.name, to_text(c.program), format_verdict(v));
  }
  std::cout << "jax: " << answer["platform"].get<std::string>() << ", " << sent.size() << " of "
            << cases.size() << " programs run, " << seen.size() << " disagree\n";
  std::map<std::string, std::set<DivergenceKind>> expected;
  for (const Case& c : cases)
    if (auto it = known_jax_behaviours().find(c.name); it != known_jax_behaviours().end())
      expected.insert(*it);
  EXPECT_EQ(seen, expected) << report;
}

bool have_jax() {
  return fs::exists(jax_python());
}
// CI installs the venv (tools/install-deps.sh): there a missing one is a failure, not a skip.
#define SKIP_WITHOUT_JAX()                                                                         \
  if (!have_jax()) {                                                                               \
    if (std::getenv("CI") != nullptr) FAIL() << "CI is set but there is no JAX venv";              \
    GTEST_SKIP() << "no JAX venv at " << jax_python()                                              \
                 << " (tools/install-deps.sh installs it; BURNMARK_JAX_PYTHON_EXE overrides)";     \
  }

TEST(JaxCorpus, CorpusProgramsAgreeWithTheReference) {
  SKIP_WITHOUT_JAX();
  expect_agreement(corpus_cases(), "corpus");
}

TEST(JaxCorpus, PerOpProgramsAgreeWithTheReference) {
  SKIP_WITHOUT_JAX();
  expect_agreement(per_op_cases(), "per_op");
}

// Through the registry's Python child backend (burnmark_child.py --framework jax): the same
// values as the reference on a program worked out by hand, and its platform line.
TEST(JaxBackend, RunsThroughTheRegistry) {
  SKIP_WITHOUT_JAX();
  RegistryOptions options;
  options.jax_python = jax_python().string();
  BackendsResult made = make_backends("jax", options);
  ASSERT_TRUE(made.ok()) << made.error();
  std::unique_ptr<Backend> jax = std::move(made.take()[0]);
  // sum(x * x) with x = [1, -2, 3]: 14, gradient 2x, J·u = 2 <x, u>, H·v = 2v.
  const Program p = parse("%0 = leaf f32[3] [1, -2, 3]\n%1 = mul %0, %0 : f32[3]\n"
                          "%2 = sum %1 : f32[]\nroot %2\n");
  const Outcome out = run_backend(*jax, p, RunOptions{true, true, true});
  ASSERT_EQ(out.status, Status::Ok) << out.message;
  EXPECT_EQ(out.root.values, std::vector<double>{14});
  ASSERT_EQ(out.grads.size(), 1u);
  EXPECT_EQ(out.grads[0].values, (std::vector<double>{2, -4, 6}));
  const HostTensor u = leaf_tangent(p.leaves[0].shape, 0);
  EXPECT_EQ(out.tangent.values,
            std::vector<double>{2 * (1 * u.values[0] - 2 * u.values[1] + 3 * u.values[2])});
  ASSERT_EQ(out.hvp.size(), 1u);
  EXPECT_EQ(out.hvp[0].values,
            (std::vector<double>{2 * u.values[0], 2 * u.values[1], 2 * u.values[2]}));
  EXPECT_TRUE(jax->platform().starts_with("jax 0.10.2 cpu x64 jit")) << jax->platform();
}

std::unique_ptr<Backend> make_jax() {
  RegistryOptions options;
  options.jax_python = jax_python().string();
  BackendsResult made = make_backends("jax", options);
  if (!made.ok()) throw std::runtime_error(made.error());
  return std::move(made.take()[0]);
}

// The reference and the real JAX backend on `p`, judged with every registered convention.
struct Judged {
  Verdict verdict;
  ConventionJudgement judgement;
  bool reached_ftz = false;
};
Judged judge_against_jax(const Program& p) {
  const RunOptions run{true};
  const std::vector<Outcome> outcomes = {run_backend(*make_reference_backend(), p, run),
                                         run_backend(*make_jax(), p, run)};
  Judged j;
  j.verdict = compare(outcomes, OracleOptions{});
  j.reached_ftz = ConventionSet::from_bits(outcomes[0].conventions_reached).has(Convention::FtzDaz);
  ConventionJudge judge(make_convention_references(), make_all_conventions_references());
  j.judgement = judge.judge(p, run, outcomes, j.verdict, OracleOptions{});
  return j;
}

// JAX's documented flush to zero (conventions.def's ftz-daz) is a convention for jax, one for
// every op: the f32 campaign's cumprod, whose second product -0.9137255 * FLT_MIN is subnormal
// and which JAX gives as -0, and relu(1e-40) = 0 with gradient 0 (bugs.md jax-ftz-subnormal).
TEST(JaxConventions, FlushToZeroIsJaxsDocumentedConvention) {
  SKIP_WITHOUT_JAX();
  for (const char* text : {"%0 = leaf f32[1,1,2] [-0.9137255, 1.1754944e-38]\n"
                           "%1 = cumprod %0, dim=2 : f32[1,1,2]\nroot %1\n",
                           "%0 = leaf f32[1] [1e-40]\n%1 = relu %0 : f32[1]\nroot %1\n"}) {
    SCOPED_TRACE(text);
    const Judged j = judge_against_jax(parse(text));
    ASSERT_FALSE(j.verdict.agree()) << "JAX no longer flushes: " << format_verdict(j.verdict);
    ASSERT_EQ(j.judgement.hits.size(), 1u) << format_verdict(j.verdict);
    EXPECT_EQ(j.judgement.hits[0].backend, "jax");
    EXPECT_EQ(j.judgement.hits[0].convention, Convention::FtzDaz);
    EXPECT_TRUE(j.judgement.residual.agree());
  }
}

// A program that reaches the flush but where JAX also differs in a way flushing does not explain
// (elu'(-20) = exp(-20) = 2.06e-9, JAX 0: bugs.md jax-expm1-grad-cancellation) stays a divergence.
TEST(JaxConventions, ADifferenceFlushingDoesNotExplainStaysADivergence) {
  SKIP_WITHOUT_JAX();
  const Judged j = judge_against_jax(parse("%0 = leaf f32[2] [1e-40, -20]\n"
                                           "%1 = elu %0, alpha=1 : f32[2]\n"
                                           "%2 = sum %1 : f32[]\nroot %2\n"));
  EXPECT_TRUE(j.reached_ftz);
  ASSERT_FALSE(j.verdict.agree());
  EXPECT_TRUE(j.judgement.hits.empty());
  EXPECT_FALSE(j.judgement.residual.agree());
}

} // namespace
