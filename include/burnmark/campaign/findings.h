// Turning diverging fuzzer inputs into ledger entries, one at a time, as a campaign finds them.
//
// Per input: decode (the caller), one check, analyse() (one or two checks per register), look the
// pre-signature up in a cache; only a pre-signature never met before is minimised (hundreds of
// runs) to get the signature. A signature never met before gets a directory
// findings/<signature>/ with the minimal program and its C++ and Python reproducers. Every
// diverging input is saved there as input-<fnv1a64>.bin; an input already saved (libFuzzer's
// fork mode replays its corpus in every job) is not counted twice, so an entry's count is the
// number of distinct inputs in its directory (a resumed campaign recounts them:
// recount_from_disk).
//
// A backend's crash, hang or OOM (its child process died, stopped answering or grew too big) is
// a finding of that backend, not of the program's ops: one signature per backend + kind +
// signal, no minimising (every program may crash it), and a shell reproducer that runs the
// program against that backend with `burnmark run` instead of a LibTorch one.
//
// The ledger is rewritten atomically when a new bug appears and otherwise at most once per
// `save_every` seconds (a campaign can ingest hundreds of inputs a second), and by flush().
// Whenever it is read it is a consistent, possibly slightly older, state.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "burnmark/campaign/ledger.h"
#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/triage/minimize.h"
#include "burnmark/triage/runner.h"
#include "burnmark/triage/suppress.h"

namespace burnmark {

struct FindingsOptions {
  bool gradients = true;   // compare (and reproduce) leaf gradients
  bool tangents = false;   // and the forward-mode tangent (BURNMARK_TANGENTS)
  bool hessian = false;    // and each leaf's H·v (BURNMARK_HVP, with gradients)
  double tolerance = 1e-4; // written into the reproducers
  MinimizeOptions minimize;
  double save_every = 1.0; // seconds between ledger rewrites for repeat hits
  // The patches active in this campaign (ids), recorded with each signature it sees first.
  std::vector<std::string> patches;
};

enum class IngestKind {
  Agreed,       // the backends agree on it here (flaky, or decoded differently): ignored
  Duplicate,    // these exact bytes were already counted
  NewSignature, // first input of a bug: minimised, directory and reproducers written
  Seen,         // another input of a bug already in the ledger
};

struct IngestResult {
  IngestKind kind = IngestKind::Agreed;
  std::string signature;
  std::string error; // a file that could not be written; the ledger still counts the input
  // A backend's crash, hang or OOM: signed backend + kind + signal, not minimised, its repro a
  // shell script running the program against that backend.
  bool backend_failure = false;
};

// The diverging inputs saved in one bug's directory (input-<16 hex>.bin files).
std::uint64_t count_saved_inputs(const std::filesystem::path& bug_dir);

// Sets each entry's count to the inputs saved in its directory, the truth a killed campaign may
// not have written into the ledger yet (it rewrites the ledger at most once a second). Returns
// one line per entry that changed: "0123456789ab: the ledger counted 7, 9 inputs are saved".
std::vector<std::string> recount_from_disk(const std::filesystem::path& dir, Ledger& ledger);

class FindingsBook {
public:
  // `reference` must be the runner's first backend. `ledger` is continued (load_ledger).
  FindingsBook(std::filesystem::path dir, Ledger ledger, Suppressions known, Runner& runner,
               Backend& reference, FindingsOptions options);

  IngestResult ingest(std::span<const std::uint8_t> bytes, const Program& program, std::time_t now);

  // Writes the ledger now. "" on success.
  std::string save(std::time_t now);
  // Writes the ledger if an ingest changed it since the last write. "" on success.
  std::string flush(std::time_t now) { return dirty_ ? save(now) : ""; }

  const Ledger& ledger() const { return ledger_; }
  std::size_t minimisations() const { return minimisations_; }
  std::size_t signatures_this_run() const { return signatures_this_run_; }
  std::uint64_t inputs() const { return inputs_; }

private:
  std::string status_of(const LedgerEntry& entry, std::string& anchor) const;
  IngestResult ingest_failure(std::span<const std::uint8_t> bytes, std::uint64_t hash,
                              const Program& program, const Divergence& failure, std::time_t now);
  // Saves the input in the entry's directory (unless there already) and counts it.
  void record_input(LedgerEntry& entry, std::span<const std::uint8_t> bytes, std::uint64_t hash,
                    std::time_t now, IngestResult& result);

  std::filesystem::path dir_;
  Ledger ledger_;
  Suppressions known_;
  Runner& runner_;
  Backend& reference_;
  FindingsOptions options_;
  std::unordered_map<std::string, std::string> signature_of_pre_;
  std::size_t minimisations_ = 0;
  std::size_t signatures_this_run_ = 0; // distinct signatures met by this process
  std::unordered_map<std::string, bool> met_;
  std::uint64_t inputs_ = 0;
  std::unordered_set<std::uint64_t> seen_inputs_; // fnv1a64 of inputs ingested by this process
  bool dirty_ = false;
  std::chrono::steady_clock::time_point last_save_{};
};

} // namespace burnmark
