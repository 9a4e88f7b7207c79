// Campaign ledgers that stay exact: one campaign per directory (a lock naming its holder, taken
// over from a killed one), counts recomputed from the saved inputs at resume, and a backend that
// crashes on every program recorded as one crash finding of that backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "burnmark/campaign/atomic_file.h"
#include "burnmark/campaign/dir_lock.h"
#include "burnmark/campaign/findings.h"
#include "burnmark/campaign/ledger.h"

#include "scratch_dir.h"

using namespace burnmark;
namespace fs = std::filesystem;
using burnmark::testing::scratch_dir;

namespace {

std::string slurp(const fs::path& p) {
  std::string s;
  read_whole_file(p, s);
  return s;
}

std::string host() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

// The test's own count: files named input-<16 hex digits>.bin in the bug's directory.
std::uint64_t inputs_on_disk(const fs::path& bug_dir) {
  std::uint64_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(bug_dir, ec)) {
    const std::string name = e.path().filename().string();
    n += name.size() == 6 + 16 + 4 && name.starts_with("input-") && name.ends_with(".bin") ? 1 : 0;
  }
  return n;
}

void expect_counts_equal_files(const fs::path& findings, const std::string& context) {
  Ledger ledger;
  ASSERT_EQ(load_ledger(findings, ledger), "") << context;
  for (const LedgerEntry& e : ledger.entries)
    EXPECT_EQ(e.count, inputs_on_disk(findings / e.signature)) << e.signature << "\n" << context;
}

struct Result {
  int status = -1;
  std::string out, err;
};

const std::string kClean = "env -u BACKENDS -u MODE -u MAX_LEAVES -u MIN_OPS -u FUZZ_MIN_DIM "
                           "-u FUZZ_MAX_DIM -u BURNMARK_TOLERANCE -u BURNMARK_SPECIAL_RATE "
                           "-u BURNMARK_FINDINGS_DIR ";
const std::string kPlanted = std::string("BACKENDS=ref,") + BURNMARK_PLANTED_PLUGIN;

std::string campaign_args(int seconds) {
  return std::string("campaign --fuzzer ") + BURNMARK_FUZZ_AUTOGRAD + " --time " +
         std::to_string(seconds) + " --out findings --seeds " + BURNMARK_TEST_SOURCE_DIR +
         "/corpus/fuzz_autograd";
}

Result run(const std::string& env, const std::string& args, const fs::path& dir) {
  const std::string cmd = "cd " + dir.string() + " && " + kClean + env + " " +
                          BURNMARK_CAMPAIGN_CLI + " " + args + " >stdout 2>stderr";
  const int raw = std::system(cmd.c_str());
  return Result{WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(dir / "stdout"),
                slurp(dir / "stderr")};
}

// Shell: the planted campaign in the background as $pid, then a wait (no fixed sleep) until its
// fuzzer has written to the log: by then it holds the directory's lock.
std::string campaign_in_background(const fs::path& dir, int seconds) {
  return "cd " + dir.string() + " && " + kClean + kPlanted + " " + BURNMARK_CAMPAIGN_CLI + " " +
         campaign_args(seconds) + " >stdout 2>stderr & pid=$!; echo $pid >" +
         (dir / "pid").string() + "; for i in $(seq 1200); do grep -q INFO: " +
         (dir / "findings/.scratch/fuzzer.log").string() +
         " 2>/dev/null && break; sleep 0.1; done; ";
}

} // namespace

TEST(CampaignLock, ASecondHolderIsRefusedWithTheFirstOnesPidAndHost) {
  const fs::path dir = scratch_dir("lock");
  CampaignLock first;
  std::string note;
  ASSERT_EQ(first.acquire(dir, note), "");
  EXPECT_EQ(note, "");
  // flock() locks belong to the open file: a second open in this very process conflicts too.
  CampaignLock second;
  const std::string refused = second.acquire(dir, note);
  EXPECT_NE(refused.find("in use by the campaign pid " + std::to_string(::getpid()) + " on host " +
                         host() + " since 20"),
            std::string::npos)
      << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos) << "one line";
  EXPECT_FALSE(second.held());
  first.release();
  // Released cleanly: the next holder has nothing to take over.
  ASSERT_EQ(second.acquire(dir, note), "");
  EXPECT_EQ(note, "");
}

