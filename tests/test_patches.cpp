// Fix-and-continue patches (docs/patches.md): the table's parser and its one-line errors, the
// BURNMARK_PATCHES selection, the loader's set_patches handshake (unknown ids reported, not
// applied), the Eigen plugin's patches on values derived from the C library, and the gate
// (`burnmark patches check`) run for real: the real Eigen plugin against the real reference.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/config/config.h"
#include "burnmark/ir/text.h"
#include "burnmark/patches/gate.h"
#include "burnmark/patches/patches.h"
#include "burnmark/plugin/loader.h"

#include "scratch_dir.h"

namespace fs = std::filesystem;
using namespace burnmark;

namespace {

const fs::path kSource = BURNMARK_TEST_SOURCE_DIR;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<Patch> checked_in_table() {
  const PatchTableResult r = load_patch_table((kSource / "corpus" / "patches.txt").string());
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? r.patches() : std::vector<Patch>{};
}

// The parse error of a one-line table, or "" when it parsed.
std::string error_of(const std::string& line) {
  const PatchTableResult r = parse_patch_table("# header\n" + line + "\n", "t.txt");
  return r.ok() ? std::string() : r.error();
}

} // namespace

TEST(PatchTable, ParsesLinesCommentsAndOpLists) {
  const PatchTableResult r = parse_patch_table(
      "# comment\n\n  a-b1  plugin:eigen  log,log2  two words\nc plugin:my_plugin sqrt x\n", "t");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.patches().size(), 2u);
  const Patch& p = r.patches()[0];
  EXPECT_EQ(p.id, "a-b1");
  EXPECT_EQ(p.backend, "plugin:eigen");
  EXPECT_EQ(p.plugin, "eigen");
  EXPECT_EQ(p.ops, (std::vector<Op>{*op_from_name("log"), *op_from_name("log2")}));
  EXPECT_EQ(p.description, "two words");
  EXPECT_EQ(p.line, 3);
  EXPECT_EQ(r.patches()[1].plugin, "my_plugin");
}

TEST(PatchTable, EachBadLineIsOneErrorNamingFileLineAndWhat) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"a plugin:eigen sqrt", "fewer fields"},
      {"Bad_Id plugin:eigen sqrt text", "not a bugs.md id"},
      {"a eigen sqrt text", "is not plugin:NAME"},
      {"a libtorch sqrt text", "is not plugin:NAME"},
      {"a plugin: sqrt text", "is not plugin:NAME"},
      {"a plugin:eigen sqrtt text", "unknown op 'sqrtt'"},
      {"a plugin:eigen sqrt,,log text", "unknown op ''"},
      {"a plugin:eigen sqrt x\na plugin:eigen log y", "appears twice"},
  };
  for (const auto& [line, what] : cases) {
    const std::string err = error_of(line);
    EXPECT_NE(err.find(what), std::string::npos) << line << " -> " << err;
    EXPECT_TRUE(err.starts_with("t.txt:2: ") || err.starts_with("t.txt:3: ")) << err;
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
  // Binary junk is echoed escaped, cut short.
  const std::string junk = error_of(std::string("a plugin:eigen \x01\xff") + "x text");
  EXPECT_NE(junk.find("\\x01\\xff"), std::string::npos) << junk;
  EXPECT_FALSE(load_patch_table("/nonexistent/patches.txt").ok());
}

TEST(PatchTable, TheCheckedInTableNamesRecordedBugsAndParses) {
  const std::vector<Patch> table = checked_in_table();
  ASSERT_GE(table.size(), 3u);
  const std::string bugs_md = slurp(kSource / "bugs.md");
  for (const Patch& p : table) {
    SCOPED_TRACE(p.id);
    EXPECT_TRUE(fs::is_regular_file(kSource / "corpus" / "bugs" / (p.id + ".txt")));
    EXPECT_NE(bugs_md.find("| " + p.id + " |"), std::string::npos) << "no bugs.md row";
    EXPECT_TRUE(p.backend == "plugin:eigen" || p.backend == "plugin:onednn") << p.backend;
  }
}

