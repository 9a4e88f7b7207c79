// index_add, index_copy and index_fill (issue 33): each op's forward, gradients and tangent on
// small programs worked out by hand from PyTorch's documentation (`self[index[i]] += source[i]`,
// `self[index[i]] = source[i]`, `self[index[i]] = value` along dim), the reference and LibTorch
// (eager, in-place, TorchScript) agreeing on them; the IR's rules (a 1-D index, source's shape,
// index_copy's distinct indices); and the generator reaching each op, never repeating an
// index_copy target, its programs encoding back to bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "hand_worked.h"
#include "libtorch_programs.h"

using namespace burnmark;
using namespace burnmark::test_support;
using burnmark::testing::on_dim;
using burnmark::testing::ProgramBuilder;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

} // namespace

// index_add along dim 0 with index [2, 0, 2]: rows 0 and 2 of source both land on row 2.
// result [[1+30, 2+40], [3, 4], [5+10+50, 6+20+60]]; root = result * w with w = 1..6.
// d self = w; d source row i = w row index[i] = w[2], w[0], w[2]; d w = result.
TEST(IndexUpdate, IndexAddSumsRepeatedTargetsAndSelectsTheGradientForSource) {
  ProgramBuilder b;
  const Reg self = b.leaf({3, 2}, one_to(6));
  const Reg idx = b.index_leaf({3}, {2, 0, 2});
  const Reg src = b.leaf({3, 2}, {10, 20, 30, 40, 50, 60});
  const Reg r = b.op(Op::IndexAdd, {self, idx, src}, on_dim(0));
  const Reg w = b.leaf({3, 2}, one_to(6));
  const Program p = b.finish(b.op(Op::Mul, {r, w}));
  expect_everywhere(
      p, {{31, 84, 9, 16, 325, 516},
          {{0, {1, 2, 3, 4, 5, 6}}, {2, {5, 6, 1, 2, 5, 6}}, {3, {31, 42, 3, 4, 65, 86}}}});
}

// index_copy along dim 1 with index [2, 0]: source's columns 0, 1 become self's columns 2, 0.
// result [[20, 2, 10], [40, 5, 30]]; root = result * w. d self = w with columns 0 and 2
// zeroed (their values never reach the result); d source column i = w column index[i].
TEST(IndexUpdate, IndexCopyReplacesSlicesAndZeroesTheirGradientInSelf) {
  ProgramBuilder b;
  const Reg self = b.leaf({2, 3}, one_to(6));
  const Reg idx = b.index_leaf({2}, {2, 0});
  const Reg src = b.leaf({2, 2}, {10, 20, 30, 40});
  const Reg r = b.op(Op::IndexCopy, {self, idx, src}, on_dim(1));
  const Reg w = b.leaf({2, 3}, one_to(6));
  const Program p = b.finish(b.op(Op::Mul, {r, w}));
  expect_everywhere(p, {{20, 4, 30, 160, 25, 180},
                        {{0, {0, 2, 0, 0, 5, 0}}, {2, {3, 1, 6, 4}}, {3, {20, 2, 10, 40, 5, 30}}}});
}

// index_fill along dim 0 with a repeated index [1, 1]: row 1 becomes the value, whatever it is
// (-inf, NaN, -0); self's gradient is zero there (the value is a constant).
TEST(IndexUpdate, IndexFillSetsTheValueAndZeroesItsGradient) {
  for (double value : {-kInf, std::nan(""), -0.0, 0.5}) {
    ProgramBuilder b;
    const Reg self = b.leaf({3, 2}, one_to(6));
    const Reg idx = b.index_leaf({2}, {1, 1});
    Attrs at = on_dim(0);
    at.fill = value;
    const Reg r = b.op(Op::IndexFill, {self, idx}, at);
    const Reg w = b.leaf({3, 2}, one_to(6));
    const Program p = b.finish(b.op(Op::Mul, {r, w}));
    SCOPED_TRACE(value);
    expect_everywhere(p, {{1, 4, value * 3, value * 4, 25, 36},
                          {{0, {1, 2, 0, 0, 5, 6}}, {2, {1, 2, value, value, 5, 6}}}});
  }
}

// Forward mode on index_add alone: J·u = index_add(self_u, index, source_u) for the leaves'
// tangents of leaf_tangent; the reference and LibTorch's dual tensors both give it.
TEST(IndexUpdate, IndexAddTangentIsIndexAddOfTheTangents) {
  ProgramBuilder b;
  const Reg self = b.leaf({3, 2}, one_to(6));
  const Reg idx = b.index_leaf({3}, {2, 0, 2});
  const Reg src = b.leaf({3, 2}, {10, 20, 30, 40, 50, 60});
  const Program p = b.finish(b.op(Op::IndexAdd, {self, idx, src}, on_dim(0)));
  ASSERT_EQ(leaf_tangent({3, 2}, 0).values, (std::vector<double>{1, -1.5, 0.25, -0.5, 0.75, -2}));
  ASSERT_EQ(leaf_tangent({3, 2}, 2).values, (std::vector<double>{2, -1, 1, -1.5, 0.25, -0.5}));
  // Row 0 gets source row 1; row 2 gets source rows 0 and 2; row 1 is self's.
  const std::vector<double> want = {1 + 1, -1.5 - 1.5, 0.25, -0.5, 0.75 + 2 + 0.25, -2 - 1 - 0.5};
  for (const auto& backend : {make_reference_backend(), make_libtorch_backend(1)}) {
    RunOptions o;
    o.tangents = true;
    const Outcome out = backend->run(p, o);
    ASSERT_EQ(out.status, Status::Ok) << backend->name() << ": " << out.message;
    expect_values(out.tangent, want, backend->name() + " tangent");
  }
}

