// The torch.compile reproducer (issue 32): the script's shape (every input's shape, stride and
// dtype on its line; eager, compiled and a float64 baseline), and the script run with the torch
// venv's Python: exit 0 where eager and compiled agree, 1 where the compiled result is further
// from the baseline than eager's (a torch.compile replaced by one that adds 1, the only way to
// have a wrong compiler at hand). Skipped when the venv lacks torch.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "burnmark/ir/text.h"
#include "burnmark/repro/repro.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;

namespace {

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) throw std::runtime_error(r.error());
  return r.program();
}

// exp of a 2x3 leaf, gathered along dim 1 by an index leaf, then summed per row: a float leaf,
// an index leaf, and a gradient.
Program gather_program() {
  return parse("%0 = leaf f32[2,3] [0.5, -1, 2, 0.25, 0, -0.5]\n"
               "%1 = leaf i64[2,2] [0, 2, 1, 1]\n"
               "%2 = exp %0 : f32[2,3]\n"
               "%3 = gather %2, %1, dim=1 : f32[2,2]\n"
               "%4 = sum_dim %3, dim=1, keepdim=false : f32[2]\n"
               "root %4\n");
}

ReproCase compile_case(const Program& p) {
  ReproCase c;
  c.program = p;
  c.title = "burnmark test: exp -> gather -> sum_dim";
  c.path = ReproPath::Compile;
  // The emitter checks the expected values' lengths only: the baseline is PyTorch's float64.
  c.expected_root.assign(static_cast<std::size_t>(p.shape_of(p.root).numel()), 0.0);
  for (const Leaf& leaf : p.leaves)
    c.expected_grads.emplace_back(static_cast<std::size_t>(leaf.shape.numel()), 0.0);
  return c;
}

struct RunResult {
  int status = -1;
  std::string out;
};

RunResult run(const std::string& command) {
  RunResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe))
    r.out.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The torch venv's interpreter (BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh), or "".
std::string venv_python() {
  const fs::path python = fs::path(BURNMARK_TEST_SOURCE_DIR) / ".deps/torch-2.15.0/bin/python";
  if (!fs::exists(python)) return "";
  return run(python.string() + " -c 'import torch'").status == 0 ? python.string() : "";
}

fs::path write_script(const std::string& name, const std::string& text) {
  const fs::path dir = burnmark::testing::scratch_root() / "compile-repro";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

} // namespace

TEST(CompileRepro, EveryInputHasItsShapeStrideAndDtypeOnItsLine) {
  const std::string script = emit_python_repro(compile_case(gather_program()));
  EXPECT_NE(script.find("    # %0: shape (2, 3), stride (3, 1), dtype float32 (float64 in the "
                        "baseline)\n    r0 = torch.tensor("),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("    # %1: shape (2, 2), stride (2, 1), dtype int64 (indices)\n"
                        "    r1 = torch.tensor([0, 2, 1, 1], dtype=torch.int64).reshape((2, 2))"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("torch.compile(fn, fullgraph=True, dynamic=False)"), std::string::npos);
  EXPECT_NE(script.find("baseline = run(fn, torch.float64)"), std::string::npos);
  EXPECT_NE(script.find("DTYPE = torch.float32\nGRADIENTS = True\n"), std::string::npos);
  // No second-order or C++ form of it.
  ReproCase hvp = compile_case(gather_program());
  hvp.check_hvp = true;
  EXPECT_THROW(emit_python_repro(hvp), std::invalid_argument);
  EXPECT_THROW(emit_cpp_repro(compile_case(gather_program())), std::invalid_argument);
}

TEST(CompileRepro, RunsAndExitsZeroWhereEagerAndCompiledAgree) {
  const std::string python = venv_python();
  if (python.empty())
    GTEST_SKIP() << "the torch venv lacks torch (BURNMARK_TORCH_PYTHON=1 "
                    "tools/install-deps.sh)";
  const fs::path script =
      write_script("agree.py", emit_python_repro(compile_case(gather_program())));
  const RunResult r = run(python + " " + script.string());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("input %0: shape (2, 3) stride (3, 1) dtype torch.float32"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("input %1: shape (2, 2) stride (2, 1) dtype torch.int64"), std::string::npos)
      << r.out;
  // Root row 0 is exp(0.5) + exp(2) = 9.03777736963...; both runs and the baseline print it.
  EXPECT_NE(r.out.find("root[0]  eager  9.03"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float64  9.0377773696"), std::string::npos) << r.out;
  // The index leaf has no gradient line; %0's has six elements.
  EXPECT_NE(r.out.find("grad %0: compiled further from float64 than eager at 0 of 6 elements"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("grad %1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compiled no further from float64 than eager"), std::string::npos);

  // A compiler that adds 1 to the root: further than eager at both root elements, the gradients
  // (of a constant shift) untouched.
  const RunResult wrong =
      run(python +
          " -c \"import runpy, sys, torch; torch.compile = lambda fn, **k: (lambda *a: "
          "fn(*a) + 1); sys.argv = ['" +
          script.string() + "']; runpy.run_path('" + script.string() + "', run_name='__main__')\"");
  EXPECT_EQ(wrong.status, 1) << wrong.out;
  EXPECT_NE(wrong.out.find("root: compiled further from float64 than eager at 2 of 2 elements"),
            std::string::npos)
      << wrong.out;
  EXPECT_NE(wrong.out.find("grad %0: compiled further from float64 than eager at 0 of 6"),
            std::string::npos)
      << wrong.out;
  fs::remove_all(script.parent_path());
}