TEST(PatchSelection, NoneAllAndListsAndUnknownIds) {
  const PatchTableResult t =
      parse_patch_table("a plugin:eigen sqrt x\nb plugin:eigen log y\n", "t");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(select_patches(t.patches(), "none").patches().empty());
  EXPECT_EQ(select_patches(t.patches(), "all").patches().size(), 2u);
  const PatchTableResult one = select_patches(t.patches(), "b, b");
  ASSERT_TRUE(one.ok()) << one.error();
  ASSERT_EQ(one.patches().size(), 1u);
  EXPECT_EQ(one.patches()[0].id, "b");
  const PatchTableResult bad = select_patches(t.patches(), "a,zz");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(),
            "BURNMARK_PATCHES: unknown patch 'zz' (valid: all, none, or a comma list of a, b)");
  const std::vector<PluginPatch> pp = plugin_patches(t.patches());
  ASSERT_EQ(pp.size(), 2u);
  EXPECT_EQ(pp[1].plugin, "eigen");
  EXPECT_EQ(pp[1].id, "b");
}

TEST(PatchSelection, TheKnobIsCheckedAtStartAndNoneIsTheDefault) {
  EXPECT_EQ(default_config().patches, "none");
  const auto with = [](std::string value) {
    return load_config([value](std::string_view name) -> std::optional<std::string> {
      if (name == "BURNMARK_PATCHES") return value;
      return std::nullopt;
    });
  };
  EXPECT_TRUE(with("all").ok());
  EXPECT_TRUE(with("eigen-sqrt-inf").ok());
  const ConfigResult bad = with("eigen-sqrt-inff");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(bad.error().starts_with("BURNMARK_PATCHES: unknown patch 'eigen-sqrt-inff'"))
      << bad.error();
  EXPECT_FALSE(with("").ok()); // set but empty is a typo, not "none"
}

namespace {

// "PLUGIN @ <platform>" facts of a bug program's seen-on header.
bool seen_on(const std::string& id, const std::string& fact) {
  std::istringstream in(slurp(kSource / "corpus" / "bugs" / (id + ".txt")));
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("# seen-on:")) return line.find(fact) != std::string::npos;
  return false;
}

// Each of `plugin`'s patches through its gate, the real plugin against the real reference: "on
// agrees" is BurnMark's own code and must hold on every processor; "off diverges" is the
// library's behaviour, pinned where the bug program was measured (its seen-on line) and reported
// elsewhere, as test_bugs does. Returns how many patches it checked.
[[maybe_unused]] int check_gates_of(const std::string& plugin, const std::string& platform) {
  const std::string bugs = (kSource / "corpus" / "bugs").string();
  int checked = 0;
  for (const Patch& patch : checked_in_table()) {
    if (patch.plugin != plugin) continue;
    SCOPED_TRACE(patch.id);
    const PatchCheck c = check_patch(patch, bugs, RunOptions{true}, OracleOptions{});
    std::printf("%s\n", format_patch_check(c).c_str());
    if (seen_on(patch.id, plugin + " @ " + platform)) {
      EXPECT_EQ(c.on, "agrees");
      EXPECT_TRUE(c.passed()) << format_patch_check(c);
      EXPECT_TRUE(c.off.starts_with("diverges (")) << c.off;
    } else {
      // Not measured here: either answer is a fact about this platform, to be recorded
      // (tools/record-platforms.py); the patch must still make the program agree.
      // An op this ISA's oneDNN has no primitive for is not run, with the patch on or off.
      EXPECT_TRUE(c.ok()) << format_patch_check(c);
      if (c.off == "agrees" || c.passed()) EXPECT_EQ(c.on, "agrees");
      std::printf("not measured on %s before: %s\n", platform.c_str(), c.off.c_str());
    }
    ++checked;
  }
  return checked;
}

} // namespace

#ifdef BURNMARK_TEST_HAVE_EIGEN

namespace {

std::unique_ptr<Backend> load_eigen(std::vector<PluginPatch> patches,
                                    std::vector<std::string>* warnings = nullptr) {
  PluginLoadOptions options;
  options.patches = std::move(patches);
  PluginLoadResult r = load_plugin_backend("eigen", options);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  if (warnings != nullptr) *warnings = r.warnings;
  return r.ok() ? r.take() : nullptr;
}

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error());
  return r.ok() ? r.program() : Program{};
}

} // namespace

