// The campaign ledger: one entry per distinct bug (signature) a campaign has seen, kept in
// findings/ledger.json (for tools) and findings/ledger.md (for people), both rewritten
// atomically after every change so a killed campaign always leaves a readable ledger.
//
// Following the seed project's bug log, time since a bug was found is part of each entry: a
// bug nobody has filed is a number that keeps growing, not a flag that is easy to ignore.
// Status:
//   new    not in corpus/known_bugs.txt (the list of triaged bugs) — to be looked at and filed
//   known  listed in corpus/known_bugs.txt (the anchor says where in bugs.md)
//   filed  set by hand in ledger.json once reported upstream; a campaign never overwrites it
// Reading an existing ledger continues it: counts add up, first-seen dates are kept.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace burnmark {

struct LedgerEntry {
  std::string signature;  // 12 hex digits (triage signature id)
  std::string status;     // "new", "known" or "filed"
  std::string anchor;     // bugs.md anchor when known or filed, else ""
  std::string first_seen; // ISO 8601 UTC, e.g. 2026-11-30T14:05:09Z
  std::string last_seen;
  std::uint64_t count = 0;        // diverging inputs with this signature, over every campaign
  std::vector<std::string> kinds; // "backend:kind", sorted
  // Signature::regressions: "libtorch:forward<libtorch@1.13" where the older release agreed with
  // the reference. Regressions come first in ledger.md, ahead of any count.
  std::vector<std::string> regressions;
  std::vector<std::string> ops; // op labels of the minimal program, canonical order
  std::vector<std::string> specials;
  std::string minimal_program; // text form
  std::string example;         // a saved diverging input, relative to the findings dir
  std::string repro_cpp;       // relative to the findings dir; "" when none was written
  std::string repro_cmake;
  std::string repro_python;
  // A backend's crash, hang or OOM: a script running the program against that backend (there
  // are no C++ or Python reproducers: LibTorch is not involved).
  std::string repro_shell;
  // Pre-signatures already mapped to this signature, so a continued campaign does not minimise
  // the same bug again.
  std::vector<std::string> pre_signatures;
  // A reduced-dtype bug whose program also diverges in f32: that f32 signature, by which the
  // known-bug list may know it (Signature::f32_id); "" otherwise.
  std::string f32_signature;
  // A forward-mode bug that diverges the same way in reverse mode alone: that signature
  // (Signature::reverse_id); "" otherwise.
  std::string reverse_signature;
  // Signature::culprit_id, by which a broad known-bug line may know it.
  std::string culprit_signature;
  // Signature::roots: their ids, by which the known-bug list knows a fault reached through
  // another op graph, dtype or mode, and each in words ("libtorch:forward culprit=softshrink[0]
  // trigger=nan dtype=any"), in the same order. ledger.md lists root causes first.
  std::vector<std::string> roots;
  std::vector<std::string> root_words;
  // The fix-and-continue patches (corpus/patches.txt ids) active in the campaign that first saw
  // this signature: a bug found behind a patched op is found only thanks to the patch. Empty:
  // none (or a ledger written before patches).
  std::vector<std::string> patches;
};

struct Ledger {
  std::string target; // the fuzz target the campaign ran
  std::vector<LedgerEntry> entries;

  LedgerEntry* find(std::string_view signature);
  const LedgerEntry* find(std::string_view signature) const;
};

// ISO 8601 UTC with seconds, e.g. "2026-11-30T14:05:09Z".
std::string iso_utc(std::time_t t);
// The root-cause key of an entry (its root ids joined by '+'), or its signature when it has none
// (a ledger written before root causes).
std::string root_key_of(const LedgerEntry& entry);

// Parses what iso_utc writes (a date alone, "YYYY-MM-DD", is midnight); -1 when malformed.
std::time_t parse_iso_utc(std::string_view text);
// Whole days from `first_seen` to `now`; 0 when first_seen is malformed or in the future.
std::int64_t days_since(std::string_view first_seen, std::time_t now);

// `now` is only used for the days-since column.
std::string ledger_to_json(const Ledger& ledger, std::time_t now);
std::string ledger_to_markdown(const Ledger& ledger, std::time_t now);
// "" on success, else a one-line reason. Unknown fields are ignored; a missing count is 0.
std::string ledger_from_json(std::string_view text, Ledger& out);

// Writes ledger.json and ledger.md in `dir`, each atomically. "" on success.
std::string save_ledger(const std::filesystem::path& dir, const Ledger& ledger, std::time_t now);
// Reads dir/ledger.json; a missing file is an empty ledger (returns ""), a malformed one an
// error.
std::string load_ledger(const std::filesystem::path& dir, Ledger& out);

} // namespace burnmark