TEST(CampaignLock, AKilledHoldersLockIsTakenOverWithANote) {
  const fs::path dir = scratch_dir("lock_killed");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    CampaignLock lock;
    std::string note;
    if (!lock.acquire(dir, note).empty()) ::_exit(1);
    ::raise(SIGKILL); // no destructor, no release: only the kernel drops the lock
    ::_exit(2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CampaignLock lock;
  std::string note;
  ASSERT_EQ(lock.acquire(dir, note), "");
  EXPECT_NE(note.find("taking over"), std::string::npos) << note;
  EXPECT_NE(note.find("pid " + std::to_string(child) + " on host " + host()), std::string::npos)
      << note;
  EXPECT_NE(note.find("that pid is gone"), std::string::npos) << note;
}

// A ledger whose counts disagree with the inputs saved beside it (what a campaign killed between
// saving inputs and rewriting the ledger leaves) is corrected from the files.
TEST(CampaignRecount, CountsBecomeTheSavedInputs) {
  const fs::path dir = scratch_dir("recount");
  Ledger ledger;
  ledger.entries.resize(3);
  const std::string sigs[3] = {"aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"};
  const int files[3] = {3, 2, 0};
  const std::uint64_t counted[3] = {7, 0, 0};
  for (int i = 0; i < 3; ++i) {
    ledger.entries[i].signature = sigs[i];
    ledger.entries[i].count = counted[i];
    fs::create_directories(dir / sigs[i]);
    for (int f = 0; f < files[i]; ++f)
      std::ofstream(dir / sigs[i] / ("input-000000000000000" + std::to_string(f) + ".bin")) << f;
    // Neither a temporary nor the minimal program is an input.
    std::ofstream(dir / sigs[i] / ".input-0000000000000009.bin.tmp.1") << "x";
    std::ofstream(dir / sigs[i] / "minimal.txt") << "%0 = leaf f32[1] [1]\nroot %0\n";
  }
  const std::vector<std::string> changes = recount_from_disk(dir, ledger);
  EXPECT_EQ(changes.size(), 2u); // the third already agreed
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(ledger.entries[i].count, static_cast<std::uint64_t>(files[i])) << sigs[i];
  EXPECT_NE(changes.at(0).find("aaaaaaaaaaaa: the ledger counted 7, 3 inputs are saved"),
            std::string::npos)
      << changes.at(0);
}

TEST(CampaignCommand, ASecondCampaignOnTheDirectoryIsRefusedNamingTheFirst) {
  const fs::path dir = scratch_dir("two");
  // The second runs while the first certainly holds the lock (its fuzzer has logged); the first
  // is then stopped by SIGTERM, so nothing depends on how long either takes.
  const std::string cmd = campaign_in_background(dir, 600) + "cd " + dir.string() + " && " +
                          kClean + kPlanted + " " + BURNMARK_CAMPAIGN_CLI + " " + campaign_args(1) +
                          " >stdout2 2>stderr2; echo $? >status2; kill -TERM $pid; wait $pid";
  std::system(cmd.c_str());
  const std::string pid = slurp(dir / "pid").substr(0, slurp(dir / "pid").find('\n'));
  const std::string err = slurp(dir / "stderr2");
  EXPECT_EQ(slurp(dir / "status2"), "2\n") << err;
  ASSERT_NE(err.find(" since "), std::string::npos) << err;
  EXPECT_EQ(err, "burnmark: campaign: findings is in use by the campaign pid " + pid + " on host " +
                     host() + err.substr(err.find(" since "), std::string::npos))
      << "one line naming the holder";
  EXPECT_NE(err.find(" since 20"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  // The first one ended (and released the lock): a new campaign runs on the directory, with
  // nothing to take over.
  const Result after = run(kPlanted, campaign_args(1), dir);
  EXPECT_EQ(after.status, 1) << after.err; // the planted bug is new
  EXPECT_EQ(after.err.find("taking over"), std::string::npos) << after.err;
  expect_counts_equal_files(dir / "findings", after.err);
}

TEST(CampaignCommand, ResumeRecountsAHandMadeLedgerFromItsFiles) {
  const fs::path dir = scratch_dir("handmade");
  const fs::path findings = dir / "findings";
  Ledger ledger;
  ledger.target = "fuzz_autograd";
  ledger.entries.resize(2);
  ledger.entries[0].signature = "aaaaaaaaaaaa";
  ledger.entries[0].count = 9; // 4 inputs on disk
  ledger.entries[1].signature = "bbbbbbbbbbbb";
  ledger.entries[1].count = 1; // 2 on disk
  for (int i = 0; i < 2; ++i) {
    fs::create_directories(findings / ledger.entries[i].signature);
    for (int f = 0; f < (i == 0 ? 4 : 2); ++f)
      std::ofstream(findings / ledger.entries[i].signature /
                    ("input-00000000000000a" + std::to_string(f) + ".bin"))
          << f;
  }
  ASSERT_EQ(save_ledger(findings, ledger, 0), "");
  const Result r = run(kPlanted, campaign_args(1), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("recounted aaaaaaaaaaaa: the ledger counted 9, 4 inputs are saved"),
            std::string::npos)
      << r.err;
  Ledger after;
  ASSERT_EQ(load_ledger(findings, after), "");
  ASSERT_NE(after.find("aaaaaaaaaaaa"), nullptr);
  EXPECT_EQ(after.find("aaaaaaaaaaaa")->count, 4u);
  EXPECT_EQ(after.find("bbbbbbbbbbbb")->count, 2u);
  expect_counts_equal_files(findings, r.err);
}

TEST(CampaignCommand, AfterAKillAndAResumeEveryCountEqualsItsFiles) {
  const fs::path dir = scratch_dir("killed");
  // Killed once the ledger counts something (polled, not slept), with no chance to write it
  // again; the resumed campaign takes the lock over and recounts.
  const std::string cmd = campaign_in_background(dir, 600) +
                          "for i in $(seq 1200); do grep -qs '\"count\": [1-9]' " +
                          (dir / "findings/ledger.json").string() +
                          " && break; sleep 0.1; done; kill -KILL $pid; wait $pid 2>/dev/null";
  std::system(cmd.c_str());
  const Result r = run(kPlanted, campaign_args(1), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("campaign: taking over findings from the campaign pid"), std::string::npos)
      << r.err;
  expect_counts_equal_files(dir / "findings", r.err);
}

// A plugin that segfaults on every program, run as a child: backend. Every input the fuzzer saves
// is one crash of that backend, whatever ops it holds: one finding, naming the plugin, signed by
// the signal, with a repro that runs the program against that backend.
TEST(CampaignCommand, ACrashingPluginIsOneCrashFindingNamingIt) {
  const fs::path dir = scratch_dir("segv");
  const std::string backend = std::string("child:") + BURNMARK_MISBEHAVING_PLUGIN;
  // Counted in campaigns, not seconds: on a loaded machine a 20 s campaign may end before its
  // first crashing input is saved, so it is run again (resuming) until the ledger holds something.
  Result r;
  Ledger ledger;
  for (int attempt = 0; attempt < 6 && ledger.entries.empty(); ++attempt) {
    r = run("BURNMARK_FIXTURE_ALWAYS=segv BACKENDS=ref," + backend, campaign_args(20), dir);
    ASSERT_EQ(load_ledger(dir / "findings", ledger), "") << r.err;
  }
  EXPECT_EQ(r.status, 1) << r.err;
  ASSERT_EQ(ledger.entries.size(), 1u) << r.err;
  const LedgerEntry& e = ledger.entries[0];
  EXPECT_EQ(e.kinds, std::vector<std::string>{backend + ":crash"});
  EXPECT_EQ(e.root_words, std::vector<std::string>{backend + ":crash SIGSEGV"});
  EXPECT_TRUE(e.ops.empty()) << "not a signature per op";
  EXPECT_GE(e.count, 1u);
  EXPECT_EQ(e.repro_python, "") << "LibTorch has nothing to do with it";
  EXPECT_EQ(e.repro_cpp, "");
  ASSERT_NE(e.repro_shell, "");
  expect_counts_equal_files(dir / "findings", r.err);
  // The summary counts the crashes: one per distinct input, as the ledger does.
  EXPECT_NE(r.out.find("crashes=" + std::to_string(e.count) + " "), std::string::npos) << r.out;
  // The repro runs the program against the plugin: `burnmark run` reports the crash, status 1.
  const std::string repro = "cd " + dir.string() + " && " + kClean +
                            "BURNMARK_FIXTURE_ALWAYS=segv BURNMARK=" + BURNMARK_CAMPAIGN_CLI +
                            " sh findings/" + e.repro_shell + " >repro.out 2>&1";
  const int status = std::system(repro.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1) << slurp(dir / "repro.out");
  EXPECT_NE(slurp(dir / "repro.out").find("DIVERGENCE backend=" + backend + " kind=crash"),
            std::string::npos)
      << slurp(dir / "repro.out");
}

namespace {

// A stand-in for libFuzzer, so that a crash is certain rather than met by chance: a shell script
// that appends its arguments to ARGS, prints libFuzzer's banner, then runs the step of its run
// number (1, 2, ... counted in RUNS): `crash` prints a status line and a compile note, writes a
// crash artifact under -artifact_prefix and exits 77 as libFuzzer does at a deadly signal; `early`
// exits 77 before any status line; `done` prints a status line and a note and exits 0.
fs::path fake_fuzzer(const fs::path& dir, const std::vector<std::string>& steps) {
  const fs::path script = dir / "fake-fuzzer.sh";
  std::string body = "#!/bin/sh\n"
                     "cd " +
                     dir.string() +
                     "\n"
                     "echo \"$@\" >>ARGS\n"
                     "echo x >>RUNS\n"
                     "run=$(wc -l <RUNS)\n"
                     "prefix=$(printf '%s\\n' \"$@\" | sed -n 's/^-artifact_prefix=//p')\n"
                     "echo 'INFO: Seed: 1'\n"
                     "case $run in\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    body += std::to_string(i + 1) + ") ";
    if (steps[i] == "crash")
      body += "echo '#5\tpulse  cov: 10 ft: 10 corp: 1/1b exec/s: 5 rss: 1Mb'; "
              "echo 'NOTE backend=torch-compile note=\"compiled (compile cache: 3 hits, 2 "
              "compiles)\"'; echo crash >\"${prefix}crash-0123\"; exit 77;;\n";
    else if (steps[i] == "early")
      body += "exit 77;;\n";
    else
      body += "echo '#7\tpulse  cov: 12 ft: 12 corp: 1/1b exec/s: 7 rss: 1Mb'; "
              "echo 'NOTE backend=torch-compile note=\"cache hit (compile cache: 4 hits, 1 "
              "compiles)\"'; exit 0;;\n";
  }
  body += "esac\nexit 0\n";
  std::ofstream(script) << body;
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

} // namespace

// One-process mode: a crash of the fuzzer is followed by a new run on the same corpus for the
// time left, without -fork; executions and compile-cache counts add up over the runs, and the
// crash's artifact reaches crashes/.
TEST(CampaignCommand, OneProcessModeRestartsTheFuzzerAfterACrash) {
  const fs::path dir = scratch_dir("restart");
  const fs::path fuzzer = fake_fuzzer(dir, {"crash", "done"});
  const Result r = run(kPlanted,
                       "campaign --fuzzer " + fuzzer.string() +
                           " --time 600 --workers 0 --out findings --seeds " +
                           BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd",
                       dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("restart 1 on the corpus"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("execs=12 "), std::string::npos) << r.out; // 5 + 7
  EXPECT_NE(r.out.find("crashes=1 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restarts=1 compile_hits=7 compile_misses=3"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir / "findings" / "crashes" / "crash-0123"));
  const std::string args = slurp(dir / "ARGS");
  EXPECT_EQ(std::count(args.begin(), args.end(), '\n'), 2) << args;
  EXPECT_EQ(args.find("-fork"), std::string::npos) << args;
  EXPECT_EQ(args.find("-ignore_crashes"), std::string::npos) << args;
  EXPECT_EQ(args.find("findings/corpus "), 0u) << args; // the same corpus, both runs
  EXPECT_NE(args.find("\nfindings/corpus "), std::string::npos) << args;
}

// A fuzzer that dies before its first status line (its corpus replay crashes) would die again:
// the campaign does not restart it, and says so.
TEST(CampaignCommand, OneProcessModeDoesNotRestartAFuzzerThatDiesBeforeItsFirstStatusLine) {
  const fs::path dir = scratch_dir("early");
  const fs::path fuzzer = fake_fuzzer(dir, {"early", "done"});
  const Result r = run(kPlanted,
                       "campaign --fuzzer " + fuzzer.string() +
                           " --time 600 --workers 0 --out findings --seeds " +
                           BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd",
                       dir);
  EXPECT_NE(r.err.find("before its first status line; not restarting"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir / "RUNS"), "x\n");
}
