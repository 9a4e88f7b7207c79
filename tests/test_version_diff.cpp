// Version-differential runs (`libtorch@RELEASE`): LibTorch of the other release in a child whose
// server is a burnmark built against it. The registry refuses a missing server or one built
// against another release in one line; with the other release's build present (its preset's
// default path; absent, the tests that need it skip), a bug fixed between the releases diverges
// on the older side only and a regression is named as one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"

using namespace burnmark;

namespace {

// The release this test compares against, and its preset's default server: 1.13 from a 2.15
// build, 2.15 from a 1.13 build.
std::string other_release() {
  return libtorch_release() == "1.13" ? "2.15" : "1.13";
}
std::string other_variable() {
  return other_release() == "1.13" ? "BURNMARK_LIBTORCH_1_13" : "BURNMARK_LIBTORCH_2_15";
}
std::string other_server() {
  return fmt::format("{}/build/{}/src/cli/burnmark", BURNMARK_TEST_SOURCE_DIR,
                     other_release() == "1.13" ? "test-1.13" : "test");
}

// Sets an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) throw std::runtime_error(r.error());
  return r.program();
}

Program bug(const std::string& name) {
  std::ifstream in(std::string(BURNMARK_TEST_SOURCE_DIR) + "/corpus/bugs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

// ref, libtorch, libtorch@OTHER with the other release's server at its default path; empty when
// that build is absent (the caller skips).
std::vector<std::unique_ptr<Backend>> three_backends(std::string& why_not) {
  if (!std::filesystem::is_regular_file(other_server())) {
    why_not = fmt::format("no LibTorch {} build of burnmark at {} (tools/test.sh builds it after "
                          "this one)",
                          other_release(), other_server());
    return {};
  }
  ScopedEnv server(other_variable(), other_server());
  BackendsResult made = make_backends("ref,libtorch,libtorch@" + other_release(), {});
  if (!made.ok()) {
    ADD_FAILURE() << made.error();
    return {};
  }
  return made.take();
}

Verdict judge(std::vector<std::unique_ptr<Backend>>& backends, const Program& p) {
  std::vector<Outcome> outcomes;
  for (auto& b : backends)
    outcomes.push_back(b->run(p, RunOptions{true}));
  OracleOptions options;
  options.baselines = version_baselines(backends);
  return compare(outcomes, options);
}

bool diverges(const Verdict& v, const std::string& backend) {
  for (const Divergence& d : v.divergences)
    if (d.backend == backend) return true;
  return false;
}

} // namespace

TEST(VersionDiff, AMissingServerIsOneLineNamingTheBuildAndTheVariable) {
  ScopedEnv server("BURNMARK_LIBTORCH_1_13", "/nonexistent/burnmark");
  BackendsResult made = make_backends("ref,libtorch@1.13", {});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error(),
            "BACKENDS: libtorch@1.13 needs a burnmark built against LibTorch 1.13: cmake --preset "
            "test-1.13 && cmake --build --preset test-1.13 --target burnmark, or "
            "BURNMARK_LIBTORCH_1_13=PATH (/nonexistent/burnmark does not exist)");
  EXPECT_EQ(made.error().find('\n'), std::string::npos);
}

TEST(VersionDiff, AMalformedReleaseOrANonLibTorchNameIsRefused) {
  for (const char* spec : {"libtorch@1", "libtorch@x.y", "ref@1.13"}) {
    BackendsResult made = make_backends(spec, {});
    ASSERT_FALSE(made.ok()) << spec;
    EXPECT_NE(made.error().find("expected NAME@RELEASE"), std::string::npos) << made.error();
  }
}

