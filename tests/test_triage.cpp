// Triage end to end: a backend with two planted bugs (wrapping the real reference) is compared
// with the reference through the real oracle; the minimiser, signatures, suppression, grouping
// and sweep must recover what was planted.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "burnmark/triage/minimize.h"
#include "burnmark/triage/rewrite.h"
#include "burnmark/triage/signature.h"
#include "burnmark/triage/suppress.h"
#include "burnmark/triage/sweep.h"
#include "burnmark/triage/triage.h"
#include "triage_fixtures.h"

#include "scratch_dir.h"

using namespace burnmark;
using namespace burnmark::triage_test;

namespace {

Attrs dims(int d0, int d1) {
  Attrs a;
  a.dim = d0;
  a.dim1 = d1;
  return a;
}

// 30 ops around one sigmoid over 12 elements. `c_chain_first` emits the independent c-chain
// before the a/b part, renumbering every register without changing the computation.
Program big_sigmoid_program(bool c_chain_first) {
  Builder b;
  Reg a = -1, bb = -1, c = -1, t5 = -1, s = -1, x2 = -1;
  const auto ab_part = [&] {
    a = b.leaf({4, 3});
    bb = b.leaf({3}, {0.5f, -1.5f, 2.0f});
    const Reg t1 = b.op(Op::Mul, {a, bb});
    const Reg t2 = b.op(Op::Tanh, {t1});
    const Reg t3 = b.op(Op::Exp, {bb});
    const Reg t4 = b.op(Op::Add, {t2, t3});
    t5 = b.op(Op::Transpose, {t4}, dims(0, 1)); // [3,4]
    const Reg x1 = b.op(Op::Mul, {a, a});
    x2 = b.op(Op::MeanAll, {x1}); // small, so that tanh below does not saturate
  };
  const auto c_part = [&] {
    c = b.leaf({12}, {0.3f, -0.7f, 1.1f, 2.5f, -3.0f, 0.05f, 0.9f, -0.4f, 1.7f, -2.2f, 0.6f, 3.3f});
    const Reg u1 = b.op(Op::Abs, {c});
    const Reg u2 = b.op(Op::Neg, {u1});
    const Reg u3 = b.op(Op::Add, {c, u2});
    const Reg u4 = b.op(Op::Mul, {u3, c});
    const Reg u5 = b.op(Op::Tanh, {u4});
    s = b.op(Op::Sigmoid, {u5});
  };
  if (c_chain_first) {
    c_part();
    ab_part();
  } else {
    ab_part();
    c_part();
  }
  const Reg v1 = b.op(Op::SumAll, {t5});
  const Reg v2 = b.op(Op::Mul, {s, x2});
  const Reg v3 = b.op(Op::Tanh, {v2});
  const Reg v4 = b.op(Op::Abs, {v3});
  const Reg w1 = b.op(Op::SumDim, {t5}, dims(1, 0)); // [3]
  const Reg w2 = b.op(Op::Relu, {w1});
  const Reg w3 = b.op(Op::Repeat, {w2}, [] {
    Attrs r;
    r.dim = 0;
    r.times = 4;
    return r;
  }()); // [12]
  const Reg w4 = b.op(Op::Mul, {w3, v4});
  const Reg w5 = b.op(Op::Sub, {w4, c});
  const Reg w6 = b.op(Op::Clamp, {w5}, [] {
    Attrs r;
    r.lo = -1;
    r.hi = 1;
    return r;
  }());
  const Reg x3 = b.op(Op::Add, {w6, v1});
  const Reg x4 = b.op(Op::Neg, {x3});
  const Reg x5 = b.op(Op::Exp, {x4});
  const Reg x6 = b.op(Op::Mul, {x5, x3});
  const Reg x7 = b.op(Op::Add, {x6, v4});
  const Reg x8 = b.op(Op::Tanh, {x7});
  const Reg root = b.op(Op::SumAll, {x8});
  return b.done(root);
}

// Bug B in a larger program: exp over a leaf holding -inf, then more arithmetic.
Program exp_program(float scale) {
  Builder b;
  const Reg x = b.leaf({4}, {0.5f, kNegInf, 2.0f * scale, 1.0f});
  const Reg y = b.leaf({4}, {1.5f, 0.25f, -1.0f, scale});
  const Reg e = b.op(Op::Exp, {x});
  const Reg m = b.op(Op::Mul, {e, y});
  const Reg t = b.op(Op::Tanh, {m});
  return b.done(b.op(Op::SumAll, {t}));
}

int count_ops(const Program& p) {
  return static_cast<int>(std::count_if(p.stmts.begin(), p.stmts.end(),
                                        [](const Stmt& s) { return s.kind == StmtKind::Op; }));
}

std::string expected_sigmoid_repro() {
  return "# burnmark program v1\n"
         "%0 = leaf f32[9] [0, 0, 0, 0, 0, 0, 0, 0, 0]\n"
         "%1 = sigmoid %0 : f32[9]\n"
         "root %1\n";
}

} // namespace

