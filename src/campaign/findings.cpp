// Diverging inputs to ledger entries (see findings.h).
#include "burnmark/campaign/findings.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>

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

// The divergence that is a backend's own failure (its child died, hung or grew too big), if any;
// the first by backend name, so that one program always gets the same answer.
const Divergence* backend_failure(const Verdict& verdict) {
  const Divergence* best = nullptr;
  for (const Divergence& d : verdict.divergences) {
    const bool failure = d.kind == DivergenceKind::Crash || d.kind == DivergenceKind::Hang ||
                         d.kind == DivergenceKind::Oom;
    if (failure && (best == nullptr || d.backend < best->backend)) best = &d;
  }
  return best;
}

// "SIGSEGV" from the child backend's "... killed by signal 11 (Segmentation fault) ...", "exit 3"
// from "... exited with status 3 ..."; "" for a hang or an OOM (the campaign's own SIGKILL says
// nothing about the bug). Part of the signature: a segfault and an abort are two bugs.
std::string failure_signal(const std::string& detail) {
  int number = 0;
  if (const std::size_t at = detail.find("killed by signal "); at != std::string::npos) {
    number = std::atoi(detail.c_str() + at + 17);
    if (const char* abbrev = ::sigabbrev_np(number)) return fmt::format("SIG{}", abbrev);
    return fmt::format("signal {}", number);
  }
  if (const std::size_t at = detail.find("exited with status "); at != std::string::npos)
    return fmt::format("exit {}", std::atoi(detail.c_str() + at + 19));
  return "";
}

bool is_saved_input(const std::string& name) {
  return name.size() == 26 && name.starts_with("input-") && name.ends_with(".bin");
}

} // namespace

std::uint64_t count_saved_inputs(const std::filesystem::path& bug_dir) {
  std::error_code ec;
  std::uint64_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(bug_dir, ec))
    n += e.is_regular_file(ec) && is_saved_input(e.path().filename().string()) ? 1 : 0;
  return n;
}

std::vector<std::string> recount_from_disk(const std::filesystem::path& dir, Ledger& ledger) {
  std::vector<std::string> changes;
  for (LedgerEntry& e : ledger.entries) {
    const std::uint64_t saved = count_saved_inputs(dir / e.signature);
    if (saved == e.count) continue;
    changes.push_back(
        fmt::format("{}: the ledger counted {}, {} inputs are saved", e.signature, e.count, saved));
    e.count = saved;
  }
  return changes;
}

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
  // One run decides: a backend's crash, hang or OOM is that backend's finding, whatever ops the
  // program holds; anything else is analysed (culprit, pre-signature) from this same verdict.
  const Verdict verdict = runner_.check(program);
  if (verdict.agree()) return result;
  if (const Divergence* failure = backend_failure(verdict))
    return ingest_failure(bytes, hash, program, *failure, now);
  const std::optional<Finding> finding = analyse(runner_, program, verdict);
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
      entry->patches = options_.patches;
      // A campaign killed between saving an input of a new bug and writing the ledger left the
      // directory without an entry: its inputs count.
      entry->count = count_saved_inputs(dir_ / entry->signature);
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
  record_input(*entry, bytes, hash, now, result);
  return result;
}

