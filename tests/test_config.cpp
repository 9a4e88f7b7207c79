// The knob table read from a fake environment: defaults, every knob's parsing, the one-line
// error naming the valid choices, and the mapping onto the generator's options.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "burnmark/config/config.h"

using namespace burnmark;

namespace {

ConfigResult load(std::map<std::string, std::string> env) {
  return load_config([env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string error_of(std::map<std::string, std::string> env) {
  ConfigResult r = load(std::move(env));
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error();
}

} // namespace

TEST(Config, DefaultsAreTheDocumentedOnes) {
  const ConfigResult r = load({});
  ASSERT_TRUE(r.ok()) << r.error();
  const Config& c = r.config();
  EXPECT_EQ(c.backends, "ref,libtorch");
  EXPECT_EQ(c.mode, HarnessMode::Panic);
  EXPECT_EQ(c.max_leaves, 4);
  EXPECT_EQ(c.min_ops, 0);
  EXPECT_EQ(c.min_dim, 1);
  EXPECT_EQ(c.max_dim, 16);
  EXPECT_EQ(c.tolerance, 1e-4);
  EXPECT_EQ(c.special_rate, 0.05);
  EXPECT_EQ(c.threads, 1);
  EXPECT_EQ(c.findings_dir, "");
  // The generator's own defaults agree with the knob table's.
  const GeneratorOptions g = generator_options(c);
  const GeneratorOptions d;
  EXPECT_EQ(g.max_leaves, d.max_leaves);
  EXPECT_EQ(g.min_ops, d.min_ops);
  EXPECT_EQ(g.min_dim, d.min_dim);
  EXPECT_EQ(g.max_dim, d.max_dim);
  EXPECT_EQ(g.special_rate, d.special_rate);
  EXPECT_EQ(g.dtypes, d.dtypes);
  EXPECT_EQ(oracle_options(c, true).tolerance, kDefaultTolerance);
}

TEST(Config, EveryKnobIsReadAndMapped) {
  const ConfigResult r = load({{"BACKENDS", "ref,libtorch,eigen"},
                               {"MODE", "continuous"},
                               {"MAX_LEAVES", "8"},
                               {"MIN_OPS", "3"},
                               {"FUZZ_MIN_DIM", "2"},
                               {"FUZZ_MAX_DIM", " 48 "},
                               {"BURNMARK_TOLERANCE", "1e-3"},
                               {"BURNMARK_SPECIAL_RATE", "0"},
                               {"BURNMARK_THREADS", "4"},
                               {"BURNMARK_FINDINGS_DIR", "/tmp/f"},
                               {"BURNMARK_DTYPES", "bf16, f16"}});
  ASSERT_TRUE(r.ok()) << r.error();
  const Config& c = r.config();
  EXPECT_EQ(c.backends, "ref,libtorch,eigen");
  EXPECT_EQ(c.mode, HarnessMode::Continuous);
  EXPECT_EQ(c.threads, 4);
  EXPECT_EQ(c.findings_dir, "/tmp/f");
  const GeneratorOptions g = generator_options(c);
  EXPECT_EQ(g.max_leaves, 8);
  EXPECT_EQ(g.min_ops, 3);
  EXPECT_EQ(g.min_dim, 2);
  EXPECT_EQ(g.max_dim, 48);
  EXPECT_EQ(g.special_rate, 0.0);
  EXPECT_EQ(g.dtypes, (std::vector<FloatDType>{FloatDType::BF16, FloatDType::F16}));
  const OracleOptions o = oracle_options(c, false);
  EXPECT_EQ(o.tolerance, 1e-3);
  EXPECT_FALSE(o.gradients);
}

TEST(Config, SetButEmptyIsAnErrorExceptWhereEmptyMeansOff) {
  // Issue 31: `MODE= cmd` used to mean the default silently; a typo must not look like a choice.
  EXPECT_EQ(error_of({{"MODE", ""}}), "MODE: set but empty (unset it for the default 'panic')");
  EXPECT_EQ(error_of({{"BACKENDS", " "}}),
            "BACKENDS: set but empty (unset it for the default 'ref,libtorch')");
  EXPECT_EQ(error_of({{"MAX_LEAVES", "  "}}),
            "MAX_LEAVES: set but empty (unset it for the default '4')");
  EXPECT_EQ(error_of({{"BURNMARK_TOLERANCE", ""}}),
            "BURNMARK_TOLERANCE: set but empty (unset it for the default '1e-4')");
  // The help promises "empty = off" for these two: set to "", there is none.
  const ConfigResult r = load({{"BURNMARK_KNOWN_BUGS", ""}, {"BURNMARK_FINDINGS_DIR", ""}});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.config().known_bugs, "");
  EXPECT_EQ(r.config().findings_dir, "");
}

TEST(Config, TheKnownBugListIsFoundFromTheBinaryNotTheWorkingDirectory) {
  // This test runs from a build tree (no ../share/burnmark beside it): the checkout's list.
  const std::string list = std::string(BURNMARK_TEST_SOURCE_DIR) + "/corpus/known_bugs.txt";
  EXPECT_EQ(load({}).config().known_bugs, list);
  EXPECT_EQ(load({{"BURNMARK_KNOWN_BUGS", "auto"}}).config().known_bugs, list);
  // A list named but missing is an error naming the knob and the path.
  EXPECT_EQ(error_of({{"BURNMARK_KNOWN_BUGS", "/nonexistent/known.txt"}}),
            "BURNMARK_KNOWN_BUGS: no such file: /nonexistent/known.txt (unset it for the default "
            "list, or set it empty for none)");
}

TEST(Config, BinaryBytesInAValueAreEscapedInItsError) {
  EXPECT_EQ(error_of({{"MAX_LEAVES", "\x01\xff"}}),
            "MAX_LEAVES: '\\x01\\xff' is not an integer (valid: 1..8)");
  EXPECT_EQ(error_of({{"MODE", "p\x1b[2J"}}),
            "MODE: unknown mode 'p\\x1b[2J' (valid: panic, continuous)");
}

TEST(Config, BadValuesGiveOneLineNamingTheValidChoices) {
  EXPECT_EQ(error_of({{"MAX_LEAVES", "9"}}), "MAX_LEAVES: '9' out of range (valid: 1..8)");
  EXPECT_EQ(error_of({{"MAX_LEAVES", "0"}}), "MAX_LEAVES: '0' out of range (valid: 1..8)");
  EXPECT_EQ(error_of({{"MAX_LEAVES", "four"}}),
            "MAX_LEAVES: 'four' is not an integer (valid: 1..8)");
  EXPECT_EQ(error_of({{"MAX_LEAVES", "4x"}}), "MAX_LEAVES: '4x' is not an integer (valid: 1..8)");
  EXPECT_EQ(error_of({{"MODE", "pancake"}}),
            "MODE: unknown mode 'pancake' (valid: panic, continuous)");
  EXPECT_EQ(error_of({{"BURNMARK_MUTATOR", "afl"}}),
            "BURNMARK_MUTATOR: unknown mutator 'afl' (valid: structure, bytes, mixed)");
  EXPECT_EQ(error_of({{"FUZZ_MAX_DIM", "49"}}), "FUZZ_MAX_DIM: '49' out of range (valid: 1..48)");
  EXPECT_EQ(error_of({{"BURNMARK_TOLERANCE", "nan"}}),
            "BURNMARK_TOLERANCE: 'nan' is not a number (valid: 0..1)");
  EXPECT_EQ(error_of({{"BURNMARK_TOLERANCE", "-1e-4"}}),
            "BURNMARK_TOLERANCE: '-1e-4' out of range (valid: 0..1)");
  EXPECT_EQ(error_of({{"BURNMARK_SPECIAL_RATE", "1.5"}}),
            "BURNMARK_SPECIAL_RATE: '1.5' out of range (valid: 0..1)");
  EXPECT_EQ(error_of({{"BURNMARK_DTYPES", "f32,f8"}}),
            "BURNMARK_DTYPES: unknown dtype 'f8' (valid: comma list of f32, bf16, f16, f64)");
  EXPECT_EQ(error_of({{"FUZZ_MIN_DIM", "20"}}),
            "FUZZ_MIN_DIM: 20 exceeds FUZZ_MAX_DIM 16 (valid: FUZZ_MIN_DIM <= FUZZ_MAX_DIM)");
}

TEST(Config, OpsKnobIsAutoAllOrAListOfOpNames) {
  // Unset: auto, which leaves the set to the backends; the config alone restricts nothing.
  EXPECT_EQ(load({}).config().ops.kind, OpSelection::Kind::Auto);
  EXPECT_TRUE(generator_options(load({}).config()).ops.empty());
  EXPECT_EQ(load({{"BURNMARK_OPS", "all"}}).config().ops.kind, OpSelection::Kind::All);
  const ConfigResult r = load({{"BURNMARK_OPS", " add, mul ,exp,add"}});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.config().ops.kind, OpSelection::Kind::List);
  const std::vector<Op> listed = {Op::Add, Op::Mul, Op::Exp}; // the duplicate once
  EXPECT_EQ(r.config().ops.ops, listed);
  EXPECT_EQ(generator_options(r.config()).ops, listed);
  EXPECT_EQ(error_of({{"BURNMARK_OPS", "add,addd"}}),
            "BURNMARK_OPS: unknown op 'addd' (valid: auto, all, or a comma list of the op names "
            "of programs, e.g. add,mul,exp)");
  EXPECT_EQ(error_of({{"BURNMARK_OPS", "add,"}}).rfind("BURNMARK_OPS: unknown op ''", 0), 0u);
}

TEST(Config, HelpListsEveryKnobOnItsOwnLine) {
  const std::string help = knobs_help();
  std::size_t lines = 0;
  for (char ch : help)
    lines += ch == '\n';
  EXPECT_EQ(lines, knob_table().size());
  for (const KnobInfo& k : knob_table())
    EXPECT_NE(help.find(k.env), std::string::npos) << k.env;
  EXPECT_NE(help.find("1..8"), std::string::npos);
  EXPECT_NE(help.find("panic|continuous"), std::string::npos);
}