TEST(PatchLoader, KnownIdsApplyUnknownOnesAreReportedOtherPluginsIgnored) {
  std::vector<std::string> warnings;
  const auto eigen = load_eigen({{"eigen", "eigen-sqrt-inf"},
                                 {"eigen", "eigen-not-a-patch"},
                                 {"onednn", "onednn-something"},
                                 {"eigen", "eigen-log-subnormal"}},
                                &warnings);
  ASSERT_NE(eigen, nullptr);
  EXPECT_EQ(eigen->active_patches(),
            (std::vector<std::string>{"eigen-sqrt-inf", "eigen-log-subnormal"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "plugin 'eigen' does not know patch 'eigen-not-a-patch' (corpus/patches.txt): not "
            "applied");
  EXPECT_TRUE(load_eigen({})->active_patches().empty());
}

#ifdef BURNMARK_TEST_HAVE_EXAMPLE
TEST(PatchLoader, APluginWithoutSetPatchesAppliesNoneAndSaysSo) {
  PluginLoadOptions options;
  options.patches = {{"example", "example-x"}};
  PluginLoadResult r = load_plugin_backend("example", options);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0], "plugin 'example' takes no patches: patch 'example-x' not applied");
  EXPECT_TRUE(r.take()->active_patches().empty());
}
#endif

