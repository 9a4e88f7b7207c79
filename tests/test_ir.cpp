// Shape rules of every op and the text form's round trip on hand-written programs.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

#include "burnmark/ir/input_file.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"

#include "scratch_dir.h"

using namespace burnmark;

namespace {

ShapeResult rule(Op op, std::vector<Shape> in, Attrs a = {}) {
  return infer_shape(op, a, in);
}

void expect_shape(const ShapeResult& r, const Shape& want) {
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.shape().to_string(), want.to_string());
}

} // namespace

TEST(Shape, BroadcastFollowsNumpy) {
  EXPECT_EQ(broadcast({2, 3}, {3})->to_string(), "[2,3]");
  EXPECT_EQ(broadcast({4, 1, 3}, {2, 1})->to_string(), "[4,2,3]");
  EXPECT_EQ(broadcast({}, {2, 2})->to_string(), "[2,2]");
  EXPECT_FALSE(broadcast({2, 3}, {2}).has_value());
}

TEST(ShapeRules, Elementwise) {
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    expect_shape(rule(op, {{2, 1, 4}, {3, 1}}), {2, 3, 4});
    EXPECT_FALSE(rule(op, {{2, 3}, {4}}).ok());
  }
  for (Op op : {Op::Neg, Op::Abs, Op::Exp, Op::Log, Op::Sqrt, Op::Pow, Op::Relu, Op::Sigmoid,
                Op::Tanh, Op::Clamp})
    expect_shape(rule(op, {{5, 2}}), {5, 2});
}

TEST(ShapeRules, Reductions) {
  expect_shape(rule(Op::SumAll, {{3, 4}}), Shape::scalar());
  expect_shape(rule(Op::MeanAll, {{3}}), Shape::scalar());
  Attrs a;
  a.dim = 1;
  expect_shape(rule(Op::SumDim, {{3, 4, 5}}, a), {3, 5});
  a.keepdim = true;
  expect_shape(rule(Op::MeanDim, {{3, 4, 5}}, a), {3, 1, 5});
  a.dim = 3;
  EXPECT_FALSE(rule(Op::SumDim, {{3, 4, 5}}, a).ok());
}

TEST(ShapeRules, Layout) {
  Attrs t;
  t.dim = 0;
  t.dim1 = 2;
  expect_shape(rule(Op::Transpose, {{2, 3, 4}}, t), {4, 3, 2});
  EXPECT_FALSE(rule(Op::Transpose, {{5}}, t).ok());
  Attrs c;
  c.dim = 1;
  expect_shape(rule(Op::Concat, {{2, 3}, {2, 5}}, c), {2, 8});
  EXPECT_FALSE(rule(Op::Concat, {{2, 3}, {3, 5}}, c).ok());
  EXPECT_FALSE(rule(Op::Concat, {{2, 40}, {2, 9}}, c).ok()) << "48 per dimension is the cap";
  Attrs r;
  r.dim = 0;
  r.times = 3;
  expect_shape(rule(Op::Repeat, {{2, 3}}, r), {6, 3});
  r.times = kMaxRepeat + 1;
  EXPECT_FALSE(rule(Op::Repeat, {{2, 3}}, r).ok());
}

TEST(ShapeRules, MatmulBroadcastsBatch) {
  expect_shape(rule(Op::Matmul, {{2, 3}, {3, 4}}), {2, 4});
  expect_shape(rule(Op::Matmul, {{5, 2, 3}, {3, 4}}), {5, 2, 4});
  expect_shape(rule(Op::Matmul, {{2, 1, 2, 3}, {4, 3, 6}}), {2, 4, 2, 6});
  EXPECT_FALSE(rule(Op::Matmul, {{2, 3}, {4, 3}}).ok());
  EXPECT_FALSE(rule(Op::Matmul, {{3}, {3, 4}}).ok());
  EXPECT_FALSE(rule(Op::Matmul, {{2, 2, 3}, {3, 3, 4}}).ok());
}

