// The generator is total and respects its caps, reaches every op and special value, and the
// encoder inverts it: on random bytes, on hand-written corpus programs and on error cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/shape_rules.h"
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

GeneratorOptions options(int max_leaves, double special_rate, int min_ops = 0, int min_dim = 1,
                         int max_dim = 16, int max_steps = 48, double edge_rate = 0.15) {
  GeneratorOptions o;
  o.edge_rate = edge_rate;
  o.max_leaves = max_leaves;
  o.special_rate = special_rate;
  o.min_ops = min_ops;
  o.min_dim = min_dim;
  o.max_dim = max_dim;
  o.max_steps = max_steps;
  return o;
}

// Tensors past ATen's 32,768-element parallel grain, as libtorch-threads campaigns draw them.
GeneratorOptions large_tensors() {
  GeneratorOptions o = options(4, 0.05, 0, 1, 48, 48);
  o.max_elements = kMaxElements;
  return o;
}

// Every dtype at once, so that f64 programs (raw eight-byte values, their own specials) are swept
// too.
GeneratorOptions all_dtypes(double special_rate) {
  GeneratorOptions o = options(8, special_rate);
  o.dtypes = {FloatDType::F32, FloatDType::BF16, FloatDType::F16, FloatDType::F64};
  return o;
}

// The option settings every random-input test sweeps.
const std::vector<GeneratorOptions>& settings() {
  static const std::vector<GeneratorOptions> all = {GeneratorOptions{},
                                                    options(1, 0.0),
                                                    options(8, 0.5),
                                                    options(8, 0.0, 12),
                                                    options(1, 0.5, 3),
                                                    options(3, 0.05, 0, 2, 6, 24),
                                                    options(8, 1.0, 0, 1, 48, 64),
                                                    options(8, 0.05, 0, 1, 16, 48, 1.0),
                                                    options(4, 0.05, 0, 1, 16, 48, 0.0),
                                                    large_tensors(),
                                                    all_dtypes(0.5),
                                                    all_dtypes(0.05)};
  return all;
}

std::uint32_t bits(float f) {
  return std::bit_cast<std::uint32_t>(f);
}

int count_ops(const Program& p) {
  int n = 0;
  for (const Stmt& s : p.stmts)
    n += s.kind == StmtKind::Op;
  return n;
}

// Leaf l is the matrix leaf a det, slogdet or inv step built (zero and doubled rows on purpose):
// its statement is followed by that op on it.
bool matrix_leaf(const Program& p, std::size_t l) {
  for (std::size_t r = 0; r + 1 < p.stmts.size(); ++r)
    if (p.stmts[r].kind == StmtKind::Leaf && p.stmts[r].leaf == static_cast<int>(l)) {
      const Stmt& next = p.stmts[r + 1];
      return next.kind == StmtKind::Op &&
             (next.instr.op == Op::Det || next.instr.op == Op::Slogdet ||
              next.instr.op == Op::Inv) &&
             next.instr.operands[0] == static_cast<Reg>(r);
    }
  return false;
}

std::string source_dir() {
  const char* dir = std::getenv("BURNMARK_SOURCE_DIR");
  return dir ? dir : BURNMARK_FALLBACK_SOURCE_DIR;
}

} // namespace

TEST(Generate, EmptyInputIsOneMinimalLeaf) {
  const Program p = generate({}, GeneratorOptions{});
  ASSERT_EQ(validate(p), "");
  ASSERT_EQ(p.stmts.size(), 1u);
  EXPECT_EQ(p.root, 0);
  // Exhausted input reads zeros: rank choice 0 (rank 1), dim min_dim, and byte 0 maps to -1.
  EXPECT_EQ(p.leaves[0].shape.to_string(), "[1]");
  EXPECT_EQ(p.leaves[0].data, std::vector<double>{-1.0});
}

TEST(Generate, MinOpsIsHonouredEvenOnEmptyInput) {
  const Program p = generate({}, options(4, 0.05, 5));
  ASSERT_EQ(validate(p), "");
  EXPECT_EQ(count_ops(p), 5);
  EXPECT_EQ(p.stmts.size(), 6u);
}

