// The fuzz targets' semantic features (fuzz/semantic_features.h) as a pure function: the same
// program gives the same set, programs that differ in one op pair differ in exactly those pair
// features, every index stays inside the table, and the real reference's outcome on a program
// that makes a NaN or overflows sets the "created in the root" feature of that class.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/driver/driver.h"
#include "burnmark/ir/text.h"
#include "semantic_features.h"

namespace burnmark::fuzz {
namespace {

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? r.program() : Program{};
}

std::vector<std::uint32_t> features(const Program& p, std::span<const Outcome> outcomes = {}) {
  std::vector<std::uint32_t> out;
  semantic_features(p, outcomes, out);
  return out;
}

bool has(const std::vector<std::uint32_t>& set, std::uint32_t f) {
  return std::binary_search(set.begin(), set.end(), f);
}

std::uint32_t op(Op o) {
  return static_cast<std::uint32_t>(o);
}

// The reference's outcome (values and gradients) on a program, in slot 0.
std::vector<Outcome> reference_outcome(const Program& p, bool expect_ok = true) {
  auto ref = make_reference_backend();
  std::vector<Outcome> out;
  out.push_back(run_backend(*ref, p, RunOptions{}));
  if (expect_ok) EXPECT_EQ(out[0].status, Status::Ok) << out[0].message;
  return out;
}

TEST(SemanticFeatures, ValueClassesFollowTheDtypesFormat) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> plain = {0.0, 1.0, -2.5};
  EXPECT_EQ(value_classes(plain, FloatDType::F32), 0u); // +0 is no class
  const std::vector<double> neg_zero = {-0.0};
  EXPECT_EQ(value_classes(neg_zero, FloatDType::F32), kNegZero);
  const std::vector<double> specials = {nan, -inf};
  EXPECT_EQ(value_classes(specials, FloatDType::F32), kNaN | kInf); // inf is not "huge"
  // 1e-40 is below f32's smallest normal 2^-126 (1.18e-38), above f64's 2^-1022.
  const std::vector<double> tiny = {1e-40};
  EXPECT_EQ(value_classes(tiny, FloatDType::F32), kSubnormal);
  EXPECT_EQ(value_classes(tiny, FloatDType::F64), 0u);
  // 300 squared overflows f16 (sqrt(65504) = 255.9), not f32 (sqrt(3.4e38) = 1.8e19).
  const std::vector<double> big = {300.0};
  EXPECT_EQ(value_classes(big, FloatDType::F16), kHuge);
  EXPECT_EQ(value_classes(big, FloatDType::F32), 0u);
}

TEST(SemanticFeatures, TheSameProgramGivesTheSameSortedSet) {
  const std::string text = "%0 = leaf f32[2,3] [0.5, -1, nan, inf, -0, 1e-40]\n"
                           "%1 = leaf f32[3] [1, 2, 3]\n"
                           "%2 = add %0, %1 : f32[2,3]\n"
                           "%3 = exp %2 : f32[2,3]\n"
                           "root %3\n";
  const std::vector<std::uint32_t> a = features(parse(text));
  const std::vector<std::uint32_t> b = features(parse(text));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::adjacent_find(a.begin(), a.end()), a.end()); // no duplicates
}

