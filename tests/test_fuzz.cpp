// The fuzz targets run as libFuzzer runs them: the seed corpus passes cleanly, a finding in
// panic mode aborts after writing a crash artifact that `burnmark run` replays, continuous mode
// keeps going with saved findings, and a bad knob is one line and exit 2 before any fuzzing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "scratch_dir.h"

using namespace std::string_literals;
namespace fs = std::filesystem;
using burnmark::testing::scratch_dir;

namespace {

struct Result {
  int status = -1;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result run(const std::string& env, const std::string& cmd, const fs::path& dir) {
  const std::string full =
      "cd " + dir.string() +
      " && env -u BACKENDS -u MODE -u MAX_LEAVES -u MIN_OPS -u FUZZ_MIN_DIM -u FUZZ_MAX_DIM "
      "-u BURNMARK_TOLERANCE -u BURNMARK_SPECIAL_RATE -u BURNMARK_FINDINGS_DIR -u "
      "BURNMARK_EDGE_RATE "
      "-u BURNMARK_CONVENTION_FINDINGS -u BURNMARK_KNOWN_BUGS -u BURNMARK_TANGENTS "
      "-u BURNMARK_DTYPES -u BURNMARK_OPS " +
      env + " " + cmd + " >stdout 2>stderr";
  const int raw = std::system(full.c_str());
  return Result{WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(dir / "stderr")};
}

// A private copy: libFuzzer adds new inputs to its first corpus directory.
fs::path copy_corpus(const fs::path& dir) {
  const fs::path corpus = dir / "corpus";
  fs::create_directories(corpus);
  for (const auto& e :
       fs::directory_iterator(fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "fuzz_autograd"))
    fs::copy_file(e.path(), corpus / e.path().filename());
  return corpus;
}

} // namespace

TEST(Fuzz, SeedCorpusRunsCleanOnBothTargets) {
  for (const char* target : {BURNMARK_FUZZ_AUTOGRAD, BURNMARK_FUZZ_TENSOR_OPS}) {
    // The seeds themselves agree: libFuzzer given files runs each once, without mutating.
    const fs::path dir = scratch_dir("clean");
    const fs::path corpus = copy_corpus(dir);
    std::string seeds;
    for (const auto& e : fs::directory_iterator(corpus))
      seeds += " " + e.path().string();
    const Result r = run("BACKENDS=ref,libtorch", target + seeds, dir);
    EXPECT_EQ(r.status, 0) << target << "\n" << r.err;
    EXPECT_EQ(r.err.find("DIVERGENCE"), std::string::npos) << r.err;
  }
}

TEST(Fuzz, SeedCorpusRunsCleanInForwardMode) {
  // The same seeds with tangents compared too. One seed's scatter_reduce(prod) has LibTorch's
  // zero tangent (bugs.md, libtorch-scatter-reduce-prod-jvp-zero): the known list knows it.
  const fs::path dir = scratch_dir("clean_forward");
  const fs::path corpus = copy_corpus(dir);
  std::string seeds;
  for (const auto& e : fs::directory_iterator(corpus))
    seeds += " " + e.path().string();
  const std::string known =
      (fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "known_bugs.txt").string();
  const Result r = run("BACKENDS=ref,libtorch BURNMARK_TANGENTS=1 BURNMARK_KNOWN_BUGS=" + known,
                       BURNMARK_FUZZ_AUTOGRAD + seeds, dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err.find("DIVERGENCE"), std::string::npos) << r.err;
}

// The numbers after `key=` in the last SUMMARY line of `err`, or -1 when there is none.
long long last_summary_count(const std::string& err, const std::string& key) {
  const std::size_t line = err.rfind("SUMMARY target=");
  if (line == std::string::npos) return -1;
  const std::size_t at = err.find(" " + key + "=", line);
  if (at == std::string::npos || at > err.find('\n', line)) return -1;
  return std::stoll(err.substr(at + key.size() + 2));
}

TEST(Fuzz, TheFinalSummaryCountsTheKnownBugFiltersRunsAndARepeatCostsNone) {
  // The forward-mode seeds, where one seed shows a listed LibTorch bug (see above): run once,
  // then with every seed given twice in a row. libFuzzer given files runs each once, in order.
  const fs::path dir = scratch_dir("filter_cost");
  const fs::path corpus = copy_corpus(dir);
  std::vector<fs::path> seeds(fs::directory_iterator(corpus), fs::directory_iterator{});
  std::sort(seeds.begin(), seeds.end());
  std::string once, twice;
  for (const fs::path& seed : seeds) {
    once += " " + seed.string();
    twice += " " + seed.string() + " " + seed.string();
  }
  const std::string env =
      "BACKENDS=ref,libtorch BURNMARK_TANGENTS=1 MODE=continuous BURNMARK_SUMMARY_EVERY=1000000 "
      "BURNMARK_KNOWN_BUGS=" +
      (fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "known_bugs.txt").string();
  const Result r1 = run(env, BURNMARK_FUZZ_AUTOGRAD + once, dir);
  const Result r2 = run(env, BURNMARK_FUZZ_AUTOGRAD + twice, dir);
  ASSERT_EQ(r1.status, 0) << r1.err;
  ASSERT_EQ(r2.status, 0) << r2.err;
  // The final line is there although no finding reached BURNMARK_SUMMARY_EVERY.
  const auto n = static_cast<long long>(seeds.size());
  EXPECT_EQ(last_summary_count(r1.err, "inputs"), n) << r1.err;
  EXPECT_EQ(last_summary_count(r2.err, "inputs"), 2 * n) << r2.err;
  const long long suppressed = last_summary_count(r1.err, "suppressed");
  ASSERT_GE(suppressed, 1) << r1.err;
  EXPECT_EQ(last_summary_count(r1.err, "findings"), 0) << r1.err;
  EXPECT_EQ(last_summary_count(r2.err, "suppressed"), 2 * suppressed) << r2.err;
  // The filter ran programs for the known seed; its repeat is answered by the memo alone.
  const long long runs = last_summary_count(r1.err, "filter_runs");
  EXPECT_GT(runs, 0) << r1.err;
  EXPECT_EQ(last_summary_count(r2.err, "filter_runs"), runs) << r2.err;
  EXPECT_GT(last_summary_count(r2.err, "filter_memo"), last_summary_count(r1.err, "filter_memo"))
      << r2.err;
}

TEST(Fuzz, MutatedSeedsRunToTheEndInContinuousMode) {
  // Mutations reach LibTorch's real bugs (bugs.md), so they may diverge; what must hold is that
  // the target keeps going, skips what is known, and finishes its runs.
  for (const char* target : {BURNMARK_FUZZ_AUTOGRAD, BURNMARK_FUZZ_TENSOR_OPS}) {
    const fs::path dir = scratch_dir("mutated");
    const fs::path corpus = copy_corpus(dir);
    const std::string known =
        (fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "known_bugs.txt").string();
    const Result r = run("BACKENDS=ref,libtorch MODE=continuous BURNMARK_KNOWN_BUGS=" + known,
                         target + " -runs=300 -seed=1 "s + corpus.string(), dir);
    EXPECT_EQ(r.status, 0) << target << "\n" << r.err;
    EXPECT_NE(r.err.find("Done 300 runs"), std::string::npos) << r.err;
  }
}

// BURNMARK_VALUE_MUTATIONS=100: every custom mutation the mutator can make value-only is one (a
// program without float leaves has none, and takes the usual draw), and the crossover always
// declines; =0 makes none. The counts are the mutator's exit line.
TEST(Fuzz, ValueMutationShareIsTheMutatorsFirstDraw) {
  for (const char* share : {"100", "0"}) {
    const fs::path dir = scratch_dir(std::string("values") + share);
    const fs::path corpus = copy_corpus(dir);
    const Result r = run("BACKENDS=ref MODE=continuous BURNMARK_MUTATOR=structure "
                         "BURNMARK_VALUE_MUTATIONS="s +
                             share,
                         BURNMARK_FUZZ_AUTOGRAD " -runs=200 -seed=3 "s + corpus.string(), dir);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::size_t at = r.err.find("burnmark: mutator=structure value-only=");
    ASSERT_NE(at, std::string::npos) << r.err;
    unsigned long long values = 0, structure = 0, crossover = 0;
    ASSERT_EQ(std::sscanf(r.err.c_str() + at,
                          "burnmark: mutator=structure value-only=%llu (share %*d%%) "
                          "structure=%llu (fell back to bytes: %*llu) crossover=%llu",
                          &values, &structure, &crossover),
              3)
        << r.err.substr(at);
    EXPECT_NE(r.err.find("(share "s + share + "%)"), std::string::npos) << r.err.substr(at);
    if (share == "100"s) {
      EXPECT_GT(values, 0u);
      EXPECT_EQ(crossover, 0u) << "the crossover declines every call";
      EXPECT_GT(values, 10 * structure) << "structural only for programs without float leaves";
    } else {
      EXPECT_EQ(values, 0u);
      EXPECT_GT(structure, 0u);
    }
  }
}

TEST(Fuzz, BadKnobStopsAtStartWithOneLine) {
  const fs::path dir = scratch_dir("badknob");
  const Result r = run("MAX_LEAVES=12", BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "burnmark: MAX_LEAVES: '12' out of range (valid: 1..8)\n");
}

TEST(Fuzz, AKnownBugListThatIsNotAFileStopsAtStartWithOneLine) {
  // /dev/zero once never started (it was read until memory ran out).
  const fs::path dir = scratch_dir("knownzero");
  for (const std::string& list : {std::string("/dev/zero"), dir.string()}) {
    const Result r = run("BURNMARK_KNOWN_BUGS=" + list, BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
    EXPECT_EQ(r.status, 2) << list;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find(list + ": is "), std::string::npos) << r.err;
  }
}

TEST(Fuzz, AFindingsDirectoryThatCannotTakeFilesStopsAtStart) {
  // Every finding used to be lost one "cannot write" line at a time, with exit 0.
  const fs::path dir = scratch_dir("findingsdir");
  std::ofstream(dir / "a_file") << "x";
  const Result file = run("MODE=continuous BURNMARK_FINDINGS_DIR=" + (dir / "a_file").string(),
                          BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(file.status, 2);
  EXPECT_NE(file.err.find("is not a directory"), std::string::npos) << file.err;
  // A missing one is created inside a directory that exists ...
  const Result missing = run("MODE=continuous BURNMARK_FINDINGS_DIR=" + (dir / "new").string(),
                             BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(missing.status, 0) << missing.err;
  EXPECT_TRUE(fs::is_directory(dir / "new"));
  // ... but a path whose parent is missing (a typo) is refused, not built (issue 31).
  const Result deep = run("MODE=continuous BURNMARK_FINDINGS_DIR=" + (dir / "nope/sub").string(),
                          BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(deep.status, 2);
  EXPECT_EQ(deep.err, "burnmark: BURNMARK_FINDINGS_DIR: " + (dir / "nope/sub").string() +
                          ": its parent " + (dir / "nope").string() +
                          " is not a directory (create it first)\n");
  EXPECT_FALSE(fs::exists(dir / "nope"));
}

TEST(Fuzz, EveryBadKnobValueStopsAtStartWithOneLineNamingIt) {
  // Issue 31: an empty value once meant the default silently.
  const fs::path dir = scratch_dir("badvalues");
  const std::pair<std::string, std::string> cases[] = {
      {"MODE=", "burnmark: MODE: set but empty (unset it for the default 'panic')\n"},
      {"BACKENDS=",
       "burnmark: BACKENDS: set but empty (unset it for the default 'ref,libtorch')\n"},
      {"MAX_LEAVES=", "burnmark: MAX_LEAVES: set but empty (unset it for the default '4')\n"},
      {"BURNMARK_EDGE_RATE=", "burnmark: BURNMARK_EDGE_RATE: set but empty (unset it for the "
                              "default '0.15')\n"},
      {"BURNMARK_TOLERANCE=lots",
       "burnmark: BURNMARK_TOLERANCE: 'lots' is not a number (valid: 0..1)\n"},
      {"BURNMARK_THREADS=-1", "burnmark: BURNMARK_THREADS: '-1' out of range (valid: 0..1024)\n"},
  };
  for (const auto& [env, line] : cases) {
    const Result r = run(env, BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
    EXPECT_EQ(r.status, 2) << env;
    EXPECT_EQ(r.err, line) << env;
  }
  // An unknown backend names the knob and the entry.
  const Result unknown = run("BACKENDS=ref,nosuch", BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_TRUE(unknown.err.starts_with("burnmark: BACKENDS: unknown backend 'nosuch' ("))
      << unknown.err;
  EXPECT_EQ(unknown.err.find('\n'), unknown.err.size() - 1) << unknown.err;
}

TEST(Fuzz, AFifoOrADeviceAsAPluginPathIsRefusedWithoutOpeningIt) {
  // dlopen opens its file for reading: a FIFO blocked the target until a writer came.
  const fs::path dir = scratch_dir("fifoplugin");
  const fs::path fifo = dir / "plugin.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo.string(), std::string("/dev/zero")}) {
    const Result r =
        run("BACKENDS=ref," + path, "timeout 60 " BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
    EXPECT_EQ(r.status, 2) << path << "\n" << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_NE(r.err.find("plugin '" + path + "': is a "), std::string::npos) << r.err;
  }
}

TEST(Fuzz, TheStartLineNamesTheKnownBugListFoundFromTheBinary) {
  // Run from a directory with no corpus/: the list is found from the binary (a build tree: the
  // checkout's), and the start line says which and how many.
  const fs::path dir = scratch_dir("knownfound");
  const std::string list =
      (fs::path(BURNMARK_TEST_SOURCE_DIR) / "corpus" / "known_bugs.txt").string();
  std::ifstream in(list);
  std::size_t entries = 0;
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++entries;
  }
  ASSERT_GT(entries, 0u);
  const Result r = run("", BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("MODE=panic known-bugs=" + std::to_string(entries) + " from " + list + "\n"),
            std::string::npos)
      << r.err;
  // Set empty: off, and the line says so.
  const Result off = run("BURNMARK_KNOWN_BUGS=", BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_NE(off.err.find("known-bugs=0 (off: BURNMARK_KNOWN_BUGS is empty)\n"), std::string::npos)
      << off.err;
  // Named but missing: an error, not an empty list.
  const Result missing = run("BURNMARK_KNOWN_BUGS=" + (dir / "none.txt").string(),
                             BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err,
            "burnmark: BURNMARK_KNOWN_BUGS: no such file: " + (dir / "none.txt").string() +
                " (unset it for the default list, or set it empty for none)\n");
}

TEST(Fuzz, AKnownBugListThatDoesNotParseNamesTheKnobAndLineWithoutRawBytes) {
  const fs::path dir = scratch_dir("knownbinary");
  const fs::path list = dir / "list.txt";
  std::ofstream(list, std::ios::binary) << "# ok\n\x01\xfe\x1b[2J zz\n";
  const Result r =
      run("BURNMARK_KNOWN_BUGS=" + list.string(), BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "burnmark: BURNMARK_KNOWN_BUGS: " + list.string() +
                       ":2: '\\x01\\xfe\\x1b[2J' is not a 12-digit lowercase hex signature id\n");
}

#ifdef BURNMARK_TEST_BAD_PLUGIN
namespace {
// A seed the fixture plugin handles (root op add), on which it returns a root of shape [1].
fs::path bad_seed(const fs::path& dir) {
  const fs::path corpus = dir / "corpus";
  fs::create_directories(corpus);
  std::ofstream(dir / "add.txt")
      << "# burnmark program v1\n%0 = leaf f32[3] [1, 2, 3]\n%1 = add %0, %0 : f32[3]\nroot %1\n";
  const std::string cmd =
      BURNMARK_CLI_PATH " encode " + (dir / "add.txt").string() + " " + (corpus / "add").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return corpus;
}
} // namespace

TEST(Fuzz, PanicModeWritesAReplayableCrashArtifact) {
  const fs::path dir = scratch_dir("panic");
  const fs::path corpus = bad_seed(dir);
  const fs::path artifacts = dir / "artifacts";
  fs::create_directories(artifacts);
  const Result r = run("BACKENDS=ref," BURNMARK_TEST_BAD_PLUGIN,
                       BURNMARK_FUZZ_AUTOGRAD " -runs=100 -artifact_prefix=" + artifacts.string() +
                           "/ " + corpus.string(),
                       dir);
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("==burnmark== DIVERGENCE in fuzz_autograd"), std::string::npos) << r.err;
  // libFuzzer tries the empty input before the seeds, so the first finding may be either: the
  // report shows whichever program it was, and the artifact must replay to the same verdict.
  EXPECT_NE(r.err.find("# burnmark program v1\n%0 = leaf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("DIVERGENCE backend=bad_result kind="), std::string::npos) << r.err;
  // The end is marked as the expected stop before libFuzzer's trace (issue 31), which follows.
  const std::size_t marker = r.err.find("==burnmark== END OF FINDING: MODE=panic stops here");
  EXPECT_NE(marker, std::string::npos) << r.err;
  EXPECT_GT(r.err.find("deadly signal", marker), marker) << r.err;
  std::vector<fs::path> crashes;
  for (const auto& e : fs::directory_iterator(artifacts))
    if (e.path().filename().string().starts_with("crash-")) crashes.push_back(e.path());
  ASSERT_EQ(crashes.size(), 1u) << r.err;
  const Result replay = run("BACKENDS=ref," BURNMARK_TEST_BAD_PLUGIN,
                            BURNMARK_CLI_PATH " run " + crashes[0].string(), dir);
  EXPECT_EQ(replay.status, 1) << replay.err;
}

TEST(Fuzz, ContinuousModeKeepsGoingAndSavesFindings) {
  const fs::path dir = scratch_dir("continuous");
  const fs::path corpus = bad_seed(dir);
  const fs::path findings = dir / "findings";
  fs::create_directories(findings);
  const Result r = run(
      "MODE=continuous BURNMARK_FULL_REPORTS=1 BURNMARK_SUMMARY_EVERY=1 BURNMARK_FINDINGS_DIR=" +
          findings.string() + " BACKENDS=ref," BURNMARK_TEST_BAD_PLUGIN,
      BURNMARK_FUZZ_AUTOGRAD " -runs=200 -seed=1 " + corpus.string(), dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("Done 200 runs"), std::string::npos) << r.err;
  // Exactly one full report, then summary lines only.
  std::size_t reports = 0;
  for (std::size_t at = 0; (at = r.err.find("==burnmark== DIVERGENCE", at)) != std::string::npos;
       ++at)
    ++reports;
  EXPECT_EQ(reports, 1u);
  EXPECT_NE(r.err.find("SUMMARY target=fuzz_autograd inputs="), std::string::npos) << r.err;
  EXPECT_FALSE(fs::is_empty(findings));
}

TEST(Fuzz, AFindingThatCannotBeWrittenIsCountedAndTheExitStatusSaysSo) {
  // The seed diverges first; a directory where its file goes makes that one write fail (as a
  // full disk would), after the start-up check passed. Findings are named by the FNV-1a hash of
  // their bytes.
  const fs::path dir = scratch_dir("lost");
  const fs::path corpus = bad_seed(dir);
  const fs::path findings = dir / "findings";
  std::uint64_t hash = 0xcbf29ce484222325ull;
  std::ifstream seed(corpus / "add", std::ios::binary);
  for (char c; seed.get(c);)
    hash = (hash ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ull;
  fs::create_directories(findings / fmt::format("finding-{:016x}", hash));
  const Result r =
      // No known-bug list (found from the binary by default): its filter's coverage lets
      // libFuzzer run the seed's bytes again, a second lost write of the same file.
      run("BURNMARK_KNOWN_BUGS= MODE=continuous BURNMARK_SUMMARY_EVERY=1 BURNMARK_FINDINGS_DIR=" +
              findings.string() + " BACKENDS=ref," BURNMARK_TEST_BAD_PLUGIN,
          BURNMARK_FUZZ_AUTOGRAD " -runs=50 -seed=1 " + corpus.string(), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("Done 50 runs"), std::string::npos) << "it kept fuzzing\n" << r.err;
  EXPECT_NE(r.err.find(" lost=1 "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("burnmark: fuzz_autograd: 1 findings could not be written to " +
                       findings.string()),
            std::string::npos)
      << r.err;
}

TEST(Fuzz, ContinuousModeCountsChildCrashesAndGoesOn) {
  // A backend whose child dies on every program: each input is a `crash` divergence, counted in
  // the summaries, and the harness itself runs to the end (the counters once had no slot for the
  // new kinds and overwrote the harness's state).
  const fs::path dir = scratch_dir("child_crash");
  const fs::path corpus = copy_corpus(dir);
  // Each crash restarts the child (a LibTorch load): a few seeds are enough.
  std::vector<fs::path> seeds(fs::directory_iterator(corpus), fs::directory_iterator{});
  std::sort(seeds.begin(), seeds.end());
  for (std::size_t i = 6; i < seeds.size(); ++i)
    fs::remove(seeds[i]);
  const Result r =
      run("MODE=continuous BURNMARK_FULL_REPORTS=0 BURNMARK_SUMMARY_EVERY=1 "
          "BACKENDS=ref,child[BURNMARK_FIXTURE_ALWAYS=segv]:" BURNMARK_TEST_MISBEHAVING_PLUGIN,
          BURNMARK_FUZZ_AUTOGRAD " -runs=12 -seed=1 " + corpus.string(), dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("Done 12 runs"), std::string::npos) << r.err;
  const std::size_t at = r.err.rfind("SUMMARY target=fuzz_autograd");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at, r.err.find('\n', at) - at);
  EXPECT_EQ(line.find(" crash=0 "), std::string::npos) << line;
  EXPECT_NE(line.find(" crash="), std::string::npos) << line;
}
#endif

#ifdef BURNMARK_TEST_EXAMPLE_PLUGIN
TEST(Fuzz, APluginUnderTestGetsOnlyItsOpsAndEverySummaryCountsWhatEachBackendSkipped) {
  // 3000 libFuzzer inputs (fixed seed, from the seed corpus) with the example plugin: under
  // BURNMARK_OPS=auto every program is one it runs; with all ops, most use an op it lacks
  // (matmul, sin, ...) and are skipped, and the final SUMMARY says how many.
  const std::string env =
      "BACKENDS=ref," BURNMARK_TEST_EXAMPLE_PLUGIN " MODE=continuous BURNMARK_KNOWN_BUGS= ";
  const std::string cmd = BURNMARK_FUZZ_AUTOGRAD " -runs=3000 -seed=31 corpus";
  const fs::path dir = scratch_dir("plugin_ops");
  copy_corpus(dir);
  const Result autos = run(env, cmd, dir);
  ASSERT_EQ(autos.status, 0) << autos.err;
  EXPECT_NE(autos.err.find("ops=add,sub,mul,neg,exp,relu (the ops of example)"), std::string::npos)
      << autos.err;
  const std::size_t at = autos.err.rfind("SUMMARY target=fuzz_autograd");
  ASSERT_NE(at, std::string::npos) << autos.err;
  const std::string summary = autos.err.substr(at, autos.err.find('\n', at) - at);
  EXPECT_NE(summary.find(" skipped=ref:0,example:0"), std::string::npos) << summary;
  EXPECT_EQ(last_summary_count(autos.err, "findings"), 0) << autos.err;

  fs::remove_all(dir / "corpus");
  copy_corpus(dir);
  const Result all = run(env + "BURNMARK_OPS=all", cmd, dir);
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(all.err.find("ops="), std::string::npos) << all.err;
  const long long inputs = last_summary_count(all.err, "inputs");
  const std::size_t s = all.err.rfind(",example:");
  ASSERT_NE(s, std::string::npos) << all.err;
  const long long skipped = std::stoll(all.err.substr(s + 9));
  EXPECT_GT(inputs, 0);
  EXPECT_GT(skipped, inputs / 2) << all.err;
  EXPECT_LT(skipped, inputs) << all.err;
}
#endif

TEST(Fuzz, AnUnknownOpIsOneLineAndExitTwo) {
  const fs::path dir = scratch_dir("bad_ops");
  const Result r = run("BURNMARK_OPS=add,sinn", BURNMARK_FUZZ_AUTOGRAD " -runs=1", dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("burnmark: BURNMARK_OPS: unknown op 'sinn'"), std::string::npos) << r.err;
}
