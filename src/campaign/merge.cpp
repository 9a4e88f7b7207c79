// Merging campaign directories into one (merge.h): ledger entries joined by signature, their
// directories' files copied by name, counts taken from the saved inputs on disk, and the corpora
// merged by the fuzz target's own -merge=1.
#include "burnmark/campaign/merge.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "burnmark/campaign/findings.h"
#include "spawn_env.h"

namespace burnmark {

namespace {

namespace fs = std::filesystem;

int status_rank(std::string_view status) {
  return status == "filed" ? 2 : status == "known" ? 1 : 0;
}

void union_into(std::vector<std::string>& into, const std::vector<std::string>& from) {
  into.insert(into.end(), from.begin(), from.end());
  std::sort(into.begin(), into.end());
  into.erase(std::unique(into.begin(), into.end()), into.end());
}

void fill_if_empty(std::string& into, const std::string& from) {
  if (into.empty()) into = from;
}

// The earlier (or later) of two ISO dates; a malformed one loses to a well-formed one.
std::string pick_date(const std::string& a, const std::string& b, bool earliest) {
  const std::time_t ta = parse_iso_utc(a), tb = parse_iso_utc(b);
  if (ta < 0) return tb < 0 ? (a.empty() ? b : a) : b;
  if (tb < 0) return a;
  return (earliest ? tb < ta : tb > ta) ? b : a;
}

// Copies the regular files of `from` (recursively) into `to`, keeping any file `to` already has
// under that name. Returns the number copied whose name `count_if` accepts; "" or an error line.
template <typename Pred>
std::string copy_new_files(const fs::path& from, const fs::path& to, Pred count_if,
                           std::uint64_t& counted) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return "";
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const fs::path target = to / fs::relative(it->path(), from, ec);
    if (fs::exists(target, ec)) continue;
    fs::create_directories(target.parent_path(), ec);
    if (!fs::copy_file(it->path(), target, fs::copy_options::skip_existing, ec) || ec)
      return fmt::format("cannot copy {} to {}: {}", it->path().string(), target.string(),
                         ec.message());
    counted += count_if(target.filename().string()) ? 1 : 0;
  }
  return ec ? fmt::format("cannot read {}: {}", from.string(), ec.message()) : "";
}

std::uint64_t files_in(const fs::path& dir) {
  std::error_code ec;
  std::uint64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec))
    n += e.is_regular_file(ec) ? 1 : 0;
  return n;
}

// The fuzzer as a campaign runs it (MODE=continuous, so a diverging input is no crash that would
// stop the merge), but saving nothing: the merge only measures coverage.
std::vector<std::string> merge_environment(const fs::path& known_bugs) {
  return campaign_detail::environment_with({
      {"MODE", "continuous"},
      {"BURNMARK_FINDINGS_DIR", ""},
      {"BURNMARK_FULL_REPORTS", "0"},
      {"BURNMARK_SUMMARY_EVERY", "1000000"},
      {"BURNMARK_KNOWN_BUGS", known_bugs.string()},
  });
}

// `fuzzer -merge=1 <out>/corpus <source>/corpus...`, its output appended to .scratch/merge.log.
std::string merge_corpora(const MergeOptions& o, const std::vector<fs::path>& corpora) {
  const fs::path log = o.out / ".scratch" / "merge.log";
  std::error_code ec;
  fs::create_directories(log.parent_path(), ec);
  std::vector<std::string> argv = {o.fuzzer.string(), "-merge=1",
                                   "-merge_control_file=" +
                                       (o.out / ".scratch" / "merge.control").string()};
  argv.insert(argv.end(), o.extra_fuzzer_args.begin(), o.extra_fuzzer_args.end());
  argv.push_back((o.out / "corpus").string());
  for (const fs::path& c : corpora)
    argv.push_back(c.string());
  std::vector<std::string> env = merge_environment(o.known_bugs);
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot write {}: {}", log.string(), std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  pid_t child = -1;
  const int rc = ::posix_spawn(&child, argv[0].c_str(), &actions, nullptr,
                               campaign_detail::c_strings(argv).data(),
                               campaign_detail::c_strings(env).data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fd);
  if (rc != 0) return fmt::format("cannot run {}: {}", o.fuzzer.string(), std::strerror(rc));
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fmt::format("{} -merge=1 exited {} (its output is in {})", o.fuzzer.string(),
                       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                       log.string());
  fs::remove(o.out / ".scratch" / "merge.control", ec);
  return "";
}

