// Backends in a child process: the same values as in-process, LibTorch's scalar kernels really
// selected in libtorch-scalar's child, and a plugin that crashes, exits or hangs turned into a
// Crash or Hang outcome naming it, with the child restarted for the next program.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/process.h"
#include "burnmark/backends/registry.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"

#include "scratch_dir.h"

using namespace burnmark;

namespace {

Program parse(const std::string& text) {
  ParseResult r = parse_program(text);
  if (!r.ok()) throw std::runtime_error(r.error());
  return r.program();
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ChildSpec spec(std::string name, std::string inner, double timeout = 60) {
  ChildSpec s;
  s.name = std::move(name);
  s.inner = std::move(inner);
  s.server = BURNMARK_CLI_PATH;
  s.timeout_seconds = timeout;
  return s;
}

// The fixture plugin's trigger: the first leaf's first value.
Program neg_of(float first) {
  return parse(fmt::format("%0 = leaf f32[2] [{}, 1]\n%1 = neg %0 : f32[2]\nroot %1\n", first));
}

bool bitwise_equal(const HostTensor& a, const HostTensor& b) {
  return a.shape == b.shape && a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0;
}

} // namespace

TEST(ChildBackend, GivesTheInProcessBackendsValuesBitForBit) {
  const auto inside = make_libtorch_backend(1);
  const auto child = make_child_backend(spec("child:libtorch", "libtorch"));
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(BURNMARK_TEST_SOURCE_DIR) + "/corpus/programs")) {
    const Program p = parse(read_file(entry.path()));
    SCOPED_TRACE(entry.path().filename().string());
    // Forward mode too: the wire carries the tangents flag and the root's tangent.
    // Second order too: the wire carries the hessian flag and every leaf's H·v.
    for (const RunOptions options : {RunOptions{false}, RunOptions{true}, RunOptions{true, true},
                                     RunOptions{true, false, true}}) {
      const Outcome a = inside->run(p, options);
      const Outcome b = child->run(p, options);
      EXPECT_EQ(b.backend, "child:libtorch");
      ASSERT_EQ(a.status, b.status) << b.message;
      EXPECT_TRUE(bitwise_equal(a.root, b.root));
      EXPECT_TRUE(bitwise_equal(a.tangent, b.tangent));
      EXPECT_EQ(b.tangent.values.empty(), !options.tangents || b.status != Status::Ok);
      ASSERT_EQ(a.grads.size(), b.grads.size());
      for (std::size_t g = 0; g < a.grads.size(); ++g)
        EXPECT_TRUE(bitwise_equal(a.grads[g], b.grads[g])) << "leaf " << g;
      ASSERT_EQ(a.hvp.size(), b.hvp.size());
      EXPECT_EQ(b.hvp.empty(), !options.hessian || b.status != Status::Ok);
      for (std::size_t g = 0; g < a.hvp.size(); ++g)
        EXPECT_TRUE(bitwise_equal(a.hvp[g], b.hvp[g])) << "leaf " << g;
    }
    ++programs;
  }
  EXPECT_GT(programs, 10);
}

TEST(ChildBackend, LibTorchScalarRunsTheDefaultKernelsAndSaysSo) {
  RegistryOptions options;
  options.child_server = BURNMARK_CLI_PATH; // a test binary does not serve
  BackendsResult made = make_backends("libtorch,libtorch-scalar", options);
  ASSERT_TRUE(made.ok()) << made.error();
  auto backends = made.take();
  const Program p = neg_of(2);
  for (auto& b : backends)
    ASSERT_EQ(b->run(p, RunOptions{true}).status, Status::Ok) << b->name();
  EXPECT_NE(backends[1]->note().find(" DEFAULT on "), std::string::npos) << backends[1]->note();
  EXPECT_EQ(backends[1]->platform(), backends[1]->note());
  EXPECT_NE(backends[0]->platform(), backends[1]->platform());
  // lgamma's vector body overflows early in 1.13 and 2.15 (bugs.md,
  // libtorch-lgamma-vector-overflow); the scalar kernels do not: the variant reaches other code,
  // not the same code twice.
  const Program lgamma = parse(read_file(std::string(BURNMARK_TEST_SOURCE_DIR) +
                                         "/corpus/bugs/libtorch-lgamma-vector-overflow.txt"));
  const auto ref = make_reference_backend();
  const Outcome r = ref->run(lgamma, RunOptions{true});
  EXPECT_FALSE(compare({r, backends[0]->run(lgamma, RunOptions{true})}, {}).agree());
  EXPECT_TRUE(compare({r, backends[1]->run(lgamma, RunOptions{true})}, {}).agree());
}

