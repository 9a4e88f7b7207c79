// Every minimal program in corpus/bugs/ (the entries of bugs.md) still shows its divergence
// where it was measured: each backend on its "# backends:" line after the reference disagrees
// with it where "# seen-on:" has "NAME @ PLATFORM" (Backend::platform: the library's release,
// kernel set and CPU vendor) and agrees where "# agrees-on:" has it; "# diverges:" names the
// row's culprit, which must be seen diverging somewhere. On a platform the file does not name,
// the library may round otherwise: the backend may then diverge or not (the test says which)
// and the verdict must fit its values. "# mode: tangents" runs forward mode as well, "# mode: hvp"
// second order. A library fix (or a regression of ours) fails this test, which is how bugs.md stays
// true; tools/record-platforms.py records a platform's facts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "burnmark/backends/process.h"
#include "burnmark/backends/registry.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "platform_pins.h"

namespace fs = std::filesystem;
using namespace burnmark;

namespace {

std::string header_field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("# " + key + ":", 0) == 0) {
      std::string value = line.substr(key.size() + 3);
      value.erase(0, value.find_first_not_of(' '));
      return value;
    }
  return {};
}

std::set<std::string> split(const std::string& list, char separator = ',') {
  std::set<std::string> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, separator);) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.insert(item);
  }
  return out;
}

std::vector<fs::path> bug_programs() {
  std::vector<fs::path> files;
  const fs::path dir = fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "bugs";
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

TEST(Bugs, EveryRecordedDivergenceStillReproduces) {
  const std::vector<fs::path> files = bug_programs();
  ASSERT_FALSE(files.empty());
  int checked = 0;
  std::vector<std::string> unmeasured;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string backends_spec = header_field(text, "backends");
    const std::set<std::string> diverging = split(header_field(text, "diverges"));
    ASSERT_FALSE(backends_spec.empty()) << "a bug program names its backends";
    ASSERT_FALSE(diverging.empty()) << "a bug program names the backend that diverges";
    const ParseResult parsed = parse_program(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error();

    BackendsResult made = make_backends(backends_spec, RegistryOptions{});
    if (!made.ok()) {
      // A plugin whose library is not installed here (its CMake folder skipped it) cannot be
      // checked; everything in tools/install-deps.sh builds all of them.
      ADD_FAILURE() << made.error();
      continue;
    }
    std::vector<std::unique_ptr<Backend>> backends = made.take();
    const bool tangents = header_field(text, "mode") == "tangents";
    const bool hessian = header_field(text, "mode") == "hvp";
    std::vector<Outcome> outcomes;
    for (auto& b : backends)
      outcomes.push_back(b->run(parsed.program(), RunOptions{true, tangents, hessian}));
    OracleOptions oracle;
    oracle.tangents = tangents;
    oracle.hessian = hessian;
    const Verdict verdict = compare(outcomes, oracle);
    std::set<std::string> diverged;
    for (const Divergence& d : verdict.divergences)
      diverged.insert(d.backend);
    const std::set<std::string> seen_on = split(header_field(text, "seen-on"), ';');
    const std::set<std::string> agrees_on = split(header_field(text, "agrees-on"), ';');
    ASSERT_FALSE(seen_on.empty()) << "a bug program names the platforms it diverged on";
    // What this platform must show: each backend after the reference by the facts recorded for
    // it here ("NAME @ PLATFORM"); one never measured here may go either way.
    std::set<std::string> expected;
    for (std::size_t k = 1; k < backends.size(); ++k) {
      const auto& b = backends[k];
      const std::string fact = b->name() + " @ " + b->platform();
      if (seen_on.contains(fact)) {
        expected.insert(b->name());
      } else if (!agrees_on.contains(fact)) {
        // Not measured here: either answer is a fact about this platform, to be recorded, and
        // the verdict must fit the values this platform gave.
        if (diverged.contains(b->name())) expected.insert(b->name());
        EXPECT_TRUE(burnmark::testing::verdict_fits_values(outcomes.front(), outcomes[k], oracle));
        unmeasured.push_back(fmt::format("{}: {} {} on {}", file.filename().string(), b->name(),
                                         diverged.contains(b->name()) ? "diverges" : "agrees",
                                         b->platform()));
      }
    }
    // The row's culprit diverged somewhere it was measured.
    for (const std::string& culprit : diverging)
      EXPECT_TRUE(std::any_of(seen_on.begin(), seen_on.end(),
                              [&](const std::string& f) { return f.starts_with(culprit + " @ "); }))
          << culprit << " is seen diverging nowhere";
    EXPECT_EQ(diverged, expected) << format_verdict(verdict);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(files.size()));
  // Said, not hidden: tools/record-platforms.py turns these into headers.
  for (const std::string& line : unmeasured)
    std::printf("not measured on this platform before: %s\n", line.c_str());
  RecordProperty("unmeasured", static_cast<int>(unmeasured.size()));
}

// Programs whose backend runs in a child (child:libtorch-nnc, libtorch-scalar) re-execute this
// test binary as the child's server, so it serves before it tests.
int main(int argc, char** argv) {
  burnmark::serve_backend_if_requested();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