TEST(Generate, TotalAndWithinCapsOnRandomBytes) {
  std::mt19937 rng(20240611);
  std::array<int, kOpCount> per_op{};
  std::array<int, kMaxRank + 1> leaf_ranks{};
  int aliases = 0, batched_matmuls = 0, broadcast_batch_matmuls = 0, transposes_3d = 0;
  int keepdim_true = 0, keepdim_false = 0, broadcast_binaries = 0;
  int programs = 0;
  for (const GeneratorOptions& o : settings()) {
    for (int n = 0; n < 3500; ++n, ++programs) {
      const std::vector<std::uint8_t> bytes = random_bytes(rng, 400);
      const Program p = generate(bytes, o);
      ASSERT_EQ(validate(p), "") << to_text(p);
      int float_leaves = 0;
      for (const Leaf& leaf : p.leaves)
        float_leaves += leaf.dtype == DType::F32 ? 1 : 0;
      ASSERT_LE(float_leaves, o.max_leaves);
      // A step makes one statement, or up to three: an edge leaf, a comparison and its where.
      ASSERT_LE(static_cast<int>(p.stmts.size()), 3 * o.max_steps + 1);
      ASSERT_EQ(p.root, static_cast<Reg>(p.stmts.size() - 1));
      ASSERT_EQ(p.dtype_of(p.root), DType::F32);
      if (count_ops(p) < o.min_ops) ASSERT_GE(static_cast<int>(p.stmts.size()), o.max_steps + 1);
      int leaves_so_far = 0;
      for (const Stmt& s : p.stmts) {
        ASSERT_TRUE(s.shape.within_cap()) << s.shape.to_string();
        ASSERT_LE(s.shape.numel(), o.max_elements) << s.shape.to_string();
        switch (s.kind) {
        case StmtKind::Leaf:
          // An index leaf's dims follow its op's operands (and reach 2n + 2), not the knobs.
          if (s.dtype == DType::I64) break;
          ++leaves_so_far;
          ++leaf_ranks[static_cast<std::size_t>(s.shape.rank())];
          for (int i = 0; i < s.shape.rank(); ++i) {
            ASSERT_GE(s.shape[i], o.min_dim);
            ASSERT_LE(s.shape[i], o.max_dim);
          }
          break;
        case StmtKind::Alias:
          ++aliases;
          ASSERT_EQ(leaves_so_far, o.max_leaves) << "aliases only happen at the leaf cap";
          break;
        case StmtKind::Op: {
          ++per_op[static_cast<std::size_t>(s.instr.op)];
          const auto& ops = s.instr.operands;
          if (s.instr.op == Op::Matmul) {
            const Shape& a = p.shape_of(ops[0]);
            const Shape& b = p.shape_of(ops[1]);
            if (s.shape.rank() >= 3) ++batched_matmuls;
            if (a.rank() >= 3 && b.rank() >= 3 && !(a == b) && a[a.rank() - 3] != b[b.rank() - 3])
              ++broadcast_batch_matmuls;
          }
          if (s.instr.op == Op::Transpose && s.shape.rank() >= 3) ++transposes_3d;
          if (s.instr.op == Op::SumDim || s.instr.op == Op::MeanDim)
            ++(s.instr.attrs.keepdim ? keepdim_true : keepdim_false);
          if (op_arity(s.instr.op) == 2 && s.instr.op != Op::Matmul && s.instr.op != Op::Concat &&
              !(p.shape_of(ops[0]) == p.shape_of(ops[1])))
            ++broadcast_binaries;
          break;
        }
        }
      }
    }
  }
  EXPECT_GE(programs, 20000);
  for (const OpInfo& info : kOpTable)
    EXPECT_GT(per_op[static_cast<std::size_t>(info.op)], 0) << info.name;
  for (int r = 0; r <= kMaxRank; ++r)
    EXPECT_GT(leaf_ranks[static_cast<std::size_t>(r)], 0) << "rank " << r;
  EXPECT_GT(aliases, 0);
  EXPECT_GT(batched_matmuls, 0);
  EXPECT_GT(broadcast_batch_matmuls, 0);
  EXPECT_GT(transposes_3d, 0);
  EXPECT_GT(keepdim_true, 0);
  EXPECT_GT(keepdim_false, 0);
  EXPECT_GT(broadcast_binaries, 0);
}