// A sum past ATen's 32,768-element grain, of values of both signs and mixed magnitudes: split
// across threads, its partial sums round differently.
Program sum_past_the_grain() {
  std::string values;
  for (int i = 0; i < 48 * 48 * 28; ++i) {
    const double v = (1.0 + (i * 7 % 16) / 3.0) * (i % 3 == 1 ? -1 : 1) * std::pow(10.0, i % 5 - 2);
    values += fmt::format("{}{}", i ? ", " : "", static_cast<float>(v));
  }
  return parse(fmt::format("%0 = leaf f32[48,48,28] [{}]\n%1 = sum %0 : f32[]\nroot %1\n", values));
}

// Below the grain (BURNMARK_MAX_ELEMENTS's default 8,192) the kernels tried give the same bits on
// 1 and 4 threads (tools/threads_bits.py), so the evidence that the variant takes its path is the
// thread count its child reports, its agreement with the reference, and other bits past the grain.
TEST(ChildBackend, LibTorchThreadsRunsSeveralIntraOpThreadsAndSaysSo) {
  RegistryOptions options;
  options.child_server = BURNMARK_CLI_PATH;
  BackendsResult made = make_backends("libtorch,libtorch-threads", options);
  ASSERT_TRUE(made.ok()) << made.error();
  auto backends = made.take();
  ASSERT_EQ(backends[1]->name(), "libtorch-threads");
  const Program p = neg_of(2);
  for (auto& b : backends)
    ASSERT_EQ(b->run(p, RunOptions{true}).status, Status::Ok) << b->name();
  EXPECT_EQ(backends[0]->note().find("intra-op threads"), std::string::npos) << backends[0]->note();
  EXPECT_NE(backends[1]->note().find(fmt::format(", {} intra-op threads", kThreadsVariantThreads)),
            std::string::npos)
      << backends[1]->note();
  const auto ref = make_reference_backend();
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(BURNMARK_TEST_SOURCE_DIR) + "/corpus/programs")) {
    const Program q = parse(read_file(entry.path()));
    SCOPED_TRACE(entry.path().filename().string());
    const Outcome r = ref->run(q, RunOptions{true});
    EXPECT_TRUE(compare({r, backends[1]->run(q, RunOptions{true})}, {}).agree());
    ++programs;
  }
  EXPECT_GT(programs, 10);

  const Program large = sum_past_the_grain();
  const Outcome one = backends[0]->run(large, RunOptions{true});
  const Outcome four = backends[1]->run(large, RunOptions{true});
  ASSERT_EQ(four.status, Status::Ok) << four.message;
  EXPECT_FALSE(bitwise_equal(one.root, four.root))
      << "4 threads summed 64,512 elements in the same order as 1: " << one.root.values[0];
  EXPECT_TRUE(compare({ref->run(large, RunOptions{true}), one, four}, {}).agree());
}

TEST(ChildBackend, ACrashOrAnExitIsACrashOutcomeAndTheNextProgramRunsAgain) {
  const std::string plugin = BURNMARK_TEST_MISBEHAVING_PLUGIN;
  const auto child = make_child_backend(spec("child:misbehaving", plugin));
  EXPECT_EQ(child->run(neg_of(1), RunOptions{true}).status, Status::Unsupported);
  for (float trigger : {13.0f, 14.0f, 16.0f}) {
    const Outcome crashed = child->run(neg_of(trigger), RunOptions{true});
    EXPECT_EQ(crashed.status, Status::Crash) << trigger;
    EXPECT_EQ(crashed.backend, "child:misbehaving");
    EXPECT_NE(crashed.message.find(plugin), std::string::npos) << crashed.message;
    EXPECT_NE(crashed.message.find(trigger == 14 ? "exited with status 0" : "killed by signal"),
              std::string::npos)
        << crashed.message;
    EXPECT_EQ(child->run(neg_of(1), RunOptions{true}).status, Status::Unsupported)
        << "the child was not restarted after " << trigger;
  }
}

