// The reproducers of a program with laid-out leaves build each leaf as that layout
// (as_laid_out: the strides and storage offset worked out here by hand) and each relayout as the
// LibTorch backends build it, and the Python one, run with PyTorch, agrees with values computed
// by hand.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "burnmark/ir/text.h"
#include "burnmark/repro/repro.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;

namespace {

// sum((a * v) * w) with a = [[1,2],[3,4]] stored transposed, v = [0.5,-1] at storage offset 3,
// w = [[1,2],[1,2]] expanded along dim 0: by hand, (a*v)*w = [[0.5,-4],[1.5,-8]], sum -10;
// d/da = v*w = [[0.5,-2],[0.5,-2]], d/dv = column sums of a*w = [4, 12], d/dw = a*v.
ReproCase laid_out_case() {
  const ParseResult parsed = parse_program("%0 = leaf f32[2,2] layout=permuted(1,0) [1, 2, 3, 4]\n"
                                           "%1 = leaf f32[2] layout=offset(3) [0.5, -1]\n"
                                           "%2 = mul %0, %1 : f32[2,2]\n"
                                           "%3 = leaf f32[2,2] layout=expanded(0) [1, 2, 1, 2]\n"
                                           "%4 = mul %2, %3 : f32[2,2]\n"
                                           "%5 = sum %4 : f32[]\n");
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  ReproCase c;
  c.program = parsed.program();
  c.title = "hand-computed: sum(a * v * w) on laid-out leaves";
  c.expected_root = {-10};
  c.expected_grads = {{0.5, -2, 0.5, -2}, {4, 12}, {0.5, -2, 1.5, -4}};
  return c;
}

// sum(relayout(x) * relayout(x)) for x = [[1,2],[3,4]] stored transposed mid-program, then at
// storage offset 2: by hand the root is 1 + 4 + 9 + 16 = 30 and the gradient 2x.
ReproCase relayout_case() {
  const ParseResult parsed = parse_program("%0 = leaf f32[2,2] [1, 2, 3, 4]\n"
                                           "%1 = relayout %0, layout=permuted(1,0) : f32[2,2]\n"
                                           "%2 = relayout %1, layout=offset(2) : f32[2,2]\n"
                                           "%3 = mul %1, %2 : f32[2,2]\n%4 = sum %3 : f32[]\n");
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  ReproCase c;
  c.program = parsed.program();
  c.title = "hand-computed: sum(x * x) through relayout";
  c.expected_root = {30};
  c.expected_grads = {{2, 4, 6, 8}};
  return c;
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << text;
}

} // namespace

TEST(ReproLayout, BothReproducersBuildEachLeafInItsLayout) {
  const ReproCase c = laid_out_case();
  const std::string py = emit_python_repro(c), cpp = emit_cpp_repro(c);
  // Transposed [2,2]: strides [1, 2]; offset 3: a buffer of 5; expanded row: strides [0, 1].
  expect_contains(py, "# %0 = leaf f32[2,2] layout=permuted(1,0)");
  expect_contains(py, ", [1, 2], 0, 4).requires_grad_(True)");
  expect_contains(py, ", [1], 3, 5).requires_grad_(True)");
  expect_contains(py, ", [0, 1], 0, 2).requires_grad_(True)");
  expect_contains(py, "def as_laid_out(");
  expect_contains(cpp, "// %2 = mul %0, %1 : f32[2,2]");
  expect_contains(cpp, ", {1, 2}, 0, 4).requires_grad_(true)");
  expect_contains(cpp, ", {0, 1}, 0, 2).requires_grad_(true)");
  // A program without layouts does without the helper.
  ReproCase plain;
  plain.program = parse_program("%0 = leaf f32[2] [1, 2]\n%1 = sum %0 : f32[]\n").program();
  plain.expected_root = {3};
  plain.expected_grads = {{1, 1}};
  EXPECT_EQ(emit_python_repro(plain).find("as_laid_out"), std::string::npos);
}

TEST(ReproLayout, BothReproducersShowRelayoutAsTheBackendBuildsIt) {
  const ReproCase c = relayout_case();
  const std::string py = emit_python_repro(c), cpp = emit_cpp_repro(c);
  // Transposed [2,2]: strides [1, 2] in a buffer of 4; offset 2: strides [2, 1] in one of 6.
  expect_contains(py, "# %1 = relayout %0, layout=permuted(1,0) : f32[2,2]");
  expect_contains(py, "torch.as_strided(torch.as_strided_scatter(torch.full([4], nan, "
                      "dtype=r0.dtype), r0, [2, 2], [1, 2], 0), [2, 2], [1, 2], 0)");
  expect_contains(py, "torch.full([6], nan, dtype=r1.dtype), r1, [2, 2], [2, 1], 2)");
  expect_contains(cpp, "relaid_out(r0, {1, 2}, 0, 4); // %1 = relayout %0");
  expect_contains(cpp, "relaid_out(r1, {2, 1}, 2, 6)");
}

TEST(ReproLayout, EmittedPythonBuildsTheLayoutsAndAgrees) {
  const char* root = std::getenv("BURNMARK_SOURCE_DIR");
  std::string python;
  for (const std::string& candidate :
       {root ? std::string(root) + "/.deps/torch-2.15.0/bin/python" : std::string(),
        std::string("python3")})
    if (!candidate.empty() &&
        std::system((candidate + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0) {
      python = candidate;
      break;
    }
  if (python.empty()) GTEST_SKIP() << "no Python with torch";
  const fs::path dir = burnmark::testing::scratch_dir("repro_layout");
  for (const ReproCase& c : {laid_out_case(), relayout_case()}) {
    SCOPED_TRACE(c.title);
    std::ofstream(dir / "repro.py") << emit_python_repro(c);
    FILE* pipe = popen((python + " " + (dir / "repro.py").string() + " 2>&1").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string out;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe))
      out += buf.data();
    const int raw = pclose(pipe);
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << out;
    expect_contains(out, "AGREES");
  }
  fs::remove_all(dir);
}
