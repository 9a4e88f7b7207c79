// The Python backends (issue 32): torch-eager-py runs the same ATen calls as the in-process
// libtorch backend on the same release, so it agrees with it bit for bit on every corpus program
// and every op (a test of the harness: the emitted Python, the request and response frames, the
// leaves' conversion); a Python backend that cannot start is one line naming the command that
// installs it, and a Python child that dies is a crash outcome, restarted at the next program.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/config/config.h"
#include "burnmark/gen/generator.h"
#include "burnmark/gen/mutate.h"
#include "burnmark/ir/text.h"
#include "programs_per_op.h"
#include "python_backend.h"
#include "python_source.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;

namespace {

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) throw std::runtime_error(r.error());
  return r.program();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool bitwise_equal(const HostTensor& a, const HostTensor& b) {
  return a.shape == b.shape && a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0;
}

std::string values_text(const HostTensor& t) {
  return fmt::format("{} {}", t.shape.to_string(), fmt::join(t.values, ", "));
}

// Every corpus program, in every float dtype's corpus.
std::vector<fs::path> corpus_programs() {
  std::vector<fs::path> out;
  for (const auto& dir : fs::directory_iterator(fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus"))
    if (dir.is_directory() && dir.path().filename().string().starts_with("programs"))
      for (const auto& entry : fs::directory_iterator(dir.path()))
        if (entry.path().extension() == ".txt") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Forward only, gradients, forward mode, second order: every mode both backends have.
constexpr RunOptions kModes[] = {RunOptions{false}, RunOptions{true}, RunOptions{true, true},
                                 RunOptions{true, false, true}};

// Both outcomes of one program in one mode, field by field, bit for bit; counts the runs both
// completed (so that agreeing by both failing cannot pass for agreement).
void expect_same(const Outcome& a, const Outcome& b, int& ok_runs) {
  ASSERT_EQ(a.status, b.status) << "libtorch: " << a.message << "\ntorch-eager-py: " << b.message;
  if (a.status != Status::Ok) return;
  ++ok_runs;
  EXPECT_TRUE(bitwise_equal(a.root, b.root)) << "root\n  libtorch       " << values_text(a.root)
                                             << "\n  torch-eager-py " << values_text(b.root);
  EXPECT_TRUE(bitwise_equal(a.tangent, b.tangent))
      << "tangent\n  libtorch       " << values_text(a.tangent) << "\n  torch-eager-py "
      << values_text(b.tangent);
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (std::size_t g = 0; g < a.grads.size(); ++g)
    EXPECT_TRUE(bitwise_equal(a.grads[g], b.grads[g]))
        << "grad of leaf " << g << "\n  libtorch       " << values_text(a.grads[g])
        << "\n  torch-eager-py " << values_text(b.grads[g]);
  ASSERT_EQ(a.hvp.size(), b.hvp.size());
  for (std::size_t g = 0; g < a.hvp.size(); ++g)
    EXPECT_TRUE(bitwise_equal(a.hvp[g], b.hvp[g]))
        << "H·v of leaf " << g << "\n  libtorch       " << values_text(a.hvp[g])
        << "\n  torch-eager-py " << values_text(b.hvp[g]);
}

class TorchEagerPy : public ::testing::Test {
protected:
  void SetUp() override {
    // Python's torch is PyPI's 2.15.0: only the 2.15 build's libtorch runs the same kernels.
    if (libtorch_release() != "2.15")
      GTEST_SKIP() << "this build's LibTorch is " << libtorch_release()
                   << "; torch-eager-py runs Python's torch 2.15.0, so bit-for-bit agreement is "
                      "checked on the 2.15 build only";
    BackendsResult made = make_backends("libtorch,torch-eager-py", RegistryOptions{});
    ASSERT_TRUE(made.ok()) << made.error();
    backends_ = made.take();
  }
  std::vector<std::unique_ptr<Backend>> backends_;
};

// A temporary executable file holding `text`, removed with the test.
struct Script {
  explicit Script(const std::string& text) {
    path = burnmark::testing::scratch_root() / "fake-python";
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_all);
  }
  ~Script() { fs::remove(path); }
  fs::path path;
};

Program neg_program() {
  return parse("%0 = leaf f32[2] [2, 1]\n%1 = neg %0 : f32[2]\nroot %1\n");
}

} // namespace

TEST_F(TorchEagerPy, AgreesBitForBitWithLibtorchOnTheWholeCorpus) {
  int programs = 0, ok_runs = 0;
  for (const fs::path& path : corpus_programs()) {
    SCOPED_TRACE(path.parent_path().filename().string() + "/" + path.filename().string());
    Program p = parse(read_file(path));
    // torch-eager-py makes every leaf contiguous (its runner does not lay leaves out yet), so
    // bit-for-bit holds on the same inputs: LibTorch gets them contiguous too.
    for (Leaf& leaf : p.leaves)
      leaf.layout = {};
    EXPECT_EQ(torch_function(p).unsupported, "");
    for (const RunOptions& options : kModes) {
      SCOPED_TRACE(fmt::format("gradients={} tangents={} hessian={}", options.gradients,
                               options.tangents, options.hessian));
      expect_same(backends_[0]->run(p, options), backends_[1]->run(p, options), ok_runs);
    }
    ++programs;
  }
  // The four dtypes' corpora: 111 programs when this was written.
  EXPECT_GT(programs, 100);
  // Forward and gradients complete on every program; forward mode and second order on most.
  EXPECT_GT(ok_runs, 3 * programs) << programs << " programs";
}

TEST_F(TorchEagerPy, AgreesBitForBitWithLibtorchOnEveryOp) {
  int programs = 0, ok_runs = 0;
  std::set<Op> ops;
  for (const auto& [op, p] : burnmark::testing::programs_per_op()) {
    SCOPED_TRACE(std::string(op_name(op)));
    // The Python repro's op table spells every op: torch lacks none.
    EXPECT_EQ(torch_function(p).unsupported, "");
    for (const RunOptions& options : kModes)
      expect_same(backends_[0]->run(p, options), backends_[1]->run(p, options), ok_runs);
    ops.insert(op);
    ++programs;
  }
  EXPECT_EQ(ops.size(), kOpCount);
  EXPECT_GT(ok_runs, 3 * programs) << programs << " programs";
}

TEST(PythonBackend, AMissingInterpreterIsOneLineNamingTheInstallCommand) {
  RegistryOptions options;
  options.torch_python = "/nonexistent/bin/python";
  for (const char* name : {"torch-eager-py", "torch-compile"}) {
    BackendsResult made = make_backends(name, options);
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.error().find('\n'), std::string::npos) << made.error();
    EXPECT_NE(made.error().find(name), std::string::npos) << made.error();
    EXPECT_NE(made.error().find("/nonexistent/bin/python"), std::string::npos) << made.error();
    EXPECT_NE(made.error().find("BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh"), std::string::npos)
        << made.error();
  }
}

