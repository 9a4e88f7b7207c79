// Campaigns: the ledger survives a round trip and is never seen half written; a short campaign
// against the real fuzz_autograd with a planted-bug plugin ends with ONE ledger entry (with its
// reproducers), a second campaign continues it; `burnmark repro` writes runnable reproducers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/campaign/atomic_file.h"
#include "burnmark/campaign/campaign.h"
#include "burnmark/campaign/findings.h"
#include "burnmark/campaign/fuzzer_output.h"
#include "burnmark/campaign/ledger.h"
#include "burnmark/ir/text.h"
#include "burnmark/plugin/loader.h"

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

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs the CLI in `dir` with a clean set of knobs plus `env`.
Result run(const std::string& env, const std::string& args, const fs::path& dir) {
  const std::string cmd =
      "cd " + dir.string() +
      " && env -u BACKENDS -u MODE -u MAX_LEAVES -u MIN_OPS -u FUZZ_MIN_DIM -u FUZZ_MAX_DIM "
      "-u BURNMARK_TOLERANCE -u BURNMARK_SPECIAL_RATE -u BURNMARK_FINDINGS_DIR " +
      env + " " + BURNMARK_CAMPAIGN_CLI + " " + args + " >stdout 2>stderr";
  const int raw = std::system(cmd.c_str());
  return Result{WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw), slurp(dir / "stdout"),
                slurp(dir / "stderr")};
}

const std::string kPlanted = std::string("BACKENDS=ref,") + BURNMARK_PLANTED_PLUGIN;

LedgerEntry sample_entry(const std::string& sig, std::uint64_t count) {
  LedgerEntry e;
  e.signature = sig;
  e.status = "new";
  e.first_seen = "2026-11-01T10:00:00Z";
  e.last_seen = "2026-11-30T12:34:56Z";
  e.count = count;
  e.kinds = {"libtorch:gradient"};
  e.ops = {"pow(0.5)", "sum"};
  e.specials = {"-0"};
  // Quotes, backslashes, newlines, a tab and a pipe all have to survive both formats.
  e.minimal_program = "%0 = leaf f32[1] [-0]\n%1 = pow %0, 0.5 : f32[1]\troot \"%1\" \\ |\n";
  e.example = sig + "/input-0123456789abcdef.bin";
  e.repro_cpp = sig + "/repro_" + sig + ".cpp";
  e.repro_python = sig + "/repro_" + sig + ".py";
  e.repro_shell = sig + "/repro_" + sig + ".sh";
  e.pre_signatures = {"pre1|libtorch:gradient|pow(0.5)(leaf)|special=-0"};
  e.f32_signature = "fedcba987654";
  e.reverse_signature = "0123456789ab";
  e.culprit_signature = "ba9876543210";
  e.roots = {"a1b2c3d4e5f6"};
  e.root_words = {"libtorch:gradient culprit=pow[0.5] trigger=-0 dtype=any"};
  e.patches = {"eigen-sqrt-inf", "eigen-sqrt-negzero"};
  return e;
}

} // namespace