// The shape views reach each of their forms: reshape's merges (flatten included) and splits,
// slice steps above 1, chunk indices where LibTorch makes fewer chunks than asked, diag_embed
// off the main diagonal, stack of two different registers, permutations other than the
// identity, and bmm.
TEST(Generate, ShapeViewsReachEachForm) {
  std::mt19937 rng(8);
  int merges = 0, flattens = 0, splits = 0, strided_slices = 0, short_chunks = 0, off_diagonal = 0,
      two_stacks = 0, permutes = 0, bmms = 0;
  for (int n = 0; n < 6000; ++n) {
    const Program p = generate(random_bytes(rng, 400), GeneratorOptions{});
    for (const Stmt& s : p.stmts) {
      if (s.kind != StmtKind::Op) continue;
      const Attrs& a = s.instr.attrs;
      const Shape& in = p.shape_of(s.instr.operands[0]);
      switch (s.instr.op) {
      case Op::Reshape:
        ++(a.variant == 0 ? merges : splits);
        if (a.variant == 0 && s.shape.rank() == 1 && in.rank() >= 2) ++flattens;
        break;
      case Op::Slice: strided_slices += a.variant > 1; break;
      case Op::Chunk: short_chunks += chunk_count(in[a.dim], a.times) < a.times; break;
      case Op::DiagEmbed: off_diagonal += a.times != 0; break;
      case Op::Stack: two_stacks += s.instr.operands[0] != s.instr.operands[1]; break;
      case Op::Permute: {
        std::array<int, kMaxRank> identity{};
        for (int d = 0; d < in.rank(); ++d)
          identity[static_cast<std::size_t>(d)] = d;
        permutes += *permutation_dims(a.times, in.rank()) != identity;
        break;
      }
      case Op::Bmm: ++bmms; break;
      default: break;
      }
    }
  }
  EXPECT_GT(merges, 0);
  EXPECT_GT(flattens, 0);
  EXPECT_GT(splits, 0);
  EXPECT_GT(strided_slices, 0);
  EXPECT_GT(short_chunks, 0);
  EXPECT_GT(off_diagonal, 0);
  EXPECT_GT(two_stacks, 0);
  EXPECT_GT(permutes, 0);
  EXPECT_GT(bmms, 0);
}

TEST(Generate, SpecialRateZeroGivesOnlyRegularValues) {
  std::mt19937 rng(7);
  for (int n = 0; n < 2000; ++n) {
    // Edge leaves off: their values are the ops' edges, not the special pool.
    const Program p = generate(random_bytes(rng, 600), options(8, 0.0, 0, 1, 16, 48, 0.0));
    for (std::size_t l = 0; l < p.leaves.size(); ++l)
      for (double v : matrix_leaf(p, l) ? std::vector<double>{} : p.leaves[l].data) {
        ASSERT_TRUE(std::isfinite(v));
        ASSERT_GE(v, -1.0f);
        ASSERT_LE(v, 1.0f);
        // Regular values are b/127.5 - 1 for a byte b: (v + 1) * 127.5 is (nearly) an integer.
        const double b = (static_cast<double>(v) + 1.0) * 127.5;
        ASSERT_NEAR(b, std::round(b), 1e-4) << v;
      }
  }
}

TEST(Generate, SpecialRateMixesInEverySpecialClass) {
  const std::vector<float> specials = {std::numeric_limits<float>::quiet_NaN(),
                                       std::numeric_limits<float>::infinity(),
                                       -std::numeric_limits<float>::infinity(),
                                       0.0f,
                                       -0.0f,
                                       1e-40f,
                                       std::numeric_limits<float>::min(),
                                       1.0f,
                                       -1.0f,
                                       1e30f,
                                       -1e30f,
                                       3e38f,
                                       -3e38f,
                                       1e-30f};
  const auto is_regular = [](float v) {
    if (!std::isfinite(v) || v < -1.0f || v > 1.0f) return false;
    const double b = (static_cast<double>(v) + 1.0) * 127.5;
    return std::abs(b - std::round(b)) < 1e-4 &&
           static_cast<float>(std::round(b)) / 127.5f - 1.0f == v;
  };
  for (const double rate : {0.5, 0.05}) {
    std::set<std::uint32_t> seen;
    long long elements = 0, irregular = 0;
    std::mt19937 rng(11);
    for (int n = 0; n < 3000; ++n) {
      // Long inputs so that leaf data rarely runs into the zero padding past the end.
      const Program p = generate(random_bytes(rng, 4000), options(8, rate, 0, 1, 4, 48, 0.0));
      for (std::size_t l = 0; l < p.leaves.size(); ++l)
        for (float v : matrix_leaf(p, l) ? std::vector<double>{} : p.leaves[l].data) {
          seen.insert(bits(v));
          ++elements;
          irregular += !is_regular(v);
        }
    }
    if (rate == 0.5)
      for (float s : specials)
        EXPECT_TRUE(seen.count(bits(s))) << "special value " << s << " never generated";
    // Of the 15 special alternatives, ±1 are also regular values, so the irregular share is
    // about rate * 13/15 (the raw-bits escape almost never lands on a regular value).
    const double share = static_cast<double>(irregular) / static_cast<double>(elements);
    EXPECT_NEAR(share, rate * 13.0 / 15.0, rate * 0.25) << "rate " << rate;
  }
}

