// The campaign supervisor (see campaign.h): one child process group running the fuzzer, one
// poll loop reading its status lines and picking up saved findings, and signal handling that
// turns Ctrl-C into "stop the child, ingest what is left, write the ledger".
#include "burnmark/campaign/campaign.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"
#include "burnmark/campaign/timeseries.h"
#include "burnmark/triage/signature.h"
#include "burnmark/triage/triage.h"
#include "spawn_env.h"

namespace burnmark {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// How --time is kept (docs/reliability.md has the measurements). libFuzzer checks
// -max_total_time only between inputs (in -fork mode, between jobs), so at the time the
// campaign asks it to stop (SIGINT) if it has not, and kills it kGraceSeconds later. Inputs
// saved but not yet ingested are then ingested until kOvertimeSeconds past the time (at least
// one second); what is left stays for the next campaign on the directory, not lost.
constexpr int kGraceSeconds = 2;
constexpr int kOvertimeSeconds = 5;

// Set from the signal handler; everything else happens in the loop.
volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int signal) {
  g_stop_signal = signal;
}

// Installs the handlers for the campaign's lifetime and restores the previous ones after.
class StopSignals {
public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; // no SA_RESTART: poll() must return so the loop sees the flag promptly
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

struct Layout {
  fs::path corpus, crashes, scratch, artifacts, saved, log;
};

Layout layout(const fs::path& out) {
  const fs::path scratch = out / ".scratch";
  return Layout{out / "corpus",        out / "crashes",      scratch,
                scratch / "artifacts", scratch / "findings", scratch / "fuzzer.log"};
}

std::string make_dirs(const Layout& l) {
  for (const fs::path& d : {l.corpus, l.crashes, l.artifacts, l.saved}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) return fmt::format("cannot create {}: {}", d.string(), ec.message());
  }
  return "";
}

void seed_corpus(const fs::path& seeds, const fs::path& corpus) {
  std::error_code ec;
  if (seeds.empty() || !fs::is_directory(seeds, ec)) return;
  for (const auto& e : fs::directory_iterator(seeds, ec))
    if (e.is_regular_file())
      fs::copy_file(e.path(), corpus / e.path().filename(), fs::copy_options::skip_existing, ec);
}

// The parent's environment with the campaign's overrides replacing any inherited value.
std::vector<std::string> child_environment(const Layout& l, const fs::path& known_bugs,
                                           const std::string& patches) {
  campaign_detail::EnvOverrides overrides = {
      {"MODE", "continuous"},
      {"BURNMARK_FINDINGS_DIR", l.saved.string()},
      // Workers' reports go to libFuzzer's per-job logs, which nobody reads: keep them short.
      {"BURNMARK_FULL_REPORTS", "0"},
      {"BURNMARK_SUMMARY_EVERY", "1000"},
      // The fuzz targets end themselves when this process is gone (leave_with_the_campaign).
      {"BURNMARK_CAMPAIGN_PID", std::to_string(::getpid())},
  };
  // Known bugs are skipped in the workers: cheaper there than re-checked here, and a bug that
  // saturates the fuzzer would otherwise bury the new ones in the findings directory.
  // Always set: empty (no list) must not let a worker fall back to a list of its own.
  overrides.emplace_back("BURNMARK_KNOWN_BUGS", known_bugs.string());
  // The patches the campaign's gate passed (docs/patches.md), the same as its own backends'.
  overrides.emplace_back("BURNMARK_PATCHES", patches);
  // torch.compile's kernels go to the campaign's own cache unless the caller chose one: the
  // machine-wide default (/tmp/torchinductor_<user>) is shared with every torch process on the
  // machine, and beside others' runs its kernels failed to load (undefined Sleef symbols, a file
  // too short), reported as compile errors of the programs at hand; a fresh cache ran them clean.
  if (std::getenv("TORCHINDUCTOR_CACHE_DIR") == nullptr)
    overrides.emplace_back("TORCHINDUCTOR_CACHE_DIR", (l.scratch / "inductor-cache").string());
  return campaign_detail::environment_with(overrides);
}

// The fuzz targets' counts files (fuzz_common.cpp: ".stats-<pid>" in the findings directory,
// one line "STATS inputs=N patched_op_inputs=P patched_op_compared=C").
bool is_stats_file(const fs::path& file) {
  return file.filename().string().starts_with(".stats-");
}

