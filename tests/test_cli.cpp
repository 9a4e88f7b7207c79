// `burnmark` as a user runs it (a child process with a controlled environment): exit codes,
// one-line errors, text round trips, raw fuzzer inputs; and the BACKENDS registry directly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/config/config.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "cli_common.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;

namespace {

struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The test's own files: one directory, made once (scratch_dir.h removes it at exit).
fs::path cli_dir() {
  static const fs::path dir = burnmark::testing::scratch_dir("cli");
  return dir;
}

// Every knob is cleared so the caller's environment cannot leak in; `env` then sets some.
Result invoke(const std::string& args, const std::string& env = "") {
  const fs::path dir = cli_dir();
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string cmd =
      "env -u BACKENDS -u MODE -u MAX_LEAVES -u MIN_OPS -u FUZZ_MIN_DIM -u FUZZ_MAX_DIM "
      "-u BURNMARK_TOLERANCE -u BURNMARK_SPECIAL_RATE -u BURNMARK_THREADS -u BURNMARK_OPS " +
      env + " " BURNMARK_CLI_PATH " " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(cmd.c_str());
  Result r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s)
    n += c == '\n';
  return n;
}

std::vector<fs::path> corpus_programs() {
  std::vector<fs::path> files;
  for (const auto& e :
       fs::directory_iterator(fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "programs"))
    if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

fs::path write_bytes(const std::string& name, const std::vector<std::uint8_t>& bytes) {
  const fs::path p = cli_dir() / name;
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return p;
}

std::vector<std::uint8_t> random_bytes(std::uint32_t seed, std::size_t n) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> b(n);
  for (auto& x : b)
    x = static_cast<std::uint8_t>(rng());
  return b;
}

} // namespace

TEST(Cli, RunAgreesOnEveryCorpusProgram) {
  const auto files = corpus_programs();
  ASSERT_FALSE(files.empty());
  for (const fs::path& f : files) {
    const Result r = invoke("run " + f.string(), "BACKENDS=ref,libtorch");
    EXPECT_EQ(r.status, 0) << f << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("result=agree"), std::string::npos) << f;
    EXPECT_NE(r.out.find("backend=libtorch status=ok"), std::string::npos) << f << "\n" << r.out;
  }
}

TEST(Cli, BadKnobIsOneLineAndExitTwo) {
  Result r = invoke("run " + corpus_programs().front().string(), "BACKENDS=ref,xyz");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(r.err.starts_with(
      "burnmark: BACKENDS: unknown backend 'xyz' (valid: ref, libtorch, "
      "libtorch-strided, libtorch-inplace, libtorch-fwd-over-rev, libtorch-jit, libtorch-nnc, "
      "libtorch-scalar, libtorch-threads, all, torch-eager-py, torch-compile, jax, a plugin "
      "name/path, "
      "or "
      "child:ENTRY)"))
      << r.err;
  EXPECT_EQ(r.out, "");

  r = invoke("run " + corpus_programs().front().string(), "BACKENDS=ref,ref");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;

  r = invoke("show " + corpus_programs().front().string(), "MODE=sometimes");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "burnmark: MODE: unknown mode 'sometimes' (valid: panic, continuous)\n");
}

TEST(Cli, ShowRoundTripsText) {
  for (const fs::path& f : corpus_programs()) {
    const Result r = invoke("show " + f.string());
    ASSERT_EQ(r.status, 0) << f << r.err;
    const ParseResult original = parse_program(slurp(f));
    ASSERT_TRUE(original.ok()) << original.error();
    const ParseResult shown = parse_program(r.out);
    ASSERT_TRUE(shown.ok()) << shown.error();
    EXPECT_EQ(shown.program(), original.program()) << f;
    EXPECT_EQ(r.out, to_text(original.program()));
  }
}

