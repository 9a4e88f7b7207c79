// `burnmark campaign --merge`: campaign directories from several machines merged into one. The
// merged counts are the distinct saved inputs (the sum of the directories' counts less the inputs
// they share, checked against the file names), first/last seen the earliest/latest, and merging a
// directory again adds nothing. Hand-made ledgers test the rules; two short real campaigns with
// the planted-bug plugin (as test_campaign) test the command, corpora merged by -merge=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "burnmark/campaign/atomic_file.h"
#include "burnmark/campaign/findings.h"
#include "burnmark/campaign/ledger.h"
#include "burnmark/campaign/merge.h"

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

// The saved-input file names in a bug's directory.
std::set<std::string> inputs_in(const fs::path& bug_dir) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(bug_dir)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("input-") && n.ends_with(".bin")) names.insert(n);
  }
  return names;
}

std::string input_name(int i) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016x", i);
  return std::string("input-") + hex + ".bin";
}

LedgerEntry entry(const std::string& sig, const std::string& status, const std::string& first,
                  const std::string& last, std::vector<std::string> kinds) {
  LedgerEntry e;
  e.signature = sig;
  e.status = status;
  e.first_seen = first;
  e.last_seen = last;
  e.kinds = std::move(kinds);
  e.ops = {"neg"};
  e.minimal_program = "%0 = leaf f32[1] [1]\n%1 = neg %0 : f32[1]\nroot %1\n";
  e.example = sig + "/" + input_name(0);
  return e;
}

// A campaign directory holding `entries`, each with the saved inputs numbered in `inputs`
// (the ledger's count deliberately left at 0: the merge must count the files).
void make_campaign(const fs::path& dir, const std::vector<LedgerEntry>& entries,
                   const std::vector<std::vector<int>>& inputs, const std::string& target) {
  Ledger l;
  l.target = target;
  l.entries = entries;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    fs::create_directories(dir / entries[i].signature);
    std::ofstream(dir / entries[i].signature / "minimal.txt") << entries[i].minimal_program;
    for (int n : inputs[i])
      std::ofstream(dir / entries[i].signature / input_name(n)) << "bytes " << n;
  }
  ASSERT_EQ(save_ledger(dir, l, 0), "");
}

TEST(CampaignMerge, EntryTakesEarliestFirstLatestLastStrongestStatusAndUnions) {
  LedgerEntry a = entry("aaaaaaaaaaaa", "new", "2026-11-02T00:00:00Z", "2026-11-05T00:00:00Z",
                        {"libtorch:forward"});
  const LedgerEntry b = entry("aaaaaaaaaaaa", "filed", "2026-11-01T12:00:00Z",
                              "2026-11-04T00:00:00Z", {"libtorch:gradient", "libtorch:forward"});
  LedgerEntry b_filed = b;
  b_filed.anchor = "issue-123";
  a.patches = {"eigen-sqrt-inf"};
  b_filed.patches = {"eigen-sqrt-inf", "eigen-log-subnormal"};
  merge_entry(a, b_filed);
  // The patches on at the first sighting: b's, the earlier.
  EXPECT_EQ(a.patches, (std::vector<std::string>{"eigen-sqrt-inf", "eigen-log-subnormal"}));
  EXPECT_EQ(a.first_seen, "2026-11-01T12:00:00Z"); // b's, the earlier
  EXPECT_EQ(a.last_seen, "2026-11-05T00:00:00Z");  // a's, the later
  EXPECT_EQ(a.status, "filed");                    // a human's word outranks "new"
  EXPECT_EQ(a.anchor, "issue-123");
  EXPECT_EQ(a.kinds, (std::vector<std::string>{"libtorch:forward", "libtorch:gradient"}));
  // A weaker status never downgrades.
  LedgerEntry known = entry("aaaaaaaaaaaa", "known", "", "", {});
  known.anchor = "bug-7";
  merge_entry(known, entry("aaaaaaaaaaaa", "new", "2026-11-03T00:00:00Z", "", {}));
  EXPECT_EQ(known.status, "known");
  EXPECT_EQ(known.anchor, "bug-7");
  EXPECT_EQ(known.first_seen, "2026-11-03T00:00:00Z"); // a missing date loses to a real one
  // A later sighting's patches do not replace the earlier one's.
  LedgerEntry early = entry("aaaaaaaaaaaa", "new", "2026-11-01T00:00:00Z", "", {});
  LedgerEntry late = entry("aaaaaaaaaaaa", "new", "2026-11-09T00:00:00Z", "", {});
  late.patches = {"eigen-sqrt-inf"};
  merge_entry(early, late);
  EXPECT_TRUE(early.patches.empty());
}