// This build's own burnmark named as the other release's server: its ready frame says which
// release it links, and the registry refuses it rather than compare it under the wrong name.
TEST(VersionDiff, AServerBuiltAgainstAnotherReleaseIsRefused) {
  ScopedEnv server(other_variable(), BURNMARK_CLI_PATH);
  BackendsResult made = make_backends("libtorch@" + other_release(), {});
  ASSERT_FALSE(made.ok());
  EXPECT_NE(
      made.error().find(fmt::format("is not a LibTorch {} build: its platform is 'LibTorch {}",
                                    other_release(), libtorch_release())),
      std::string::npos)
      << made.error();
  EXPECT_EQ(made.error().find('\n'), std::string::npos);
}

TEST(VersionDiff, TheOtherReleaseRunsInItsChildAndSaysSo) {
  std::string why_not;
  auto backends = three_backends(why_not);
  if (backends.empty()) GTEST_SKIP() << why_not;
  EXPECT_EQ(backends[2]->name(), "libtorch@" + other_release());
  EXPECT_TRUE(backends[2]->platform().starts_with("LibTorch " + other_release() + " "))
      << backends[2]->platform();
  EXPECT_TRUE(backends[1]->platform().starts_with("LibTorch " + libtorch_release() + " "));
  const std::vector<Baseline> pairs = version_baselines(backends);
  ASSERT_EQ(pairs.size(), 1u);
  // The older release is the baseline, whichever side runs in the child.
  EXPECT_EQ(pairs[0].baseline, libtorch_release() == "1.13" ? "libtorch" : "libtorch@1.13");
  EXPECT_EQ(pairs[0].backend, libtorch_release() == "1.13" ? "libtorch@2.15" : "libtorch");
}

// cosh's vector body overflowed early in 1.13 (bugs.md, libtorch-cosh-vector-overflow) and is
// fixed in 2.15: the 1.13 side diverges, the 2.15 side agrees, and that is no regression.
TEST(VersionDiff, ABugFixedIn215DivergesOnThe113SideOnly) {
  std::string why_not;
  auto backends = three_backends(why_not);
  if (backends.empty()) GTEST_SKIP() << why_not;
  const std::string old_side = libtorch_release() == "1.13" ? "libtorch" : "libtorch@1.13";
  const std::string new_side = libtorch_release() == "1.13" ? "libtorch@2.15" : "libtorch";
  const Verdict v = judge(backends, bug("libtorch-cosh-vector-overflow.txt"));
  EXPECT_TRUE(diverges(v, old_side)) << format_verdict(v);
  EXPECT_FALSE(diverges(v, new_side)) << format_verdict(v);
  EXPECT_TRUE(v.regressions.empty()) << format_verdict(v);
}

// clamp's gradient at its bound: 2.15 passes it to neither side of the kink the reference takes
// (the clamp-grad-min-norm convention), 1.13 agrees with the reference. A regression, and named as
// one.
TEST(VersionDiff, A215DivergenceWhere113AgreesIsARegression) {
  std::string why_not;
  auto backends = three_backends(why_not);
  if (backends.empty()) GTEST_SKIP() << why_not;
  const std::string old_side = libtorch_release() == "1.13" ? "libtorch" : "libtorch@1.13";
  const std::string new_side = libtorch_release() == "1.13" ? "libtorch@2.15" : "libtorch";
  const Verdict v = judge(backends, parse("%0 = leaf f32[2] [1, 0.5]\n"
                                          "%1 = clamp_max %0, max=1 : f32[2]\nroot %1\n"));
  EXPECT_TRUE(diverges(v, new_side)) << format_verdict(v);
  EXPECT_FALSE(diverges(v, old_side)) << format_verdict(v);
  ASSERT_EQ(v.regressions.size(), 1u) << format_verdict(v);
  EXPECT_EQ(v.regressions[0].backend, new_side);
  EXPECT_EQ(v.regressions[0].baseline, old_side);
  EXPECT_EQ(v.regressions[0].kind, DivergenceKind::Gradient);
  EXPECT_NE(format_verdict(v).find(fmt::format("REGRESSION backend={} baseline={} kind=gradient\n",
                                               new_side, old_side)),
            std::string::npos);
}