TEST(SemanticFeatures, ProgramsDifferingInOnePairDifferInThosePairFeaturesOnly) {
  // The same ops on the same shapes; only which unary result feeds log and which feeds cos
  // changes: exp -> log and sin -> cos against sin -> log and exp -> cos.
  const std::string head = "%0 = leaf f32[4] [0.5, 1, 1.5, 2]\n"
                           "%1 = exp %0 : f32[4]\n"
                           "%2 = sin %0 : f32[4]\n";
  const Program p = parse(head + "%3 = log %1 : f32[4]\n%4 = cos %2 : f32[4]\n"
                                 "%5 = add %3, %4 : f32[4]\nroot %5\n");
  const Program q = parse(head + "%3 = log %2 : f32[4]\n%4 = cos %1 : f32[4]\n"
                                 "%5 = add %3, %4 : f32[4]\nroot %5\n");
  const std::vector<std::uint32_t> fp = features(p);
  const std::vector<std::uint32_t> fq = features(q);
  std::vector<std::uint32_t> only_p;
  std::vector<std::uint32_t> only_q;
  std::set_difference(fp.begin(), fp.end(), fq.begin(), fq.end(), std::back_inserter(only_p));
  std::set_difference(fq.begin(), fq.end(), fp.begin(), fp.end(), std::back_inserter(only_q));
  std::vector<std::uint32_t> pairs_p = {
      feature_index(FeatureKind::OpPair, op(Op::Exp), op(Op::Log), 0),
      feature_index(FeatureKind::OpPair, op(Op::Sin), op(Op::Cos), 0)};
  std::vector<std::uint32_t> pairs_q = {
      feature_index(FeatureKind::OpPair, op(Op::Sin), op(Op::Log), 0),
      feature_index(FeatureKind::OpPair, op(Op::Exp), op(Op::Cos), 0)};
  std::sort(pairs_p.begin(), pairs_p.end());
  std::sort(pairs_q.begin(), pairs_q.end());
  EXPECT_EQ(only_p, pairs_p);
  EXPECT_EQ(only_q, pairs_q);
}

// With family pairs, the same swap between two producers of one family (exp and sin are both
// Unary) changes nothing, and the pair features name the family; a producer of another family
// (matmul's Matmul, feeding log) still gives a feature of its own.
TEST(SemanticFeatures, FamilyPairsNameTheProducersFamily) {
  const std::string head = "%0 = leaf f32[4] [0.5, 1, 1.5, 2]\n"
                           "%1 = exp %0 : f32[4]\n"
                           "%2 = sin %0 : f32[4]\n";
  const Program p = parse(head + "%3 = log %1 : f32[4]\n%4 = cos %2 : f32[4]\n"
                                 "%5 = add %3, %4 : f32[4]\nroot %5\n");
  const Program q = parse(head + "%3 = log %2 : f32[4]\n%4 = cos %1 : f32[4]\n"
                                 "%5 = add %3, %4 : f32[4]\nroot %5\n");
  std::vector<std::uint32_t> fp, fq;
  semantic_features(p, {}, fp, true);
  semantic_features(q, {}, fq, true);
  EXPECT_EQ(fp, fq);
  const std::uint32_t unary = kFamilyProducer + static_cast<std::uint32_t>(OpFamily::Unary);
  EXPECT_TRUE(has(fp, feature_index(FeatureKind::OpPair, unary, op(Op::Log), 0)));
  EXPECT_TRUE(has(fp, feature_index(FeatureKind::OpPair, unary, op(Op::Cos), 0)));
  EXPECT_FALSE(has(fp, feature_index(FeatureKind::OpPair, op(Op::Exp), op(Op::Log), 0)));
  EXPECT_TRUE(has(fp, feature_index(FeatureKind::OpPair, kLeafProducer, op(Op::Exp), 0)));
  const Program m = parse("%0 = leaf f32[2,2] [0.5, 1, 1.5, 2]\n%1 = matmul %0, %0 : f32[2,2]\n"
                          "%2 = log %1 : f32[2,2]\nroot %2\n");
  std::vector<std::uint32_t> fm;
  semantic_features(m, {}, fm, true);
  const std::uint32_t matmul = kFamilyProducer + static_cast<std::uint32_t>(OpFamily::Matmul);
  EXPECT_TRUE(has(fm, feature_index(FeatureKind::OpPair, matmul, op(Op::Log), 0)));
  EXPECT_FALSE(has(fm, feature_index(FeatureKind::OpPair, unary, op(Op::Log), 0)));
}