TEST(Encode, RoundTripsGeneratedPrograms) {
  std::mt19937 rng(99);
  for (const GeneratorOptions& o : settings()) {
    for (int n = 0; n < 700; ++n) {
      const Program p = generate(random_bytes(rng, 400), o);
      const EncodeResult e = encode(p, o);
      ASSERT_TRUE(e.ok()) << e.error() << "\n" << to_text(p);
      ASSERT_EQ(generate(e.bytes(), o), p) << to_text(p) << "\nre-decoded as\n"
                                           << to_text(generate(e.bytes(), o));
    }
  }
}

TEST(Text, RoundTripsGeneratedPrograms) {
  std::mt19937 rng(5);
  for (const GeneratorOptions& o : settings()) {
    for (int n = 0; n < 500; ++n) {
      const Program p = generate(random_bytes(rng, 400), o);
      const ParseResult back = parse_program(to_text(p));
      ASSERT_TRUE(back.ok()) << back.error() << "\n" << to_text(p);
      ASSERT_EQ(back.program(), p) << to_text(p);
    }
  }
}

TEST(Encode, RoundTripsEveryCorpusProgram) {
  const std::filesystem::path dir = std::filesystem::path(source_dir()) / "corpus" / "programs";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::set<Op> used;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const ParseResult parsed = parse_program(text.str());
    ASSERT_TRUE(parsed.ok()) << entry.path() << ": " << parsed.error();
    const Program& p = parsed.program();
    const EncodeResult e = encode(p, GeneratorOptions{});
    ASSERT_TRUE(e.ok()) << entry.path() << ": " << e.error();
    EXPECT_EQ(generate(e.bytes(), GeneratorOptions{}), p) << entry.path();
    for (const Stmt& s : p.stmts)
      if (s.kind == StmtKind::Op) used.insert(s.instr.op);
  }
  EXPECT_GE(files, 12);
  for (const OpInfo& info : kOpTable)
    EXPECT_TRUE(used.count(info.op)) << "no corpus program uses " << info.name;
}