TEST(ChildBackend, AHangIsKilledAtTheTimeoutAndIsAHangOutcome) {
  // The deadline covers the run only, not the child's start-up (which waits for its "ready"), so
  // a loaded machine does not turn a slow start into a hang; the hang itself is endless, and
  // 10 s leaves the answer to the next (trivial) program ample room on a loaded machine.
  const auto child =
      make_child_backend(spec("child:misbehaving", BURNMARK_TEST_MISBEHAVING_PLUGIN, 10));
  const Outcome hung = child->run(neg_of(15), RunOptions{true});
  EXPECT_EQ(hung.status, Status::Hang);
  EXPECT_NE(hung.message.find("within 10 s"), std::string::npos) << hung.message;
  EXPECT_EQ(child->run(neg_of(1), RunOptions{true}).status, Status::Unsupported);
}

TEST(ChildBackend, RunawayMemoryIsKilledAtTheLimitAndIsAnOomOutcome) {
  // The fixture grows to 4 GB and then hangs, so a missed limit shows as a hang, not as an
  // exhausted machine; 1 GB is well above a LibTorch child's own start-up size.
  ChildSpec s = spec("child:misbehaving", BURNMARK_TEST_MISBEHAVING_PLUGIN, 60);
  s.memory_limit_mb = 1024;
  const auto child = make_child_backend(s);
  const Outcome grown = child->run(neg_of(17), RunOptions{true});
  EXPECT_EQ(grown.status, Status::Oom) << grown.message;
  EXPECT_NE(grown.message.find("BURNMARK_CHILD_MEMORY=1024"), std::string::npos) << grown.message;
  EXPECT_EQ(child->run(neg_of(1), RunOptions{true}).status, Status::Unsupported);
  const auto ref = make_reference_backend();
  const Program p = neg_of(17);
  const Verdict v = compare({ref->run(p, RunOptions{true}), child->run(p, RunOptions{true})}, {});
  ASSERT_EQ(v.divergences.size(), 1u);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Oom);
  EXPECT_EQ(v.divergences[0].backend, "child:misbehaving");
}

TEST(ChildBackend, TheOracleReportsACrashAsItsOwnKindNamingTheBackend) {
  const auto ref = make_reference_backend();
  const auto child =
      make_child_backend(spec("child:misbehaving", BURNMARK_TEST_MISBEHAVING_PLUGIN));
  const Program p = neg_of(13);
  const Verdict v = compare({ref->run(p, RunOptions{true}), child->run(p, RunOptions{true})}, {});
  ASSERT_EQ(v.divergences.size(), 1u);
  EXPECT_EQ(v.divergences[0].kind, DivergenceKind::Crash);
  EXPECT_EQ(v.divergences[0].backend, "child:misbehaving");
  EXPECT_NE(format_verdict(v).find("result=diverge"), std::string::npos);
}

TEST(ChildBackend, TheRegistryParsesTheGeneralForm) {
  BackendsResult ok = make_backends("ref,child[ATEN_CPU_CAPABILITY=default;X=1]:libtorch", {});
  ASSERT_TRUE(ok.ok()) << ok.error();
  EXPECT_EQ(ok.take()[1]->name(), "child[ATEN_CPU_CAPABILITY=default;X=1]:libtorch");
  for (const char* bad : {"ref,child:", "ref,child[X=1", "ref,child[=1]:libtorch",
                          "ref,child[X]:libtorch", "ref,childlibtorch"}) {
    BackendsResult r = make_backends(bad, {});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().find('\n'), std::string::npos) << r.error();
  }
}

TEST(ChildBackend, IsolationPutsEveryPluginInAChildForTheCommandLineToo) {
  // A plugin that segfaults used to take `burnmark run` down with it (status 139, no word).
  const std::filesystem::path dir = burnmark::testing::scratch_dir("isolate");
  std::ofstream(dir / "p.txt") << "%0 = leaf f32[2] [13, 1]\n%1 = neg %0 : f32[2]\nroot %1\n";
  const std::string cmd = "BURNMARK_ISOLATE=1 BACKENDS=ref," BURNMARK_TEST_MISBEHAVING_PLUGIN
                          " " BURNMARK_CLI_PATH " run " +
                          (dir / "p.txt").string() + " >" + (dir / "out").string() + " 2>&1";
  const int raw = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 1); // a divergence, not a dead process
  const std::string out = read_file(dir / "out");
  EXPECT_NE(out.find("kind=crash"), std::string::npos) << out;
  EXPECT_NE(out.find("backend=child:" BURNMARK_TEST_MISBEHAVING_PLUGIN), std::string::npos) << out;
  std::filesystem::remove_all(dir);
}