TEST(CampaignLedger, JsonRoundTripKeepsEveryField) {
  Ledger l;
  l.target = "fuzz_autograd";
  l.entries = {sample_entry("0123456789ab", 7), sample_entry("ba9876543210", 40)};
  l.entries[1].status = "filed";
  l.entries[1].anchor = "pow-grad-neg-zero";
  const std::time_t now = parse_iso_utc("2026-11-30T13:00:00Z");
  Ledger back;
  ASSERT_EQ(ledger_from_json(ledger_to_json(l, now), back), "");
  EXPECT_EQ(back.target, "fuzz_autograd");
  ASSERT_EQ(back.entries.size(), 2u);
  for (const LedgerEntry& want : l.entries) {
    const LedgerEntry* got = back.find(want.signature);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->status, want.status);
    EXPECT_EQ(got->anchor, want.anchor);
    EXPECT_EQ(got->first_seen, want.first_seen);
    EXPECT_EQ(got->last_seen, want.last_seen);
    EXPECT_EQ(got->count, want.count);
    EXPECT_EQ(got->kinds, want.kinds);
    EXPECT_EQ(got->ops, want.ops);
    EXPECT_EQ(got->specials, want.specials);
    EXPECT_EQ(got->minimal_program, want.minimal_program);
    EXPECT_EQ(got->example, want.example);
    EXPECT_EQ(got->repro_cpp, want.repro_cpp);
    EXPECT_EQ(got->repro_python, want.repro_python);
    EXPECT_EQ(got->repro_shell, want.repro_shell);
    EXPECT_EQ(got->pre_signatures, want.pre_signatures);
    EXPECT_EQ(got->f32_signature, want.f32_signature);
    EXPECT_EQ(got->reverse_signature, want.reverse_signature);
    EXPECT_EQ(got->culprit_signature, want.culprit_signature);
    EXPECT_EQ(got->roots, want.roots);
    EXPECT_EQ(got->root_words, want.root_words);
    EXPECT_EQ(got->patches, want.patches);
  }
  // Most hits first; the age is whole days since first seen (29 days).
  const std::string json = ledger_to_json(l, now);
  EXPECT_LT(json.find("ba9876543210"), json.find("0123456789ab"));
  EXPECT_NE(json.find("\"days_since_found\": 29"), std::string::npos);
  const std::string md = ledger_to_markdown(l, now);
  EXPECT_NE(md.find("| `ba9876543210` | filed (pow-grad-neg-zero) | 29 | 40 |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| pow(0.5) -> sum | eigen-sqrt-inf, eigen-sqrt-negzero | [ba9876543210/"),
            std::string::npos)
      << md;
  // A ledger written before patches has none.
  Ledger old;
  ASSERT_EQ(
      ledger_from_json(R"({"format": "burnmark-ledger-1", "bugs": [{"signature": "s"}]})", old),
      "");
  EXPECT_TRUE(old.entries.at(0).patches.empty());
  EXPECT_NE(md.find("2 distinct signatures (op graphs), 1 new"), std::string::npos) << md;
}

// Signatures of one fault (the same root ids) share one line of the root-cause table, which
// comes before the signatures; the root is known when one of its signatures is.
TEST(CampaignLedger, SignaturesOfOneRootCauseShareItsLine) {
  Ledger l;
  l.entries = {sample_entry("0123456789ab", 40), sample_entry("ba9876543210", 2),
               sample_entry("aaaaaaaaaaaa", 1)};
  l.entries[1].status = "known";
  l.entries[1].anchor = "libtorch-pow-grad-neg-zero";
  l.entries[2].roots = {"bbbbbbbbbbbb"};
  l.entries[2].root_words = {"libtorch:forward culprit=exp trigger=nan dtype=bf16"};
  const std::string md = ledger_to_markdown(l, parse_iso_utc("2026-11-30T13:00:00Z"));
  EXPECT_NE(md.find("2 root causes, 1 new; 3 distinct signatures (op graphs), 2 new"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `a1b2c3d4e5f6` | known (libtorch-pow-grad-neg-zero) | 42 | 0123456789ab, "
                    "ba9876543210 | libtorch:gradient culprit=pow[0.5] trigger=-0 dtype=any |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `bbbbbbbbbbbb` | new | 1 | aaaaaaaaaaaa |"), std::string::npos) << md;
  EXPECT_LT(md.find("## Root causes"), md.find("## Signatures"));
}

// A regression (an older release agreed, libtorch@1.13) survives the round trip and comes first
// in both formats, ahead of a bug with more hits.
TEST(CampaignLedger, RegressionsRoundTripAndComeFirst) {
  Ledger l;
  l.entries = {sample_entry("0123456789ab", 40), sample_entry("ba9876543210", 2)};
  l.entries[1].regressions = {"libtorch:gradient<libtorch@1.13"};
  const std::time_t now = parse_iso_utc("2026-11-30T13:00:00Z");
  Ledger back;
  ASSERT_EQ(ledger_from_json(ledger_to_json(l, now), back), "");
  ASSERT_NE(back.find("ba9876543210"), nullptr);
  EXPECT_EQ(back.find("ba9876543210")->regressions, l.entries[1].regressions);
  EXPECT_TRUE(back.find("0123456789ab")->regressions.empty());
  const std::string json = ledger_to_json(l, now);
  EXPECT_LT(json.find("ba9876543210"), json.find("0123456789ab"));
  const std::string md = ledger_to_markdown(l, now);
  EXPECT_LT(md.find("ba9876543210"), md.find("0123456789ab"));
  EXPECT_NE(md.find("libtorch:gradient; REGRESSION libtorch:gradient<libtorch@1.13"),
            std::string::npos)
      << md;
}

TEST(CampaignLedger, MalformedOrTruncatedJsonIsAnErrorNotAShorterLedger) {
  Ledger l;
  l.entries = {sample_entry("0123456789ab", 1)};
  const std::string json = ledger_to_json(l, 0);
  Ledger back;
  EXPECT_NE(ledger_from_json(json.substr(0, json.size() / 2), back), "");
  EXPECT_NE(ledger_from_json("{\"format\": \"other\", \"bugs\": []}", back), "");
  EXPECT_NE(ledger_from_json(json + "x", back), "");
}