namespace {

std::string encode_error(const char* text, const GeneratorOptions& o = GeneratorOptions{}) {
  const ParseResult parsed = parse_program(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  if (!parsed.ok()) return {};
  const EncodeResult e = encode(parsed.program(), o);
  EXPECT_FALSE(e.ok()) << text;
  return e.ok() ? std::string{} : e.error();
}

void expect_mentions(const std::string& error, const std::string& part) {
  EXPECT_NE(error.find(part), std::string::npos)
      << "error '" << error << "' should mention '" << part << "'";
}

} // namespace

TEST(Generate, RaisedElementCapReachesPastATensParallelGrain) {
  // ATen splits an elementwise loop or a reduction across threads past 32,768 elements; at the
  // default cap nothing gets there, at the raised one leaves and results do.
  std::mt19937 rng(23);
  std::int64_t largest_default = 0;
  int past_grain_leaves = 0;
  int past_grain_results = 0;
  for (int n = 0; n < 400; ++n) {
    const std::vector<std::uint8_t> bytes = random_bytes(rng, 300);
    for (const Stmt& s : generate(bytes, options(4, 0.05, 0, 1, 48, 48)).stmts)
      largest_default = std::max(largest_default, s.shape.numel());
    for (const Stmt& s : generate(bytes, large_tensors()).stmts)
      if (s.shape.numel() > 32768)
        ++(s.kind == StmtKind::Op ? past_grain_results : past_grain_leaves);
  }
  EXPECT_LE(largest_default, kDefaultMaxElements);
  EXPECT_GT(past_grain_leaves, 20);
  EXPECT_GT(past_grain_results, 20);
}

TEST(Encode, ExplainsWhatTheGeneratorCannotProduce) {
  expect_mentions(
      encode_error("%0 = leaf f32[1] [0.5]\n%1 = leaf f32[1] [0.5]\n", options(1, 0.05)),
      "%1 = leaf f32[1]");
  expect_mentions(encode_error("%0 = leaf f32[2] [1, 2]\n%1 = alias %0 : f32[2]\n"),
                  "%1 = alias %0");
  std::string seventeen = "%0 = leaf f32[17] [1";
  for (int i = 1; i < 17; ++i)
    seventeen += ", 1";
  expect_mentions(encode_error((seventeen + "]\n").c_str()),
                  "%0 = leaf f32[17]: dim 17 is outside 1..16");
  expect_mentions(encode_error("%0 = leaf f32[1] [1]\n", options(4, 0.05, 0, 2)),
                  "dim 1 is outside");
  // 48 * 48 * 4 = 9,216 elements: legal in the IR, past the generator's default cap.
  std::string large = "%0 = leaf f32[48, 48, 4] [1";
  for (int i = 1; i < 48 * 48 * 4; ++i)
    large += ", 1";
  expect_mentions(encode_error((large + "]\n").c_str(), options(4, 0.05, 0, 1, 48)),
                  "dim 4 is outside 1..3");
  expect_mentions(encode_error("%0 = leaf f32[2] [1, 2]\n%1 = pow %0, exponent=2.5 : f32[2]\n"),
                  "%1 = pow %0");
  expect_mentions(encode_error("%0 = leaf f32[2] [1, 2]\n%1 = clamp %0, min=-2, max=2 : f32[2]\n"),
                  "op_tables.h");
  const std::string zero_rate = encode_error("%0 = leaf f32[2] [-1, 0.5]\n", options(4, 0.0));
  expect_mentions(zero_rate, "%0 = leaf");
  expect_mentions(zero_rate, "element 1 is 0.5");
  expect_mentions(encode_error("%0 = leaf f32[17] [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]\n",
                               options(4, 0.05, 0, 1, 32)),
                  "period");
  expect_mentions(encode_error("%0 = leaf f32[2] [1, 2]\n%1 = neg %0 : f32[2]\nroot %0\n"), "root");
  expect_mentions(
      encode_error("%0 = leaf f32[2] [1, 2]\n%1 = neg %0 : f32[2]\n", options(4, 0.05, 2)),
      "min_ops");
  expect_mentions(encode_error("%0 = leaf f32[1] [1]\n%1 = neg %0 : f32[1]\n%2 = neg %1 : f32[1]\n",
                               options(4, 0.05, 0, 1, 16, 1)),
                  "max_steps");
}

TEST(Generate, EdgeLeavesFeedTheOpsTheirOwnEdgeValues) {
  std::mt19937 rng(99);
  const GeneratorOptions o = options(8, 0.05, 0, 1, 16, 48, 1.0);
  std::array<int, kOpCount> fed{};
  for (int n = 0; n < 4000; ++n) {
    const Program p = generate(random_bytes(rng, 400), o);
    for (std::size_t r = 1; r < p.stmts.size(); ++r) {
      const Stmt& s = p.stmts[r];
      const Stmt& before = p.stmts[r - 1];
      if (s.kind != StmtKind::Op || before.kind != StmtKind::Leaf) continue;
      if (s.instr.operands[0] != static_cast<Reg>(r - 1)) continue;
      const std::span<const float> edges = op_info(s.instr.op).edges;
      for (float v : p.leaves[static_cast<std::size_t>(before.leaf)].data)
        if (std::any_of(edges.begin(), edges.end(), [&](float e) { return bits(e) == bits(v); })) {
          ++fed[static_cast<std::size_t>(s.instr.op)];
          break;
        }
    }
  }
  for (const OpInfo& info : kOpTable)
    if (!info.edges.empty()) EXPECT_GT(fed[static_cast<std::size_t>(info.op)], 0) << info.name;
}

TEST(Generate, LaneLengthLeavesStraddleSimdWidths) {
  // Element counts one below, at and one above a multiple of 8 (up to 256): the vector body
  // alone, the body and a full tail, the body and a one-element tail.
  std::mt19937 rng(17);
  std::set<std::int64_t> seen;
  for (int n = 0; n < 3000; ++n)
    for (const Leaf& leaf : generate(random_bytes(rng, 300), options(8, 0.05, 0, 1, 48)).leaves)
      if (const std::int64_t e = leaf.shape.numel(); e >= 7 && (e % 8 == 7 || e % 8 == 1))
        seen.insert(e);
  // 127 and 257 are primes above the 48-per-dimension cap, so no 1-D or 2-D shape has them.
  for (std::int64_t e : {7, 9, 15, 17, 31, 33, 63, 65, 129, 255})
    EXPECT_TRUE(seen.count(e)) << e << " elements";
}

TEST(Encode, KeepsEdgeLeavesAndWheresInTheirOpSteps) {
  // A program of 48 steps whose ops take edge leaves has more statements than steps; it must
  // still encode within max_steps.
  std::mt19937 rng(5);
  const GeneratorOptions o = options(8, 0.05, 40, 1, 16, 48, 1.0);
  int long_ones = 0;
  for (int n = 0; n < 300; ++n) {
    const Program p = generate(random_bytes(rng, 600), o);
    if (p.stmts.size() > 49) ++long_ones;
    const EncodeResult e = encode(p, o);
    ASSERT_TRUE(e.ok()) << e.error() << "\n" << to_text(p);
    ASSERT_EQ(generate(e.bytes(), o), p) << to_text(p);
  }
  EXPECT_GT(long_ones, 0);
}

TEST(Encode, AcceptsArbitraryFloatsWhenSpecialValuesAreOn) {
  const char* text =
      "%0 = leaf f32[6] [0.1, -0.3, 1e-12, 12345.678, -nan, 2e-45]\n%1 = exp %0 : f32[6]\n";
  const ParseResult parsed = parse_program(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  for (const double rate : {0.01, 0.05, 1.0}) {
    const EncodeResult e = encode(parsed.program(), options(4, rate));
    ASSERT_TRUE(e.ok()) << e.error();
    EXPECT_EQ(generate(e.bytes(), options(4, rate)), parsed.program());
  }
}

// det, slogdet and inv meet exactly singular matrices (a zero row, [[0]], a repeated row, a row
// twice or minus another) as well as matrices with all rows distinct, in batches and up to 4x4.
TEST(Generate, SquareOpsMeetExactlySingularMatrices) {
  std::mt19937 rng(41);
  int zero_row = 0, zero_1x1 = 0, repeated = 0, scaled = 0, distinct = 0, batched = 0, four = 0;
  std::set<Op> ops;
  for (int n = 0; n < 6000; ++n) {
    const Program p = generate(random_bytes(rng, 400), GeneratorOptions{});
    for (const Stmt& s : p.stmts) {
      if (s.kind != StmtKind::Op) continue;
      const Op op = s.instr.op;
      if (op != Op::Det && op != Op::Slogdet && op != Op::Inv) continue;
      ops.insert(op);
      const Stmt& a = p.stmts[static_cast<std::size_t>(s.instr.operands[0])];
      if (a.kind != StmtKind::Leaf) continue;
      const std::vector<double>& d = p.leaves[static_cast<std::size_t>(a.leaf)].data;
      const auto m = static_cast<std::size_t>(a.shape[a.shape.rank() - 1]);
      batched += a.shape.rank() > 2;
      four += m == 4;
      // The first matrix of the batch, row by row.
      const auto row = [&](std::size_t i, std::size_t j) { return d[i * m + j]; };
      const auto rows_related = [&](std::size_t i, std::size_t k, float f) {
        for (std::size_t j = 0; j < m; ++j)
          if (bits(row(i, j)) != bits(f * row(k, j))) return false;
        return true;
      };
      bool any_zero = false, any_equal = false, any_scaled = false;
      for (std::size_t i = 0; i < m; ++i) {
        bool z = true;
        for (std::size_t j = 0; j < m; ++j)
          z = z && row(i, j) == 0.0f;
        any_zero = any_zero || z;
        for (std::size_t k = 0; k < i; ++k) {
          any_equal = any_equal || rows_related(i, k, 1.0f);
          any_scaled = any_scaled || rows_related(i, k, 2.0f) || rows_related(i, k, -1.0f);
        }
      }
      zero_row += any_zero;
      zero_1x1 += m == 1 && d[0] == 0.0f;
      repeated += any_equal && !any_zero;
      scaled += any_scaled && !any_zero && !any_equal;
      distinct += m > 1 && !any_zero && !any_equal && !any_scaled;
    }
  }
  EXPECT_EQ(ops.size(), 3u);
  for (int count : {zero_row, zero_1x1, repeated, scaled, distinct, batched, four})
    EXPECT_GT(count, 0);
  EXPECT_GT(zero_row + repeated + scaled, distinct / 10) << "singular matrices are not rare";
}

// ---- dtypes ----

namespace {

GeneratorOptions with_dtypes(GeneratorOptions o, std::vector<FloatDType> dtypes) {
  o.dtypes = std::move(dtypes);
  return o;
}

} // namespace

// In a reduced dtype every value and attribute is one of the dtype's, every op LibTorch has
// there is reached and no other; encode and the text form round-trip.
TEST(Generate, ReducedDtypeProgramsReachTheirOpsAndRoundTrip) {
  std::mt19937 rng(16);
  for (FloatDType d : {FloatDType::BF16, FloatDType::F16, FloatDType::F64}) {
    std::array<int, kOpCount> per_op{};
    for (const GeneratorOptions& base : {GeneratorOptions{}, options(8, 0.5), options(4, 0.0)}) {
      const GeneratorOptions o = with_dtypes(base, {d});
      for (int n = 0; n < 4000; ++n) {
        const Program p = generate(random_bytes(rng, 400), o);
        ASSERT_EQ(p.float_dtype, d);
        ASSERT_EQ(validate(p), "") << to_text(p); // representable values and attributes
        for (const Stmt& s : p.stmts)
          if (s.kind == StmtKind::Op) ++per_op[static_cast<std::size_t>(s.instr.op)];
        if (n % 8 != 0) continue;
        const EncodeResult e = encode(p, o);
        ASSERT_TRUE(e.ok()) << e.error() << "\n" << to_text(p);
        ASSERT_EQ(generate(e.bytes(), o), p) << to_text(p);
        const ParseResult back = parse_program(to_text(p));
        ASSERT_TRUE(back.ok()) << back.error();
        ASSERT_EQ(back.program(), p);
      }
    }
    for (const OpInfo& info : kOpTable) {
      if (op_generated_at(info.op, d))
        EXPECT_GT(per_op[static_cast<std::size_t>(info.op)], 0)
            << info.name << " in " << float_dtype_name(d);
      else
        EXPECT_EQ(per_op[static_cast<std::size_t>(info.op)], 0)
            << info.name << " in " << float_dtype_name(d);
    }
  }
}

TEST(Generate, SeveralDtypesAreDrawnByTheFirstByteAndF16HasItsOwnSpecials) {
  const GeneratorOptions o =
      with_dtypes(options(4, 1.0), {FloatDType::F32, FloatDType::BF16, FloatDType::F16});
  std::mt19937 rng(3);
  std::set<FloatDType> seen;
  bool f16_max = false;
  for (int n = 0; n < 600; ++n) {
    const std::vector<std::uint8_t> bytes = random_bytes(rng, 300);
    const Program p = generate(bytes, o);
    seen.insert(p.float_dtype);
    if (!bytes.empty()) EXPECT_EQ(p.float_dtype, o.dtypes[bytes[0] % 3]);
    for (const Leaf& leaf : p.leaves)
      for (float v : leaf.data) {
        if (p.float_dtype == FloatDType::F16) f16_max |= std::fabs(v) == 65504.0f;
        // No f32-only magnitudes survive in f16: they became f16 values or infinities.
        if (p.float_dtype == FloatDType::F16 && std::isfinite(v)) EXPECT_LE(std::fabs(v), 65504.0f);
      }
    const EncodeResult e = encode(p, o);
    ASSERT_TRUE(e.ok()) << e.error();
    ASSERT_EQ(generate(e.bytes(), o), p);
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_TRUE(f16_max);
  // One dtype reads no byte for it: f32 programs decode exactly as before.
  const std::vector<std::uint8_t> bytes = random_bytes(rng, 300);
  EXPECT_EQ(generate(bytes, with_dtypes(GeneratorOptions{}, {FloatDType::F32})),
            generate(bytes, GeneratorOptions{}));
}

TEST(Generate, F64ProgramsReachEveryF64OnlySpecialAndOtherDtypesOnlyTheirOwnValues) {
  constexpr double kMax = std::numeric_limits<double>::max();
  const std::vector<double> f64_only = {kMax,   -kMax,  std::numeric_limits<double>::min(),
                                        5e-324, 1e-310, 1e300,
                                        -1e300, 1e200,  3.5e38,
                                        -1e39,  1e-39,  709.78,
                                        710.0,  710.47, -745.0,
                                        -746.0};
  const auto bits64 = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  std::set<std::uint64_t> seen;
  int raw_non_float = 0;
  std::mt19937 rng(17);
  const GeneratorOptions f64 = with_dtypes(options(8, 1.0, 0, 1, 4, 48, 0.0), {FloatDType::F64});
  for (int n = 0; n < 1500; ++n) {
    const Program p = generate(random_bytes(rng, 2000), f64);
    for (const Leaf& leaf : p.leaves)
      for (double v : leaf.data) {
        seen.insert(bits64(v));
        const bool listed = std::find(f64_only.begin(), f64_only.end(), v) != f64_only.end();
        raw_non_float += !listed && !representable(v, FloatDType::F32);
      }
    const EncodeResult e = encode(p, f64);
    ASSERT_TRUE(e.ok()) << e.error();
    ASSERT_EQ(generate(e.bytes(), f64), p) << to_text(p);
  }
  for (double v : f64_only)
    EXPECT_TRUE(seen.count(bits64(v))) << "f64 special " << v << " never generated";
  // The escape's eight raw bytes reach doubles that are in no table and no float.
  EXPECT_GT(raw_non_float, 0);
  // Programs of the other dtypes, drawn alongside f64 ones, hold only values of their dtype.
  const GeneratorOptions mixed = with_dtypes(
      options(8, 1.0), {FloatDType::F32, FloatDType::BF16, FloatDType::F16, FloatDType::F64});
  for (int n = 0; n < 800; ++n) {
    const Program p = generate(random_bytes(rng, 600), mixed);
    for (const Leaf& leaf : p.leaves)
      for (double v : leaf.data) {
        ASSERT_TRUE(representable(v, p.float_dtype)) << v;
        if (p.float_dtype != FloatDType::F64) ASSERT_TRUE(representable(v, FloatDType::F32)) << v;
      }
  }
}

TEST(Encode, AnF64ProgramWithF64OnlyValuesRoundTripsThroughTextAndBytes) {
  const char* text = "dtype f64\n"
                     "%0 = leaf f64[2,4] [1.7976931348623157e+308, 4.9e-324, 1e-310, 0.1, "
                     "-1e+39, 709.78, 710.47, -nan]\n"
                     "%1 = leaf f64[4] [2, 0x1.0000000000001p+0, 1e-39, 1e+300]\n"
                     "%2 = mul %0, %1 : f64[2,4]\n"
                     "%3 = exp %2 : f64[2,4]\n";
  const ParseResult parsed = parse_program(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error();
  const Program& p = parsed.program();
  EXPECT_EQ(p.leaves[1].data[1], 1.0 + 0x1p-52); // 53 significant bits
  const ParseResult back = parse_program(to_text(p));
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.program(), p);
  for (const double rate : {0.05, 1.0}) {
    const GeneratorOptions o = with_dtypes(options(8, rate), {FloatDType::F64});
    const EncodeResult e = encode(p, o);
    ASSERT_TRUE(e.ok()) << e.error();
    EXPECT_EQ(generate(e.bytes(), o), p) << to_text(generate(e.bytes(), o));
  }
}

TEST(Encode, RefusesOpsAndDtypesTheGeneratorWouldNotDraw) {
  const ParseResult mm = parse_program("dtype f16\n%0 = leaf f16[2,2] [1, 2, 3, 4]\n"
                                       "%1 = mm %0, %0 : f16[2,2]\n");
  ASSERT_TRUE(mm.ok()) << mm.error();
  const EncodeResult e = encode(mm.program(), with_dtypes(GeneratorOptions{}, {FloatDType::F16}));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("mm is not generated in f16"), std::string::npos) << e.error();
  const EncodeResult f32_only = encode(mm.program(), GeneratorOptions{});
  ASSERT_FALSE(f32_only.ok());
  EXPECT_NE(f32_only.error().find("the program is f16"), std::string::npos) << f32_only.error();
}
