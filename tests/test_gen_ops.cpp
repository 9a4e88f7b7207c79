// The generator restricted to an op set (GeneratorOptions::ops, BURNMARK_OPS, a plugin's list):
// only those ops are drawn, every set decodes every input (no loop, no illegal shape), decoding
// is deterministic, the encoder inverts it, and listing every op changes nothing.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"

using namespace burnmark;

namespace {

std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t max_len) {
  std::vector<std::uint8_t> out(rng() % (max_len + 1));
  for (auto& b : out)
    b = static_cast<std::uint8_t>(rng());
  return out;
}

GeneratorOptions restricted(std::vector<Op> ops) {
  GeneratorOptions o;
  o.ops = std::move(ops);
  return o;
}

// The example plugin's list (plugins/example): add, sub, mul, neg, relu, exp.
const std::vector<Op> kExampleOps = {Op::Add, Op::Sub, Op::Mul, Op::Neg, Op::Relu, Op::Exp};

std::set<Op> ops_of(const Program& p) {
  std::set<Op> out;
  for (const Stmt& s : p.stmts)
    if (s.kind == StmtKind::Op) out.insert(s.instr.op);
  return out;
}

} // namespace

TEST(GenerateOps, DrawsOnlyTheListedOpsAndReachesEachOfThem) {
  GeneratorOptions o = restricted(kExampleOps);
  // Every op step of this set adds an op: its families (unary, activation, binary) apply to
  // any register, so the wheel holds only them and no step falls through to nothing.
  o.min_ops = 3;
  const std::set<Op> listed(kExampleOps.begin(), kExampleOps.end());
  std::set<Op> seen;
  std::mt19937 rng(31);
  for (int i = 0; i < 3000; ++i) {
    const Program p = generate(random_bytes(rng, 256), o);
    ASSERT_EQ(validate(p), "") << to_text(p);
    int ops = 0;
    for (const Stmt& s : p.stmts) {
      if (s.kind != StmtKind::Op) continue;
      ++ops;
      ASSERT_TRUE(listed.count(s.instr.op)) << op_name(s.instr.op) << "\n" << to_text(p);
      seen.insert(s.instr.op);
    }
    ASSERT_GE(ops, 3) << to_text(p);
  }
  EXPECT_EQ(seen, listed);
}

TEST(GenerateOps, EveryOpSetDecodesEveryInputWithinItsSteps) {
  // Sets with no op for most situations: a matrix op, a shape op, an op needing rank >= 2, a
  // where without any comparison (nothing at all can be drawn), comparisons alone (never drawn
  // without their where), a square-matrix op, an indexing op, a reduction over everything.
  const std::vector<std::vector<Op>> sets = {
      {Op::Matmul},        {Op::Concat}, {Op::Transpose}, {Op::Where},
      {Op::Lt, Op::Eq},    {Op::Det},    {Op::Gather},    {Op::SumAll},
      {Op::Where, Op::Gt}, {Op::Trace},  {Op::Reshape},   {Op::MaskedFill, Op::Ne}};
  std::mt19937 rng(32);
  for (const std::vector<Op>& set : sets) {
    const std::set<Op> listed(set.begin(), set.end());
    GeneratorOptions o = restricted(set);
    o.min_ops = 8; // forced op steps must end even when no step can add an op
    o.max_steps = 32;
    int with_ops = 0;
    for (int i = 0; i < 800; ++i) {
      const Program p = generate(random_bytes(rng, 200), o);
      ASSERT_EQ(validate(p), "") << op_name(set[0]) << "\n" << to_text(p);
      ASSERT_LE(p.stmts.size(), 64u); // max_steps plus the steps' own leaves
      for (Op op : ops_of(p))
        ASSERT_TRUE(listed.count(op)) << op_name(op) << "\n" << to_text(p);
      with_ops += !ops_of(p).empty();
    }
    const bool drawable = set != std::vector<Op>{Op::Where} && set.front() != Op::Lt;
    if (drawable)
      EXPECT_GT(with_ops, 0) << op_name(set[0]);
    else
      EXPECT_EQ(with_ops, 0) << op_name(set[0]);
  }
}

TEST(GenerateOps, DecodingIsAFunctionOfTheBytesAndTheSet) {
  std::mt19937 rng(33);
  for (int i = 0; i < 300; ++i) {
    const std::vector<std::uint8_t> bytes = random_bytes(rng, 256);
    const std::string once = to_text(generate(bytes, restricted(kExampleOps)));
    EXPECT_EQ(once, to_text(generate(bytes, restricted(kExampleOps))));
    // The set, not the order it was listed in.
    const std::vector<Op> reversed(kExampleOps.rbegin(), kExampleOps.rend());
    EXPECT_EQ(once, to_text(generate(bytes, restricted(reversed))));
  }
}

TEST(GenerateOps, ListingEveryOpDecodesAsNoRestriction) {
  // Every family keeps its place on the wheel and every fallback is a unary op, as unrestricted.
  std::vector<Op> every;
  for (const OpInfo& info : kOpTable)
    every.push_back(info.op);
  std::mt19937 rng(34);
  for (int i = 0; i < 2000; ++i) {
    const std::vector<std::uint8_t> bytes = random_bytes(rng, 256);
    ASSERT_EQ(to_text(generate(bytes, GeneratorOptions{})),
              to_text(generate(bytes, restricted(every))))
        << i;
  }
}

TEST(EncodeOps, RoundTripsRestrictedProgramsAndRefusesOpsOutsideTheSet) {
  std::mt19937 rng(35);
  for (const std::vector<Op>& set :
       {kExampleOps, std::vector<Op>{Op::Matmul, Op::Relu}, std::vector<Op>{Op::Where, Op::Ge}}) {
    const GeneratorOptions o = restricted(set);
    for (int i = 0; i < 500; ++i) {
      const Program p = generate(random_bytes(rng, 256), o);
      const EncodeResult e = encode(p, o);
      ASSERT_TRUE(e.ok()) << e.error() << "\n" << to_text(p);
      ASSERT_EQ(to_text(generate(e.bytes(), o)), to_text(p));
    }
  }
  const ParseResult parsed = parse_program("%0 = leaf f32[2] [1, 2]\n"
                                           "%1 = sin %0 : f32[2]\n"
                                           "root %1\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const EncodeResult e = encode(parsed.program(), restricted(kExampleOps));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("sin"), std::string::npos) << e.error();
  EXPECT_NE(e.error().find("not in the op set"), std::string::npos) << e.error();
}