TEST(Cli, RawBytesDecodeWithTheGenerator) {
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    const auto bytes = random_bytes(seed, 64 * seed);
    const fs::path file = write_bytes("raw" + std::to_string(seed), bytes);
    const Result shown = invoke("show " + file.string());
    ASSERT_EQ(shown.status, 0) << shown.err;
    EXPECT_EQ(shown.out, to_text(generate(bytes, GeneratorOptions{})));

    const Result run = invoke("run " + file.string(), "BACKENDS=ref,libtorch");
    EXPECT_TRUE(run.status == 0 || run.status == 1)
        << run.err; // bytes are arbitrary: no claim of agreement
    EXPECT_NE(run.out.find("VERDICT reference=ref compared="), std::string::npos) << run.out;
  }
  // The generator knobs apply to raw inputs: MAX_LEAVES=1 leaves exactly one leaf.
  const fs::path file = write_bytes("raw_leaves", random_bytes(99, 512));
  GeneratorOptions one;
  one.max_leaves = 1;
  EXPECT_EQ(invoke("show " + file.string(), "MAX_LEAVES=1").out,
            to_text(generate(random_bytes(99, 512), one)));
}

TEST(Cli, EncodeThenShowGivesBackTheProgram) {
  for (const fs::path& f : corpus_programs()) {
    const fs::path bytes = cli_dir() / (f.stem().string() + ".bin");
    const Result enc = invoke("encode " + f.string() + " " + bytes.string());
    ASSERT_EQ(enc.status, 0) << f << enc.err;
    const std::string raw = slurp(bytes);
    EXPECT_FALSE(
        cli::looks_like_text({reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size()}));
    const Result shown = invoke("show " + bytes.string());
    EXPECT_EQ(shown.out, to_text(parse_program(slurp(f)).program())) << f;
  }
}

TEST(Cli, UsageAndInputErrors) {
  Result r = invoke("");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("usage: burnmark"), std::string::npos);

  r = invoke("--help");
  EXPECT_EQ(r.status, 0);
  for (const char* word :
       {"show", "run", "encode", "BACKENDS", "MODE", "MAX_LEAVES", "BURNMARK_TOLERANCE"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;

  r = invoke("frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "burnmark: unknown command 'frobnicate' (run 'burnmark --help' for the list)\n");

  r = invoke("show /nonexistent/file");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "burnmark: /nonexistent/file: cannot read: No such file or directory\n");

  r = invoke("show");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1u);

  const fs::path bad = cli_dir() / "bad.txt";
  std::ofstream(bad)
      << "# burnmark program v1\n%0 = leaf f32[2] [1, 2]\n%1 = frob %0 : f32[2]\nroot %1\n";
  r = invoke("run " + bad.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("line 3"), std::string::npos) << r.err;
}

TEST(Cli, TextDetection) {
  auto text = [](std::string_view s) {
    return cli::looks_like_text({reinterpret_cast<const std::uint8_t*>(s.data()), s.size()});
  };
  EXPECT_TRUE(text("# burnmark program v1\n%0 = leaf f32[1] [1]\nroot %0\n"));
  EXPECT_TRUE(text("# a note\n\n%0 = leaf f32[1] [1]\n"));
  EXPECT_TRUE(text("%0 = leaf f32[1] [1]\n"));
  EXPECT_FALSE(text("\x01\x02%0 ="));
  EXPECT_FALSE(text("# comment only\n"));
  EXPECT_FALSE(text(""));
}

#ifdef BURNMARK_TEST_BAD_PLUGIN
TEST(Cli, RunExitsOneOnADivergence) {
  // The fixture plugin answers a program whose root is an add with a root of shape [1].
  const fs::path prog = cli_dir() / "add_root.txt";
  std::ofstream(prog)
      << "# burnmark program v1\n%0 = leaf f32[3] [1, 2, 3]\n%1 = add %0, %0 : f32[3]\nroot %1\n";
  const Result r = invoke("run " + prog.string(), "BACKENDS=ref," BURNMARK_TEST_BAD_PLUGIN);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DIVERGENCE backend="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result=diverge"), std::string::npos) << r.out;
}
#endif

