// The Python reproducer's in-place path (ReproPath::Inplace, libtorch-inplace's): which calls the
// script makes (the in-place form where the backend makes it, the functional call elsewhere),
// that its inplace_destination() builds the view worked out here by hand, that the scripts run
// with PyTorch agree with values computed by hand, and that the masked_scatter_ finding of
// LibTorch 1.13.1 (pytorch#99638) reproduces there and agrees on a fixed release.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "burnmark/ir/inplace_form.h"
#include "burnmark/ir/text.h"
#include "burnmark/repro/python_inplace.h"
#include "burnmark/repro/repro.h"

using namespace burnmark;
namespace fs = std::filesystem;

namespace {

Program parsed(const std::string& text) {
  const ParseResult r = parse_program(text);
  EXPECT_TRUE(r.ok()) << r.error();
  return r.program();
}

// x = [[0, 0.5], [1, 2]], b = [1, -1]: by hand,
//   %2 = x + b (b a row, broadcast into x's shape)    = [[1, -0.5], [2, 1]]
//   %3 = clamp(%2, -0.25, 1.5)                         = [[1, -0.25], [1.5, 1]]
//   %4 = elu(%3, alpha 1): identity where positive     = [[1, expm1(-0.25)], [1.5, 1]]
//   root = sum(%4) = 3.5 + expm1(-0.25).
// Backward: elu' is 1 where positive, clamp passes the gradient only strictly inside
// (-0.25, 1.5), which %2 is at [0,0] and [1,1]: grad x = [[1, 0], [0, 1]], grad b = its column
// sums [1, 1] (exp(-0.25) is masked out by the clamp).
ReproCase add_clamp_elu_case() {
  ReproCase c;
  c.program = parsed("%0 = leaf f32[2,2] [0, 0.5, 1, 2]\n"
                     "%1 = leaf f32[2] [1, -1]\n"
                     "%2 = add %0, %1 : f32[2,2]\n"
                     "%3 = clamp %2, min=-0.25, max=1.5 : f32[2,2]\n"
                     "%4 = elu %3, alpha=1 : f32[2,2]\n"
                     "%5 = sum %4 : f32[]\n");
  c.title = "hand-computed: sum(elu(clamp(x + b)))";
  c.expected_root = {3.5 + std::expm1(-0.25)};
  c.expected_grads = {{1, 0, 0, 1}, {1, 1}};
  c.path = ReproPath::Inplace;
  return c;
}

// a = [0, 0.5], m = [[1, 2], [3, 4]]: %2 = a * m = [[0, 1], [0, 2]] (a broadcast: the result
// is larger than a, so mul runs functionally), %3 = sin(%2) at an odd register (the dims
// reversed in memory). Gradients of sum(sin(a * m)): grad a[j] = sum_i cos(a[j] m[i][j]) m[i][j]
// = [1 + 3, 2 cos 1 + 4 cos 2]; grad m = cos(a * m) * a = [[0, 0.5 cos 1], [0, 0.5 cos 2]].
ReproCase mul_sin_case() {
  ReproCase c;
  c.program = parsed("%0 = leaf f32[2] [0, 0.5]\n"
                     "%1 = leaf f32[2,2] [1, 2, 3, 4]\n"
                     "%2 = mul %0, %1 : f32[2,2]\n"
                     "%3 = sin %2 : f32[2,2]\n");
  c.title = "hand-computed: sin(a * m)";
  c.expected_root = {0, std::sin(1.0), 0, std::sin(2.0)};
  c.expected_grads = {{4, 2 * std::cos(1.0) + 4 * std::cos(2.0)},
                      {0, 0.5 * std::cos(1.0), 0, 0.5 * std::cos(2.0)}};
  c.path = ReproPath::Inplace;
  return c;
}

// corpus/bugs/libtorch-masked-scatter-noncontiguous-self.txt: every element of self (zeros)
// masked, so the result is source's first four elements in self's row-major order,
// [[10, 20], [30, 40]]; grad self is zero (every element overwritten), grad source one for each
// element taken; the mask's float leaves reach the root only through gt (zero).
ReproCase masked_scatter_case() {
  ReproCase c;
  c.program = parsed("%0 = leaf f32[2,2] [0, 0, 0, 0]\n"
                     "%1 = leaf f32[2] [1, 1]\n"
                     "%2 = leaf f32[2] [0, 0]\n"
                     "%3 = gt %1, %2 : bool[2]\n"
                     "%4 = leaf f32[2,2] [10, 20, 30, 40]\n"
                     "%5 = masked_scatter %0, %3, %4 : f32[2,2]\n");
  c.title = "masked_scatter_ into a transposed destination";
  c.expected_root = {10, 20, 30, 40};
  c.expected_grads = {{0, 0, 0, 0}, {0, 0}, {0, 0}, {1, 1, 1, 1}};
  c.path = ReproPath::Inplace;
  return c;
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << text;
}

struct RunResult {
  int status = -1;
  std::string output;
};

RunResult run(const std::string& command) {
  RunResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe))
    r.output += buf.data();
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  return r;
}