TEST(CampaignLedger, MissingFileIsAnEmptyLedger) {
  Ledger l;
  l.entries = {sample_entry("0123456789ab", 1)};
  EXPECT_EQ(load_ledger(scratch_dir("missing"), l), "");
  EXPECT_TRUE(l.entries.empty());
}

TEST(CampaignLedger, IsoDatesAndAge) {
  EXPECT_EQ(iso_utc(parse_iso_utc("2026-02-28T23:59:59Z")), "2026-02-28T23:59:59Z");
  EXPECT_EQ(iso_utc(parse_iso_utc("2026-03-01")), "2026-03-01T00:00:00Z");
  EXPECT_EQ(parse_iso_utc("yesterday"), -1);
  EXPECT_EQ(days_since("2026-11-01T00:00:00Z", parse_iso_utc("2026-11-08T00:00:01Z")), 7);
  EXPECT_EQ(days_since("2026-12-01", parse_iso_utc("2026-11-08")), 0);
}

// A reader polling the ledger while it is rewritten hundreds of times must always parse it: the
// rename is what a reader (or a Ctrl-C) can observe, never a partial write.
TEST(CampaignLedger, ConcurrentReaderAlwaysSeesAWholeLedger) {
  const fs::path dir = scratch_dir("atomic");
  Ledger l;
  l.target = "fuzz_autograd";
  l.entries = {sample_entry("0123456789ab", 0)};
  ASSERT_EQ(save_ledger(dir, l, 0), "");
  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, failures{0};
  std::thread reader([&] {
    while (!done) {
      Ledger back;
      if (load_ledger(dir, back) != "" || back.entries.size() != 1) ++failures;
      ++reads;
    }
  });
  for (int i = 1; i <= 300; ++i) {
    l.entries[0].count = static_cast<std::uint64_t>(i);
    // Growing text, so a torn write would be visible as a truncated document.
    l.entries[0].minimal_program += "%" + std::to_string(i) + " = neg %0 : f32[1]\n";
    ASSERT_EQ(save_ledger(dir, l, 0), "");
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(failures.load(), 0);
  Ledger back;
  ASSERT_EQ(load_ledger(dir, back), "");
  EXPECT_EQ(back.entries.at(0).count, 300u);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_FALSE(e.path().filename().string().starts_with(".")) << "left behind: " << e.path();
}

TEST(CampaignFuzzerOutput, ReadsPlainAndForkStatusLines) {
  FuzzerStats s;
  EXPECT_TRUE(parse_fuzzer_line(
      "#4096\tpulse  cov: 412 ft: 980 corp: 37/2104b lim: 43 exec/s: 2048 rss: 61Mb", s));
  EXPECT_EQ(s.execs, 4096u);
  EXPECT_EQ(s.coverage, 412u);
  EXPECT_EQ(s.exec_per_s, 2048u);
  EXPECT_EQ(s.features, 980u);
  EXPECT_EQ(s.corpus, 37u);
  EXPECT_TRUE(parse_fuzzer_line("#80123: cov: 512 ft: 1201 corp: 60 exec/s 3100 "
                                "oom/timeout/crash: 0/0/0 time: 12s job: 4 dft_time: 0",
                                s));
  EXPECT_EQ(s.execs, 80123u);
  EXPECT_EQ(s.coverage, 512u);
  EXPECT_EQ(s.exec_per_s, 3100u);
  EXPECT_EQ(s.features, 1201u);
  EXPECT_EQ(s.corpus, 60u);
  EXPECT_FALSE(s.started);
  EXPECT_FALSE(parse_fuzzer_line("INFO: Seed: 1", s));
  EXPECT_TRUE(s.started); // the banner: a libFuzzer target began
  EXPECT_FALSE(parse_fuzzer_line("# burnmark program", s));
  EXPECT_EQ(s.execs, 80123u);
  EXPECT_EQ(s.lines, 2u);
}

// torch-compile's note (fuzz_common.cpp): the counts are summed over Python children, a new one
// (fewer than the last note) counting from 0 again.
TEST(CampaignFuzzerOutput, ReadsTheCompileCacheNoteAcrossChildRestarts) {
  FuzzerStats s;
  EXPECT_FALSE(parse_fuzzer_line(
      R"x(NOTE backend=torch-compile note="compiled (compile cache: 3 hits, 2 compiles)")x", s));
  EXPECT_EQ(s.compile_hits, 3u);
  EXPECT_EQ(s.compile_misses, 2u);
  parse_fuzzer_line(
      R"x(NOTE backend=torch-compile note="cache hit (compile cache: 9 hits, 4 compiles)")x", s);
  EXPECT_EQ(s.compile_hits, 9u);
  EXPECT_EQ(s.compile_misses, 4u);
  // A restarted child: 1 hit and 1 compile of its own, after the 9 and 4 of the first.
  parse_fuzzer_line(
      R"x(NOTE backend=torch-compile note="cache hit (compile cache: 1 hits, 1 compiles)")x", s);
  EXPECT_EQ(s.compile_hits, 10u);
  EXPECT_EQ(s.compile_misses, 5u);
  // Another backend's note, or a line that only mentions the words, changes nothing.
  parse_fuzzer_line(R"x(NOTE backend=jax note="x (compile cache: 100 hits, 100 compiles)")x", s);
  parse_fuzzer_line("compile cache: 50 hits, 50 compiles", s);
  EXPECT_EQ(s.compile_hits, 10u);
  EXPECT_EQ(s.compile_misses, 5u);
  EXPECT_EQ(s.lines, 0u) << "a note is not a status line";
}

// Fork mode keeps a worker's crash from ending the campaign with libFuzzer's -ignore_*; one-process
// mode has no workers: the campaign itself restarts the fuzzer, so neither -fork nor -ignore_*.
TEST(CampaignArguments, OneProcessModeHasNoForkAndForkModeIgnoresWorkersCrashes) {
  CampaignOptions o;
  o.out = "/tmp/f";
  o.seconds = 30;
  o.workers = 0;
  o.extra_fuzzer_args = {"-seed=1"};
  const std::vector<std::string> one = fuzzer_arguments(o);
  EXPECT_EQ(one, (std::vector<std::string>{"/tmp/f/corpus", "-report_slow_units=86400",
                                           "-max_total_time=30",
                                           "-artifact_prefix=/tmp/f/.scratch/artifacts/",
                                           "-print_final_stats=0", "-seed=1"}));
  o.workers = 2;
  const std::vector<std::string> fork = fuzzer_arguments(o);
  EXPECT_EQ(fork,
            (std::vector<std::string>{"/tmp/f/corpus", "-fork=2", "-ignore_crashes=1",
                                      "-ignore_timeouts=1", "-ignore_ooms=1", "-max_total_time=30",
                                      "-artifact_prefix=/tmp/f/.scratch/artifacts/",
                                      "-print_final_stats=0", "-seed=1"}));
}

// The findings book in process, on the reference and the planted plugin: inputs with the same
// pre-signature are minimised once, replayed bytes are not counted twice, agreeing inputs are
// ignored, and a book continued from the saved ledger neither re-minimises nor forgets counts.
class FindingsBookTest : public ::testing::Test {
protected:
  fs::path dir_ = scratch_dir("book");
  std::unique_ptr<Backend> ref_ = make_reference_backend();
  std::unique_ptr<Backend> planted_;
  std::optional<Runner> runner_;

  void SetUp() override {
    PluginLoadResult p = load_plugin_backend(BURNMARK_PLANTED_PLUGIN);
    ASSERT_TRUE(p.ok());
    planted_ = p.take();
    runner_.emplace(std::vector<Backend*>{ref_.get(), planted_.get()}, OracleOptions{});
  }

  static Program program(const std::string& text) {
    ParseResult r = parse_program(text);
    EXPECT_TRUE(r.ok()) << text;
    return r.ok() ? r.program() : Program{};
  }

  IngestResult ingest(FindingsBook& book, const std::string& bytes, const std::string& text) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
    return book.ingest(std::span(data, bytes.size()), program(text), 1'800'000'000);
  }
};

TEST_F(FindingsBookTest, SameBugIsMinimisedOnceCountedPerDistinctInputAndContinued) {
  const std::string a = "%0 = leaf f32[2] [1, 2]\n%1 = neg %0 : f32[2]\nroot %1\n";
  const std::string b = "%0 = leaf f32[3] [3, 4, 5]\n%1 = neg %0 : f32[3]\nroot %1\n";
  const std::string fine = "%0 = leaf f32[2] [1, 2]\n%1 = exp %0 : f32[2]\nroot %1\n";
  std::string signature;
  {
    FindingsBook book(dir_, Ledger{}, Suppressions{}, *runner_, *ref_, FindingsOptions{});
    const IngestResult first = ingest(book, "bytes-a", a);
    EXPECT_EQ(first.kind, IngestKind::NewSignature) << first.error;
    EXPECT_EQ(first.error, "");
    signature = first.signature;
    EXPECT_EQ(ingest(book, "bytes-b", b).kind, IngestKind::Seen);
    EXPECT_EQ(ingest(book, "bytes-a", a).kind, IngestKind::Duplicate);
    EXPECT_EQ(ingest(book, "bytes-fine", fine).kind, IngestKind::Agreed);
    EXPECT_EQ(book.minimisations(), 1u);
    ASSERT_EQ(book.ledger().entries.size(), 1u);
    EXPECT_EQ(book.ledger().entries[0].count, 2u);
    EXPECT_EQ(book.flush(1'800'000'000), "");
  }
  EXPECT_TRUE(fs::exists(dir_ / signature / ("repro_" + signature + ".cpp")));
  EXPECT_TRUE(fs::exists(dir_ / signature / ("repro_" + signature + ".py")));
  std::size_t inputs = 0;
  for (const auto& e : fs::directory_iterator(dir_ / signature))
    inputs += e.path().filename().string().starts_with("input-") ? 1 : 0;
  EXPECT_EQ(inputs, 2u);

  Ledger saved;
  ASSERT_EQ(load_ledger(dir_, saved), "");
  std::string error;
  FindingsBook again(dir_, saved, Suppressions::parse(signature + " planted-neg neg fails", error),
                     *runner_, *ref_, FindingsOptions{});
  EXPECT_EQ(again.ledger().entries.at(0).status, "known");
  // Same bytes as the first book saw: already in the bug's directory, not counted again.
  EXPECT_EQ(ingest(again, "bytes-b", b).kind, IngestKind::Duplicate);
  const std::string c = "%0 = leaf f32[1] [7]\n%1 = neg %0 : f32[1]\nroot %1\n";
  EXPECT_EQ(ingest(again, "bytes-c", c).kind, IngestKind::Seen);
  EXPECT_EQ(again.minimisations(), 0u) << "the pre-signature came back with the ledger";
  EXPECT_EQ(again.ledger().entries.at(0).count, 3u);
  EXPECT_EQ(again.ledger().entries.at(0).anchor, "planted-neg");
}

// The whole loop: the real fuzz_autograd on two fork-mode workers, the planted plugin failing on
// every program with a neg. Many inputs diverge; they are one bug, so one ledger entry.
TEST(CampaignCommand, PlantedBugIsOneLedgerEntryAndASecondCampaignContinuesIt) {
  const fs::path dir = scratch_dir("campaign");
  const std::string args = std::string("campaign --fuzzer ") + BURNMARK_FUZZ_AUTOGRAD +
                           " --time 6 --workers 2 --out findings --seeds " +
                           BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd -- -seed=7";
  // Counted in campaigns, not seconds: on a loaded machine the fuzzer may not have started
  // executing within 6 s ("executed nothing before the time was up"), so the campaign is run
  // again (resuming the same folder) until its ledger holds something.
  Result first;
  Ledger ledger;
  for (int attempt = 0; attempt < 6 && ledger.entries.empty(); ++attempt) {
    first = run(kPlanted, args, dir);
    ASSERT_EQ(load_ledger(dir / "findings", ledger), "") << first.err;
  }
  EXPECT_EQ(first.status, 1) << first.err; // a new bug
  ASSERT_EQ(ledger.entries.size(), 1u) << first.err << first.out;
  const LedgerEntry e = ledger.entries[0];
  EXPECT_EQ(e.ops, std::vector<std::string>{"neg"});
  EXPECT_EQ(e.kinds, std::vector<std::string>{"planted:error"});
  EXPECT_EQ(e.status, "new");
  EXPECT_GT(e.count, 1u) << "the planted bug is hit by many inputs";
  EXPECT_EQ(ledger.target, "fuzz_autograd");
  const fs::path findings = dir / "findings";
  EXPECT_TRUE(fs::exists(findings / e.example));
  EXPECT_TRUE(fs::exists(findings / e.signature / "minimal.txt"));
  ASSERT_FALSE(e.repro_cpp.empty());
  ASSERT_FALSE(e.repro_python.empty());
  EXPECT_TRUE(fs::exists(findings / e.repro_cpp));
  EXPECT_TRUE(fs::exists(findings / e.repro_python));
  EXPECT_TRUE(fs::exists(findings / e.signature / "CMakeLists.txt"));
  EXPECT_NE(e.minimal_program.find("neg"), std::string::npos);
  EXPECT_TRUE(fs::exists(findings / "ledger.md"));
  EXPECT_NE(slurp(findings / "ledger.md").find(e.signature), std::string::npos);
  EXPECT_NE(first.err.find("campaign: NEW BUG " + e.signature), std::string::npos) << first.err;
  EXPECT_NE(first.out.find("CAMPAIGN target=fuzz_autograd"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("signatures=1 ledger=1 new=1"), std::string::npos) << first.out;
  EXPECT_TRUE(fs::exists(findings / "corpus" / "unary_smooth")) << "seeded from the seeds dir";
  // Every saved input was picked up (the scratch findings dir is drained), or the campaign says
  // how many it left for the next one (the drain ends 5 s past --time).
  std::size_t left = 0;
  for (const auto& f : fs::directory_iterator(findings / ".scratch" / "findings"))
    left += f.path().filename().string().starts_with("finding-") ? 1 : 0;
  if (left > 0)
    EXPECT_NE(first.err.find(fmt::format(", {} saved inputs left for the next campaign", left)),
              std::string::npos)
        << first.err;

  // A second campaign on the directory adds to the first one's counts.
  const std::string base = args.substr(0, args.find(" --time"));
  // Long enough for the planted bug to be met again while LibTorch loads on a loaded machine:
  // the campaign now stops its fuzzer at the time (docs/reliability.md).
  const Result second = run(kPlanted, base + " --time 8 -- -seed=8", dir);
  EXPECT_EQ(second.status, 1) << second.err; // the bug is still new
  Ledger after;
  ASSERT_EQ(load_ledger(dir / "findings", after), "");
  ASSERT_EQ(after.entries.size(), 1u);
  EXPECT_EQ(after.entries[0].first_seen, e.first_seen);
  EXPECT_GT(after.entries[0].count, e.count);

  // Once listed as known, the entry says so and the workers are told to skip it.
  std::ofstream(dir / "known.txt") << e.signature << " planted-neg the planted neg failure\n";
  const std::string log_before_third = slurp(findings / ".scratch" / "fuzzer.log");
  const Result third = run(kPlanted, base + " --time 1 --known known.txt", dir);
  EXPECT_EQ(third.status, 0) << third.err; // nothing new
  Ledger last;
  ASSERT_EQ(load_ledger(dir / "findings", last), "");
  ASSERT_EQ(last.entries.size(), 1u);
  EXPECT_EQ(last.entries[0].status, "known");
  EXPECT_EQ(last.entries[0].anchor, "planted-neg");
  // The workers' banner names the list they loaded, when a worker of this third campaign got as
  // far as printing it: a 1 s campaign on a loaded machine may stop its fuzzer while LibTorch
  // is still loading.
  const std::string third_log =
      slurp(findings / ".scratch" / "fuzzer.log").substr(log_before_third.size());
  const auto banner = third_log.find("burnmark: fuzz_autograd:");
  if (banner != std::string::npos)
    EXPECT_NE(third_log.find("known-bugs=1", banner), std::string::npos) << third_log;
  EXPECT_EQ(third_log.find("known-bugs=0"), std::string::npos) << third_log;
}

// --workers 0: one fuzzing process, its findings reach the ledger as fork mode's do. (The time
// only has to cover LibTorch's loading: the planted neg is among the seeds.)
TEST(CampaignCommand, OneProcessModeFindsThePlantedBugAsForkModeDoes) {
  const fs::path dir = scratch_dir("oneprocess");
  const Result r = run(kPlanted,
                       std::string("campaign --fuzzer ") + BURNMARK_FUZZ_AUTOGRAD +
                           " --time 6 --workers 0 --out findings --seeds " +
                           BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd -- -seed=7",
                       dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("in one process"), std::string::npos) << r.err;
  Ledger ledger;
  ASSERT_EQ(load_ledger(dir / "findings", ledger), "") << r.err;
  ASSERT_EQ(ledger.entries.size(), 1u) << r.err;
  EXPECT_EQ(ledger.entries[0].ops, std::vector<std::string>{"neg"});
  EXPECT_NE(r.out.find("signatures=1 ledger=1 new=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restarts=0 compile_hits=0 compile_misses=0"), std::string::npos) << r.out;
  // The fuzzer ran in one process: no fork-mode job logs or merge control files.
  const std::string log = slurp(dir / "findings" / ".scratch" / "fuzzer.log");
  EXPECT_EQ(log.find("-fork"), std::string::npos) << log.substr(0, 2000);
}

// A shell script's start: the planted campaign in the background as $pid, then a wait until
// libFuzzer has written to its log (the campaign's stop handler is installed before it spawns
// the fuzzer). No fixed sleep, so a loaded machine cannot make a signal arrive too early.
// (Absolute paths: `cd && campaign &` backgrounds the cd too.)
std::string campaign_in_background(const fs::path& dir, int seconds) {
  return "cd " + dir.string() + " && env -u MODE " + kPlanted + " " + BURNMARK_CAMPAIGN_CLI +
         " campaign --fuzzer " + BURNMARK_FUZZ_AUTOGRAD + " --time " + std::to_string(seconds) +
         " --out findings --seeds " + BURNMARK_TEST_SOURCE_DIR +
         "/corpus/fuzz_autograd >stdout 2>stderr & pid=$!; for i in $(seq 1200); do grep -q "
         "INFO: " +
         (dir / "findings/.scratch/fuzzer.log").string() +
         " 2>/dev/null && break; sleep 0.1; done; ";
}

// A shell condition: some process still carries the campaign's pid in BURNMARK_CAMPAIGN_PID,
// the variable the campaign gives its fuzzer (relative paths make command lines ambiguous).
const std::string kFuzzerOfCampaignRuns =
    "grep -zqsx BURNMARK_CAMPAIGN_PID=$pid /proc/[0-9]*/environ";

TEST(CampaignCommand, SigtermStopsTheFuzzerAndLeavesAConsistentLedger) {
  const fs::path dir = scratch_dir("sigterm");
  // Its fuzzer's process group was killed on the way out; a process being killed may still be
  // listed for a moment, so the check polls.
  const std::string cmd = campaign_in_background(dir, 120) +
                          "kill -TERM $pid; wait $pid; for i in $(seq 300); do " +
                          kFuzzerOfCampaignRuns + " || exit 0; sleep 0.1; done; exit 3";
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(cmd.c_str());
  EXPECT_NE(WEXITSTATUS(status), 3) << "a fuzzer outlived its stopped campaign";
  ASSERT_EQ(status, 0);
  // Stopped by the signal, well before its 120 s (a generous margin: CI machines are loaded).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(110));
  EXPECT_NE(slurp(dir / "stderr").find("(interrupted)"), std::string::npos)
      << slurp(dir / "stderr");
  Ledger ledger;
  EXPECT_EQ(load_ledger(dir / "findings", ledger), "");
  EXPECT_LE(ledger.entries.size(), 1u);
}

TEST(CampaignCommand, AKilledCampaignLeavesNoFuzzerRunning) {
  // SIGKILL gives the campaign no chance to stop its fuzzer: libFuzzer's fork-mode parent and
  // its worker notice on their own that the campaign is gone. Polled, not slept: the bound is
  // far below the 600 s the fuzzer was given, and far above what a loaded machine needs. Before
  // the kill, the fuzzer that wrote the log carries the pid (else the check proves nothing).
  const fs::path dir = scratch_dir("sigkill");
  const std::string cmd = campaign_in_background(dir, 600) + kFuzzerOfCampaignRuns +
                          " || exit 2; kill -KILL $pid; wait $pid; for i in $(seq 600); do " +
                          kFuzzerOfCampaignRuns + " || exit 0; sleep 0.1; done; exit 1";
  const int status = std::system(cmd.c_str());
  ASSERT_NE(WEXITSTATUS(status), 2) << "no fuzzer process carried the campaign's pid";
  EXPECT_EQ(status, 0) << "a fuzzer outlived its campaign by a minute";
}

TEST(CampaignCommand, AFuzzTargetWhoseCampaignIsGoneEndsItself) {
  // What makes the test above hold however the campaign died: a fuzz target given a campaign pid
  // that no longer exists stops at once, though told to fuzz for 600 s. (Without the check it
  // lingers until SIGPIPE on its next status line or the end of its job, seconds later.)
  const fs::path dir = scratch_dir("orphan");
  const std::string cmd = "cd " + dir.string() + " && true & dead=$!; wait $dead; cd " +
                          dir.string() + " && env -u MODE BURNMARK_CAMPAIGN_PID=$dead " + kPlanted +
                          " " + BURNMARK_FUZZ_AUTOGRAD + " -max_total_time=600 " +
                          BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd >log 2>&1";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir / "log");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(300))
      << "ran on without its campaign";
}

class ReproCommand : public ::testing::Test {
protected:
  fs::path dir_ = scratch_dir("repro");
  void SetUp() override {
    // neg diverges on the planted plugin; the exp, sum and extra leaf are what minimising drops.
    std::ofstream(dir_ / "bug.txt") << "# burnmark program\n"
                                       "%0 = leaf f32[2,3] [0.5, -1, 2, 0, 1.5, -2]\n"
                                       "%1 = leaf f32[3] [1, 2, 3]\n"
                                       "%2 = exp %0 : f32[2,3]\n"
                                       "%3 = neg %2 : f32[2,3]\n"
                                       "%4 = add %3, %1 : f32[2,3]\n"
                                       "%5 = sum %4 : f32[]\n"
                                       "root %5\n";
    std::ofstream(dir_ / "fine.txt") << "# burnmark program\n"
                                        "%0 = leaf f32[2] [1, 2]\n"
                                        "%1 = exp %0 : f32[2]\n"
                                        "root %1\n";
  }
};

TEST_F(ReproCommand, WritesMinimisedCppAndPythonReproducers) {
  const Result cpp = run(kPlanted, "repro --lang cpp --out out bug.txt", dir_);
  ASSERT_EQ(cpp.status, 0) << cpp.err;
  std::vector<fs::path> sources;
  for (const auto& e : fs::directory_iterator(dir_ / "out"))
    if (e.path().extension() == ".cpp") sources.push_back(e.path());
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "CMakeLists.txt"));
  const std::string source = slurp(sources[0]);
  EXPECT_NE(source.find("neg"), std::string::npos);
  // Minimised: the add and sum that only carried the damage are gone.
  EXPECT_EQ(source.find("sum"), std::string::npos) << source;
  EXPECT_NE(slurp(dir_ / "out" / "CMakeLists.txt").find(sources[0].stem().string()),
            std::string::npos);
  EXPECT_NE(cpp.out.find(sources[0].filename().string()), std::string::npos) << cpp.out;

  const Result py = run(kPlanted, "repro --lang python --out out bug.txt", dir_);
  ASSERT_EQ(py.status, 0) << py.err;
  const fs::path script = fs::path(sources[0]).replace_extension(".py");
  ASSERT_TRUE(fs::exists(script));
  EXPECT_NE(slurp(script).find("torch"), std::string::npos);
  if (std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0) {
    // The expected values are the (correct) reference's, so PyTorch agrees and it exits 0.
    EXPECT_EQ(std::system(("python3 " + script.string() + " >/dev/null 2>&1").c_str()), 0);
  } else {
    ASSERT_EQ(std::system(("python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read())' " +
                           script.string())
                              .c_str()),
              0)
        << "the emitted script is not even valid Python";
  }
}

TEST_F(ReproCommand, WithoutOutPrintsTheSourceAndNoMinimizeKeepsTheProgram) {
  const Result r = run(kPlanted, "repro --lang python --no-minimize bug.txt", dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("import torch"), std::string::npos);
  EXPECT_NE(r.out.find("sum"), std::string::npos);
}

TEST_F(ReproCommand, NothingToReproduceIsExitOneAndUsageIsExitTwo) {
  const Result fine = run(kPlanted, "repro --lang cpp fine.txt", dir_);
  EXPECT_EQ(fine.status, 1);
  EXPECT_NE(fine.err.find("nothing to reproduce"), std::string::npos) << fine.err;
  EXPECT_EQ(run(kPlanted, "repro bug.txt", dir_).status, 2);
  EXPECT_EQ(run(kPlanted, "repro --lang rust bug.txt", dir_).status, 2);
  EXPECT_EQ(run(kPlanted, "repro --lang cpp", dir_).status, 2);
  EXPECT_EQ(run(kPlanted, "repro --lang cpp missing.txt", dir_).status, 2);
}

// A bf16 bug whose program also diverges in f32 is known when its f32 signature is.
TEST_F(FindingsBookTest, AnEntryIsKnownByItsF32SignatureToo) {
  Ledger ledger;
  ledger.entries = {sample_entry("0123456789ab", 3)};
  std::string error;
  const Suppressions known = Suppressions::parse("fedcba987654 pow-grad-neg-zero in f32\n", error);
  ASSERT_EQ(error, "");
  const FindingsBook book(dir_, ledger, known, *runner_, *ref_, FindingsOptions{});
  EXPECT_EQ(book.ledger().entries.at(0).status, "known");
  EXPECT_EQ(book.ledger().entries.at(0).anchor, "pow-grad-neg-zero");
  ledger.entries[0].f32_signature.clear();
  const FindingsBook without(dir_, ledger, known, *runner_, *ref_, FindingsOptions{});
  EXPECT_EQ(without.ledger().entries.at(0).status, "new");
}
