// Structure-aware mutation (include/burnmark/gen/mutate.h): every mutated or crossed-over
// program is valid and its bytes decode back to it, on thousands of random programs; each kind
// of mutation changes what it says and nothing else.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/gen/mutate.h"
#include "burnmark/ir/text.h"

using namespace burnmark;

namespace {

std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t max_len) {
  std::uniform_int_distribution<std::size_t> len(0, max_len);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::uint8_t> out(len(rng));
  for (auto& b : out)
    b = static_cast<std::uint8_t>(byte(rng));
  return out;
}

// The option sets campaigns use: the defaults, every dtype, no special values, an op set.
std::vector<GeneratorOptions> option_sets() {
  GeneratorOptions defaults;
  GeneratorOptions dtypes;
  dtypes.max_leaves = 8;
  dtypes.dtypes = {FloatDType::F32, FloatDType::BF16, FloatDType::F16, FloatDType::F64};
  GeneratorOptions plain;
  plain.special_rate = 0.0;
  plain.edge_rate = 0.0;
  GeneratorOptions ops;
  ops.ops = {Op::Add, Op::Mul, Op::Exp, Op::SumDim, Op::MeanDim, Op::Narrow, Op::Gather};
  return {defaults, dtypes, plain, ops};
}

// The program with its leaf data cleared: what a value-only mutation must leave unchanged.
Program structure_of(Program p) {
  for (Leaf& leaf : p.leaves)
    leaf.data.clear();
  return p;
}

void expect_round_trip(const Mutated& m, const GeneratorOptions& options, const char* what) {
  ASSERT_EQ(validate(m.program), "") << what;
  const Program decoded = generate(m.bytes, options);
  ASSERT_TRUE(decoded == m.program) << what << ": the bytes decode to\n"
                                    << to_text(decoded) << "instead of\n"
                                    << to_text(m.program);
}

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? r.program() : Program{};
}

} // namespace

TEST(Mutate, EveryKindRoundTripsThroughItsBytesOnRandomPrograms) {
  std::mt19937 rng(7);
  for (const GeneratorOptions& options : option_sets()) {
    std::array<int, kMutationKinds> made{};
    const int programs = 1500;
    for (int i = 0; i < programs; ++i) {
      const Program p = generate(random_bytes(rng, 256), options);
      for (int k = 0; k < kMutationKinds; ++k) {
        MutationRng mr(static_cast<std::uint64_t>(i) * 31 + static_cast<std::uint64_t>(k));
        const auto kind = static_cast<MutationKind>(k);
        const std::optional<Mutated> m = mutate_as(p, kind, options, mr);
        if (!m) continue;
        ++made[static_cast<std::size_t>(k)];
        ASSERT_FALSE(m->program == p) << "a mutation must change the program";
        expect_round_trip(*m, options, std::string(mutation_kind_name(kind)).c_str());
      }
    }
    // Every kind applies to a fair share of random programs, so none is dead weight in the
    // mix (the op restriction leaves few ops with a same-family alternative).
    for (int k = 0; k < kMutationKinds; ++k)
      EXPECT_GT(made[static_cast<std::size_t>(k)], programs / 20)
          << mutation_kind_name(static_cast<MutationKind>(k)) << " with " << options.ops.size()
          << " ops listed, special_rate " << options.special_rate;
  }
}

TEST(Mutate, MutateProgramSucceedsOnMostProgramsAndRoundTrips) {
  std::mt19937 rng(11);
  const GeneratorOptions options;
  int made = 0;
  const int programs = 2000;
  for (int i = 0; i < programs; ++i) {
    const Program p = generate(random_bytes(rng, 256), options);
    MutationRng mr(static_cast<std::uint64_t>(i));
    if (const std::optional<Mutated> m = mutate_program(p, options, mr)) {
      ++made;
      expect_round_trip(*m, options, "mutate_program");
    }
  }
  EXPECT_GT(made, programs * 9 / 10);
}

TEST(Mutate, ValueMutationsKeepTheStructureAndChangeOnlyLeafData) {
  std::mt19937 rng(3);
  const GeneratorOptions options;
  for (int i = 0; i < 1000; ++i) {
    const Program p = generate(random_bytes(rng, 200), options);
    for (MutationKind kind : {MutationKind::Values, MutationKind::Special}) {
      MutationRng mr(static_cast<std::uint64_t>(i));
      const std::optional<Mutated> m = mutate_as(p, kind, options, mr);
      if (!m) continue;
      ASSERT_TRUE(structure_of(m->program) == structure_of(p));
    }
  }
}

TEST(Mutate, PlantedSpecialValuesReachEveryClassAndTheFedOpsEdges) {
  // One leaf of eight elements feeding exp: planted values cover NaN, both infinities, -0, a
  // subnormal and exp's overflow edge (88.72..., kExpEdges), each as one seed entry.
  const Program p = parse(
      "%0 = leaf f32[8] [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]\n%1 = exp %0 : f32[8]\nroot %1\n");
  const GeneratorOptions options;
  bool nan = false, pinf = false, ninf = false, negzero = false, subnormal = false, edge = false;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    MutationRng mr(seed);
    const std::optional<Mutated> m = mutate_as(p, MutationKind::Special, options, mr);
    if (!m) continue;
    for (double v : m->program.leaves[0].data) {
      nan |= std::isnan(v);
      pinf |= v == INFINITY;
      ninf |= v == -INFINITY;
      negzero |= v == 0.0 && std::signbit(v);
      subnormal |= v != 0.0 && std::fabs(v) < 1.17549435e-38;
      edge |= std::fabs(v - 88.72) < 0.01; // ln(FLT_MAX) = 88.7228...
    }
  }
  EXPECT_TRUE(nan && pinf && ninf && negzero && subnormal && edge)
      << nan << pinf << ninf << negzero << subnormal << edge;
}