// The number after " key=" in `line`, 0 when absent.
std::uint64_t stats_field(const std::string& line, std::string_view key) {
  const std::size_t at = line.find(fmt::format(" {}=", key));
  if (at == std::string::npos) return 0;
  return std::strtoull(line.c_str() + at + key.size() + 2, nullptr, 10);
}

// "finding-<16 hex>" whose bytes hash to the name: written completely.
bool complete(const fs::path& file, const std::string& bytes) {
  const std::string name = file.filename().string();
  if (!name.starts_with("finding-")) return false;
  return name.substr(8) == fmt::format("{:016x}", fnv1a64(bytes));
}

// Free space on the filesystem holding `dir`, in MB; nullopt when it cannot be asked.
std::optional<std::uint64_t> free_mb(const fs::path& dir) {
  std::error_code ec;
  const fs::space_info s = fs::space(dir, ec);
  if (ec) return std::nullopt;
  return s.available / (1024 * 1024);
}

class Supervisor {
public:
  Supervisor(const CampaignOptions& options, FindingsBook& book)
      : o_(options), book_(book), l_(layout(options.out)) {}

  CampaignSummary run() {
    if (std::string e = make_dirs(l_); !e.empty()) return fail(e);
    if (const std::optional<std::uint64_t> mb = free_mb(o_.out); mb && *mb < o_.min_free_mb)
      return fail(fmt::format("{}: only {} MB free, below --min-free {} MB", o_.out.string(), *mb,
                              o_.min_free_mb));
    seed_corpus(o_.seeds, l_.corpus);
    remove_stats_files(); // an earlier campaign's processes: reported by that campaign
    log_.open(l_.log, std::ios::app);
    if (std::string e = series_.open(o_.out); !e.empty()) report("campaign: " + e);
    StopSignals signals;
    start_ = Clock::now();
    const auto deadline = start_ + std::chrono::seconds(o_.seconds);
    if (std::string e = spawn(o_.seconds); !e.empty()) return fail(e);
    time_up_ = deadline;
    auto next_progress = start_ + seconds(o_.progress_every);
    bool stopping = false;
    Clock::time_point stop_at{};
    bool exited = false;

    while (!exited) {
      read_output(250);
      ingest_saved(/*final=*/false);
      const auto now = Clock::now();
      if (now >= next_progress) {
        if (std::string e = book_.flush(std::time(nullptr)); !e.empty()) report("campaign: " + e);
        read_stats_files();
        report(progress_line());
        record_sample();
        next_progress = now + seconds(o_.progress_every);
        const std::optional<std::uint64_t> mb = free_mb(o_.out);
        if (mb && *mb < o_.min_free_mb && summary_.stopped_early.empty()) {
          summary_.stopped_early = fmt::format("only {} MB free on {}, below --min-free {} MB", *mb,
                                               o_.out.string(), o_.min_free_mb);
          report("campaign: stopping early: " + summary_.stopped_early);
        }
      }
      const bool time_up = now >= deadline; // the fuzzer is between inputs, or ignored it
      if ((g_stop_signal != 0 || time_up || !summary_.stopped_early.empty()) && !stopping) {
        summary_.interrupted = g_stop_signal != 0;
        summary_.stopped_at_time = time_up && !summary_.interrupted;
        stopping = true;
        stop_at = now;
        // The child leads its own group, so this reaches libFuzzer's fork-mode workers too.
        ::kill(-child_, SIGINT);
      }
      // libFuzzer's fork-mode parent can take seconds to act on SIGINT; findings are files already
      // written (atomically), so a hard stop loses nothing but the current jobs.
      if (stopping && now - stop_at > std::chrono::seconds(kGraceSeconds)) ::kill(-child_, SIGKILL);
      int status = 0;
      if (::waitpid(child_, &status, WNOHANG) == child_) {
        exited = true;
        summary_.fuzzer_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (!stopping && restart(deadline)) exited = false;
      }
    }
    // Workers of a killed fork-mode parent may linger for a moment; they must not write into
    // the scratch directory while it is being drained.
    ::kill(-child_, SIGKILL);
    read_output(0);
    ::close(out_fd_);
    // Interrupted: stop promptly; what is left stays in the scratch directory and the next
    // campaign on this directory ingests it first. Otherwise drain, within a budget.
    summary_.stats.execs += execs_before_;
    if (!summary_.interrupted) ingest_saved(/*final=*/true);
    read_stats_files();
    summary_.left_over = count_saved();
    move_crashes();
    if (std::string e = book_.save(std::time(nullptr)); !e.empty()) summary_.error = e;
    record_sample();
    report(progress_line() +
           (summary_.interrupted              ? " (interrupted)"
            : !summary_.stopped_early.empty() ? " (stopped early: " + summary_.stopped_early + ")"
                                              : " (done)") +
           (summary_.left_over
                ? fmt::format(", {} saved inputs left for the next campaign", summary_.left_over)
                : ""));
    return summary_;
  }

private:
  const CampaignOptions& o_;
  FindingsBook& book_;
  Layout l_;
  CampaignSummary summary_;
  std::ofstream log_;
  pid_t child_ = -1;
  int out_fd_ = -1;
  std::string partial_line_;
  Clock::time_point start_;
  Clock::time_point time_up_; // start_ + --time
  // One-process mode: executions of the fuzzer's earlier runs (each run's "#N" starts at 0),
  // and the status lines seen when the current run started.
  std::uint64_t execs_before_ = 0;
  std::uint64_t lines_at_spawn_ = 0;