TEST(PythonBackend, AnInterpreterWithoutTorchIsOneLineSayingSo) {
  // Python without its site-packages: the child cannot import torch and says so before ready.
  const Script python("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
  RegistryOptions options;
  options.torch_python = python.path.string();
  BackendsResult made = make_backends("torch-eager-py", options);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().find('\n'), std::string::npos) << made.error();
  EXPECT_NE(made.error().find("No module named 'torch'"), std::string::npos) << made.error();
  EXPECT_NE(made.error().find("BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh"), std::string::npos)
      << made.error();
}

TEST(PythonBackend, AnInterpreterThatExitsAtOnceCannotStart) {
  RegistryOptions options;
  options.torch_python = "/bin/false";
  BackendsResult made = make_backends("torch-eager-py", options);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().find('\n'), std::string::npos) << made.error();
  EXPECT_NE(made.error().find("exited with status 1 before it was ready"), std::string::npos)
      << made.error();
}

TEST(PythonBackend, AChildThatDiesIsACrashOutcomeAndRestarts) {
  // A Python child that says it is ready, then dies of SIGSEGV as the first request arrives.
  const Script python("#!/usr/bin/python3\n"
                      "import os, signal, socket, struct\n"
                      "s = socket.socket(fileno=int(os.environ['BURNMARK_CHILD_FD']))\n"
                      "ready = b'burnmark child ready v2; platform: torch 2.15.0 fake'\n"
                      "s.sendall(struct.pack('=I', len(ready)) + ready)\n"
                      "s.recv(4)\n"
                      "os.kill(os.getpid(), signal.SIGSEGV)\n");
  RegistryOptions options;
  options.torch_python = python.path.string();
  BackendsResult made = make_backends("torch-eager-py", options);
  ASSERT_TRUE(made.ok()) << made.error();
  auto backends = made.take();
  for (int run = 0; run < 2; ++run) { // the second run restarts the child, which dies again
    const Outcome out = backends[0]->run(neg_program(), RunOptions{true});
    EXPECT_EQ(out.status, Status::Crash) << out.message;
    EXPECT_EQ(out.backend, "torch-eager-py");
    EXPECT_NE(out.message.find("signal 11"), std::string::npos) << out.message;
  }
}

