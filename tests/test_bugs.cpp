// Every minimal program in corpus/bugs/ (the entries of bugs.md) still shows its divergence:
// the backends named on its "# diverges:" line disagree with the reference, and every other
// backend on its "# backends:" line agrees. "# mode: tangents" runs forward mode as well, "# mode:
// hvp" second order. A library fix (or a regression of ours) fails this test, which is how bugs.md
// stays true.
#include <gtest/gtest.h>

#include <algorithm>
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

std::set<std::string> split(const std::string& list) {
  std::set<std::string> out;
  std::istringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.insert(item);
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
    std::set<std::string> seen;
    for (const Divergence& d : verdict.divergences)
      seen.insert(d.backend);
    EXPECT_EQ(seen, diverging) << format_verdict(verdict);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(files.size()));
}

// Programs whose backend runs in a child (child:libtorch-nnc, libtorch-scalar) re-execute this
// test binary as the child's server, so it serves before it tests.
int main(int argc, char** argv) {
  burnmark::serve_backend_if_requested();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