bool is_input_name(const std::string& name) {
  return name.starts_with("input-") && name.ends_with(".bin");
}

} // namespace

void merge_entry(LedgerEntry& into, const LedgerEntry& from) {
  if (status_rank(from.status) > status_rank(into.status)) {
    into.status = from.status;
    into.anchor = from.anchor;
  } else if (status_rank(from.status) == status_rank(into.status)) {
    fill_if_empty(into.anchor, from.anchor);
  }
  // The patches active at the first sighting: the earlier campaign's.
  const std::string first = pick_date(into.first_seen, from.first_seen, true);
  if (first != into.first_seen || into.first_seen.empty()) into.patches = from.patches;
  into.first_seen = first;
  into.last_seen = pick_date(into.last_seen, from.last_seen, false);
  union_into(into.kinds, from.kinds);
  union_into(into.regressions, from.regressions);
  union_into(into.pre_signatures, from.pre_signatures);
  // One signature is one minimal bug: these describe it the same way wherever it was found; a
  // ledger that lacks one (an older format, a reproducer that could not be written) takes it.
  if (into.ops.empty()) into.ops = from.ops;
  if (into.specials.empty()) into.specials = from.specials;
  if (into.roots.empty()) {
    into.roots = from.roots;
    into.root_words = from.root_words;
  }
  for (auto field : {&LedgerEntry::minimal_program, &LedgerEntry::example, &LedgerEntry::repro_cpp,
                     &LedgerEntry::repro_cmake, &LedgerEntry::repro_python,
                     &LedgerEntry::repro_shell, &LedgerEntry::f32_signature,
                     &LedgerEntry::reverse_signature, &LedgerEntry::culprit_signature})
    fill_if_empty(into.*field, from.*field);
}

MergeSummary merge_campaigns(const MergeOptions& o, std::time_t now) {
  MergeSummary s;
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) {
    s.error = fmt::format("cannot create {}: {}", o.out.string(), ec.message());
    return s;
  }
  Ledger merged;
  if (std::string e = load_ledger(o.out, merged); !e.empty()) {
    s.error = e;
    return s;
  }
  // Every source is read and checked before anything is written.
  std::vector<Ledger> ledgers(o.sources.size());
  std::string target = merged.target;
  for (std::size_t i = 0; i < o.sources.size(); ++i) {
    const fs::path& src = o.sources[i];
    if (fs::equivalent(src, o.out, ec)) {
      s.error = fmt::format("{} is the merged directory itself", src.string());
      return s;
    }
    if (!fs::is_regular_file(src / "ledger.json", ec)) {
      s.error = fmt::format("{}: not a campaign directory (no ledger.json)", src.string());
      return s;
    }
    if (std::string e = load_ledger(src, ledgers[i]); !e.empty()) {
      s.error = e;
      return s;
    }
    const std::string& t = ledgers[i].target;
    if (!t.empty() && !target.empty() && t != target) {
      s.error = fmt::format("{} holds a {} ledger, not {}", src.string(), t, target);
      return s;
    }
    if (target.empty()) target = t;
  }
  merged.target = target;
  s.target = target;

  std::vector<fs::path> corpora;
  for (std::size_t i = 0; i < o.sources.size(); ++i) {
    const fs::path& src = o.sources[i];
    for (const LedgerEntry& e : ledgers[i].entries) {
      if (LedgerEntry* have = merged.find(e.signature)) {
        merge_entry(*have, e);
        ++s.entries_joined;
      } else {
        merged.entries.push_back(e);
        ++s.entries_added;
      }
      s.error =
          copy_new_files(src / e.signature, o.out / e.signature, is_input_name, s.inputs_added);
      if (!s.error.empty()) return s;
    }
    s.error = copy_new_files(
        src / "crashes", o.out / "crashes", [](const std::string&) { return true; },
        s.crashes_added);
    if (!s.error.empty()) return s;
    if (files_in(src / "corpus") > 0) corpora.push_back(src / "corpus");
  }
  // The saved inputs are the counts: each distinct input once, whichever machine saved it.
  recount_from_disk(o.out, merged);
  if (std::string e = save_ledger(o.out, merged, now); !e.empty()) {
    s.error = e;
    return s;
  }

  fs::create_directories(o.out / "corpus", ec);
  s.corpus_before = files_in(o.out / "corpus");
  if (!o.fuzzer.empty() && !corpora.empty()) {
    s.error = merge_corpora(o, corpora);
    s.corpus_merged = s.error.empty();
  }
  s.corpus_after = files_in(o.out / "corpus");
  return s;
}

} // namespace burnmark
