// Merging campaign directories (`burnmark campaign --merge DIR...`): the findings of several
// machines' campaigns, each its own --out, into one directory, which a later campaign continues
// as if it had found them all.
//
// What is merged, and how:
//   ledger entries  one per signature; first_seen is the earliest, last_seen the latest; status
//                   the strongest (filed > known > new, with its anchor); kinds, regressions and
//                   pre-signatures the union; the minimal program and reproducers the first
//                   directory's (the same signature is the same minimal bug)
//   <signature>/    every file copied unless the merged directory has one of that name: saved
//                   inputs are named by the hash of their bytes (input-<fnv1a64>.bin), so an
//                   input two machines both found is one input
//   counts          the saved inputs in the merged <signature>/ (recount_from_disk): the sum of
//                   the directories' counts less the inputs they share, equal to the files on
//                   disk. Merging a directory again (or one already merged) adds nothing.
//   crashes/        the fuzzer's own artifacts (named by the hash of their bytes), as inputs are
//   corpus/         libFuzzer's -merge=1 over the sources' corpora into the merged one, run with
//                   the fuzz target (the inputs that add coverage, none twice)
// The merged directory is locked as a campaign locks it (the caller); the sources are only read,
// and should be directories whose campaigns have ended.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "burnmark/campaign/ledger.h"

namespace burnmark {

struct MergeOptions {
  std::filesystem::path out;                  // the merged directory (created; may hold a ledger)
  std::vector<std::filesystem::path> sources; // campaign directories, each with a ledger.json
  // The fuzz target whose -merge=1 merges the corpora; empty: corpora are not merged.
  std::filesystem::path fuzzer;
  // BURNMARK_KNOWN_BUGS for the fuzzer (empty: none), as a campaign passes it to its workers.
  std::filesystem::path known_bugs;
  std::vector<std::string> extra_fuzzer_args; // appended to the -merge=1 command line
};

struct MergeSummary {
  // Set when the merge could not be done. Sources are all checked before anything is written; a
  // corpus merge that fails leaves the ledger and findings merged.
  std::string error;
  std::string target;             // the ledgers' fuzz target
  std::size_t entries_added = 0;  // signatures new to the merged ledger
  std::size_t entries_joined = 0; // signatures it had, joined with a source's
  std::uint64_t inputs_added = 0; // saved inputs copied in (not already there)
  std::uint64_t crashes_added = 0;
  bool corpus_merged = false;
  std::uint64_t corpus_before = 0, corpus_after = 0; // files in the merged corpus/
};

// Joins `from` (the same signature) into `into` by the rules above; the count is left to
// recount_from_disk.
void merge_entry(LedgerEntry& into, const LedgerEntry& from);

// Merges the sources into options.out and writes its ledger. `now` is for the ledger's age column.
MergeSummary merge_campaigns(const MergeOptions& options, std::time_t now);

} // namespace burnmark