void FindingsBook::record_input(LedgerEntry& entry, std::span<const std::uint8_t> bytes,
                                std::uint64_t hash, std::time_t now, IngestResult& result) {
  const std::string stamp = iso_utc(now);
  if (!met_[entry.signature]) {
    met_[entry.signature] = true;
    ++signatures_this_run_;
  }

  // The input is on disk before the ledger counts it, so the ledger never names a missing file.
  const std::filesystem::path bug_dir = dir_ / entry.signature;
  std::error_code ec;
  std::filesystem::create_directories(bug_dir, ec);
  const std::string name = fmt::format("input-{:016x}.bin", hash);
  result.signature = entry.signature;
  // Saved by an earlier campaign: already counted there.
  if (std::filesystem::exists(bug_dir / name, ec)) {
    result.kind = result.kind == IngestKind::NewSignature ? result.kind : IngestKind::Duplicate;
  } else {
    const std::string error = write_file_atomically(
        bug_dir / name, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        /*durable=*/false);
    if (!error.empty() && result.error.empty()) result.error = error;
    if (entry.example.empty() && error.empty()) entry.example = entry.signature + "/" + name;
    ++entry.count;
  }
  if (entry.first_seen.empty()) {
    entry.first_seen = stamp;
    entry.patches = options_.patches;
  }
  entry.last_seen = stamp;
  entry.status = status_of(entry, entry.anchor);
  dirty_ = true;
  const auto since = std::chrono::steady_clock::now() - last_save_;
  if (result.kind == IngestKind::NewSignature ||
      since >= std::chrono::duration<double>(options_.save_every)) {
    const std::string save_error = save(now);
    if (!save_error.empty() && result.error.empty()) result.error = save_error;
  }
}

IngestResult FindingsBook::ingest_failure(std::span<const std::uint8_t> bytes, std::uint64_t hash,
                                          const Program& program, const Divergence& failure,
                                          std::time_t now) {
  ++inputs_;
  IngestResult result;
  result.backend_failure = true;
  const std::string cls = divergence_class(failure);
  const std::string signal = failure_signal(failure.detail);
  const std::string words = signal.empty() ? cls : fmt::format("{} {}", cls, signal);
  const std::string id = short_id("backend-failure|" + words);
  LedgerEntry* entry = ledger_.find(id);
  if (entry == nullptr) {
    ledger_.entries.push_back(LedgerEntry{});
    entry = &ledger_.entries.back();
    entry->signature = id;
    entry->first_seen = iso_utc(now);
    entry->patches = options_.patches;
    entry->count = count_saved_inputs(dir_ / id);
    entry->kinds = {cls};
    // No ops: the program is whatever the fuzzer happened to run when the backend died.
    entry->roots = {id};
    entry->root_words = {words};
    entry->minimal_program = to_text(program);
    const std::filesystem::path bug_dir = dir_ / id;
    std::error_code ec;
    std::filesystem::create_directories(bug_dir, ec);
    std::string error = write_file_atomically(bug_dir / "minimal.txt", entry->minimal_program);
    // The repro is the program run against that backend (LibTorch has nothing to do with it):
    // `burnmark run` reports the crash, hang or OOM and exits non-zero.
    const std::string reference = runner_.backends().front()->name();
    const std::string script = fmt::format(
        "#!/bin/sh\n# burnmark {}: {}\n# ({})\n# Runs the program that met it against "
        "that backend; `burnmark run` reports the {} and exits non-zero.\n"
        "cd \"$(dirname \"$0\")\" && BACKENDS='{},{}' exec \"${{BURNMARK:-burnmark}}\" run "
        "minimal.txt\n",
        id, words, failure.detail, kind_name(failure.kind), reference, failure.backend);
    const std::string repro_name = "repro_" + id + ".sh";
    if (error.empty()) error = write_file_atomically(bug_dir / repro_name, script);
    if (error.empty()) {
      std::filesystem::permissions(bug_dir / repro_name,
                                   std::filesystem::perms::owner_exec |
                                       std::filesystem::perms::group_exec |
                                       std::filesystem::perms::others_exec,
                                   std::filesystem::perm_options::add, ec);
      entry->repro_shell = id + "/" + repro_name;
    }
    result.error = error;
    result.kind = IngestKind::NewSignature;
  } else {
    result.kind = IngestKind::Seen;
  }
  record_input(*entry, bytes, hash, now, result);
  return result;
}

std::string FindingsBook::save(std::time_t now) {
  last_save_ = std::chrono::steady_clock::now();
  std::string error = save_ledger(dir_, ledger_, now);
  if (error.empty()) dirty_ = false;
  return error;
}

} // namespace burnmark