TEST(SemanticFeatures, SpecialValuesAndSizesReachTheOpsTheyFeed) {
  // A NaN leaf feeds exp directly and log through exp; [2,9] has an 8-wide body and a tail of
  // 1 in its innermost dimension, 18 elements: one 16-wide body and a tail of 2.
  const Program p = parse("%0 = leaf f32[2,9] [nan, 1, 1, 1, 1, 1, 1, 1, 1, "
                          "1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
                          "%1 = exp %0 : f32[2,9]\n"
                          "%2 = log %1 : f32[2,9]\n"
                          "root %2\n");
  const std::vector<std::uint32_t> f = features(p);
  EXPECT_TRUE(has(f, feature_index(FeatureKind::OpSpecial, op(Op::Exp), kNaN, 1)));
  EXPECT_TRUE(has(f, feature_index(FeatureKind::OpSpecial, op(Op::Log), kNaN, 0)));
  EXPECT_FALSE(has(f, feature_index(FeatureKind::OpSpecial, op(Op::Log), kNaN, 1)));
  EXPECT_TRUE(has(f, feature_index(FeatureKind::OpInner, op(Op::Exp), 1, 1)));
  EXPECT_TRUE(has(f, feature_index(FeatureKind::OpNumel, op(Op::Exp), 2, 1)));
  EXPECT_TRUE(has(f, feature_index(FeatureKind::OpPair, kLeafProducer, op(Op::Exp), 0)));
  EXPECT_TRUE(has(f, feature_index(FeatureKind::OpPair, op(Op::Exp), op(Op::Log), 0)));
}

TEST(SemanticFeatures, AResultThatBecameNaNOrOverflowedSetsItsFeature) {
  // log(-1) is NaN and exp(100) = 2.7e43 is past f32's largest finite 3.4e38: both made by the
  // program, since no leaf holds a NaN or an infinity.
  const Program nan_program = parse("%0 = leaf f32[3] [-1, 2, 4]\n%1 = log %0 : f32[3]\nroot %1\n");
  const Program finite_log = parse("%0 = leaf f32[3] [1, 2, 4]\n%1 = log %0 : f32[3]\nroot %1\n");
  const Program overflow = parse("%0 = leaf f32[2] [100, 1]\n%1 = exp %0 : f32[2]\nroot %1\n");
  const std::uint32_t nan_made = feature_index(FeatureKind::RootValue, op(Op::Log), kNaN, 1, 0);
  const std::uint32_t inf_made = feature_index(FeatureKind::RootValue, op(Op::Exp), kInf, 1, 0);
  EXPECT_TRUE(has(features(nan_program, reference_outcome(nan_program)), nan_made));
  EXPECT_FALSE(has(features(finite_log, reference_outcome(finite_log)), nan_made));
  EXPECT_TRUE(has(features(overflow, reference_outcome(overflow)), inf_made));
  // Without outcomes nothing is said about the root's values.
  EXPECT_FALSE(has(features(nan_program), nan_made));

  // A NaN that a leaf carries into the root was not made by the program.
  const Program carried = parse("%0 = leaf f32[2] [nan, 1]\n%1 = neg %0 : f32[2]\nroot %1\n");
  const std::vector<std::uint32_t> f = features(carried, reference_outcome(carried));
  EXPECT_TRUE(has(f, feature_index(FeatureKind::RootValue, op(Op::Neg), kNaN, 0, 0)));
  EXPECT_FALSE(has(f, feature_index(FeatureKind::RootValue, op(Op::Neg), kNaN, 1, 0)));
}

TEST(SemanticFeatures, EveryIndexOfEveryCorpusProgramIsInsideTheTable) {
  const char* source = std::getenv("BURNMARK_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  std::size_t programs = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(source) / "corpus" / "programs")) {
    std::ifstream in(e.path());
    std::stringstream text;
    text << in.rdbuf();
    ParseResult r = parse_program(text.str());
    if (!r.ok()) continue;
    ++programs;
    const std::vector<std::uint32_t> f =
        features(r.program(), reference_outcome(r.program(), false));
    EXPECT_FALSE(f.empty()) << e.path();
    for (std::uint32_t i : f)
      EXPECT_LT(i, kSemanticTableSize) << e.path();
  }
  EXPECT_GT(programs, 0u);
}

TEST(SemanticFeatures, MarkingSetsExactlyTheFeaturesBytes) {
  std::vector<std::uint8_t> counters(kSemanticTableSize, 0);
  const std::vector<std::uint32_t> f = {3, 17, 65535};
  mark_features(f, counters);
  EXPECT_EQ(std::count(counters.begin(), counters.end(), 1), 3);
  EXPECT_EQ(counters[3], 1);
  EXPECT_EQ(counters[17], 1);
  EXPECT_EQ(counters[65535], 1);
}

} // namespace
} // namespace burnmark::fuzz