TEST(Mutate, OpChangesStayInTheFamilyWithTheSameArityAndResultShape) {
  std::mt19937 rng(5);
  const GeneratorOptions options;
  int changed = 0;
  for (int i = 0; i < 1000; ++i) {
    const Program p = generate(random_bytes(rng, 200), options);
    MutationRng mr(static_cast<std::uint64_t>(i));
    const std::optional<Mutated> m = mutate_as(p, MutationKind::Op, options, mr);
    if (!m) continue;
    ASSERT_EQ(m->program.stmts.size(), p.stmts.size());
    int differing = 0;
    for (std::size_t s = 0; s < p.stmts.size(); ++s) {
      const Stmt &a = p.stmts[s], &b = m->program.stmts[s];
      EXPECT_EQ(a.shape, b.shape);
      if (a.kind != StmtKind::Op || a.instr.op == b.instr.op) continue;
      ++differing;
      EXPECT_EQ(op_info(a.instr.op).family, op_info(b.instr.op).family);
      EXPECT_EQ(a.instr.operands, b.instr.operands);
    }
    EXPECT_EQ(differing, 1);
    ++changed;
  }
  EXPECT_GT(changed, 300);
}

TEST(Mutate, ResizesFavourVectorWidthBoundariesAndKeepAttributesInRange) {
  // narrow's start 4 and length 1 on a dim of 6: a resize below 5 must pull start back in.
  const Program p =
      parse("%0 = leaf f32[6,3] [0.5, -0.25, 0.5, -0.25, 0.5, -0.25, 0.5, -0.25, 0.5, -0.25, 0.5, "
            "-0.25, 0.5, -0.25, 0.5, -0.25, 0.5, -0.25]\n"
            "%1 = narrow %0, dim=0, start=4, length=1 : f32[1,3]\n"
            "root %1\n");
  const GeneratorOptions options;
  std::set<std::int64_t> sizes;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    MutationRng mr(seed);
    const std::optional<Mutated> m = mutate_as(p, MutationKind::Resize, options, mr);
    if (!m) continue;
    expect_round_trip(*m, options, "resize");
    const Shape& s = m->program.leaves[0].shape;
    sizes.insert(s[0]);
    const Attrs& a = m->program.stmts[1].instr.attrs;
    EXPECT_LT(a.dim1, s[0]);
    EXPECT_LE(a.dim1 + a.times, s[0]);
    // The seed [0.5, -0.25] is cycled over the new element count.
    for (std::size_t e = 0; e < m->program.leaves[0].data.size(); ++e)
      EXPECT_EQ(m->program.leaves[0].data[e], e % 2 == 0 ? 0.5 : -0.25);
  }
  for (std::int64_t n : {7, 8, 9, 15, 16, 1, 2})
    EXPECT_TRUE(sizes.count(n)) << "size " << n << " never drawn";
  EXPECT_FALSE(sizes.count(17)) << "FUZZ_MAX_DIM is 16";
}

TEST(CrossOver, SplicesAndLeafSwapsRoundTripAndMixBothParents) {
  std::mt19937 rng(13);
  for (const GeneratorOptions& options : option_sets()) {
    int made = 0, spliced = 0;
    const int pairs = 1500;
    for (int i = 0; i < pairs; ++i) {
      const Program a = generate(random_bytes(rng, 256), options);
      const Program b = generate(random_bytes(rng, 256), options);
      MutationRng mr(static_cast<std::uint64_t>(i));
      const std::optional<Mutated> m = cross_over(a, b, options, mr);
      if (!m) continue;
      ++made;
      expect_round_trip(*m, options, "cross_over");
      spliced += !(structure_of(m->program) == structure_of(a));
    }
    EXPECT_GT(made, pairs / 2);
    EXPECT_GT(spliced, pairs / 10);
  }
}

TEST(CrossOver, ASpliceFeedsTheOtherParentsOpsFromARegisterOfTheSameShape) {
  const Program a = parse("%0 = leaf f32[4] [0.5, 0.5, 0.5, 0.5]\n%1 = exp %0 : f32[4]\nroot %1\n");
  const Program b = parse("%0 = leaf f32[4] [0.25, 0.25, 0.25, 0.25]\n%1 = sin %0 : f32[4]\n"
                          "%2 = mul %1, %0 : f32[4]\nroot %2\n");
  const GeneratorOptions options;
  bool seen = false;
  for (std::uint64_t seed = 0; seed < 200 && !seen; ++seed) {
    MutationRng mr(seed);
    const std::optional<Mutated> m = cross_over(a, b, options, mr);
    if (!m) continue;
    // a's exp, then b's sin and mul applied to a's registers.
    seen = to_text(m->program) == "# burnmark program v1\n"
                                  "%0 = leaf f32[4] [0.5, 0.5, 0.5, 0.5]\n"
                                  "%1 = exp %0 : f32[4]\n"
                                  "%2 = sin %1 : f32[4]\n"
                                  "%3 = mul %2, %1 : f32[4]\n"
                                  "root %3\n";
  }
  EXPECT_TRUE(seen);
}