TEST(ShapeRules, ReshapePermuteSliceStackChunkDiagEmbedBmm) {
  Attrs merge;
  merge.dim = 1;
  merge.dim1 = 2;
  expect_shape(rule(Op::Reshape, {{2, 3, 4}}, merge), {2, 12});
  merge.dim = 0;
  expect_shape(rule(Op::Reshape, {{2, 3, 4}}, merge), {24}); // flatten
  EXPECT_FALSE(rule(Op::Reshape, {{8, 8}}, merge).ok()) << "a merged dim of 64 exceeds the cap";
  merge.dim1 = 0;
  EXPECT_FALSE(rule(Op::Reshape, {{2, 3}}, merge).ok()) << "start_dim < end_dim";
  Attrs split;
  split.variant = 1;
  split.dim = 1;
  split.times = 3;
  expect_shape(rule(Op::Reshape, {{2, 6}}, split), {2, 3, 2});
  split.times = 4;
  EXPECT_FALSE(rule(Op::Reshape, {{2, 6}}, split).ok()) << "4 does not divide 6";
  split.times = 1;
  EXPECT_FALSE(rule(Op::Reshape, {{2, 3, 4, 5, 2}}, split).ok()) << "no room for another dim";

  const std::array<int, 3> dims = {2, 0, 1};
  Attrs perm;
  perm.times = permutation_code(dims);
  EXPECT_EQ(perm.times, 312);
  expect_shape(rule(Op::Permute, {{2, 3, 4}}, perm), {4, 2, 3});
  EXPECT_FALSE(rule(Op::Permute, {{2, 3}}, perm).ok()) << "a rank-3 permutation";
  perm.times = 113;
  EXPECT_FALSE(rule(Op::Permute, {{2, 3, 4}}, perm).ok()) << "dim 0 twice";

  Attrs slice;
  slice.dim = 1;
  slice.dim1 = 1;
  slice.times = 6;
  slice.variant = 2;
  expect_shape(rule(Op::Slice, {{2, 7}}, slice), {2, 3}); // elements 1, 3, 5
  slice.variant = 3;
  expect_shape(rule(Op::Slice, {{2, 7}}, slice), {2, 2}); // elements 1, 4
  slice.times = 8;
  EXPECT_FALSE(rule(Op::Slice, {{2, 7}}, slice).ok());

  Attrs stack;
  stack.dim = 2;
  expect_shape(rule(Op::Stack, {{2, 3}, {2, 3}}, stack), {2, 3, 2});
  EXPECT_FALSE(rule(Op::Stack, {{2, 3}, {3, 2}}, stack).ok());
  stack.dim = 3;
  EXPECT_FALSE(rule(Op::Stack, {{2, 3}, {2, 3}}, stack).ok());

  // torch.chunk: chunks of ceil(n / chunks), so 5 in 4 chunks is 2, 2, 1 and there is no 4th.
  Attrs chunk;
  chunk.dim = 0;
  chunk.times = 4;
  chunk.dim1 = 2;
  expect_shape(rule(Op::Chunk, {{5, 3}}, chunk), {1, 3});
  chunk.dim1 = 3;
  EXPECT_FALSE(rule(Op::Chunk, {{5, 3}}, chunk).ok());
  chunk.dim1 = 2;
  expect_shape(rule(Op::Chunk, {{6, 3}}, chunk), {2, 3}); // 6 in 4 chunks: 2, 2, 2

  Attrs offset;
  offset.times = -1;
  expect_shape(rule(Op::DiagEmbed, {{2, 3}}, offset), {2, 4, 4});
  EXPECT_FALSE(rule(Op::DiagEmbed, {{2, 2, 2, 2, 2}}, offset).ok()) << "rank 6 is above the cap";

  expect_shape(rule(Op::Bmm, {{2, 3, 4}, {2, 4, 5}}), {2, 3, 5});
  EXPECT_FALSE(rule(Op::Bmm, {{2, 3, 4}, {1, 4, 5}}).ok()) << "bmm does not broadcast";
  EXPECT_FALSE(rule(Op::Bmm, {{3, 4}, {4, 5}}).ok());
}

TEST(ShapeRules, CapOnElements) {
  expect_shape(rule(Op::Add, {{32, 32, 48}, {1}}), {32, 32, 48});
  EXPECT_FALSE(rule(Op::Add, {{48, 48, 29}, {1}}).ok()) << "66,816 elements exceed kMaxElements";
}