// Each interpreter here that imports torch, with its torch.__version__: pip's 2.15 in the .deps
// venv (tools/install-deps.sh) and Debian's python3-torch (1.13.1, "1.13.0a0" by its version).
struct Interpreter {
  std::string python, version;
};
std::vector<Interpreter> interpreters() {
  const char* root = std::getenv("BURNMARK_SOURCE_DIR");
  std::vector<Interpreter> out;
  for (const std::string& candidate :
       {root ? std::string(root) + "/.deps/torch-2.15.0/bin/python" : std::string(),
        std::string("/usr/bin/python3")}) {
    if (candidate.empty()) continue;
    const RunResult r =
        run(candidate + " -c 'import torch; print(\"torch=\" + torch.__version__)' 2>/dev/null");
    const auto at = r.output.find("torch=");
    if (r.status == 0 && at != std::string::npos)
      out.push_back({candidate, r.output.substr(at + 6, r.output.find('\n', at) - at - 6)});
  }
  return out;
}

struct TempDir {
  fs::path path =
      fs::temp_directory_path() / ("burnmark_repro_inplace_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  RunResult run_script(const Interpreter& in, const std::string& name, const std::string& text) {
    std::ofstream(path / name) << text;
    return run(in.python + " " + (path / name).string());
  }
};

} // namespace

TEST(ReproInplace, TheScriptRunsEachInPlaceFormTheBackendRuns) {
  const std::string add = emit_python_repro(add_clamp_elu_case());
  // add into x's shape: in place; register 2 even (row-major), 3 and 5 odd.
  expect_contains(add, "    r2 = inplace_destination(r0, 2)  # %2 = add %0, %1 : f32[2,2]\n"
                       "    r2.add_(r1)\n");
  expect_contains(add, "    r3 = inplace_destination(r2, 3)  # %3 = clamp");
  expect_contains(add, "    r3.clamp_(-0.25, 1.5)\n");
  // torch::elu_ is the ATen op elu_ (Python has it only under torch._C._nn).
  expect_contains(add, "    torch.ops.aten.elu_(r4, 1.0)\n");
  // sum has no in-place form: the functional call, as the eager path.
  expect_contains(add, "    r5 = torch.sum(r4)  # %5 = sum %4 : f32[]\n");
  expect_contains(add, "def inplace_destination(x, reg):");
  const std::string sin = emit_python_repro(mul_sin_case());
  // a [2] broadcast into [2,2]: mul cannot write into a, so it runs functionally.
  expect_contains(sin, "    r2 = torch.mul(r0, r1)  # %2 = mul %0, %1 : f32[2,2]\n");
  expect_contains(sin, "    r3 = inplace_destination(r2, 3)  # %3 = sin %2 : f32[2,2]\n"
                       "    r3.sin_()\n");
  const std::string scatter = emit_python_repro(masked_scatter_case());
  expect_contains(scatter, "    r5 = inplace_destination(r0, 5)");
  expect_contains(scatter, "    r5.masked_scatter_(r3, r4)\n");
  // elu with a negative alpha, asinh: functional in the backend, functional here.
  ReproCase functional;
  functional.program = parsed("%0 = leaf f32[2] [0.5, -1]\n%1 = elu %0, alpha=-0.5 : f32[2]\n"
                              "%2 = asinh %1 : f32[2]\n");
  functional.expected_root = {0, 0};
  functional.expected_grads = {{0, 0}};
  functional.path = ReproPath::Inplace;
  const std::string none = emit_python_repro(functional);
  expect_contains(none, "    r1 = F.elu(r0, alpha=-0.5)");
  expect_contains(none, "    r2 = torch.asinh(r1)");
  // Nothing in place: no destination, and no helper defined.
  EXPECT_EQ(none.find("= inplace_destination("), std::string::npos) << none;
  EXPECT_EQ(none.find("def inplace_destination"), std::string::npos) << none;
  // The eager path never writes in place; the C++ emitter has no in-place path.
  ReproCase eager = add_clamp_elu_case();
  eager.path = ReproPath::Eager;
  EXPECT_EQ(emit_python_repro(eager).find("inplace_destination"), std::string::npos);
  EXPECT_THROW(emit_cpp_repro(add_clamp_elu_case()), std::invalid_argument);
}

