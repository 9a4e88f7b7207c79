// A fuzzing campaign: runs a libFuzzer target for a while on several workers (libFuzzer's own
// -fork=N), or in one process (workers = 0: for Python backends, whose child and compile cache
// a fork job would start afresh every few seconds), with MODE=continuous, and feeds every
// diverging input it saves into a FindingsBook, so a campaign ends with one ledger entry and one
// pair of reproducers per distinct bug.
//
// Findings directory layout:
//   ledger.json, ledger.md   the ledger (see ledger.h)
//   timeseries.tsv           one line per progress line, appended (see timeseries.h)
//   <signature>/             minimal.txt, repro_<signature>.{cpp,py}, CMakeLists.txt, inputs
//   corpus/                  libFuzzer's corpus, seeded from the target's seed corpus
//   crashes/                 crash-/timeout-/oom- artifacts of real crashes (not divergences)
//   .scratch/                the child's output: fuzzer.log, findings/ (BURNMARK_FINDINGS_DIR)
//
// Why files and not the child's report text: in -fork mode libFuzzer sends each worker's output
// to a log file and only its own status lines to the parent, so divergences reach the campaign
// through BURNMARK_FINDINGS_DIR. A saved input is named finding-<fnv1a64 of its bytes>, so a
// file still being written is recognised (its hash does not match yet) and retried later.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "burnmark/campaign/findings.h"
#include "burnmark/campaign/fuzzer_output.h"
#include "burnmark/ir/program.h"

namespace burnmark {

struct CampaignOptions {
  std::filesystem::path fuzzer; // the libFuzzer binary
  std::filesystem::path out;    // the findings directory
  std::filesystem::path seeds;  // copied into out/corpus when it exists; may be empty
  // The known-bug list the fuzz target skips (BURNMARK_KNOWN_BUGS in the child); empty leaves
  // the child's own default. Should be the list the FindingsBook marks as known.
  std::filesystem::path known_bugs;
  // BURNMARK_PATCHES in the fuzzer processes: the ids the campaign's gate passed, or "none".
  // Always set, so a worker never applies patches of its own choosing.
  std::string patches = "none";
  int seconds = 60; // -max_total_time
  // -fork=N; 0: one fuzzing process for the whole campaign (no -fork), restarted on the corpus
  // after a crash, so a Python backend's child and its compile cache live as long as the campaign
  int workers = 1;
  double progress_every = 3.0; // seconds between progress lines
  // Free space the findings directory's filesystem must keep: checked before the fuzzer starts
  // (below it, the campaign does not start) and at every progress line (below it, the campaign
  // stops early and says why), so a full disk never loses findings silently.
  std::uint64_t min_free_mb = 64;
  std::vector<std::string> extra_fuzzer_args; // appended to the fuzzer's command line
  // Decodes a saved input exactly as the fuzz target does (generate() with the env's knobs).
  std::function<Program(std::span<const std::uint8_t>)> decode;
  // Receives each progress line and each new-bug line (default: stderr).
  std::function<void(const std::string&)> report;
};

struct CampaignSummary {
  FuzzerStats stats;
  std::uint64_t diverging_inputs = 0; // distinct inputs counted in the ledger by this campaign
  std::uint64_t agreed_on_replay = 0; // saved by the fuzzer, but the backends agreed here
  std::uint64_t left_over = 0;        // saved inputs not ingested (interrupted, or backlog)
  std::uint64_t crashes = 0;          // the fuzzer's own crash artifacts moved to crashes/
  // Diverging inputs (among diverging_inputs) on which a backend crashed, hung or ran out of
  // memory: each is a finding of that backend (FindingsBook signs backend + kind + signal).
  std::uint64_t backend_failures = 0;
  std::uint64_t restarts = 0; // one-process mode: fuzzer runs started again after a crash
  // What patches buy (docs/patches.md): the fuzzer's inputs whose program contains an op a
  // patch line names for a plugin in BACKENDS (active or not), and of those the ones compared
  // to the end (every backend ran it; agreement or a finding, not a known bug), summed over the
  // fuzzer processes' .stats-<pid> files in .scratch/findings.
  std::uint64_t patched_op_inputs = 0;
  std::uint64_t patched_op_compared = 0;
  // All inputs the same files count (their `inputs`): the fraction's denominator. Above
  // stats.execs in fork mode, whose parent counts the jobs it has heard back from.
  std::uint64_t counted_inputs = 0;
  bool interrupted = false;     // SIGINT/SIGTERM
  bool stopped_at_time = false; // the campaign stopped the fuzzer because its time was up
  std::string stopped_early;    // why the campaign stopped before its time (a full disk)
  int fuzzer_status = 0;        // the child's exit status (128+signal when killed)
  std::string error;            // set when the campaign could not start
};

// Creates the directory layout, seeds the corpus, runs the child until its time is up (asking
// it to stop then, killing it 2 s later), ingesting findings as they appear, then drains the
// backlog until 5 s past the time (at least 1 s), and leaves the ledger written. On SIGINT/SIGTERM
// the child's process group is stopped at once and the campaign returns promptly with the ledger
// written; saved inputs not yet ingested stay in .scratch/findings, where the next campaign on the
// directory picks them up first.
CampaignSummary run_campaign(const CampaignOptions& options, FindingsBook& book);

// The arguments run_campaign passes to the fuzzer (exposed for tests and the --help text).
std::vector<std::string> fuzzer_arguments(const CampaignOptions& options);

} // namespace burnmark