// The IR: a 1-D index, source shaped like self with the index's length along dim, index_copy's
// values distinct (PyTorch leaves a repeated target undefined), and the text form.
TEST(IndexUpdate, ShapeRulesValidationAndText) {
  const auto shape = [](Op op, std::vector<Shape> in, int dim) {
    const ShapeResult r = infer_shape(op, on_dim(dim), in);
    return r.ok() ? r.shape().to_string() : "error";
  };
  EXPECT_EQ(shape(Op::IndexAdd, {{3, 4}, {5}, {5, 4}}, 0), "[3,4]");
  EXPECT_EQ(shape(Op::IndexAdd, {{3, 4}, {5}, {3, 5}}, 1), "[3,4]");
  EXPECT_EQ(shape(Op::IndexAdd, {{3, 4}, {5}, {5, 3}}, 0), "error");     // source off dim
  EXPECT_EQ(shape(Op::IndexCopy, {{3, 4}, {2, 1}, {2, 4}}, 0), "error"); // a 2-D index
  EXPECT_EQ(shape(Op::IndexCopy, {{3, 4}, {2}, {3, 4}}, 0), "error");    // length 2, source 3
  EXPECT_EQ(shape(Op::IndexFill, {{3, 4}, {7}}, 1), "[3,4]");

  const std::string text = "%0 = leaf f32[3,2] [1, 2, 3, 4, 5, 6]\n"
                           "%1 = leaf i64[2] [1, 1]\n"
                           "%2 = leaf f32[2,2] [1, 2, 3, 4]\n"
                           "%3 = index_copy %0, %1, %2, dim=0 : f32[3,2]\n"
                           "root %3\n";
  const ParseResult dup = parse_program(text);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().find("distinct"), std::string::npos) << dup.error();
  std::string distinct = text;
  distinct.replace(distinct.find("[1, 1]"), 6, "[2, 0]");
  EXPECT_TRUE(parse_program(distinct).ok()) << parse_program(distinct).error();

  const std::string fill = "%0 = leaf f32[3,2] [1, 2, 3, 4, 5, 6]\n"
                           "%1 = leaf i64[3] [1, 1, 0]\n"
                           "%2 = index_fill %0, %1, dim=1, value=-inf : f32[3,2]\n"
                           "root %2\n";
  const ParseResult parsed = parse_program(fill);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const Program& p = parsed.program();
  EXPECT_EQ(p.stmts[2].instr.attrs.dim, 1);
  EXPECT_EQ(p.stmts[2].instr.attrs.fill, -kInf);
  EXPECT_EQ(to_text(p), to_text(parse_program(to_text(p)).program()));
  EXPECT_NE(to_text(p).find("index_fill %0, %1, dim=1, value=-inf"), std::string::npos)
      << to_text(p);
}

// The generator restricted to the three ops reaches each of them, with repeated indices for
// index_add and index_fill and never for index_copy, and every program encodes back to its bytes.
TEST(IndexUpdate, GeneratorReachesEachOpAndNeverRepeatsAnIndexCopyTarget) {
  GeneratorOptions o;
  o.ops = {Op::IndexAdd, Op::IndexCopy, Op::IndexFill};
  std::mt19937 rng(33);
  std::set<Op> seen, repeated;
  int copies = 0;
  for (int n = 0; n < 3000; ++n) {
    std::vector<std::uint8_t> bytes(rng() % 300);
    for (auto& byte : bytes)
      byte = static_cast<std::uint8_t>(rng());
    const Program p = generate(bytes, o);
    ASSERT_EQ(validate(p), "") << to_text(p);
    for (const Stmt& s : p.stmts) {
      if (s.kind != StmtKind::Op) continue;
      seen.insert(s.instr.op);
      std::vector<std::int64_t> idx =
          p.leaves[static_cast<std::size_t>(
                       p.stmts[static_cast<std::size_t>(s.instr.operands[1])].leaf)]
              .indices;
      std::sort(idx.begin(), idx.end());
      const bool repeats = std::adjacent_find(idx.begin(), idx.end()) != idx.end();
      if (repeats) repeated.insert(s.instr.op);
      if (s.instr.op == Op::IndexCopy) {
        ++copies;
        ASSERT_FALSE(repeats) << to_text(p);
      }
    }
    const EncodeResult e = encode(p, o);
    ASSERT_TRUE(e.ok()) << e.error() << "\n" << to_text(p);
    ASSERT_EQ(to_text(generate(e.bytes(), o)), to_text(p));
  }
  EXPECT_EQ(seen, (std::set<Op>{Op::IndexAdd, Op::IndexCopy, Op::IndexFill}));
  EXPECT_EQ(repeated, (std::set<Op>{Op::IndexAdd, Op::IndexFill}));
  EXPECT_GT(copies, 100);
}