  // One-process mode (--workers 0): libFuzzer ends at a crash, a timeout or an oom of the
  // harness itself (a Python child's is only an outcome). Its artifact is under .scratch/ and
  // moves to crashes/ at the end; the campaign starts the fuzzer again on the corpus (which
  // holds everything it found) for the time left. Not when the run ended by itself (status 0:
  // its -max_total_time), nor when it died before its first status line: the corpus replay
  // itself crashes, and would again.
  bool restart(Clock::time_point deadline) {
    if (o_.workers != 0 || summary_.fuzzer_status == 0 || g_stop_signal != 0) return false;
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - Clock::now());
    if (left.count() < 1) return false;
    read_output(0);
    if (summary_.stats.lines == lines_at_spawn_) {
      report(fmt::format("campaign: the fuzzer ended (status {}) before its first status line; "
                         "not restarting it (see {})",
                         summary_.fuzzer_status, l_.log.string()));
      return false;
    }
    ::kill(-child_, SIGKILL); // its Python children, if any outlived it
    ::close(out_fd_);
    partial_line_.clear();
    execs_before_ += summary_.stats.execs;
    summary_.stats.execs = 0;
    new_fuzzer_process(summary_.stats);
    ++summary_.restarts;
    report(fmt::format("campaign: the fuzzer ended (status {}: a crash, timeout or oom; its "
                       "artifact goes to crashes/); restart {} on the corpus for the {}s left",
                       summary_.fuzzer_status, summary_.restarts, left.count()));
    if (std::string e = spawn(static_cast<int>(left.count())); !e.empty()) {
      report("campaign: " + e);
      return false;
    }
    return true;
  }

  TimeSeriesWriter series_; // <out>/timeseries.tsv, one line per progress line

  // The progress line's numbers as a line of the time series (`burnmark report` plots them).
  void record_sample() {
    const std::chrono::duration<double> elapsed = Clock::now() - start_;
    const FuzzerStats& f = summary_.stats;
    const TimeSample s{elapsed.count(),
                       std::time(nullptr),
                       execs_before_ + f.execs, // one-process mode: across restarts
                       f.exec_per_s,
                       f.coverage,
                       f.features,
                       f.corpus,
                       book_.ledger().entries.size(),
                       summary_.backend_failures + summary_.crashes};
    if (std::string e = series_.append(s); !e.empty()) report("campaign: " + e);
  }

  std::string repro_of(const LedgerEntry& e) const {
    for (const std::string* p : {&e.repro_python, &e.repro_shell})
      if (!p->empty()) return (o_.out / *p).string();
    return "-";
  }

  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  }

  CampaignSummary fail(std::string error) {
    summary_.error = std::move(error);
    return summary_;
  }

  void report(const std::string& line) {
    if (o_.report)
      o_.report(line);
    else
      fmt::print(stderr, "{}\n", line);
  }

  // Starts the fuzzer for `seconds` (--time, or what is left of it at a restart).
  std::string spawn(int seconds) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return fmt::format("pipe: {}", std::strerror(errno));
    lines_at_spawn_ = summary_.stats.lines;
    CampaignOptions run = o_;
    run.seconds = seconds;
    std::vector<std::string> argv = fuzzer_arguments(run);
    argv.insert(argv.begin(), o_.fuzzer.string());
    std::vector<std::string> env = child_environment(l_, o_.known_bugs, o_.patches);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Own process group: the campaign decides when the fuzzer stops (a terminal's Ctrl-C goes
    // to the campaign only), and one kill reaches the fork-mode workers as well.
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
    const int rc = ::posix_spawn(&child_, argv[0].c_str(), &actions, &attr,
                                 campaign_detail::c_strings(argv).data(),
                                 campaign_detail::c_strings(env).data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(fds[1]);
    out_fd_ = fds[0];
    if (rc != 0) {
      ::close(out_fd_);
      return fmt::format("cannot run {}: {}", o_.fuzzer.string(), std::strerror(rc));
    }
    return "";
  }

  // Reads whatever the child has written, waiting at most `timeout_ms` for the first bytes.
  void read_output(int timeout_ms) {
    pollfd p{out_fd_, POLLIN, 0};
    int wait = timeout_ms;
    while (::poll(&p, 1, wait) > 0) {
      char buf[4096];
      const ssize_t n = ::read(out_fd_, buf, sizeof buf);
      if (n <= 0) return;
      log_.write(buf, n);
      partial_line_.append(buf, static_cast<std::size_t>(n));
      std::size_t eol;
      while ((eol = partial_line_.find('\n')) != std::string::npos) {
        parse_fuzzer_line(std::string_view(partial_line_).substr(0, eol), summary_.stats);
        partial_line_.erase(0, eol + 1);
      }
      wait = 0;
    }
    log_.flush();
  }

  // Sums the fuzzer processes' counts files (is_stats_file) into the summary: each process
  // rewrites its own, so the sum is the campaign's total so far.
  void read_stats_files() {
    std::error_code ec;
    std::uint64_t all = 0, inputs = 0, compared = 0;
    for (const auto& e : fs::directory_iterator(l_.saved, ec)) {
      // A file being rewritten (write_atomically's .tmp) is read once renamed.
      if (!is_stats_file(e.path()) || e.path().extension() == ".tmp") continue;
      std::string line;
      if (!read_whole_file(e.path(), line)) continue;
      all += stats_field(line, "inputs");
      inputs += stats_field(line, "patched_op_inputs");
      compared += stats_field(line, "patched_op_compared");
    }
    summary_.patched_op_inputs = inputs;
    summary_.patched_op_compared = compared;
    summary_.counted_inputs = all;
  }

  void remove_stats_files() {
    std::error_code ec;
    std::vector<fs::path> old;
    for (const auto& e : fs::directory_iterator(l_.saved, ec))
      if (is_stats_file(e.path())) old.push_back(e.path());
    for (const fs::path& f : old)
      fs::remove(f, ec);
  }

  std::size_t count_saved() const {
    std::error_code ec;
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(l_.saved, ec))
      n += e.is_regular_file() && e.path().filename().string().starts_with("finding-") &&
                   !e.path().filename().string().ends_with(".tmp")
               ? 1
               : 0;
    return n;
  }

  void ingest_saved(bool final) {
    // While fuzzing, ingest until the time is up (then the loop must stop the fuzzer); the
    // final drain, until the overtime is spent.
    const auto budget_end = final ? std::max(time_up_ + std::chrono::seconds(kOvertimeSeconds),
                                             Clock::now() + std::chrono::seconds(1))
                                  : time_up_;
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(l_.saved, ec))
      if (e.is_regular_file() && !is_stats_file(e.path())) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      if (g_stop_signal != 0 || Clock::now() > budget_end) return;
      std::string bytes;
      if (!read_whole_file(f, bytes) || !complete(f, bytes)) {
        if (final) fs::remove(f, ec); // a worker killed mid-write: never completes
        continue;
      }
      const std::span<const std::uint8_t> span(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                               bytes.size());
      // The program the worker ran, when it saved one beside the bytes (the same decoding,
      // kept as text); the bytes decoded here otherwise.
      Program program = o_.decode(span);
      if (const std::string beside = program_text_path(f.string()); fs::is_regular_file(beside)) {
        Program saved;
        if (load_program_file(f.string(), GeneratorOptions{}, saved).empty())
          program = std::move(saved);
        fs::remove(beside, ec);
      }
      const IngestResult r = book_.ingest(span, program, std::time(nullptr));
      switch (r.kind) {
      case IngestKind::Agreed: ++summary_.agreed_on_replay; break;
      case IngestKind::Duplicate: break;
      case IngestKind::NewSignature:
      case IngestKind::Seen: ++summary_.diverging_inputs; break;
      }
      if (r.backend_failure && r.kind != IngestKind::Duplicate) ++summary_.backend_failures;
      if (r.kind == IngestKind::NewSignature) {
        const LedgerEntry* e = book_.ledger().find(r.signature);
        report(fmt::format("campaign: NEW BUG {} status={} ops={} kinds={} repro={}{}", r.signature,
                           e ? e->status : "?", e ? fmt::format("{}", fmt::join(e->ops, ",")) : "",
                           e ? fmt::format("{}", fmt::join(e->kinds, ",")) : "",
                           e ? repro_of(*e) : "-",
                           e && !e->regressions.empty()
                               ? fmt::format(" regression={}", fmt::join(e->regressions, ","))
                               : ""));
      }
      if (!r.error.empty()) report("campaign: " + r.error);
      fs::remove(f, ec);
      // Minimising can take seconds; keep the child's pipe from filling up meanwhile.
      if (!final) read_output(0);
    }
  }

  void move_crashes() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(l_.artifacts, ec)) {
      if (!e.is_regular_file()) continue;
      fs::rename(e.path(), l_.crashes / e.path().filename(), ec);
      if (!ec) ++summary_.crashes;
    }
  }

  std::string progress_line() const {
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start_).count();
    const FuzzerStats& st = summary_.stats;
    const std::uint64_t looked_up = st.compile_hits + st.compile_misses;
    return fmt::format(
        "campaign: {}/{}s execs={} exec/s={} cov={} signatures={} (ledger {}) "
        "diverging={} crashes={} replayed-agreeing={} minimised={} patched-op-inputs={}/{} "
        "compared={} left={}s{}{}",
        elapsed, o_.seconds, execs_before_ + st.execs, st.exec_per_s, summary_.stats.coverage,
        book_.signatures_this_run(), book_.ledger().entries.size(), summary_.diverging_inputs,
        summary_.backend_failures + summary_.crashes, summary_.agreed_on_replay,
        book_.minimisations(), summary_.patched_op_inputs, summary_.counted_inputs,
        summary_.patched_op_compared,
        std::max<std::int64_t>(0, o_.seconds - elapsed),
        summary_.restarts ? fmt::format(" restarts={}", summary_.restarts) : "",
        looked_up ? fmt::format(" compile-cache={}/{} hits ({:.0f} %)", st.compile_hits, looked_up,
                                100.0 * static_cast<double>(st.compile_hits) /
                                    static_cast<double>(looked_up))
                  : "");
  }
};

} // namespace