TEST(PlantedBackend, AgreesExceptWherePlanted) {
  Bench bench;
  Builder small;
  const Reg x = small.leaf({8});
  const Program eight = small.done(small.op(Op::Sigmoid, {x}));
  EXPECT_TRUE(bench.runner.check(eight).agree()) << "sigmoid over 8 elements is not planted";
  const Verdict v = bench.runner.check(big_sigmoid_program(false));
  ASSERT_FALSE(v.agree());
  EXPECT_EQ(primary_class(v), "planted:forward");
}

TEST(Rewrite, ResizeAxisKeepsRowsAndRepeatsThemCyclically) {
  const Leaf l{Shape{2, 3}, {1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(resize_axis(l, 1, 2).data, (std::vector<double>{1, 2, 4, 5}));
  EXPECT_EQ(resize_axis(l, 1, 5).data, (std::vector<double>{1, 2, 3, 1, 2, 4, 5, 6, 4, 5}));
  EXPECT_EQ(resize_axis(l, 0, 3).shape.to_string(), "[3,3]");
  EXPECT_EQ(resize_axis(l, 0, 3).data, (std::vector<double>{1, 2, 3, 4, 5, 6, 1, 2, 3}));
}

TEST(Rewrite, ReplaceAndCompactRenumberRegistersAndLeaves) {
  Builder b;
  const Reg x = b.leaf({3});
  const Reg y = b.leaf({3});
  const Reg n = b.op(Op::Neg, {x});
  const Reg e = b.op(Op::Exp, {n});
  const Program p = b.done(b.op(Op::Add, {e, y}));
  // exp(neg(x)) + y  ->  neg(x) + y
  const Program q = replace_register(p, e, n);
  EXPECT_EQ(to_text(q), "# burnmark program v1\n%0 = leaf f32[3] [-0.2, -0.1, 0]\n"
                        "%1 = leaf f32[3] [-0.2, -0.1, 0]\n%2 = neg %0 : f32[3]\n"
                        "%3 = add %2, %1 : f32[3]\nroot %3\n");
  // Rooting at neg(x) leaves y unused: it is dropped and x stays leaf 0.
  const Program r = reroot(p, n);
  EXPECT_EQ(r.leaves.size(), 1u);
  EXPECT_EQ(r.stmts.size(), 2u);
  EXPECT_EQ(validate(r), "");
}

TEST(Minimize, ReducesThirtyOpProgramToThePlantedSigmoid) {
  Bench bench;
  const Program big = big_sigmoid_program(false);
  ASSERT_EQ(count_ops(big), 30);
  const std::optional<Characterization> c = characterize(bench.runner, big);
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->exhausted);
  EXPECT_EQ(c->finding.culprit_label, "sigmoid");
  // Nine elements is the fewest that reach index 8; zero is the simplest value.
  EXPECT_EQ(to_text(c->minimized), expected_sigmoid_repro());
  EXPECT_EQ(c->signature.ops, std::vector<std::string>{"sigmoid"});
  EXPECT_EQ(c->signature.kinds, std::vector<std::string>{"planted:forward"});
  EXPECT_TRUE(c->signature.specials.empty());
}

TEST(Minimize, KeepsASpecialValueOnlyWhenTheBugNeedsIt) {
  Bench bench;
  const std::optional<Characterization> c = characterize(bench.runner, exp_program(1.0f));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(to_text(c->minimized), "# burnmark program v1\n%0 = leaf f32[1] [-inf]\n"
                                   "%1 = exp %0 : f32[1]\nroot %1\n");
  EXPECT_EQ(c->signature.specials, std::vector<std::string>{"-inf"});
}

TEST(Minimize, IsAPureFunctionOfProgramAndPredicate) {
  // A predicate without backends: "some relu reads a leaf holding a NaN".
  Builder b;
  const Reg x = b.leaf({6}, {1, std::nanf(""), 3.5f, -2, 7, 0.25f});
  const Reg y = b.leaf({6});
  const Reg s = b.op(Op::Add, {x, y});
  const Reg r = b.op(Op::Relu, {x});
  const Program p = b.done(b.op(Op::Mul, {s, r}));
  const Predicate pred = [](const Program& q) {
    for (const Stmt& st : q.stmts) {
      if (st.kind != StmtKind::Op || st.instr.op != Op::Relu) continue;
      const Stmt& in = q.stmts[static_cast<std::size_t>(st.instr.operands[0])];
      if (in.kind != StmtKind::Leaf) continue;
      for (double v : q.leaves[static_cast<std::size_t>(in.leaf)].data)
        if (std::isnan(v)) return true;
    }
    return false;
  };
  const MinimizeResult a = minimize(p, pred);
  const MinimizeResult again = minimize(p, pred);
  EXPECT_EQ(to_text(a.program), to_text(again.program));
  EXPECT_EQ(a.checks, again.checks);
  EXPECT_EQ(to_text(a.program),
            "# burnmark program v1\n%0 = leaf f32[1] [nan]\n%1 = relu %0 : f32[1]\nroot %1\n");
}

TEST(Minimize, ShrinksIndexLeavesWithTheirOperandsAndKeepsThemInRange) {
  // The predicate: a gather is still there. Shrinking the input alone would leave index values
  // out of range (validate() rejects those candidates); index leaves are sliced like any other.
  const ParseResult parsed =
      parse_program("%0 = leaf f32[4,6] [" +
                    std::string("1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
                                "13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]\n") +
                    "%1 = leaf i64[3,6] [3, 0, 1, 3, 2, 0, 1, 1, 0, 3, 2, "
                    "2, 0, 0, 0, 1, 3, 3]\n"
                    "%2 = gather %0, %1, dim=0 : f32[3,6]\n"
                    "%3 = exp %2 : f32[3,6]\nroot %3\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const Predicate pred = [](const Program& q) {
    for (const Stmt& st : q.stmts)
      if (st.kind == StmtKind::Op && st.instr.op == Op::Gather) return true;
    return false;
  };
  const MinimizeResult m = minimize(parsed.program(), pred);
  EXPECT_EQ(validate(m.program), "");
  ASSERT_TRUE(pred(m.program));
  for (const Leaf& leaf : m.program.leaves)
    EXPECT_EQ(leaf.shape.numel(), 1) << to_text(m.program);
}

TEST(Signature, StableAcrossRunsAndIrrelevantReordering) {
  Bench bench;
  const Program p1 = big_sigmoid_program(false);
  const Program p2 = big_sigmoid_program(true);
  ASSERT_NE(to_text(p1), to_text(p2));
  const auto first = characterize(bench.runner, p1);
  const auto second = characterize(bench.runner, p1);
  const auto reordered = characterize(bench.runner, p2);
  ASSERT_TRUE(first && second && reordered);
  EXPECT_EQ(first->signature.text, second->signature.text);
  EXPECT_EQ(first->signature.id, reordered->signature.id);
  EXPECT_EQ(first->signature.id.size(), 12u);
  EXPECT_EQ(first->signature.id, short_id(first->signature.text));
}

TEST(Signature, CanonicalUnderRegisterOrderAndCommutedOperands) {
  // tanh(x) * exp(y), written in two statement orders with the mul's operands swapped.
  Builder b1;
  const Reg x1 = b1.leaf({2});
  const Reg y1 = b1.leaf({2});
  const Reg t1 = b1.op(Op::Tanh, {x1});
  const Reg e1 = b1.op(Op::Exp, {y1});
  const Program p1 = b1.done(b1.op(Op::Mul, {t1, e1}));
  Builder b2;
  const Reg y2 = b2.leaf({2});
  const Reg e2 = b2.op(Op::Exp, {y2});
  const Reg x2 = b2.leaf({2});
  const Reg t2 = b2.op(Op::Tanh, {x2});
  const Program p2 = b2.done(b2.op(Op::Mul, {e2, t2}));
  Verdict v;
  Divergence d;
  d.backend = "lib";
  d.kind = DivergenceKind::Gradient;
  v.divergences.push_back(d);
  EXPECT_EQ(make_signature(p1, v).text, make_signature(p2, v).text);
  // A non-commutative op keeps its operand order.
  Builder b3;
  const Reg x3 = b3.leaf({2});
  const Reg y3 = b3.leaf({2});
  const Reg t3 = b3.op(Op::Tanh, {x3});
  const Reg e3 = b3.op(Op::Exp, {y3});
  const Program p3 = b3.done(b3.op(Op::Sub, {t3, e3}));
  Builder b4;
  const Reg x4 = b4.leaf({2});
  const Reg y4 = b4.leaf({2});
  const Reg t4 = b4.op(Op::Tanh, {x4});
  const Reg e4 = b4.op(Op::Exp, {y4});
  const Program p4 = b4.done(b4.op(Op::Sub, {e4, t4}));
  EXPECT_NE(make_signature(p3, v).text, make_signature(p4, v).text);
  EXPECT_EQ(make_signature(p1, v).kinds, std::vector<std::string>{"lib:gradient"});
}

TEST(Signature, SpecialClasses) {
  EXPECT_EQ(special_class(std::nanf("")), "nan");
  EXPECT_EQ(special_class(kNegInf), "-inf");
  EXPECT_EQ(special_class(-0.0f), "-0");
  EXPECT_EQ(special_class(0.0f), "");
  EXPECT_EQ(special_class(1e-40f), "subnormal");
  EXPECT_EQ(special_class(3e38f), "huge");
  EXPECT_EQ(special_class(12.5f), "");
}

TEST(Suppression, ParsesTheFileFormatAndRejectsBadIds) {
  std::string error;
  const Suppressions s = Suppressions::parse(
      "# header\n\n0123456789ab sigmoid-tail  sigmoid wrong past 8  # note\n", error);
  ASSERT_EQ(error, "");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.bugs()[0].anchor, "sigmoid-tail");
  EXPECT_EQ(s.bugs()[0].description, "sigmoid wrong past 8");
  EXPECT_NE(s.find("0123456789ab"), nullptr);
  Suppressions::parse("xyz anchor text\n", error);
  EXPECT_EQ(error.rfind("line 1:", 0), 0u) << error;
  Suppressions::parse("0123456789ab\n", error);
  EXPECT_NE(error, "");
}