#ifdef BURNMARK_TEST_MISBEHAVING_PLUGIN
TEST(Cli, APluginDyingInProcessIsNamedAndTheStatusIsNeverAgreement) {
  // The fixture's first leaf value picks: 13 segfault, 14 exit(0), 16 abort().
  for (const auto& [trigger, says] :
       {std::pair{13, "died of SIGSEGV"}, std::pair{14, "called exit()"},
        std::pair{16, "aborted (SIGABRT)"}}) {
    const fs::path prog = cli_dir() / fmt::format("dies_{}.txt", trigger);
    std::ofstream(prog) << fmt::format("%0 = leaf f32[2] [{}, 1]\n%1 = neg %0 : f32[2]\n", trigger);
    const Result r =
        invoke("run " + prog.string(), "BACKENDS=ref," BURNMARK_TEST_MISBEHAVING_PLUGIN);
    EXPECT_NE(r.status, 0) << trigger << r.err;
    EXPECT_NE(r.status, 1) << "not a divergence: " << trigger;
    EXPECT_NE(r.err.find(fmt::format("burnmark: backend 'misbehaving' {}", says)),
              std::string::npos)
        << trigger << ": " << r.err;
    EXPECT_NE(r.err.find("child:misbehaving"), std::string::npos) << r.err;
  }
  // Outside a backend nothing changes: an agreeing run still exits 0 with no such line.
  const Result fine = invoke("run " + corpus_programs().front().string(), "BACKENDS=ref,libtorch");
  EXPECT_EQ(fine.status, 0) << fine.err;
  EXPECT_EQ(fine.err.find("burnmark: backend"), std::string::npos) << fine.err;
}
#endif

TEST(Registry, BuiltinsAllAndErrors) {
  auto names = [](BackendsResult r) {
    std::vector<std::string> n;
    if (!r.ok()) return std::vector<std::string>{"error: " + r.error()};
    for (const auto& b : r.take())
      n.push_back(b->name());
    return n;
  };
  EXPECT_EQ(names(make_backends("ref,libtorch", {})),
            (std::vector<std::string>{"ref", "libtorch"}));
  EXPECT_EQ(names(make_backends(" libtorch , ref ", {})),
            (std::vector<std::string>{"libtorch", "ref"}));
  EXPECT_EQ(names(make_backends("all", {})),
            (std::vector<std::string>{"ref", "libtorch", "libtorch-strided", "libtorch-inplace",
                                      "libtorch-fwd-over-rev", "libtorch-jit", "libtorch-nnc",
                                      "libtorch-scalar", "libtorch-threads"}));

  BackendsResult dup = make_backends("ref,all", {});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error(),
            "BACKENDS: duplicate backend 'ref' in 'ref,all' (each backend may appear once)");
  BackendsResult empty = make_backends("ref,,libtorch", {});
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(empty.error().starts_with("BACKENDS: empty entry in 'ref,,libtorch'"))
      << empty.error();
  BackendsResult unknown = make_backends("ref,xyz", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(unknown.error().starts_with(
      "BACKENDS: unknown backend 'xyz' (valid: ref, libtorch, libtorch-strided, libtorch-inplace, "
      "libtorch-fwd-over-rev, libtorch-jit, libtorch-nnc, libtorch-scalar, libtorch-threads, all, "
      "torch-eager-py, torch-compile, jax, a plugin name/path, or "
      "child:ENTRY)"))
      << unknown.error();
  EXPECT_EQ(unknown.error().find('\n'), std::string::npos);
}

TEST(Cli, ADirectoryAFifoOrADeviceIsRefusedWithOneLineAndNeverBlocks) {
  const fs::path dir = burnmark::testing::scratch_dir("inputs");
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const char* verb : {"show", "run", "minimize", "repro --lang python"})
    for (const std::string& path : {dir.string(), fifo.string(), std::string("/dev/zero")}) {
      const Result r = invoke(std::string(verb) + " " + path);
      EXPECT_EQ(r.status, 2) << verb << " " << path;
      EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
      EXPECT_NE(r.err.find(path + ": is "), std::string::npos) << r.err;
    }
  fs::remove_all(dir);
}

