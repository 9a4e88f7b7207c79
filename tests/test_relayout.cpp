// The layout op relayout in the IR (ops.def): its attribute is a leaf layout held in Attrs'
// fields (layout_attrs), its text form round trips, validate() holds it to the layouts a register
// of its operand's shape may take, and the generator reaches every kind with programs the encoder
// inverts (none with layout_rate 0).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "parsed_program.h"

using namespace burnmark;
using burnmark::test_support::parsed;

namespace {

// exp of a [2,1,3] leaf, then relayout with `layout` (the text after the operand).
std::string program_with(const std::string& layout) {
  return "# burnmark program v1\n%0 = leaf f32[2,1,3] [1, 2, 3, 4, 5, 6]\n"
         "%1 = exp %0 : f32[2,1,3]\n%2 = relayout %1" +
         layout + " : f32[2,1,3]\nroot %2\n";
}

} // namespace

TEST(Relayout, EveryKindRoundTripsThroughTextIntoTheAttributesByHand) {
  struct Case {
    const char* text;
    Attrs attrs; // layout_attrs' fields, written out by hand
  };
  const auto attrs = [](int variant, int times, int dim, int dim1) {
    Attrs a;
    a.variant = variant;
    a.times = times;
    a.dim = dim;
    a.dim1 = dim1;
    return a;
  };
  // Kinds by enumerator order: contiguous 0, permuted 1, slice 2, expanded 3, offset 4. Dims
  // codes have a digit dim + 1 each: (2,0,1) is 312.
  const Case cases[] = {
      {", layout=permuted(2,0,1)", attrs(1, 312, 0, 0)},
      {", layout=slice(dim=2, step=3)", attrs(2, 1, 2, 3)},
      {", layout=expanded(1)", attrs(3, 2, 0, 0)},
      {", layout=offset(7)", attrs(4, 7, 0, 0)},
      {"", attrs(0, 1, 0, 0)}, // contiguous: a plain copy, and no layout word
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string text = program_with(c.text);
    const Program p = parsed(text);
    ASSERT_EQ(p.stmts.size(), 3u);
    EXPECT_EQ(p.stmts[2].instr.op, Op::Relayout);
    EXPECT_EQ(p.stmts[2].instr.attrs, c.attrs);
    EXPECT_EQ(to_text(p), text);
    EXPECT_EQ(layout_attrs(attrs_layout(c.attrs)), c.attrs);
  }
}

TEST(Relayout, ValidateHoldsItToTheLayoutsOfItsOperandsShape) {
  const char* bad[] = {
      ", layout=expanded(0)",          // dim 0 has size 2: stride 0 would change values
      ", layout=expanded(1,2)",        // dim 2 has size 3
      ", layout=permuted(0,1,2)",      // the identity
      ", layout=slice(dim=3, step=2)", // no dim 3
      ", layout=slice(dim=0, step=1)", // step 1 is contiguous
      ", layout=offset(17)",           // beyond kMaxLayoutOffset
      ", layout=diagonal(1)",          // no such kind
      ", layout=permuted(1,0)",        // not every dim
  };
  for (const char* layout : bad)
    EXPECT_FALSE(parse_program(program_with(layout)).ok()) << layout;
  // One layout, one spelling: a field the kind does not use must stay at its default.
  Program p = parsed(program_with(", layout=offset(2)"));
  ASSERT_EQ(validate(p), "");
  p.stmts[2].instr.attrs.dim = 1;
  EXPECT_NE(validate(p), "");
  // A relayout of rank 0: only offset applies.
  EXPECT_TRUE(
      parse_program("%0 = leaf f32[] [2]\n%1 = relayout %0, layout=offset(1) : f32[]\n").ok());
  EXPECT_FALSE(
      parse_program("%0 = leaf f32[] [2]\n%1 = relayout %0, layout=slice(dim=0, step=2) : f32[]\n")
          .ok());
}

// Seeds 0..1999 of 300 random bytes each reach relayout of every kind, expanded only along size-1
// dims; every such program validates, survives the text form, and the encoder inverts it.
TEST(Relayout, GeneratorReachesEveryKindAndEncodesIt) {
  const GeneratorOptions options;
  std::set<LayoutKind> reached;
  int relayouts = 0;
  for (unsigned seed = 0; seed < 2000; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::uint8_t> bytes(300);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    const Program p = generate(bytes, options);
    bool has = false;
    for (const Stmt& s : p.stmts) {
      if (s.kind != StmtKind::Op || s.instr.op != Op::Relayout) continue;
      has = true;
      ++relayouts;
      const LeafLayout l = attrs_layout(s.instr.attrs);
      EXPECT_FALSE(l.contiguous());
      if (l.kind == LayoutKind::Expanded)
        for (int d : l.dims)
          EXPECT_EQ(s.shape[d], 1);
      reached.insert(l.kind);
    }
    if (!has) continue;
    ASSERT_EQ(validate(p), "");
    ASSERT_EQ(parsed(to_text(p)), p);
    const EncodeResult e = encode(p, options);
    ASSERT_TRUE(e.ok()) << e.error();
    ASSERT_EQ(generate(e.bytes(), options), p);
  }
  EXPECT_EQ(reached, (std::set<LayoutKind>{LayoutKind::Permuted, LayoutKind::Slice,
                                           LayoutKind::Expanded, LayoutKind::Offset}));
  // A view step is 2 in 26 of op steps, relayout 1 in 18 of its ops: a few per hundred programs.
  EXPECT_GT(relayouts, 20);
}

TEST(Relayout, RateZeroDrawsNoneAndEncodesNone) {
  GeneratorOptions off;
  off.layout_rate = 0;
  for (unsigned seed = 0; seed < 500; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::uint8_t> bytes(300);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    for (const Stmt& s : generate(bytes, off).stmts)
      EXPECT_FALSE(s.kind == StmtKind::Op && s.instr.op == Op::Relayout);
  }
  const Program p = parsed(program_with(", layout=slice(dim=0, step=2)"));
  EXPECT_FALSE(encode(p, off).ok());
  EXPECT_TRUE(encode(p, GeneratorOptions{}).ok());
}
