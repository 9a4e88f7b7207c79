// The onednn plugin in `burnmark run`'s own process (LibTorch loaded) under each oneDNN
// instruction-set cap: it loads, its load-time dtype probe leaves the heap intact, and every
// program it is given, f32 or bf16, ends in a verdict rather than a crash.
//
// Issue 33: at ONEDNN_MAX_CPU_ISA=avx512_core oneDNN 2.6.3 creates a bf16 matmul (gemm:jit) and,
// with LibTorch in the process, refuses it only when executed. The probe caught that, but the
// plugin's 16-bit staging outlived the throw, and the next primitive widened its results through
// pointers into the probe's freed buffers: every later program, f32 included, ran on a corrupted
// heap ("corrupted double-linked list", "malloc_consolidate(): unaligned fastbin chunk").
// The cap only lowers the ISA, so this runs on any x86-64 (Intel or AMD); without AVX-512 the
// avx512_core run is an uncapped one. Nothing here depends on which ISA ran: no value is pinned,
// only exit statuses, verdict lines and f32 agreement on programs of exact or well-bounded ops.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scratch_dir.h"

namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1; // the exit status; -1 when the process died of a signal (abort, segfault)
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path scratch() {
  static const fs::path dir = burnmark::testing::scratch_dir("onednn_cli");
  return dir;
}

// `burnmark args` with env (assignments or -u NAME first), the caller's knobs cleared.
Result run_burnmark(const std::string& args, const std::string& env) {
  const fs::path out = scratch() / "stdout", err = scratch() / "stderr";
  const std::string cmd = "env -u BACKENDS -u MODE -u BURNMARK_OPS -u BURNMARK_TOLERANCE " + env +
                          " " BURNMARK_CLI_PATH " " + args + " >" + out.string() + " 2>" +
                          err.string();
  const int raw = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

const char* const kCaps[] = {"-u ONEDNN_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA=avx2",
                             "ONEDNN_MAX_CPU_ISA=avx512_core"};

// Programs of the primitive families the probe creates (eltwise, binary with broadcasting,
// reduction, reorder, concat, matmul) whose f32 results agree with the reference. onednn runs
// each in f32 under every cap except matmul: with LibTorch in the process, oneDNN 2.6.3's
// gemm:jit matmul can refuse to execute (dnnl_unimplemented; seen at avx2), so onednn may skip it.
struct Program {
  const char* name;
  bool runs_everywhere;
};
const Program kPrograms[] = {{"elementwise_binary_broadcast", true},
                             {"scalar_broadcast_normalize", true},
                             {"reductions_keepdim", true},
                             {"concat_dims", true},
                             {"matmul_2d", false}};

} // namespace

TEST(OnednnCli, EveryIsaCapLoadsAndRunsF32AndBf16ProgramsToAVerdict) {
  const std::string backends = "BACKENDS=ref," BURNMARK_ONEDNN_PLUGIN_FILE;
  for (const auto& [name, runs_everywhere] : kPrograms) {
    SCOPED_TRACE(name);
    const fs::path f32 = fs::path(BURNMARK_ONEDNN_CORPUS_DIR) / (std::string(name) + ".txt");
    // The same program in bf16: onednn runs it where this CPU (under the cap) has the
    // primitives and skips it where not. Which, and how close bf16 lands, depends on the ISA;
    // that it ends in a verdict does not (0 agreement, 1 a divergence; a crash is -1).
    const fs::path bf16 = scratch() / (std::string(name) + "_bf16.txt");
    const Result shown = run_burnmark("show --dtype bf16 " + f32.string(), "");
    ASSERT_EQ(shown.status, 0) << shown.err;
    std::ofstream(bf16) << shown.out;
    for (const char* cap : kCaps) {
      SCOPED_TRACE(cap);
      const Result a = run_burnmark("run " + f32.string(), std::string(cap) + " " + backends);
      EXPECT_EQ(a.status, 0) << a.out << a.err;
      EXPECT_NE(a.out.find("result=agree"), std::string::npos) << a.out;
      if (runs_everywhere) EXPECT_NE(a.out.find("compared=1"), std::string::npos) << a.out;
      const Result b = run_burnmark("run " + bf16.string(), std::string(cap) + " " + backends);
      EXPECT_TRUE(b.status == 0 || b.status == 1) << b.status << "\n" << b.out << b.err;
      EXPECT_NE(b.out.find("VERDICT"), std::string::npos) << b.out;
    }
  }
}