// What each patch computes, derived from the C library in double (not from our own output): the
// affected elements sit at both ends of 9, so one is in Eigen's packet body and one in its tail.
TEST(EigenPatches, PatchedElementsAreTheCorrectlyRoundedScalarResults) {
  const auto eigen = load_eigen({{"eigen", "eigen-sqrt-negzero"},
                                 {"eigen", "eigen-sqrt-inf"},
                                 {"eigen", "eigen-sqrt-subnormal"},
                                 {"eigen", "eigen-rsqrt-subnormal"},
                                 {"eigen", "eigen-log-subnormal"}});
  ASSERT_NE(eigen, nullptr);
  const float sub = 1e-40f; // subnormal in f32
  ASSERT_EQ(std::fpclassify(sub), FP_SUBNORMAL);
  const double s = static_cast<double>(sub);
  const auto root = [&](const std::string& op, const std::string& values) {
    const Outcome o = eigen->run(
        parse(fmt::format("%0 = leaf f32[9] [{}]\n%1 = {} %0 : f32[9]\nroot %1\n", values, op)),
        RunOptions{true});
    EXPECT_EQ(o.status, Status::Ok) << o.message;
    return o;
  };
  const Outcome sqrt_special = root("sqrt", "-0, inf, 1e-40, -1e-40, 4, 4, 4, 4, -0");
  const std::vector<double>& v = sqrt_special.root.values;
  ASSERT_EQ(v.size(), 9u);
  EXPECT_TRUE(v[0] == 0 && std::signbit(v[0])) << v[0]; // IEEE 754: sqrt(-0) = -0
  EXPECT_TRUE(v[8] == 0 && std::signbit(v[8])) << v[8];
  EXPECT_EQ(v[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(v[2], static_cast<double>(static_cast<float>(std::sqrt(s))));
  EXPECT_TRUE(std::isnan(v[3]));
  // d sqrt(x) / dx = 1 / (2 sqrt(x)): -inf at -0.
  EXPECT_EQ(sqrt_special.grads[0].values[0], -std::numeric_limits<double>::infinity());

  const Outcome rsqrt = root("rsqrt", "1e-40, -1e-40, 4, 4, 4, 4, 4, 4, 1e-40");
  const double expected_rsqrt = static_cast<float>(1.0 / std::sqrt(s));
  EXPECT_EQ(rsqrt.root.values[0], expected_rsqrt);
  EXPECT_EQ(rsqrt.root.values[8], expected_rsqrt);
  EXPECT_TRUE(std::isnan(rsqrt.root.values[1]));

  const Outcome log = root("log", "1e-40, 2, 2, 2, 2, 2, 2, 2, 1e-40");
  EXPECT_EQ(log.root.values[0], static_cast<double>(static_cast<float>(std::log(s))));
  EXPECT_EQ(log.root.values[8], log.root.values[0]);
  const Outcome log2 = root("log2", "1e-40, 2, 2, 2, 2, 2, 2, 2, 1e-40");
  EXPECT_EQ(log2.root.values[0], static_cast<double>(static_cast<float>(std::log2(s))));
}

// The later patches (exp, digamma and its gradient, the roundings, maximum / minimum), on
// values from the mathematics: limits, IEEE 754's signed zeros, and trigamma's reflection and
// series written out here. Specials at both ends of 9 elements (packet body and scalar tail).
TEST(EigenPatches, LaterPatchesGiveTheLimitsAndTheMathematicsValues) {
  std::vector<PluginPatch> all;
  for (const Patch& p : checked_in_table())
    if (p.plugin == "eigen") all.push_back({"eigen", p.id});
  const auto eigen = load_eigen(all);
  ASSERT_NE(eigen, nullptr);
  const auto run = [&](const std::string& text) {
    const Outcome o = eigen->run(parse(text), RunOptions{true});
    EXPECT_EQ(o.status, Status::Ok) << o.message;
    return o;
  };
  const auto unary = [&](const std::string& op, const std::string& values) {
    return run(fmt::format("%0 = leaf f32[9] [{}]\n%1 = {} %0 : f32[9]\nroot %1\n", values, op));
  };
  const double inf = std::numeric_limits<double>::infinity();
  const auto negzero = [](double v) { return v == 0 && std::signbit(v); };
  const auto poszero = [](double v) { return v == 0 && !std::signbit(v); };

  // exp(-100) = 3.78e-44 (subnormal), exp(-3e38) = 0.
  const Outcome exp = unary("exp", "-100, 1, 1, 1, 1, 1, 1, 1, -3e38");
  EXPECT_EQ(exp.root.values[0], static_cast<double>(static_cast<float>(std::exp(-100.0))));
  EXPECT_TRUE(poszero(exp.root.values[8])) << exp.root.values[8];

  // digamma's one-sided limits at ±0; lgamma's gradient is digamma.
  const Outcome digamma = unary("digamma", "0, 2, 2, 2, 2, 2, 2, 2, -0");
  EXPECT_EQ(digamma.root.values[0], -inf);
  EXPECT_EQ(digamma.root.values[8], inf);
  const Outcome lgamma = unary("lgamma", "0, 2, 2, 2, 2, 2, 2, 2, -0");
  EXPECT_EQ(lgamma.grads[0].values[0], -inf);
  EXPECT_EQ(lgamma.grads[0].values[8], inf);

  // trigamma(x) = sum_k 1 / (x + k)^2. Near the root x0 of digamma, digamma(x) = (x - x0)
  // trigamma(x0) to first order (the second-order term is 1e-16 here).
  const auto trigamma_series = [](double x) {
    double sum = 0;
    const int n = 1000000;
    for (int k = n - 1; k >= 0; --k)
      sum += 1 / ((x + k) * (x + k));
    return sum + 1 / (x + n) + 1 / (2 * (x + n) * (x + n)); // Euler-Maclaurin tail
  };
  const double x0 = 1.4616321449683623; // digamma's positive root
  const double near = static_cast<float>(1.4616321);
  const Outcome root = unary("digamma", "1.4616321, 2, 2, 2, 2, 2, 2, 2, 1.4616321");
  const double expected_near = (near - x0) * trigamma_series(x0);
  EXPECT_NEAR(root.root.values[0], expected_near, 1e-4 * std::abs(expected_near));
  EXPECT_EQ(root.root.values[8], root.root.values[0]);

  // digamma's gradient (grad 1): trigamma. +inf: the limit 0; -inf: no limit, NaN; -7.5: the
  // reflection trigamma(-x) + trigamma(1 + x) = pi^2 / sin^2(pi x) at x = 7.5, then the
  // recurrence down to trigamma(0.5) = pi^2 / 2: pi^2 / 2 + sum_{k=0..7} 1 / (k + 0.5)^2;
  // 1e30: 1/x + 1/(2 x^2) + ..., 1e-30 in float.
  const Outcome trigamma = unary("digamma", "inf, -inf, -7.5, 1e30, 2, 2, 2, 2, -7.5");
  const std::vector<double>& t = trigamma.grads[0].values;
  EXPECT_TRUE(poszero(t[0])) << t[0];
  EXPECT_TRUE(std::isnan(t[1])) << t[1];
  double negative = M_PI * M_PI / 2;
  for (int k = 0; k <= 7; ++k)
    negative += 1 / ((k + 0.5) * (k + 0.5));
  EXPECT_NEAR(t[2], negative, 4e-7 * negative);
  EXPECT_EQ(t[8], t[2]);
  EXPECT_NEAR(t[3], 1e-30, 4e-7 * 1e-30);

  // IEEE 754 roundToIntegral keeps the operand's sign: floor(-0), ceil(-0.5), rint(-0.25) = -0.
  EXPECT_TRUE(negzero(unary("floor", "-0, 2, 2, 2, 2, 2, 2, 2, -0").root.values[0]));
  const Outcome ceil = unary("ceil", "-0.5, 2, 2, 2, 2, 2, 2, 2, -0.5");
  EXPECT_TRUE(negzero(ceil.root.values[0]) && negzero(ceil.root.values[8]));
  EXPECT_TRUE(negzero(unary("round", "-0.25, 2, 2, 2, 2, 2, 2, 2, -0").root.values[0]));

  // IEEE 754-2019: maximum(±0, ∓0) = +0, minimum(±0, ∓0) = -0, in both operand orders, in the
  // body (element 0) and the tail (element 8), and broadcast against a one-element operand.
  const auto binary = [&](const std::string& op, const std::string& a, const std::string& b) {
    return run(fmt::format("%0 = leaf f32[9] [{}]\n%1 = leaf f32[{}] [{}]\n%2 = {} %0, %1 : "
                           "f32[9]\nroot %2\n",
                           a, b.find(',') == std::string::npos ? 1 : 9, b, op))
        .root.values;
  };
  const std::string pm = "0, 1, 1, 1, 1, 1, 1, 1, -0", mp = "-0, 1, 1, 1, 1, 1, 1, 1, 0";
  for (const auto& [a, b] : {std::pair{pm, mp}, std::pair{mp, pm}}) {
    const std::vector<double> mx = binary("maximum", a, b), mn = binary("minimum", a, b);
    EXPECT_TRUE(poszero(mx[0]) && poszero(mx[8])) << mx[0] << " " << mx[8];
    EXPECT_TRUE(negzero(mn[0]) && negzero(mn[8])) << mn[0] << " " << mn[8];
  }
  const std::vector<double> broadcast = binary("maximum", mp, "0");
  EXPECT_TRUE(poszero(broadcast[0]) && poszero(broadcast[8]));

  // addmm with alpha = 0 is beta C exactly, 0 · (A @ B) being 0 for finite A and B, also where
  // the f32 A @ B overflows (row 0, column 0: (-1e30)^2 + 1), with C broadcast along the rows;
  // a row holding a NaN stays NaN (0 · NaN).
  const std::vector<double> addmm =
      run("%0 = leaf f32[2] [1, -2]\n%1 = leaf f32[3,2] [-1e30, 1, 1, 2, nan, 1]\n"
          "%2 = leaf f32[2,2] [-1e30, 1, 1, 1]\n"
          "%3 = addmm %0, %1, %2, beta=2, alpha=0 : f32[3,2]\nroot %3\n")
          .root.values;
  ASSERT_EQ(addmm.size(), 6u);
  EXPECT_EQ(addmm[0], 2.0);
  EXPECT_EQ(addmm[1], -4.0);
  EXPECT_EQ(addmm[2], 2.0);
  EXPECT_EQ(addmm[3], -4.0);
  EXPECT_TRUE(std::isnan(addmm[4]) && std::isnan(addmm[5])) << addmm[4] << " " << addmm[5];
}

// eigen-sqrt-inexact: with the patch on every element is IEEE 754's correctly rounded sqrt, on
// any processor's rsqrtps. The f32 sqrt of a float is the double sqrt rounded once (double has
// more than 2 * 24 + 2 bits, so the double rounding is innocuous); the values the packet gets
// wrong on Intel (1, 4) and on AMD Zen 5 (1.0000001, 49) sit in the packet body, one copy in
// the tail. sqrt(1 + 2^-23) = 1 + 2^-24 - 2^-49 + ..., below the midpoint: 1.
TEST(EigenPatches, SqrtInexactGivesTheCorrectlyRoundedSqrtEverywhere) {
  const auto eigen = load_eigen({{"eigen", "eigen-sqrt-inexact"}});
  ASSERT_NE(eigen, nullptr);
  const std::vector<float> x = {1, 1.0000001f, 4, 49, 2, 0.25f, 9, 1.0000002f, 1.0000001f};
  const Outcome o = eigen->run(parse("%0 = leaf f32[9] [1, 1.0000001, 4, 49, 2, 0.25, 9, "
                                     "1.0000002, 1.0000001]\n%1 = sqrt %0 : f32[9]\nroot %1\n"),
                               RunOptions{true});
  ASSERT_EQ(o.status, Status::Ok) << o.message;
  ASSERT_EQ(o.root.values.size(), 9u);
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(o.root.values[i], static_cast<float>(std::sqrt(static_cast<double>(x[i])))) << i;
  EXPECT_EQ(o.root.values[0], 1.0);
  EXPECT_EQ(o.root.values[1], 1.0);
  EXPECT_EQ(o.root.values[2], 2.0);
  EXPECT_EQ(o.root.values[3], 7.0);
  EXPECT_EQ(o.root.values[8], 1.0);
  // d sqrt(x) / dx = 1 / (2 sqrt(x)), from the corrected result: exactly 0.5 at 1 and
  // 1.0000001, 1/4 at 4.
  EXPECT_EQ(o.grads[0].values[0], 0.5);
  EXPECT_EQ(o.grads[0].values[1], 0.5);
  EXPECT_EQ(o.grads[0].values[2], 0.25);
}

// The gate for real, for each Eigen patch (check_gates_of).
TEST(PatchGate, EveryEigenPatchDivergesOffAndAgreesOn) {
  EXPECT_GE(check_gates_of("eigen", load_eigen({})->platform()), 3);
}

// The two ways a gate fails, on programs made for it: a program the bug does not reach agrees
// with the patch off (not load-bearing); a program of another bug still diverges with it on.
TEST(PatchGate, SaysNotLoadBearingAndStillDiverges) {
  const fs::path dir = burnmark::testing::scratch_dir("gate");
  {
    std::ofstream(dir / "eigen-sqrt-inf.txt")
        << "%0 = leaf f32[9] [4, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 4]\n%1 = sqrt %0 : f32[9]\n"
           "root %1\n";
    std::ofstream(dir / "eigen-sqrt-negzero.txt")
        << slurp(kSource / "corpus" / "bugs" / "eigen-sqrt-inf.txt");
  }
  const Patch inf{"eigen-sqrt-inf", "plugin:eigen", "eigen", {*op_from_name("sqrt")}, "x", 1};
  const PatchCheck benign = check_patch(inf, dir.string(), RunOptions{true}, OracleOptions{});
  EXPECT_EQ(benign.status, PatchCheck::Status::NotLoadBearing) << format_patch_check(benign);
  EXPECT_EQ(format_patch_check(benign),
            "PATCH eigen-sqrt-inf plugin:eigen fail: off agrees: fixed upstream or not "
            "load-bearing");

  Patch negzero = inf;
  negzero.id = "eigen-sqrt-negzero";
  const PatchCheck wrong = check_patch(negzero, dir.string(), RunOptions{true}, OracleOptions{});
  const std::string platform = load_eigen({})->platform();
  if (seen_on("eigen-sqrt-inf", "eigen @ " + platform)) {
    EXPECT_EQ(wrong.status, PatchCheck::Status::StillDiverges) << format_patch_check(wrong);
    EXPECT_TRUE(wrong.on.starts_with("diverges (")) << wrong.on;
  }

  Patch unknown = inf;
  unknown.id = "eigen-no-such-patch";
  std::ofstream(dir / "eigen-no-such-patch.txt") << slurp(dir / "eigen-sqrt-inf.txt");
  const PatchCheck refused = check_patch(unknown, dir.string(), RunOptions{true}, OracleOptions{});
  EXPECT_EQ(refused.status, PatchCheck::Status::Error);
  EXPECT_NE(format_patch_check(refused).find("does not know patch 'eigen-no-such-patch'"),
            std::string::npos);
  Patch missing = inf;
  missing.id = "eigen-missing";
  EXPECT_EQ(check_patch(missing, dir.string(), RunOptions{true}, OracleOptions{}).status,
            PatchCheck::Status::Error);
  fs::remove_all(dir);
}

// A bug program whose seen-on header names only another platform: "off agrees" is not the
// library's fix there but the bug not showing here, a `not-here` line that is not a failure;
// the same program with this platform in its header is the "fixed upstream" failure.
TEST(PatchGate, OffAgreesOnAPlatformTheHeaderDoesNotNameIsNotHere) {
  const fs::path dir = burnmark::testing::scratch_dir("here");
  const std::string platform = load_eigen({})->platform();
  // sqrt of ordinary numbers: no +inf, so eigen-sqrt-inf's bug cannot show in it anywhere.
  const std::string program = "%0 = leaf f32[9] [4, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 4]\n%1 = "
                              "sqrt %0 : f32[9]\nroot %1\n";
  const auto write = [&](const std::string& seen) {
    std::ofstream(dir / "eigen-sqrt-inf.txt")
        << "# bug: a test's\n# seen-on: " << seen << "\n# agrees-on: -\n"
        << program;
  };
  const Patch inf{"eigen-sqrt-inf", "plugin:eigen", "eigen", {*op_from_name("sqrt")}, "x", 1};
  write("onednn @ " + platform + "; eigen @ Eigen 3.4 AVX-1024 on NoSuchCPU");
  const PatchCheck elsewhere = check_patch(inf, dir.string(), RunOptions{true}, OracleOptions{});
  EXPECT_EQ(elsewhere.status, PatchCheck::Status::NotHere) << format_patch_check(elsewhere);
  EXPECT_TRUE(elsewhere.ok());
  EXPECT_FALSE(elsewhere.passed()); // a campaign does not apply it
  EXPECT_EQ(format_patch_check(elsewhere),
            "PATCH eigen-sqrt-inf plugin:eigen not-here: off agrees on " + platform +
                " (seen on eigen @ Eigen 3.4 AVX-1024 on NoSuchCPU), on agrees");

  write("eigen @ Eigen 3.4 AVX-1024 on NoSuchCPU; eigen @ " + platform);
  const PatchCheck here = check_patch(inf, dir.string(), RunOptions{true}, OracleOptions{});
  EXPECT_EQ(here.status, PatchCheck::Status::NotLoadBearing) << format_patch_check(here);
  EXPECT_FALSE(here.ok());

  // The command line: the not-here line, counted apart, exit 0.
  std::ofstream(dir / "table.txt") << "eigen-sqrt-inf plugin:eigen sqrt x\n";
  write("eigen @ Eigen 3.4 AVX-1024 on NoSuchCPU");
  const std::string cmd = fmt::format(
      "env -u BACKENDS -u BURNMARK_PATCHES {} patches check --table {} --bugs {} >{} 2>&1",
      BURNMARK_CLI_PATH, (dir / "table.txt").string(), dir.string(), (dir / "out").string());
  const int raw = std::system(cmd.c_str());
  const std::string out = slurp(dir / "out");
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << out;
  EXPECT_NE(out.find("PATCH eigen-sqrt-inf plugin:eigen not-here: off agrees on "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("PATCHES 1 checked: 0 pass, 1 not seen here, 0 fail\n"), std::string::npos)
      << out;
  fs::remove_all(dir);
}

namespace {

struct CliRun {
  int status = -1;
  std::string out, err;
};

CliRun invoke(const std::string& args, const std::string& env = "") {
  const fs::path dir = burnmark::testing::scratch_dir("cli");
  const std::string cmd =
      fmt::format("env -u BACKENDS -u BURNMARK_PATCHES {} {} {} >{} 2>{}", env, BURNMARK_CLI_PATH,
                  args, (dir / "out").string(), (dir / "err").string());
  const int raw = std::system(cmd.c_str());
  CliRun r{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(dir / "out"), slurp(dir / "err")};
  return r;
}

} // namespace

// The command a CI step runs: one PATCH line per patch, the total, and the exit status.
TEST(PatchGate, CommandLineChecksTheTableAndExitsByTheResult) {
  const CliRun all = invoke("patches check");
  const std::size_t n = checked_in_table().size();
  EXPECT_NE(all.out.find(fmt::format("PATCHES {} checked: ", n)), std::string::npos) << all.out;
  std::size_t lines = 0;
  for (std::size_t at = all.out.find("PATCH "); at != std::string::npos;
       at = all.out.find("PATCH ", at + 1))
    ++lines;
  EXPECT_EQ(lines, n) << all.out;
  // "P pass, H not seen here, F fail", P + H + F = n; exit 0 exactly when F = 0.
  std::size_t pass = 0, here = 0, fail = n + 1;
  const std::size_t total = all.out.find("PATCHES ");
  ASSERT_NE(total, std::string::npos) << all.out;
  ASSERT_EQ(std::sscanf(all.out.c_str() + total,
                        "PATCHES %*zu checked: %zu pass, %zu not seen here, %zu fail", &pass, &here,
                        &fail),
            3)
      << all.out;
  EXPECT_EQ(pass + here + fail, n) << all.out;
  EXPECT_EQ(all.status, fail == 0 ? 0 : 1) << all.out << all.err;

  const CliRun unknown = invoke("patches check eigen-nope");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("unknown patch 'eigen-nope'"), std::string::npos) << unknown.err;
  EXPECT_EQ(invoke("patches frob").status, 2);
}

// BURNMARK_PATCHES reaches a plugin named in BACKENDS: the bug program agrees with the patch on.
TEST(PatchGate, RunWithTheKnobAppliesThePatch) {
  const std::string file = (kSource / "corpus" / "bugs" / "eigen-sqrt-negzero.txt").string();
  const CliRun on = invoke("run " + file, "BACKENDS=ref,eigen BURNMARK_PATCHES=eigen-sqrt-negzero");
  EXPECT_EQ(on.status, 0) << on.out << on.err;
  EXPECT_NE(on.out.find("patches eigen: eigen-sqrt-negzero\n"), std::string::npos) << on.out;
  const CliRun typo = invoke("run " + file, "BACKENDS=ref,eigen BURNMARK_PATCHES=x");
  EXPECT_EQ(typo.status, 2);
  EXPECT_NE(typo.err.find("BURNMARK_PATCHES: unknown patch 'x'"), std::string::npos) << typo.err;
}

#endif // BURNMARK_TEST_HAVE_EIGEN

#ifdef BURNMARK_TEST_HAVE_ONEDNN
// The gate for real, for each oneDNN patch (check_gates_of): "off diverges" where the row was
// measured (three rows show on some ISAs only), "on agrees" on any x86-64 processor.
TEST(PatchGate, EveryOnednnPatchDivergesOffAndAgreesOn) {
  PluginLoadResult r = load_plugin_backend("onednn", PluginLoadOptions{});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_GE(check_gates_of("onednn", r.take()->platform()), 20);
}

#ifdef BURNMARK_TEST_HAVE_EIGEN // invoke()
// The ISA-specific rows on the kernels a processor without AVX-512 runs (ONEDNN_MAX_CPU_ISA caps
// the dispatch, so this holds on any x86-64 CPU): each one passes or is `not-here` (addmm has
// no primitive for alpha = 0 there, and is not run), never a fail or error line.
TEST(PatchGate, IsaSpecificOnednnRowsDoNotFailOnSmallerIsas) {
  for (const char* isa : {"SSE41", "AVX2"}) {
    SCOPED_TRACE(isa);
    const CliRun r = invoke("patches check onednn-log-one onednn-log-softmax-grad-cancellation "
                            "onednn-addmm-alpha-zero-overflow",
                            std::string("ONEDNN_MAX_CPU_ISA=") + isa);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find(" fail:"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(" error:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(", 0 fail\n"), std::string::npos) << r.out;
  }
}
#endif
#endif
