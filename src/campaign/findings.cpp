// Diverging inputs to ledger entries (see findings.h).
#include "burnmark/campaign/findings.h"

#include <algorithm>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"
#include "burnmark/campaign/repro_files.h"
#include "burnmark/ir/text.h"
#include "burnmark/triage/signature.h"
#include "burnmark/triage/triage.h"

namespace burnmark {

namespace {

std::uint64_t input_hash(std::span<const std::uint8_t> bytes) {
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

} // namespace

FindingsBook::FindingsBook(std::filesystem::path dir, Ledger ledger, Suppressions known,
                           Runner& runner, Backend& reference, FindingsOptions options)
    : dir_(std::move(dir)), ledger_(std::move(ledger)), known_(std::move(known)), runner_(runner),
      reference_(reference), options_(std::move(options)) {
  // The known-bug list may have grown since the ledger was written.
  for (LedgerEntry& e : ledger_.entries) {
    e.status = status_of(e, e.anchor);
    for (const std::string& pre : e.pre_signatures)
      signature_of_pre_[pre] = e.signature;
  }
}

std::string FindingsBook::status_of(const LedgerEntry& entry, std::string& anchor) const {
  // A human's "filed" outranks the list: the list only says the bug was triaged.
  if (entry.status == "filed") {
    anchor = entry.anchor;
    return "filed";
  }
  const KnownBug* k = known_.find(entry.signature);
  if (k == nullptr && !entry.f32_signature.empty()) k = known_.find(entry.f32_signature);
  if (k == nullptr && !entry.reverse_signature.empty()) k = known_.find(entry.reverse_signature);
  if (k == nullptr && !entry.culprit_signature.empty()) k = known_.find(entry.culprit_signature);
  if (k == nullptr) k = known_.find_root(entry.roots);
  if (k != nullptr) {
    anchor = k->anchor;
    return "known";
  }
  anchor.clear();
  return "new";
}

IngestResult FindingsBook::ingest(std::span<const std::uint8_t> bytes, const Program& program,
                                  std::time_t now) {
  IngestResult result;
  const std::uint64_t hash = input_hash(bytes);
  if (!seen_inputs_.insert(hash).second) {
    result.kind = IngestKind::Duplicate;
    return result;
  }
  const std::optional<Finding> finding = analyse(runner_, program);
  if (!finding) return result;
  ++inputs_;
  const std::string pre = pre_signature(program, *finding);
  const std::string stamp = iso_utc(now);

  LedgerEntry* entry = nullptr;
  if (const auto it = signature_of_pre_.find(pre); it != signature_of_pre_.end())
    entry = ledger_.find(it->second);
  if (entry == nullptr) {
    const Characterization c = characterize(runner_, program, *finding, options_.minimize);
    ++minimisations_;
    signature_of_pre_[pre] = c.signature.id;
    entry = ledger_.find(c.signature.id);
    if (entry == nullptr) {
      ledger_.entries.push_back(LedgerEntry{});
      entry = &ledger_.entries.back();
      entry->signature = c.signature.id;
      entry->first_seen = stamp;
      entry->kinds = c.signature.kinds;
      entry->regressions = c.signature.regressions;
      entry->ops = c.signature.ops;
      entry->specials = c.signature.specials;
      entry->f32_signature = c.signature.f32_id;
      entry->reverse_signature = c.signature.reverse_id;
      entry->culprit_signature = c.signature.culprit_id;
      for (const RootCause& r : c.signature.roots) {
        entry->roots.push_back(r.id);
        entry->root_words.push_back(root_words(r));
      }
      entry->minimal_program = to_text(c.minimized);
      const std::filesystem::path bug_dir = dir_ / entry->signature;
      std::error_code ec;
      std::filesystem::create_directories(bug_dir, ec);
      std::string error = write_file_atomically(bug_dir / "minimal.txt", entry->minimal_program);
      const std::string title =
          fmt::format("burnmark {}: {} ({})", entry->signature, op_sequence(c.signature),
                      fmt::join(c.signature.kinds, ", "));
      std::string repro_error;
      std::optional<ReproCase> rc = reference_repro_case(
          reference_, c.minimized, title, options_.tolerance,
          RunOptions{options_.gradients, options_.tangents, options_.hessian}, repro_error);
      if (rc) {
        const std::string name = "repro_" + entry->signature;
        ReproFiles files;
        // A finding only torch-compile shows: its script (eager, compiled, float64 baseline).
        if (repro_path_for(c.minimized_verdict) == ReproPath::Compile)
          rc->path = ReproPath::Compile;
        // Forward mode, second order and torch.compile have a Python reproducer only.
        if (!rc->check_tangent && !rc->check_hvp && rc->path != ReproPath::Compile)
          repro_error = write_repro(bug_dir, name, *rc, ReproLang::Cpp, files);
        if (repro_error.empty())
          repro_error = write_repro(bug_dir, name, *rc, ReproLang::Python, files);
        const auto rel = [&](const std::filesystem::path& p) {
          return p.empty() ? std::string() : p.lexically_relative(dir_).string();
        };
        entry->repro_cpp = rel(files.cpp);
        entry->repro_cmake = rel(files.cmake);
        entry->repro_python = rel(files.python);
      }
      if (error.empty() && !repro_error.empty())
        error = fmt::format("{}: no reproducer: {}", entry->signature, repro_error);
      result.error = error;
      result.kind = IngestKind::NewSignature;
    }
    if (std::find(entry->pre_signatures.begin(), entry->pre_signatures.end(), pre) ==
        entry->pre_signatures.end())
      entry->pre_signatures.push_back(pre);
  }
  if (result.kind != IngestKind::NewSignature) result.kind = IngestKind::Seen;
  if (!met_[entry->signature]) {
    met_[entry->signature] = true;
    ++signatures_this_run_;
  }

  // The input is on disk before the ledger counts it, so the ledger never names a missing file.
  const std::filesystem::path bug_dir = dir_ / entry->signature;
  std::error_code ec;
  std::filesystem::create_directories(bug_dir, ec);
  const std::string name = fmt::format("input-{:016x}.bin", hash);
  result.signature = entry->signature;
  // Saved by an earlier campaign: already counted there.
  if (std::filesystem::exists(bug_dir / name, ec)) {
    result.kind = result.kind == IngestKind::NewSignature ? result.kind : IngestKind::Duplicate;
  } else {
    const std::string error = write_file_atomically(
        bug_dir / name, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        /*durable=*/false);
    if (!error.empty() && result.error.empty()) result.error = error;
    if (entry->example.empty() && error.empty()) entry->example = entry->signature + "/" + name;
    ++entry->count;
  }
  if (entry->first_seen.empty()) entry->first_seen = stamp;
  entry->last_seen = stamp;
  entry->status = status_of(*entry, entry->anchor);
  dirty_ = true;
  const auto since = std::chrono::steady_clock::now() - last_save_;
  if (result.kind == IngestKind::NewSignature ||
      since >= std::chrono::duration<double>(options_.save_every)) {
    const std::string save_error = save(now);
    if (!save_error.empty() && result.error.empty()) result.error = save_error;
  }
  return result;
}

std::string FindingsBook::save(std::time_t now) {
  last_save_ = std::chrono::steady_clock::now();
  std::string error = save_ledger(dir_, ledger_, now);
  if (error.empty()) dirty_ = false;
  return error;
}

} // namespace burnmark