std::vector<std::string> fuzzer_arguments(const CampaignOptions& options) {
  const Layout l = layout(options.out);
  std::vector<std::string> args = {l.corpus.string()};
  if (options.workers > 0) {
    args.insert(args.end(), {
                                fmt::format("-fork={}", options.workers),
                                // A real crash of one worker (a library segfault) must not end
                                // the campaign; its artifact is kept under crashes/.
                                "-ignore_crashes=1",
                                "-ignore_timeouts=1",
                                "-ignore_ooms=1",
                            });
  }
  // workers == 0: one process; the campaign restarts it after a crash (Supervisor::restart).
  // A slow input is no finding there (a torch.compile takes tens of seconds; a backend's real
  // hang is BURNMARK_CHILD_TIMEOUT's): no slow-unit-* artifacts counted among the crashes.
  if (options.workers == 0) args.emplace_back("-report_slow_units=86400");
  args.insert(args.end(), {
                              fmt::format("-max_total_time={}", std::max(1, options.seconds)),
                              "-artifact_prefix=" + l.artifacts.string() + "/",
                              "-print_final_stats=0",
                          });
  args.insert(args.end(), options.extra_fuzzer_args.begin(), options.extra_fuzzer_args.end());
  return args;
}

CampaignSummary run_campaign(const CampaignOptions& options, FindingsBook& book) {
  return Supervisor(options, book).run();
}

} // namespace burnmark