TEST(Cli, AFifoOrADeviceAsAPluginPathIsRefusedWithoutOpeningIt) {
  // dlopen opens its file for reading: a FIFO in BACKENDS hung `burnmark run` (issue 31).
  const fs::path dir = burnmark::testing::scratch_dir("fifo_plugin");
  const fs::path fifo = dir / "plugin.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/zero"), dir.string()}) {
    const Result r = invoke("run " + corpus_programs().front().string(), "BACKENDS=ref," + path);
    EXPECT_EQ(r.status, 2) << path;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("burnmark: BACKENDS: ")) << r.err;
    EXPECT_NE(r.err.find("plugin '" + path + "': is a "), std::string::npos) << r.err;
  }
  fs::remove_all(dir);
}

TEST(Cli, AnEmptyKnobIsAnErrorNotTheDefault) {
  for (const std::string knob : {"MODE", "BACKENDS", "MAX_LEAVES"}) {
    const Result r = invoke("show " + corpus_programs().front().string(), knob + "=");
    EXPECT_EQ(r.status, 2) << knob;
    EXPECT_TRUE(r.err.starts_with("burnmark: " + knob + ": set but empty (unset it for the "))
        << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

std::size_t widest_line(const std::string& s) {
  std::size_t widest = 0, start = 0;
  while (start < s.size()) {
    const std::size_t end = std::min(s.find('\n', start), s.size());
    widest = std::max(widest, end - start);
    start = end + 1;
  }
  return widest;
}

constexpr const char* kVerbs[] = {"show",  "run",   "encode", "minimize", "triage",
                                  "sweep", "repro", "bench",  "campaign", "report"};

TEST(Cli, EveryVerbAnswersHelpWithItsUsageAnExampleWithin100Columns) {
  for (const char* verb : kVerbs)
    for (const char* flag : {"--help", "-h"}) {
      const Result r = invoke(std::string(verb) + " " + flag);
      EXPECT_EQ(r.status, 0) << verb << " " << flag << ": " << r.err;
      EXPECT_EQ(r.out.rfind(std::string("usage: burnmark ") + verb + " ", 0), 0u) << r.out;
      EXPECT_NE(r.out.find("Example"), std::string::npos) << r.out;
      // An example is a command line of this verb.
      EXPECT_NE(r.out.find(std::string("  burnmark ") + verb + " "), std::string::npos) << r.out;
      EXPECT_LE(widest_line(r.out), 100u) << verb << "\n" << r.out;
      EXPECT_EQ(r.err, "");
    }
}

TEST(Cli, TopLevelHelpListsEveryVerbWithin100ColumnsAndTheKnobsHaveTheirOwnHelp) {
  const Result r = invoke("--help");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LE(widest_line(r.out), 100u) << r.out;
  for (const char* verb : kVerbs)
    EXPECT_NE(r.out.find(std::string("\n  ") + verb + " "), std::string::npos) << verb;
  EXPECT_NE(r.out.find("--help-env"), std::string::npos) << r.out;
  // The knobs' help is made from the knob table: every knob, each line within 100 columns.
  const Result env = invoke("--help-env");
  EXPECT_EQ(env.status, 0) << env.err;
  EXPECT_LE(widest_line(env.out), 100u) << env.out;
  for (const KnobInfo& k : knob_table())
    EXPECT_NE(env.out.find("\n  " + std::string(k.env) + "  default "), std::string::npos) << k.env;
}

TEST(Cli, VersionNamesBurnMarkAndTheLibTorchItWasBuiltAgainst) {
  const Result r = invoke("--version");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, fmt::format("burnmark {} (built against LibTorch {})\n",
                               BURNMARK_TEST_PROJECT_VERSION, libtorch_release()));
}

TEST(Cli, AnOptionTakesItsValueAfterEqualsOrAsTheNextArgument) {
  const fs::path f = corpus_programs().front();
  const std::string bf16 =
      to_text(with_float_dtype(parse_program(slurp(f)).program(), FloatDType::BF16));
  for (const std::string& form : {"--dtype=bf16 ", "--dtype bf16 "}) {
    const Result r = invoke("show " + form + f.string());
    EXPECT_EQ(r.status, 0) << form << r.err;
    EXPECT_EQ(r.out, bf16) << form;
  }
  // sign(NaN) is 0 in LibTorch, NaN by C99 (both LibTorch releases): a divergence to reproduce.
  const fs::path sign = cli_dir() / "sign_nan.txt";
  std::ofstream(sign) << "%0 = leaf f32[2] [nan, 1]\n%1 = sign %0 : f32[2]\nroot %1\n";
  std::string first;
  for (const std::string& form : {"--lang=python", "--lang python"}) {
    const Result r =
        invoke("repro " + form + " --no-minimize " + sign.string(), "BACKENDS=ref,libtorch");
    EXPECT_EQ(r.status, 0) << form << r.err;
    EXPECT_NE(r.out.find("import torch"), std::string::npos) << form << r.out;
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first) << form;
  }
  const Result cpp =
      invoke("repro --lang=cpp --no-minimize " + sign.string(), "BACKENDS=ref,libtorch");
  EXPECT_EQ(cpp.status, 0) << cpp.err;
  EXPECT_NE(cpp.out.find("#include <torch/"), std::string::npos) << cpp.out;
}