// torch-compile's cache key is the function's source (with the dtype, the leaves' shapes and the
// gradient mode): a value-only mutation, the share BURNMARK_VALUE_MUTATIONS asks of the fuzz
// targets' mutator, must leave all of them unchanged, so the mutated program is a cache hit.
// On thousands of random programs in every float dtype: the same source, dtype and leaf shapes,
// and different leaf data (so the mutation did something).
TEST(PythonBackend, AValueOnlyMutationKeepsTheTorchFunctionSourceTheCompileCacheKey) {
  GeneratorOptions options;
  options.max_leaves = 8;
  options.dtypes = {FloatDType::F32, FloatDType::BF16, FloatDType::F16, FloatDType::F64};
  std::mt19937 rng(32);
  std::uniform_int_distribution<int> byte(0, 255), length(1, 256);
  int mutated = 0;
  std::set<FloatDType> dtypes;
  for (int i = 0; i < 3000; ++i) {
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(length(rng)));
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(byte(rng));
    const Program p = generate(bytes, options);
    const PythonFunction before = torch_function(p);
    if (!before.unsupported.empty()) continue;
    MutationRng mr(static_cast<std::uint64_t>(i));
    const std::optional<Mutated> m = mutate_values_only(p, options, mr);
    if (!m) continue;
    ++mutated;
    dtypes.insert(p.float_dtype);
    const PythonFunction after = torch_function(m->program);
    ASSERT_EQ(after.unsupported, "") << to_text(m->program);
    ASSERT_EQ(after.source, before.source) << to_text(p) << "mutated to\n" << to_text(m->program);
    ASSERT_EQ(m->program.float_dtype, p.float_dtype);
    ASSERT_EQ(m->program.leaves.size(), p.leaves.size());
    bool data_changed = false;
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
      ASSERT_EQ(m->program.leaves[k].shape, p.leaves[k].shape) << to_text(m->program);
      ASSERT_EQ(m->program.leaves[k].dtype, p.leaves[k].dtype);
      // Bitwise, as Leaf's == compares: a planted -0 over a 0 is a change.
      const std::vector<double>&a = m->program.leaves[k].data, &b = p.leaves[k].data;
      data_changed = data_changed || a.size() != b.size() ||
                     std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) != 0 ||
                     m->program.leaves[k].indices != p.leaves[k].indices;
    }
    EXPECT_TRUE(data_changed) << to_text(p);
  }
  EXPECT_GT(mutated, 2000) << "most programs have a float leaf to mutate";
  EXPECT_EQ(dtypes.size(), 4u);
}

// The campaign picks one-process mode, and the mutator its value share, from BACKENDS by name
// (config.cpp, which cannot see this library's table): every Python backend must be among them.
TEST(PythonBackend, TheConfigKnowsEveryPythonBackendByName) {
  for (std::string_view name : python_backend_names()) {
    EXPECT_TRUE(backends_have_python("ref,libtorch," + std::string(name))) << name;
    EXPECT_TRUE(backends_have_python(std::string(name) + ",ref")) << name;
  }
  EXPECT_TRUE(backends_compile("ref,libtorch,torch-compile"));
  EXPECT_TRUE(backends_compile("ref,jax"));
  EXPECT_FALSE(backends_compile("ref,libtorch,torch-eager-py"));
  EXPECT_FALSE(backends_have_python("ref,libtorch"));
  EXPECT_FALSE(backends_have_python("ref,child:torch-compile.so,torch-compiled"));
}
