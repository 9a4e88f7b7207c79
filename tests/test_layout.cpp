// Leaf layouts in the IR (burnmark/ir/layout.h): the text form of each round trips, validate()
// holds an expanded leaf to equal values along its expanded dims, the strided view of each is the
// one its definition gives, and the generator reaches every layout with programs the encoder
// inverts.
#include <gtest/gtest.h>

#include <array>
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

// One leaf of each layout, and an op over it so that the program is a generator-shaped one.
constexpr std::array<const char*, 5> kLeafLines = {
    "%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]",
    "%0 = leaf f32[2,3] layout=permuted(1,0) [1, 2, 3, 4, 5, 6]",
    "%0 = leaf f32[2,3] layout=slice(dim=1, step=2) [1, 2, 3, 4, 5, 6]",
    "%0 = leaf f32[2,3] layout=expanded(0) [1, 2, 3, 1, 2, 3]",
    "%0 = leaf f32[2,3] layout=offset(3) [1, 2, 3, 4, 5, 6]",
};

} // namespace

TEST(LeafLayout, EveryLayoutRoundTripsThroughText) {
  for (const char* line : kLeafLines) {
    const std::string text =
        std::string("# burnmark program v1\n") + line + "\n%1 = exp %0 : f32[2,3]\nroot %1\n";
    const Program p = parsed(text);
    EXPECT_EQ(to_text(p), text);
    EXPECT_EQ(parsed(to_text(p)), p);
  }
  // A contiguous leaf prints as it always has: no layout word.
  EXPECT_TRUE(parsed(std::string(kLeafLines[0]) + "\n").leaves[0].layout.contiguous());
  const Program three = parsed("%0 = leaf f32[2,1,2] layout=expanded(1,2) [4, 4, 5, 5]\n");
  EXPECT_EQ(three.leaves[0].layout.dims, (std::vector<int>{1, 2}));
}

TEST(LeafLayout, ValidateRejectsIllegalLayouts) {
  const char* bad[] = {
      "%0 = leaf f32[2,3] layout=expanded(0) [1, 2, 3, 4, 5, 6]",   // values differ along dim 0
      "%0 = leaf f32[2,3] layout=permuted(0,1) [1, 2, 3, 4, 5, 6]", // the identity
      "%0 = leaf f32[6] layout=permuted(0) [1, 2, 3, 4, 5, 6]",     // rank 1
      "%0 = leaf f32[2,3] layout=slice(dim=2, step=2) [1, 2, 3, 4, 5, 6]",
      "%0 = leaf f32[2,3] layout=slice(dim=0, step=1) [1, 2, 3, 4, 5, 6]",
      "%0 = leaf f32[2,3] layout=offset(0) [1, 2, 3, 4, 5, 6]",
      "%0 = leaf f32[2,3] layout=expanded(1,0) [1, 1, 1, 1, 1, 1]", // not ascending
      "%0 = leaf f32[2,3] layout=diagonal(1) [1, 2, 3, 4, 5, 6]",
  };
  for (const char* text : bad)
    EXPECT_FALSE(parse_program(text).ok()) << text;
  // Index leaves are contiguous.
  Program p = parsed("%0 = leaf f32[3] [1, 2, 3]\n%1 = leaf i64[2] [0, 2]\n"
                     "%2 = index_select %0, %1, dim=0 : f32[2]\n");
  p.leaves[1].layout.kind = LayoutKind::Offset;
  p.leaves[1].layout.offset = 1;
  EXPECT_NE(validate(p), "");
}

// The views by their definitions in layout.h, for a [2,3] leaf (row-major strides [3, 1]).
TEST(LeafLayout, StridedViewsFollowTheDefinitions) {
  const Shape s{2, 3};
  const auto view = [&](const char* line) {
    const Program p = parsed(std::string(line) + "\n");
    return strided_view(p.leaves[0].layout, s);
  };
  StridedView v = view(kLeafLines[1]); // storage [3,2]: dim 1 outermost
  EXPECT_EQ(v.strides[0], 1);
  EXPECT_EQ(v.strides[1], 2);
  EXPECT_EQ(v.storage_size, 6);
  v = view(kLeafLines[2]); // a [2,6] buffer, every other column
  EXPECT_EQ(v.strides[0], 6);
  EXPECT_EQ(v.strides[1], 2);
  EXPECT_EQ(v.storage_size, 6 + 4 + 1);
  v = view(kLeafLines[3]); // one row, read twice
  EXPECT_EQ(v.strides[0], 0);
  EXPECT_EQ(v.strides[1], 1);
  EXPECT_EQ(v.storage_size, 3);
  v = view(kLeafLines[4]);
  EXPECT_EQ(v.strides[0], 3);
  EXPECT_EQ(v.storage_offset, 3);
  EXPECT_EQ(v.storage_size, 9);
}