TEST(OpTable, NamesAndIdsAreUnique) {
  for (std::size_t i = 0; i < kOpCount; ++i) {
    EXPECT_EQ(static_cast<std::size_t>(kOpTable[i].op), i);
    EXPECT_EQ(op_from_name(kOpTable[i].name), kOpTable[i].op);
    EXPECT_EQ(op_from_stable_id(kOpTable[i].stable_id), kOpTable[i].op);
    for (std::size_t j = i + 1; j < kOpCount; ++j) {
      EXPECT_NE(kOpTable[i].name, kOpTable[j].name);
      EXPECT_NE(kOpTable[i].stable_id, kOpTable[j].stable_id);
    }
  }
}

TEST(Text, RoundTripKeepsSpecialValuesBitForBit) {
  const char* text = R"(# a program with every statement kind
%0 = leaf f32[2,3] [0.5, -1, nan, inf, -0, 1e-40]
%1 = leaf f32[3] [1, -inf, 3.4028235e+38]
%2 = add %0, %1 : f32[2,3]
%3 = pow %2, exponent=-0.5 : f32[2,3]
%4 = sum_dim %3, dim=1, keepdim=true : f32[2,1]
%5 = alias %4 : f32[2,1]
%6 = clamp %5, min=0.5, max=-0.5 : f32[2,1]
%7 = transpose %0, dim0=0, dim1=1 : f32[3,2]
%8 = repeat %7, dim=1, times=2 : f32[3,4]
%9 = concat %8, %8, dim=0 : f32[6,4]
%10 = transpose %8, dim0=0, dim1=1 : f32[4,3]
%11 = matmul %9, %10 : f32[6,3]
%12 = sum %11 : f32[]
root %12
)";
  const ParseResult first = parse_program(text);
  ASSERT_TRUE(first.ok()) << first.error();
  const Program& p = first.program();
  EXPECT_EQ(p.stmts.size(), 13u);
  EXPECT_EQ(p.root, 12);
  EXPECT_TRUE(std::isnan(p.leaves[0].data[2]));
  EXPECT_TRUE(std::signbit(p.leaves[0].data[4]));
  EXPECT_EQ(p.leaves[0].data[5], 1e-40f);
  const ParseResult second = parse_program(to_text(p));
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_EQ(second.program(), p);
  EXPECT_EQ(to_text(second.program()), to_text(p));
}

TEST(Text, RoundTripOfTheShapeViews) {
  const std::string full =
      R"(%0 = leaf f32[2,3,4] [0.5, -1, 2, 0.25, 0.5, -1, 2, 0.25, 0.5, -1, 2, 0.25, 0.5, -1, 2, 0.25, 0.5, -1, 2, 0.25, 0.5, -1, 2, 0.25]
%1 = permute %0, dims=[2,0,1] : f32[4,2,3]
%2 = reshape %1, start_dim=1, end_dim=2 : f32[4,6]
%3 = reshape %2, split_dim=1, factor=3 : f32[4,3,2]
%4 = slice %3, dim=1, start=0, end=3, step=2 : f32[4,2,2]
%5 = stack %4, %4, dim=3 : f32[4,2,2,2]
%6 = chunk %2, chunks=4, dim=1, index=2 : f32[4,2]
%7 = diag_embed %6, offset=1 : f32[4,3,3]
%8 = bmm %7, %7 : f32[4,3,3]
root %8
)";
  const ParseResult first = parse_program(full);
  ASSERT_TRUE(first.ok()) << first.error();
  const Program& p = first.program();
  EXPECT_EQ(p.stmts[1].instr.attrs.times, 312);
  EXPECT_EQ(p.stmts[3].instr.attrs.variant, 1);
  EXPECT_EQ(p.stmts[4].instr.attrs.variant, 2) << "slice's step";
  EXPECT_EQ(to_text(p), "# burnmark program v1\n" + full);
  const ParseResult second = parse_program(to_text(p));
  ASSERT_TRUE(second.ok()) << second.error();
  EXPECT_EQ(second.program(), p);
  EXPECT_FALSE(parse_program("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n"
                             "%1 = permute %0, dims=[0,1,2] : f32[2,3]\n")
                   .ok())
      << "a permutation of the wrong rank is an error, not another permutation";
}