// `--path inplace` runs each op as libtorch-inplace does (sign_ on register 1's view), and a
// finding only libtorch-inplace shows takes that path unprompted: masked_scatter_ into a
// transposed view (bugs.md, libtorch-masked-scatter-noncontiguous-self) diverges on LibTorch
// 1.13.1 only; a fixed release has nothing to reproduce.
TEST(Cli, ReproTakesTheInplacePathForALibTorchInplaceFinding) {
  const fs::path sign = cli_dir() / "sign_nan_inplace.txt";
  std::ofstream(sign) << "%0 = leaf f32[2] [nan, 1]\n%1 = sign %0 : f32[2]\nroot %1\n";
  const Result forced = invoke("repro --lang python --path inplace --no-minimize " + sign.string(),
                               "BACKENDS=ref,libtorch");
  EXPECT_EQ(forced.status, 0) << forced.err;
  EXPECT_NE(forced.out.find("    r1 = inplace_destination(r0, 1)"), std::string::npos)
      << forced.out;
  EXPECT_NE(forced.out.find("    r1.sign_()\n"), std::string::npos) << forced.out;
  const std::string bug = std::string(BURNMARK_TEST_SOURCE_DIR) +
                          "/corpus/bugs/libtorch-masked-scatter-noncontiguous-self.txt";
  const Result chosen =
      invoke("repro --lang python --no-minimize " + bug, "BACKENDS=ref,libtorch-inplace");
  if (libtorch_release().starts_with("1.13")) {
    EXPECT_EQ(chosen.status, 0) << chosen.err;
    EXPECT_NE(chosen.out.find("    r5.masked_scatter_(r3, r4)\n"), std::string::npos) << chosen.out;
    EXPECT_EQ(chosen.err.find("no reproducer path"), std::string::npos) << chosen.err;
  } else {
    EXPECT_NE(chosen.err.find("the backends agree"), std::string::npos) << chosen.err;
  }
}

// Each bad command line is one "burnmark: ..." line naming the argument, exit 2, nothing run.
TEST(Cli, ABadCommandLineIsOneLineNamingTheArgumentAndExitTwo) {
  const std::string file = corpus_programs().front().string();
  for (const auto& [args, named] : std::vector<std::pair<std::string, std::string>>{
           {"show --dtype", "--dtype"},
           {"show --dtype " + file, "--dtype"}, // the value forgotten: FILE is not read as one
           {"show --dtype=f8 " + file, "unknown dtype 'f8'"},
           {"show", "FILE"},
           {"show --frobnicate " + file, "--frobnicate"},
           {"show " + file + " extra", "extra"},
           {"run --forward-only", "FILE"},
           {"encode " + file, "OUT"},
           {"repro " + file, "--lang"},
           {"repro --lang=rust " + file, "unknown language 'rust'"},
           {"repro --path=gpu --lang cpp " + file, "unknown path 'gpu'"},
           {"triage --known", "--known"},
           {"bench --seconds", "--seconds"},
           {"campaign --time abc", "--time"},
           {"campaign --workers=-1", "--workers"},
           {"campaign --min-free x", "--min-free"},
           {"campaign --target fuzz_nothing", "unknown target 'fuzz_nothing'"},
           {"campaign --time", "--time"},
           {"--frobnicate", "--frobnicate"},
           {"frobnicate", "frobnicate"}}) {
    const Result r = invoke(args);
    EXPECT_EQ(r.status, 2) << args << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
    EXPECT_TRUE(r.err.starts_with("burnmark: ")) << args << ": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("cannot read"), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.out, "") << args;
  }
}