// Over many seeds the generator gives leaves of every layout, each kind at every rank it allows,
// about a quarter of leaf steps' leaves non-contiguous; every program survives the text form
// and the encoder.
TEST(LeafLayout, GeneratorReachesEveryLayoutAndEncodesIt) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  const GeneratorOptions options;
  std::set<std::pair<LayoutKind, int>> reached; // kind, rank
  int leaves = 0, laid_out = 0;
  for (int n = 0; n < 3000; ++n) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(rng() % 300));
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(byte(rng));
    const Program p = generate(bytes, options);
    for (const Leaf& leaf : p.leaves) {
      if (leaf.dtype != DType::F32) continue;
      ++leaves;
      if (leaf.layout.contiguous()) continue;
      ++laid_out;
      reached.insert({leaf.layout.kind, leaf.shape.rank()});
    }
    ASSERT_EQ(validate(p), "");
    ASSERT_EQ(parsed(to_text(p)), p);
    const EncodeResult e = encode(p, options);
    ASSERT_TRUE(e.ok()) << e.error();
    ASSERT_EQ(generate(e.bytes(), options), p);
  }
  for (int rank = 0; rank <= kMaxLeafRank; ++rank) {
    EXPECT_TRUE(reached.contains({LayoutKind::Offset, rank})) << rank;
    if (rank >= 1) {
      EXPECT_TRUE(reached.contains({LayoutKind::Slice, rank})) << rank;
      EXPECT_TRUE(reached.contains({LayoutKind::Expanded, rank})) << rank;
    }
    if (rank >= 2) EXPECT_TRUE(reached.contains({LayoutKind::Permuted, rank})) << rank;
  }
  // Edge, matrix and index leaves stay contiguous, so the share is below the rate of 1/4.
  EXPECT_GT(laid_out * 10, leaves);
  EXPECT_LT(laid_out * 4, leaves);
}

TEST(LeafLayout, RateZeroDrawsNoLayoutAndEncodesNone) {
  GeneratorOptions off;
  off.layout_rate = 0;
  std::mt19937 rng(3);
  for (int n = 0; n < 300; ++n) {
    std::vector<std::uint8_t> bytes(200);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    for (const Leaf& leaf : generate(bytes, off).leaves)
      EXPECT_TRUE(leaf.layout.contiguous());
  }
  const Program p = parsed(std::string(kLeafLines[2]) + "\n%1 = exp %0 : f32[2,3]\n");
  EXPECT_FALSE(encode(p, off).ok());
  EXPECT_TRUE(encode(p, GeneratorOptions{}).ok());
}

// A program whose decoding ran all max_steps steps short of min_ops, with a leaf step right
// before an op with edge values: the encoder must keep that leaf a step of its own (it once
// merged it into the op's edge step and came out a step short).
TEST(LeafLayout, EncoderKeepsStepCountWhenShortOfMinOps) {
  GeneratorOptions o;
  o.max_leaves = 8;
  o.min_ops = 40;
  o.edge_rate = 1.0;
  for (double rate : {0.0, 0.25})
    for (unsigned seed : {1u, 2u, 5u, 8u, 9u, 11u}) {
      o.layout_rate = rate;
      std::mt19937 rng(seed);
      std::uniform_int_distribution<std::size_t> len(0, 600);
      std::uniform_int_distribution<int> byte(0, 255);
      for (int n = 0; n < 300; ++n) {
        std::vector<std::uint8_t> bytes(len(rng));
        for (auto& b : bytes)
          b = static_cast<std::uint8_t>(byte(rng));
        const Program p = generate(bytes, o);
        const EncodeResult e = encode(p, o);
        ASSERT_TRUE(e.ok()) << e.error().substr(0, 200);
        ASSERT_EQ(generate(e.bytes(), o), p);
      }
    }
}