TEST(Text, ErrorsNameTheLine) {
  const ParseResult wrong_shape = parse_program("%0 = leaf f32[2] [1, 2]\n%1 = exp %0 : f32[3]\n");
  ASSERT_FALSE(wrong_shape.ok());
  EXPECT_NE(wrong_shape.error().find("should be [2]"), std::string::npos) << wrong_shape.error();
  const ParseResult unknown = parse_program("%0 = leaf f32[1] [1]\n%1 = frobnicate %0 : f32[1]\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(), "line 2: unknown op 'frobnicate'");
  EXPECT_FALSE(parse_program("%0 = leaf f32[2] [1]\n").ok()) << "data length must match the shape";
  EXPECT_FALSE(parse_program("%0 = leaf f32[1] [1]\n%1 = neg %1 : f32[1]\n").ok())
      << "operands must be earlier";
}

TEST(ShapeRules, Indexing) {
  Attrs d1;
  d1.dim = 1;
  const auto shape = [&](Op op, std::vector<Shape> in) {
    const ShapeResult r = infer_shape(op, d1, in);
    return r.ok() ? r.shape().to_string() : "error";
  };
  EXPECT_EQ(shape(Op::Gather, {{3, 4}, {2, 7}}), "[2,7]"); // longer than the input along dim
  EXPECT_EQ(shape(Op::Gather, {{3, 4}, {4, 2}}), "error"); // larger off dim
  EXPECT_EQ(shape(Op::IndexSelect, {{3, 4}, {6}}), "[3,6]");
  EXPECT_EQ(shape(Op::IndexSelect, {{3, 4}, {2, 3}}), "error");
  EXPECT_EQ(shape(Op::TakeAlongDim, {{3, 1}, {1, 5}}), "[3,5]"); // both broadcast off dim
  EXPECT_EQ(shape(Op::ScatterAdd, {{3, 4}, {2, 3}, {2, 5}}), "[3,4]");
  EXPECT_EQ(shape(Op::ScatterAdd, {{3, 4}, {2, 6}, {2, 5}}), "error"); // beyond src
  EXPECT_EQ(shape(Op::ScatterAdd, {{3, 4}, {4, 3}, {4, 5}}), "error"); // beyond self off dim
  EXPECT_EQ(shape(Op::MaskedFill, {{3, 1}, {4}}), "[3,4]");
}

TEST(Text, IndexLeavesRoundTripAndAreCheckedAgainstTheirOp) {
  const std::string text = "# burnmark program v1\n"
                           "%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n"
                           "%1 = leaf i64[2,2] [2, 0, 2, 2]\n"
                           "%2 = gather %0, %1, dim=1 : f32[2,2]\n"
                           "%3 = leaf i64[2,2] [1, 1, 0, 1]\n"
                           "%4 = scatter_reduce %0, %3, %2, dim=0, reduce=amax, "
                           "include_self=false : f32[2,3]\n"
                           "%5 = lt %4, %0 : bool[2,3]\n"
                           "%6 = masked_fill %4, %5, value=-inf : f32[2,3]\n"
                           "root %6\n";
  const ParseResult p = parse_program(text);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(to_text(p.program()), text);
  EXPECT_EQ(p.program().leaves[1].indices, (std::vector<std::int64_t>{2, 0, 2, 2}));
  // An index value past the dim's size, and an f32 register where the index goes.
  const auto error_of = [](const std::string& t) {
    const ParseResult r = parse_program(t);
    return r.ok() ? std::string("ok") : r.error();
  };
  EXPECT_NE(error_of("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n%1 = leaf i64[2] [0, 3]\n"
                     "%2 = index_select %0, %1, dim=1 : f32[2,2]\n")
                .find("index value 3 is outside 0..2"),
            std::string::npos);
  EXPECT_NE(error_of("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n%1 = leaf f32[2] [0, 1]\n"
                     "%2 = index_select %0, %1, dim=1 : f32[2,2]\n")
                .find("is f32 (index_select takes i64 there)"),
            std::string::npos);
}

TEST(InputFile, ReadsARegularFileAndRefusesEverythingElseWithOneLine) {
  const std::filesystem::path dir = burnmark::testing::scratch_dir("input");
  const std::filesystem::path file = dir / "p.txt";
  std::ofstream(file) << "%0 = leaf f32[1] [1]\nroot %0\n";
  std::string error;
  const std::optional<std::string> text = read_input_file(file, error);
  ASSERT_TRUE(text.has_value()) << error;
  EXPECT_EQ(*text, "%0 = leaf f32[1] [1]\nroot %0\n");
  EXPECT_FALSE(read_input_file(file, error, 5).has_value()); // larger than the cap
  EXPECT_NE(error.find("more than the 5"), std::string::npos) << error;
  EXPECT_FALSE(read_input_file(dir, error).has_value());
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
  EXPECT_FALSE(read_input_file("/dev/zero", error).has_value());
  EXPECT_NE(error.find("is not a regular file"), std::string::npos) << error;
  EXPECT_FALSE(read_input_file(dir / "missing", error).has_value());
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  std::filesystem::remove_all(dir);
}

// ---- float dtypes ----

// Expected values from the formats' definitions (IEEE 754 binary16, bfloat16 = the top half of
// binary32), worked out by hand, not by another rounding routine.
TEST(FloatDType, RoundsToNearestEvenInEachFormat) {
  // bf16 has 8 significand bits: around 1 the step is 2^-7.
  EXPECT_EQ(round_to(1 + 0x1p-8, FloatDType::BF16), 1.0);            // tie, to even
  EXPECT_EQ(round_to(1 + 3 * 0x1p-8, FloatDType::BF16), 1 + 0x1p-6); // tie, to even (up)
  EXPECT_EQ(round_to(1 + 0x1p-8 + 0x1p-30, FloatDType::BF16), 1 + 0x1p-7);
  // Through f32 first that last one would round twice: f32 drops 2^-30, leaving a tie.
  EXPECT_EQ(round_to(round_to(1 + 0x1p-8 + 0x1p-30, FloatDType::F32), FloatDType::BF16), 1.0);
  EXPECT_EQ(round_to(0x1.fep127, FloatDType::BF16), 0x1.fep127); // largest finite
  EXPECT_EQ(round_to(0x1.fefffp127, FloatDType::BF16), 0x1.fep127);
  EXPECT_TRUE(std::isinf(round_to(0x1.ffp127, FloatDType::BF16))); // max + half ulp: inf
  EXPECT_EQ(round_to(0x1p-133, FloatDType::BF16), 0x1p-133);       // smallest subnormal
  EXPECT_EQ(round_to(0x1p-134, FloatDType::BF16), 0.0);            // half of it: tie to 0
  EXPECT_EQ(round_to(1.5 * 0x1p-134, FloatDType::BF16), 0x1p-133);
  // f16: 11 bits, largest finite 65504, smallest subnormal 2^-24.
  EXPECT_EQ(round_to(65519.0, FloatDType::F16), 65504.0);
  EXPECT_TRUE(std::isinf(round_to(65520.0, FloatDType::F16)));
  EXPECT_EQ(round_to(-65520.0, FloatDType::F16), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(round_to(0x1p-25, FloatDType::F16), 0.0);
  EXPECT_EQ(round_to(0.75 * 0x1p-24, FloatDType::F16), 0x1p-24);
  EXPECT_EQ(round_to(1 + 0x1p-11, FloatDType::F16), 1.0);
  EXPECT_EQ(round_to(2049.0, FloatDType::F16), 2048.0); // integers stop being exact at 2^11
  // Signed zero and NaN survive; f32 is the plain conversion.
  EXPECT_TRUE(std::signbit(round_to(-0.0, FloatDType::F16)));
  EXPECT_TRUE(std::isnan(round_to(std::nan(""), FloatDType::BF16)));
  EXPECT_EQ(round_to(0.1, FloatDType::F32), static_cast<double>(0.1f));
  EXPECT_TRUE(representable(0.5, FloatDType::F16));
  EXPECT_FALSE(representable(0.1f, FloatDType::BF16));
}

TEST(FloatDType, FormatsKnowTheirRoundoffAndRange) {
  EXPECT_EQ(float_format(FloatDType::F32).unit_roundoff(), 0x1p-24);
  EXPECT_EQ(float_format(FloatDType::BF16).unit_roundoff(), 0x1p-8);
  EXPECT_EQ(float_format(FloatDType::F16).unit_roundoff(), 0x1p-11);
  EXPECT_EQ(float_format(FloatDType::F32).half_subnormal_step(), 0x1p-150);
  EXPECT_EQ(float_format(FloatDType::F16).half_subnormal_step(), 0x1p-25);
  EXPECT_EQ(float_format(FloatDType::F32).overflow_threshold(), 0x1.ffffffp127);
  EXPECT_EQ(float_format(FloatDType::BF16).overflow_threshold(), 0x1.ffp127);
  EXPECT_EQ(float_format(FloatDType::F16).overflow_threshold(), 65520.0);
}

TEST(Text, TheDtypeLineRoundTripsAndSpellsEveryFloatRegister) {
  const std::string text = "dtype bf16\n"
                           "%0 = leaf bf16[2] [0.5, -1.5]\n"
                           "%1 = leaf i64[1] [1]\n"
                           "%2 = index_select %0, %1, dim=0 : bf16[1]\n"
                           "%3 = gt %2, %2 : bool[1]\n"
                           "root %2\n";
  const ParseResult r = parse_program(text);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.program().float_dtype, FloatDType::BF16);
  const std::string printed = to_text(r.program());
  EXPECT_NE(printed.find("\ndtype bf16\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("%2 = index_select %0, %1, dim=0 : bf16[1]"), std::string::npos);
  const ParseResult again = parse_program(printed);
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again.program(), r.program());
  EXPECT_TRUE(looks_like_program_text(text));
  // f32 programs print as they always did: no dtype line.
  EXPECT_EQ(to_text(with_float_dtype(r.program(), FloatDType::F32)).find("dtype"),
            std::string::npos);
}

TEST(Text, AProgramHoldsOnlyValuesItsDtypeRepresents) {
  const auto error_of = [](const std::string& text) {
    const ParseResult r = parse_program(text);
    return r.ok() ? std::string() : r.error();
  };
  EXPECT_NE(error_of("dtype bf16\n%0 = leaf f32[1] [1]\n").find("bf16[2,3]"), std::string::npos);
  EXPECT_NE(error_of("dtype f8\n%0 = leaf f32[1] [1]\n").find("dtype must be"), std::string::npos);
  EXPECT_NE(error_of("%0 = leaf f32[1] [1]\ndtype f16\n").find("before the first statement"),
            std::string::npos);
  EXPECT_NE(error_of("dtype bf16\n%0 = leaf bf16[1] [0.1]\n").find("not a bf16 value"),
            std::string::npos);
  EXPECT_NE(error_of("dtype f16\n%0 = leaf f16[1] [1]\n%1 = clamp_min %0, min=0.1 : f16[1]\n")
                .find("attribute 0.1"),
            std::string::npos);
  // with_float_dtype rounds both, so the result is a valid program.
  const ParseResult f32 =
      parse_program("%0 = leaf f32[1] [0.1]\n%1 = clamp_min %0, min=0.1 : f32[1]\n");
  ASSERT_TRUE(f32.ok()) << f32.error();
  const Program f16 = with_float_dtype(f32.program(), FloatDType::F16);
  EXPECT_EQ(validate(f16), "");
  EXPECT_EQ(f16.leaves[0].data[0], static_cast<float>(round_to(0.1, FloatDType::F16)));
}

TEST(Text, F64LeavesHoldAnyDoubleAndPrintItShortest) {
  const std::string leaf_line = "%0 = leaf f64[9] [1.7976931348623157e+308, 5e-324, 1e-310, 0.1, "
                                "-1e+300, 3.5e+38, 709.78, nan, -inf]";
  const std::string text =
      "# burnmark program v1\ndtype f64\n" + leaf_line + "\n%1 = exp %0 : f64[9]\nroot %1\n";
  const ParseResult r = parse_program(text);
  ASSERT_TRUE(r.ok()) << r.error();
  const std::vector<double>& d = r.program().leaves[0].data;
  EXPECT_EQ(d[0], std::numeric_limits<double>::max());
  EXPECT_EQ(d[1], std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(d[2], 1e-310);
  EXPECT_EQ(d[3], 0.1); // the double, not the float 0.1f
  EXPECT_EQ(d[5], 3.5e38);
  EXPECT_EQ(to_text(r.program()), text);
  // The same spellings in an f32 program mean floats, as they always did.
  const ParseResult f32 = parse_program("%0 = leaf f32[2] [0.1, 1e-40]\n");
  ASSERT_TRUE(f32.ok()) << f32.error();
  EXPECT_EQ(f32.program().leaves[0].data[0], static_cast<double>(0.1f));
  EXPECT_EQ(f32.program().leaves[0].data[1], static_cast<double>(1e-40f));
}