// Every op runs_in_place sends in place has a Python spelling, with default attributes and a
// shape that fits (the emitter throws std::logic_error on a gap).
TEST(ReproInplace, EveryInPlaceOpHasAPythonSpelling) {
  int in_place = 0;
  for (std::size_t k = 0; k < kOpCount; ++k) {
    Instr in;
    in.op = static_cast<Op>(k);
    for (int i = 0; i < op_arity(in.op); ++i)
      in.operands.push_back(i);
    SCOPED_TRACE(std::string(op_name(in.op)));
    const bool expected = runs_in_place(in, true);
    std::optional<std::string> call;
    EXPECT_NO_THROW(call = torch_python_inplace_call(in, 7, true));
    EXPECT_EQ(call.has_value(), expected);
    if (call) {
      ++in_place;
      EXPECT_NE(call->find("r7"), std::string::npos) << *call;
      EXPECT_NE(call->find("_("), std::string::npos) << *call; // an in-place form, name_(...)
    }
  }
  EXPECT_GT(in_place, 60); // the unary, binary, scatter and index forms
}

// The view the backend's inplace_destination builds (libtorch_inplace.h), worked out by hand for
// a [2,3] tensor: even register row-major, strides [6, 2]; odd register dims reversed, [2, 4];
// both at storage offset 1 in a buffer of 13 zeros; rank 0 at offset 1 too.
TEST(ReproInplace, TheScriptsDestinationIsTheBackendsView) {
  const std::vector<Interpreter> found = interpreters();
  if (found.empty()) GTEST_SKIP() << "no Python with torch";
  TempDir dir;
  for (const Interpreter& in : found) {
    SCOPED_TRACE(in.python);
    const RunResult r = dir.run_script(
        in, "view.py",
        std::string("import warnings\nwarnings.simplefilter('ignore')\nimport torch\n") +
            kInplaceDestinationHelper +
            "x = torch.arange(6.0).reshape(2, 3)\n"
            "for reg in (0, 1):\n"
            "    d = inplace_destination(x, reg)\n"
            "    print(reg, d.stride(), d.storage_offset(), d.storage().size(), torch.equal(d, "
            "x))\n"
            "s = inplace_destination(torch.tensor(2.5), 3)\n"
            "print(s.stride(), s.storage_offset(), s.item())\n");
    EXPECT_EQ(r.status, 0) << r.output;
    expect_contains(r.output, "0 (6, 2) 1 13 True");
    expect_contains(r.output, "1 (2, 4) 1 13 True");
    expect_contains(r.output, "() 1 2.5");
  }
}