TEST(Suppression, TheShippedFileParses) {
  const char* src = std::getenv("BURNMARK_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  std::string error;
  Suppressions::load(std::string(src) + "/corpus/known_bugs.txt", error);
  EXPECT_EQ(error, "");
}

// A saved finding's program text beside its bytes wins over decoding them: the generator's
// tables may have changed since the campaign ran (the op set drawn to second order did).
TEST(LoadProgram, AFindingsProgramTextBesideItsBytesIsTheProgram) {
  const std::filesystem::path dir = burnmark::testing::scratch_dir("beside");
  const std::string bytes_path = (dir / "finding-0123456789abcdef").string();
  { std::ofstream(bytes_path, std::ios::binary) << std::string("\x01\x02\x03\x04", 4); }
  Program decoded;
  ASSERT_EQ(load_program_file(bytes_path, GeneratorOptions{}, decoded), "");
  const std::string text = "%0 = leaf f32[2] [1, 2]\n%1 = exp %0 : f32[2]\nroot %1\n";
  EXPECT_EQ(program_text_path(bytes_path), (dir / ".finding-0123456789abcdef.txt").string());
  { std::ofstream(program_text_path(bytes_path)) << text; }
  Program beside;
  ASSERT_EQ(load_program_file(bytes_path, GeneratorOptions{}, beside), "");
  const ParseResult expected = parse_program(text);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(to_text(beside), to_text(expected.program()));
  EXPECT_NE(to_text(decoded), to_text(beside));
  std::filesystem::remove_all(dir);
}

// A campaign over several LibTorch variants recognises the lines a ref,libtorch campaign wrote:
// each diverging backend's share, named by its library, must be known.
TEST(Suppression, EveryDivergingBackendsShareMustBeKnown) {
  const ParseResult parsed =
      parse_program("%0 = leaf f32[2] [1, 2]\n%1 = exp %0 : f32[2]\nroot %1\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const Program& p = parsed.program();
  const auto divergence = [](std::string backend, DivergenceKind kind) {
    Divergence d;
    d.backend = std::move(backend);
    d.kind = kind;
    return d;
  };
  Verdict eager_only;
  eager_only.divergences = {divergence("libtorch", DivergenceKind::Gradient)};
  const Signature known_sig = make_signature(p, eager_only);
  EXPECT_TRUE(known_sig.per_backend.empty());
  std::string error;
  const Suppressions known =
      Suppressions::parse(known_sig.id + " exp-grad the eager finding\n", error);
  ASSERT_EQ(error, "");

  Verdict both;
  both.divergences = {divergence("libtorch", DivergenceKind::Gradient),
                      divergence("child:libtorch-scalar", DivergenceKind::Gradient)};
  const Signature sig = make_signature(p, both);
  ASSERT_EQ(sig.per_backend.size(), 2U);
  EXPECT_NE(sig.id, known_sig.id);
  for (const BackendSignature& share : sig.per_backend) {
    EXPECT_EQ(share.library, "libtorch");
    EXPECT_EQ(share.id, known_sig.id);
  }
  EXPECT_NE(known.find(sig), nullptr);

  // The variant diverging its own way as well is a new finding.
  Verdict more;
  more.divergences = {divergence("libtorch", DivergenceKind::Gradient),
                      divergence("libtorch-strided", DivergenceKind::Gradient),
                      divergence("libtorch-strided", DivergenceKind::Forward)};
  EXPECT_EQ(known.find(make_signature(p, more)), nullptr);
  EXPECT_EQ(backend_library("child[ATEN_CPU_CAPABILITY=default]:libtorch"), "libtorch");
  EXPECT_EQ(backend_library("onednn"), "onednn");
  EXPECT_EQ(backend_library("libtorch@1.13"), "libtorch");
  EXPECT_EQ(backend_library("libtorch-fwd-over-rev@1.13"), "libtorch");
}

TEST(Suppression, SkipsAKnownBugButReportsANewOne) {
  Bench bench;
  const auto known = characterize(bench.runner, big_sigmoid_program(false));
  ASSERT_TRUE(known.has_value());
  std::string error;
  Suppressions list =
      Suppressions::parse(known->signature.id + " sigmoid-tail sigmoid past index 8\n", error);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(list.matches(known->signature));

  Bench fuzz; // the fuzz target's own backends
  KnownBugFilter filter(list, fuzz.runner);
  const KnownBug* hit = filter.match(big_sigmoid_program(true));
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->anchor, "sigmoid-tail");
  EXPECT_FALSE(filter.is_known(exp_program(1.0f))) << "bug B is not in the list";
  EXPECT_EQ(filter.minimisations(), 2u);
  // Seen again: answered from the pre-signature cache, no new minimisation.
  EXPECT_TRUE(filter.is_known(big_sigmoid_program(false)));
  EXPECT_FALSE(filter.is_known(exp_program(2.0f)));
  EXPECT_EQ(filter.minimisations(), 2u);
  // An agreeing program is never known.
  Builder b;
  const Reg x = b.leaf({3});
  EXPECT_FALSE(filter.is_known(b.done(b.op(Op::Tanh, {x}))));
}

TEST(Triage, GroupsADirectoryIntoOneLinePerBug) {
  Bench bench;
  namespace fs = std::filesystem;
  const fs::path dir = burnmark::testing::scratch_dir("triage");
  const auto write = [&](const std::string& name, const Program& p) {
    std::ofstream(dir / name) << to_text(p);
  };
  write("a1", big_sigmoid_program(false));
  write("a2", big_sigmoid_program(true));
  Builder small;
  const Reg x = small.leaf({3, 4});
  const Reg y = small.leaf({4});
  const Reg s = small.op(Op::Sigmoid, {small.op(Op::Add, {x, y})});
  write("a3", small.done(small.op(Op::MeanAll, {s})));
  // Bug B, saved as raw fuzzer bytes rather than text.
  const EncodeResult bytes = encode(exp_program(1.0f), GeneratorOptions{});
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  std::ofstream(dir / "b1", std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.bytes().data()),
             static_cast<std::streamsize>(bytes.bytes().size()));
  Builder calm;
  const Reg z = calm.leaf({5});
  write("ok", calm.done(calm.op(Op::Tanh, {z})));

  std::vector<TriageInput> inputs;
  for (const auto& entry : fs::directory_iterator(dir)) {
    TriageInput in{entry.path().filename().string(), {}};
    ASSERT_EQ(load_program_file(entry.path().string(), GeneratorOptions{}, in.program), "");
    inputs.push_back(std::move(in));
  }
  std::sort(inputs.begin(), inputs.end(),
            [](const TriageInput& l, const TriageInput& r) { return l.name < r.name; });
  std::size_t progress_calls = 0;
  TriageOptions options;
  options.progress = [&](std::string_view, std::size_t, std::size_t) { ++progress_calls; };
  const TriageReport report = triage(bench.runner, inputs, options);
  ASSERT_EQ(report.groups.size(), 2u);
  EXPECT_EQ(report.groups[0].members, (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(op_sequence(report.groups[0].signature), "sigmoid");
  EXPECT_EQ(to_text(report.groups[0].minimized), expected_sigmoid_repro());
  EXPECT_EQ(report.groups[1].members, std::vector<std::string>{"b1"});
  EXPECT_EQ(op_sequence(report.groups[1].signature), "exp");
  EXPECT_EQ(report.agreeing, std::vector<std::string>{"ok"});
  EXPECT_GE(progress_calls, inputs.size());
  fs::remove_all(dir);
}

TEST(Sweep, FindsThePlantedSizeThreshold) {
  Bench bench;
  const ParseResult repro = parse_program(expected_sigmoid_repro());
  ASSERT_TRUE(repro.ok());
  const SweepResult r = sweep(bench.runner, repro.program());
  ASSERT_FALSE(r.rows.empty());
  EXPECT_EQ(r.rows[0].parameter, "size 9");
  EXPECT_EQ(r.rows[0].tried, "1-48");
  EXPECT_EQ(r.rows[0].hits, "9-48");
  EXPECT_EQ(r.rows[0].condition, "needs n > 8");
  // Nothing else is load-bearing: the values are all zero and there is one sigmoid.
  EXPECT_EQ(r.conditions, std::vector<std::string>{"size 9: needs n > 8"}) << format_sweep(r);
  EXPECT_NE(format_sweep(r).find("needs: size 9: needs n > 8"), std::string::npos)
      << format_sweep(r);
}

TEST(Sweep, FindsThePlantedSpecialValue) {
  Bench bench;
  const auto c = characterize(bench.runner, exp_program(1.0f));
  ASSERT_TRUE(c.has_value());
  const SweepResult r = sweep(bench.runner, c->minimized);
  const auto row = std::find_if(r.rows.begin(), r.rows.end(),
                                [](const SweepRow& x) { return x.parameter == "L0[0]=-inf"; });
  ASSERT_NE(row, r.rows.end()) << format_sweep(r);
  EXPECT_EQ(row->hits, "-inf");
  EXPECT_EQ(row->condition, "needs -inf");
}

TEST(Sweep, DescribesHitSets) {
  std::vector<int> all;
  for (int n = 1; n <= 16; ++n)
    all.push_back(n);
  const auto where = [&](auto pred) {
    std::vector<int> v;
    for (int n : all)
      if (pred(n)) v.push_back(n);
    return v;
  };
  EXPECT_EQ(describe_hits(all, all), "any");
  EXPECT_EQ(describe_hits(all, {}), "none");
  EXPECT_EQ(describe_hits(all, where([](int n) { return n > 8; })), "needs n > 8");
  EXPECT_EQ(describe_hits(all, where([](int n) { return n < 5; })), "needs n < 5");
  EXPECT_EQ(describe_hits(all, where([](int n) { return n % 4 != 0; })), "needs n mod 4 != 0");
  EXPECT_EQ(describe_hits(all, where([](int n) { return n % 8 == 0; })), "needs n mod 8 == 0");
  EXPECT_EQ(describe_hits(all, where([](int n) { return n > 4 && n % 4 != 0; })),
            "needs n > 4 and n mod 4 != 0");
  EXPECT_EQ(describe_hits(all, {3, 7}), "needs n in {3,7}");
}

TEST(Sweep, ChainLengthCondition) {
  // A predicate-free check of the chain rebuild: relu(relu(x)) swept over chain lengths, with
  // the planted backend's sigmoid standing in as the only divergence... instead use sigmoid
  // chains: sigmoid applied k times over 9 elements diverges for every k >= 1.
  Bench bench;
  Builder b;
  const Reg x = b.leaf({9}, std::vector<float>(9, 0.0f));
  const Reg s1 = b.op(Op::Sigmoid, {x});
  const Program p = b.done(b.op(Op::Sigmoid, {s1}));
  const SweepResult r = sweep(bench.runner, p);
  const auto row = std::find_if(r.rows.begin(), r.rows.end(),
                                [](const SweepRow& x) { return x.parameter == "chain sigmoid"; });
  ASSERT_NE(row, r.rows.end()) << format_sweep(r);
  EXPECT_EQ(row->tried, "1-4");
  EXPECT_EQ(row->hits, "1-4");
  EXPECT_EQ(row->condition, "any");
}

// A bf16 finding stays a bf16 program through minimisation, and its signature is not the f32
// one of the same graph (another kernel, usually another bug).
TEST(Minimize, KeepsTheProgramsDtypeAndTheSignatureNamesIt) {
  Bench bench;
  const Program f32 = exp_program(1.0f); // exp(-inf) planted as 1
  const Program bf16 = with_float_dtype(f32, FloatDType::BF16);
  const auto in_f32 = characterize(bench.runner, f32);
  const auto in_bf16 = characterize(bench.runner, bf16);
  ASSERT_TRUE(in_f32 && in_bf16);
  EXPECT_EQ(in_bf16->minimized.float_dtype, FloatDType::BF16);
  EXPECT_EQ(validate(in_bf16->minimized), "");
  EXPECT_EQ(in_bf16->signature.ops, in_f32->signature.ops);
  EXPECT_NE(in_bf16->signature.id, in_f32->signature.id);
  EXPECT_EQ(in_bf16->signature.text.rfind("sig1|dtype=bf16|", 0), 0u) << in_bf16->signature.text;
  EXPECT_EQ(in_f32->signature.text.rfind("sig1|div=", 0), 0u) << in_f32->signature.text;
  // The planted exp bug is in f32 too, so a known-bug list naming the f32 signature knows it.
  EXPECT_EQ(in_bf16->signature.f32_id, in_f32->signature.id);
  EXPECT_TRUE(in_f32->signature.f32_id.empty());
  std::string error;
  const Suppressions known =
      Suppressions::parse(in_f32->signature.id + " planted-exp exp(-inf) is 1\n", error);
  ASSERT_EQ(error, "");
  ASSERT_NE(known.find(in_bf16->signature), nullptr);
  EXPECT_EQ(known.find(in_bf16->signature)->anchor, "planted-exp");
}

// A backend that differs from the reference only by taking the other side of a registered
// convention is no finding for triage either: with a ConventionJudge, the Runner's verdict
// drops what the convention explains, so the minimiser never turns it into a "new bug" (the
// 2.15 campaign minimised clamp's bound gradient into seven of them before).
TEST(Runner, AConventionIsNoFindingWhenTheRunnerJudgesConventions) {
  const std::unique_ptr<Backend> ref = make_reference_backend();
  const std::unique_ptr<Backend> other =
      make_reference_backend(ConventionSet(Convention::ClampGradMinNorm));
  const ParseResult parsed =
      parse_program("%0 = leaf f32[2] [1, 0.5]\n%1 = clamp_max %0, max=1 : f32[2]\nroot %1\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  Runner plain({ref.get(), other.get()}, OracleOptions{});
  EXPECT_FALSE(plain.check(parsed.program()).agree());
  ConventionJudge judge(make_convention_references());
  Runner judging({ref.get(), other.get()}, OracleOptions{}, &judge);
  EXPECT_TRUE(judging.check(parsed.program()).agree());
  EXPECT_FALSE(characterize(judging, parsed.program()).has_value());
  // A real divergence stays: the planted sigmoid bug is no convention.
  Bench bench;
  Runner planted({bench.ref.get(), &bench.planted}, OracleOptions{}, &judge);
  EXPECT_TRUE(characterize(planted, big_sigmoid_program(false)).has_value());
}