TEST(CampaignMerge, CountsAreTheDistinctInputsOnDiskAndMergingAgainAddsNothing) {
  const fs::path root = scratch_dir("rules");
  const std::string s1 = "111111111111", s2 = "222222222222";
  // Machine A: s1 with inputs 1, 2, 3. Machine B: s1 with 3, 4 (3 found by both) and s2 with 5.
  make_campaign(root / "a",
                {entry(s1, "new", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z", {"p:error"})},
                {{1, 2, 3}}, "fuzz_autograd");
  make_campaign(root / "b",
                {entry(s1, "new", "2026-11-01T00:00:00Z", "2026-11-02T06:00:00Z", {"p:error"}),
                 entry(s2, "new", "2026-11-01T08:00:00Z", "2026-11-01T09:00:00Z", {"p:gradient"})},
                {{3, 4}, {5}}, "fuzz_autograd");
  std::ofstream(root / "b" / "unrelated.txt") << "not a finding";

  MergeOptions o;
  o.out = root / "merged";
  o.sources = {root / "a", root / "b"};
  const MergeSummary first = merge_campaigns(o, 0);
  ASSERT_EQ(first.error, "");
  EXPECT_EQ(first.entries_added, 2u);  // s1 from a, s2 from b
  EXPECT_EQ(first.entries_joined, 1u); // b's s1
  EXPECT_EQ(first.inputs_added, 5u);   // 1, 2, 3 from a; 4 and 5 from b (3 is there already)
  Ledger m;
  ASSERT_EQ(load_ledger(o.out, m), "");
  EXPECT_EQ(m.target, "fuzz_autograd");
  ASSERT_EQ(m.entries.size(), 2u);
  const LedgerEntry* e1 = m.find(s1);
  const LedgerEntry* e2 = m.find(s2);
  ASSERT_NE(e1, nullptr);
  ASSERT_NE(e2, nullptr);
  EXPECT_EQ(e1->count, 3u + 2u - 1u); // the sum less the input both saved
  EXPECT_EQ(e1->count, inputs_in(o.out / s1).size());
  EXPECT_EQ(e2->count, 1u);
  EXPECT_EQ(e2->count, inputs_in(o.out / s2).size());
  EXPECT_EQ(e1->first_seen, "2026-11-01T00:00:00Z");
  EXPECT_EQ(e1->last_seen, "2026-11-03T00:00:00Z");
  EXPECT_TRUE(fs::exists(o.out / s1 / "minimal.txt"));
  EXPECT_FALSE(fs::exists(o.out / "unrelated.txt")) << "only findings are merged";

  // Idempotent: b again, and a and b together again, change no count and copy nothing.
  o.sources = {root / "b"};
  const MergeSummary again = merge_campaigns(o, 0);
  ASSERT_EQ(again.error, "");
  EXPECT_EQ(again.entries_added, 0u);
  EXPECT_EQ(again.inputs_added, 0u);
  o.sources = {root / "a", root / "b", root / "a"};
  ASSERT_EQ(merge_campaigns(o, 0).error, "");
  Ledger m2;
  ASSERT_EQ(load_ledger(o.out, m2), "");
  ASSERT_EQ(m2.entries.size(), 2u);
  EXPECT_EQ(m2.find(s1)->count, 4u);
  EXPECT_EQ(m2.find(s2)->count, 1u);
  EXPECT_EQ(m2.find(s1)->first_seen, e1->first_seen);
  EXPECT_EQ(m2.find(s1)->last_seen, e1->last_seen);
}

TEST(CampaignMerge, RefusesAnotherTargetANonCampaignAndItself) {
  const fs::path root = scratch_dir("refuse");
  make_campaign(root / "a", {entry("111111111111", "new", "", "", {})}, {{1}}, "fuzz_autograd");
  make_campaign(root / "t", {entry("222222222222", "new", "", "", {})}, {{2}}, "fuzz_tensor_ops");
  fs::create_directories(root / "empty");
  MergeOptions o;
  o.out = root / "a";
  o.sources = {root / "t"};
  EXPECT_NE(merge_campaigns(o, 0).error.find("holds a fuzz_tensor_ops ledger, not fuzz_autograd"),
            std::string::npos);
  o.sources = {root / "empty"};
  EXPECT_NE(merge_campaigns(o, 0).error.find("not a campaign directory"), std::string::npos);
  o.sources = {root / "a"};
  EXPECT_NE(merge_campaigns(o, 0).error.find("the merged directory itself"), std::string::npos);
  Ledger a;
  ASSERT_EQ(load_ledger(root / "a", a), "");
  EXPECT_EQ(a.entries.size(), 1u) << "a refused merge writes nothing";
}

struct Result {
  int status = -1;
  std::string out, err;
};

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

// Two machines' campaigns (two directories, two libFuzzer seeds) on the planted neg bug, merged.
TEST(CampaignMergeCommand, TwoRealCampaignsMergeIntoOneLedgerWhoseCountsAreTheFiles) {
  const fs::path dir = scratch_dir("command");
  const std::string fuzzer = std::string(" --fuzzer ") + BURNMARK_FUZZ_AUTOGRAD;
  const std::string seeds =
      std::string(" --seeds ") + BURNMARK_TEST_SOURCE_DIR + "/corpus/fuzz_autograd";
  for (const char* m : {"a", "b"}) {
    const Result r = run(kPlanted,
                         "campaign" + fuzzer + seeds + " --time 6 --workers 1 --out " + m +
                             " -- -seed=" + (m[0] == 'a' ? "7" : "8"),
                         dir);
    ASSERT_EQ(r.status, 1) << r.err; // the planted bug, new
  }
  Ledger a, b;
  ASSERT_EQ(load_ledger(dir / "a", a), "");
  ASSERT_EQ(load_ledger(dir / "b", b), "");
  ASSERT_EQ(a.entries.size(), 1u);
  ASSERT_EQ(b.entries.size(), 1u);
  const std::string sig = a.entries[0].signature;
  ASSERT_EQ(b.entries[0].signature, sig) << "one planted bug, one signature on both machines";
  const std::set<std::string> in_a = inputs_in(dir / "a" / sig), in_b = inputs_in(dir / "b" / sig);
  std::size_t shared = 0;
  for (const std::string& n : in_a)
    shared += in_b.count(n);
  const std::size_t corpus_a = std::distance(fs::directory_iterator(dir / "a" / "corpus"), {});

  const Result merged = run(kPlanted, "campaign" + fuzzer + " --out m --merge a b", dir);
  ASSERT_EQ(merged.status, 0) << merged.err << merged.out;
  EXPECT_NE(merged.out.find("MERGE target=fuzz_autograd sources=2 ledger=1 added=1 joined=1"),
            std::string::npos)
      << merged.out;
  Ledger m;
  ASSERT_EQ(load_ledger(dir / "m", m), "");
  ASSERT_EQ(m.entries.size(), 1u);
  const LedgerEntry& e = m.entries[0];
  EXPECT_EQ(e.count, a.entries[0].count + b.entries[0].count - shared);
  EXPECT_EQ(e.count, in_a.size() + in_b.size() - shared);
  EXPECT_EQ(e.count, inputs_in(dir / "m" / sig).size());
  EXPECT_EQ(e.first_seen, std::min(a.entries[0].first_seen, b.entries[0].first_seen));
  EXPECT_EQ(e.last_seen, std::max(a.entries[0].last_seen, b.entries[0].last_seen));
  EXPECT_TRUE(fs::exists(dir / "m" / e.repro_cpp));
  EXPECT_TRUE(fs::exists(dir / "m" / e.example));
  // -merge=1 keeps the inputs that add coverage: at least one, and never more than both hold.
  const std::size_t corpus_m = std::distance(fs::directory_iterator(dir / "m" / "corpus"), {});
  EXPECT_GT(corpus_m, 0u);
  EXPECT_LE(corpus_m, corpus_a + std::distance(fs::directory_iterator(dir / "b" / "corpus"), {}));
  EXPECT_NE(slurp(dir / "m" / ".scratch" / "merge.log").find("MERGE-OUTER"), std::string::npos);

  // Merging b again: the same counts, nothing copied.
  const Result again = run(kPlanted, "campaign" + fuzzer + " --out m --merge b", dir);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("inputs_added=0 crashes_added=0"), std::string::npos) << again.out;
  Ledger m2;
  ASSERT_EQ(load_ledger(dir / "m", m2), "");
  ASSERT_EQ(m2.entries.size(), 1u);
  EXPECT_EQ(m2.entries[0].count, e.count);
  // The corpus is not compared: an input's coverage depends on the process's history (the
  // known-bug filter's memo answers an input it has met, running less of the harness), so
  // libFuzzer's -merge=1 may keep a few more of b's inputs the second time.
  // A campaign continuing the merged directory finds its counts right (no recount needed).
  EXPECT_EQ(recount_from_disk(dir / "m", m2), std::vector<std::string>{});
}

} // namespace