TEST(ReproInplace, EmittedScriptsAgreeWithHandWorkedValues) {
  const std::vector<Interpreter> found = interpreters();
  if (found.empty()) GTEST_SKIP() << "no Python with torch";
  TempDir dir;
  for (const Interpreter& in : found)
    for (const ReproCase& c : {add_clamp_elu_case(), mul_sin_case()}) {
      SCOPED_TRACE(in.python + ": " + c.title);
      const RunResult r = dir.run_script(in, "agree.py", emit_python_repro(c));
      EXPECT_EQ(r.status, 0) << r.output;
      expect_contains(r.output, "AGREES");
    }
}

// LibTorch 1.13.1's masked_scatter_ into the odd register's transposed view takes source in
// memory order: [[10, 30], [20, 40]] (bugs.md, libtorch-masked-scatter-noncontiguous-self);
// fixed by 2.x, where the same script agrees. The eager path agrees on both.
TEST(ReproInplace, TheMaskedScatterFindingReproducesOnlyWhereLibTorchHasIt) {
  const std::vector<Interpreter> found = interpreters();
  if (found.empty()) GTEST_SKIP() << "no Python with torch";
  TempDir dir;
  for (const Interpreter& in : found) {
    SCOPED_TRACE(in.python + " torch " + in.version);
    const RunResult r = dir.run_script(in, "scatter.py", emit_python_repro(masked_scatter_case()));
    if (in.version.starts_with("1.13")) {
      EXPECT_EQ(r.status, 1) << r.output;
      expect_contains(r.output, "root %5[1]  torch  30  expected  20  <-- DIVERGES");
    } else {
      EXPECT_EQ(r.status, 0) << r.output;
    }
    ReproCase eager = masked_scatter_case();
    eager.path = ReproPath::Eager;
    const RunResult e = dir.run_script(in, "scatter_eager.py", emit_python_repro(eager));
    EXPECT_EQ(e.status, 0) << e.output;
  }
}

// Forward mode and H·v on the in-place path, as libtorch-inplace runs them (copy_ carries the
// operand's tangent into the view, the in-place form's own forward formula updates it): for
// x = [0, 0.5], r = x * x (mul_ into register 1's view), by hand r = [0, 0.25], grad 2x = [0, 1];
// along leaf_tangent's u = [1, -1.5] the tangent 2 x u = [0, -1.5]; H = 2I, so H·u = [2, -3].
TEST(ReproInplace, ForwardModeAndSecondOrderRunInPlaceToo) {
  ReproCase c;
  c.program = parsed("%0 = leaf f32[2] [0, 0.5]\n%1 = mul %0, %0 : f32[2]\n");
  c.title = "hand-computed: x * x in place";
  c.expected_root = {0, 0.25};
  c.expected_grads = {{0, 1}};
  c.path = ReproPath::Inplace;
  ReproCase tangent = c;
  tangent.check_tangent = true;
  tangent.expected_tangent = {0, -1.5};
  ReproCase hvp = c;
  hvp.check_hvp = true;
  hvp.expected_hvps = {{2, -3}};
  for (const ReproCase& each : {tangent, hvp})
    expect_contains(emit_python_repro(each), "r1 = inplace_destination(r0, 1)");
  const std::vector<Interpreter> found = interpreters();
  if (found.empty()) GTEST_SKIP() << "no Python with torch";
  TempDir dir;
  for (const Interpreter& in : found)
    for (const ReproCase& each : {tangent, hvp}) {
      SCOPED_TRACE(in.python + (each.check_hvp ? ": H·v" : ": tangent"));
      const RunResult r = dir.run_script(in, "second.py", emit_python_repro(each));
      expect_contains(r.output, each.check_hvp ? "hvp %0[1]  torch -3  expected -3\n"
                                               : "tangent %1[1]  torch -1.5  expected -1.5\n");
      // LibTorch 1.13.1's autograd::grad also writes the leaf's .grad through the in-place
      // form's view (bugs.md, libtorch-inplace-view-grad-accumulates): after H·v, backward's
      // gradient is wrong there, right on a fixed release.
      const bool wrong_grad = each.check_hvp && in.version.starts_with("1.13");
      EXPECT_EQ(r.status, wrong_grad ? 1 : 0) << r.output;
      if (wrong_grad) expect_contains(r.output, "grad %0[1]  torch -1  expected  1  <-- DIVERGES");
    }
}