TEST(Cli, CampaignHelpListsEveryOptionTheCampaignReads) {
  const Result r = invoke("campaign --help");
  EXPECT_EQ(r.status, 0) << r.err;
  for (const char* option : {"--target", "--time", "--workers", "--out", "--fuzzer", "--seeds",
                             "--known", "--min-free", "[-- LIBFUZZER_ARGS...]"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option << " missing in\n" << r.out;
}

TEST(Cli, BenchRunsEveryBackendAloneThenTogether) {
  const std::string corpus = std::string(BURNMARK_TEST_SOURCE_DIR) + "/corpus/programs";
  const Result r = invoke("bench --seconds 0.2 " + corpus, "BACKENDS=ref,libtorch");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# programs/s over "), std::string::npos) << r.out;
  for (const char* line : {"\nref ", "\nlibtorch ", "\nref,libtorch with the oracle "})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << " missing in\n" << r.out;
  EXPECT_EQ(invoke("bench --seconds 0 " + corpus).status, 2);
  EXPECT_EQ(invoke("bench /nonexistent").status, 2);
  EXPECT_EQ(invoke("bench").status, 2);
}

#ifdef BURNMARK_TEST_EXAMPLE_PLUGIN
TEST(Cli, BenchRatesABackendOnlyOverTheProgramsItRunsAndSaysHowManyItSkipped) {
  const fs::path dir = cli_dir() / "bench_skips";
  fs::create_directories(dir);
  std::ofstream(dir / "a_add.txt")
      << "%0 = leaf f32[2] [1, 2]\n%1 = add %0, %0 : f32[2]\nroot %1\n";
  std::ofstream(dir / "b_sin.txt") << "%0 = leaf f32[2] [1, 2]\n%1 = sin %0 : f32[2]\nroot %1\n";
  const Result r =
      invoke("bench --seconds 0.1 " + dir.string(), "BACKENDS=ref," BURNMARK_TEST_EXAMPLE_PLUGIN);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto line = [&](const std::string& start) {
    const std::size_t at = r.out.find("\n" + start);
    return at == std::string::npos ? std::string()
                                   : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_EQ(line("ref ").find("skipped"), std::string::npos) << r.out;
  EXPECT_NE(line("example ").find("skipped 1 of 2"), std::string::npos) << r.out;
  EXPECT_NE(line("ref," BURNMARK_TEST_EXAMPLE_PLUGIN " with the oracle").find("skipped 1 of 2"),
            std::string::npos)
      << r.out;
  // Nothing it runs: no rate at all rather than a rate of skips.
  fs::remove(dir / "a_add.txt");
  const Result none =
      invoke("bench --seconds 0.1 " + dir.string(), "BACKENDS=ref," BURNMARK_TEST_EXAMPLE_PLUGIN);
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find(" - skipped 1 of 1"), std::string::npos) << none.out;
}

TEST(Cli, RunDecodesARawInputAsAFuzzTargetWithTheSameBackendsDoes) {
  // Bytes whose program, decoded with every op, uses an op the example plugin lacks.
  std::mt19937 rng(3);
  std::vector<std::uint8_t> bytes;
  for (int tries = 0; tries < 1000; ++tries) {
    bytes.assign(120, 0);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    bool foreign = false;
    for (const Stmt& s : generate(bytes, GeneratorOptions{}).stmts)
      foreign |= s.kind == StmtKind::Op && s.instr.op != Op::Add && s.instr.op != Op::Sub &&
                 s.instr.op != Op::Mul && s.instr.op != Op::Neg && s.instr.op != Op::Relu &&
                 s.instr.op != Op::Exp;
    if (foreign) break;
  }
  const fs::path file = cli_dir() / "raw_for_example";
  ASSERT_TRUE(cli::write_file(file.string(), bytes));
  const std::string env = "BACKENDS=ref," BURNMARK_TEST_EXAMPLE_PLUGIN;
  const Result all = invoke("run " + file.string(), env + " BURNMARK_OPS=all");
  EXPECT_NE(all.out.find("SKIPPED backend=example"), std::string::npos) << all.out;
  const Result autos = invoke("run " + file.string(), env);
  EXPECT_EQ(autos.status, 0) << autos.out << autos.err;
  EXPECT_EQ(autos.out.find("SKIPPED"), std::string::npos) << autos.out;
}
#endif

TEST(Cli, CampaignRefusesMissingSeedsTooManyWorkersAndAFuzzerThatRunsNothing) {
  const fs::path out = burnmark::testing::scratch_root() / "campaign";
  const Result seeds = invoke("campaign --seeds /nonexistent --time 1 --out " + out.string());
  EXPECT_EQ(seeds.status, 2);
  EXPECT_EQ(seeds.err, "burnmark: campaign: --seeds /nonexistent: not a directory\n");
  const Result workers = invoke("campaign --workers 100000 --time 1 --out " + out.string());
  EXPECT_EQ(workers.status, 2);
  EXPECT_NE(workers.err.find("--workers 100000 is more than"), std::string::npos) << workers.err;
  const Result nothing = invoke("campaign --fuzzer /bin/true --time 1 --out " + out.string());
  EXPECT_EQ(nothing.status, 2) << nothing.err;
  EXPECT_NE(nothing.err.find("/bin/true reported no executions"), std::string::npos) << nothing.err;
  // More free space asked for than any disk has: refused before the fuzzer starts.
  fs::remove_all(out);
  const Result full =
      invoke("campaign --fuzzer /bin/true --min-free 2000000000 --time 1 --out " + out.string());
  EXPECT_EQ(full.status, 2) << full.err;
  EXPECT_NE(full.err.find("\nburnmark: campaign: " + out.string() + ": only "), std::string::npos)
      << full.err;
  EXPECT_NE(full.err.find("MB free, below --min-free 2000000000 MB\n"), std::string::npos)
      << full.err;
  EXPECT_FALSE(fs::exists(out / ".scratch" / "fuzzer.log")) << "the fuzzer was started";
  fs::remove_all(out);
}

// `burnmark triage` of a campaign's directory reads the inputs saved one folder per signature
// (and nothing else there), and prints each root cause before its signatures, then the fold.
TEST(Cli, TriageOfACampaignDirectoryGroupsItsInputsByRootCause) {
  const fs::path dir = cli_dir() / "campaign";
  fs::remove_all(dir);
  fs::create_directories(dir / "aaaaaaaaaaaa");
  fs::create_directories(dir / "bbbbbbbbbbbb");
  std::ofstream(dir / "ledger.json") << "{}\n";
  std::ofstream(dir / "aaaaaaaaaaaa" / "minimal.txt") << "not an input\n";
  // sign(NaN) = 0 reached two ways: alone, and into mul (LibTorch 1.13.1 and 2.15 alike).
  std::ofstream(dir / "aaaaaaaaaaaa" / "input-1.bin")
      << "%0 = leaf f32[2] [nan, 1]\n%1 = sign %0 : f32[2]\nroot %1\n";
  std::ofstream(dir / "bbbbbbbbbbbb" / "input-2.bin")
      << "%0 = leaf f32[2] [nan, 1]\n%1 = leaf f32[2] [2, 3]\n%2 = sign %0 : f32[2]\n"
         "%3 = mul %2, %1 : f32[2]\nroot %3\n";
  std::ofstream(cli_dir() / "empty_known.txt") << "# none\n";
  const Result r =
      invoke("triage --known " + (cli_dir() / "empty_known.txt").string() + " " + dir.string(),
             "BACKENDS=ref,libtorch");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("TRIAGE files=2 diverging=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FOLD signatures="), std::string::npos) << r.out;
  const std::size_t root = r.out.find("ROOT ");
  ASSERT_NE(root, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("culprit=sign trigger=nan", root), std::string::npos) << r.out;
  EXPECT_LT(root, r.out.find("  BUG ")) << r.out;
}
