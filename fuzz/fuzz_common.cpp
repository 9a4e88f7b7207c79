// The per-input logic of the libFuzzer targets (see fuzz_common.h). State lives in one static
// harness built at initialisation; per input only the program and the outcomes are built, and
// the outcome vector is reused so memory stays flat across millions of inputs.
#include "fuzz_common.h"

#include <malloc.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/config/config.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/oracle/summary.h"
#include "burnmark/patches/patches.h"
#include "burnmark/triage/conventions.h"
#include "burnmark/triage/suppress.h"
#include "burnmark/triage/triage.h"
#include "semantic_features.h"

// libFuzzer's extra counters (Linux): one byte per semantic feature, zeroed by libFuzzer before
// each input and read as features after it. External and `used`, so the optimiser cannot drop
// stores it never sees read.
__attribute__((used, section("__libfuzzer_extra_counters")))
std::uint8_t burnmark_semantic_counters[burnmark::fuzz::kSemanticTableSize];

namespace burnmark::fuzz {

namespace {

constexpr std::size_t kReportValues = 16; // values per tensor in a report

constexpr const char* kPanicMarker =
    "==burnmark== END OF FINDING: MODE=panic stops here by abort() (expected, not a BurnMark "
    "crash).\n"
    "==burnmark== libFuzzer's \"deadly signal\" trace follows; `burnmark run` replays its "
    "crash-* file.\n";

struct Harness {
  const char* target = "";
  Config config;
  GeneratorOptions generator;
  OracleOptions oracle;
  RunOptions run;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<Outcome> outcomes;
  // Per backend, the inputs it reported Unsupported (an op outside a plugin's list, a dtype or
  // a derivative it does not compute): in every SUMMARY line, since a skipped program tests
  // nothing of that backend.
  std::vector<std::uint64_t> skipped;
  // Continuous mode only: running totals, never the findings themselves.
  std::uint64_t inputs = 0;
  std::uint64_t findings = 0;
  std::array<std::uint64_t, kDivergenceKinds> by_kind{}; // indexed by DivergenceKind
  // Known bugs (corpus/known_bugs.txt): counted and skipped so one bug cannot saturate a
  // campaign. Null when the list is empty or absent.
  std::unique_ptr<KnownBugFilter> known;
  std::size_t known_count = 0;
  std::uint64_t suppressed = 0;
  // With the built-in reference first: the judge of registered conventions, and how many
  // inputs diverged only by taking a convention's other side.
  std::unique_ptr<ConventionJudge> judge;
  std::uint64_t conventions = 0;
  // Findings that could not be written (a full disk, a directory removed under the fuzzer): in
  // every SUMMARY line, and the process's exit status is 1 when there were any.
  std::uint64_t lost = 0;
  // What patches buy (docs/patches.md): by Op index, the ops a patch line of the table rewrites
  // in a plugin under test, whether or not BURNMARK_PATCHES activates it (empty: no table);
  // the inputs whose program contains one, and of those the inputs compared to the end: every
  // backend ran it (none Unsupported) and the verdict was agreement (conventions included) or
  // a finding, not a known bug's suppression.
  std::vector<bool> patched_ops;
  std::uint64_t patched_inputs = 0;
  std::uint64_t patched_compared = 0;
  // Under `burnmark campaign` (BURNMARK_CAMPAIGN_PID, BURNMARK_FINDINGS_DIR): these totals as
  // <findings dir>/.stats-<pid>, rewritten every second and at exit, since a fork-mode worker's
  // output goes to libFuzzer's job logs, which the campaign does not read.
  std::string stats_path;
  std::chrono::steady_clock::time_point stats_written;
  // BURNMARK_SEMANTIC_FEATURES: the features of the current input, storage reused.
  bool semantic = true;
  std::vector<std::uint32_t> features;
};

Harness& harness() {
  static Harness h;
  return h;
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "burnmark: %s\n", message.c_str());
  std::exit(2);
}

std::uint64_t fnv1a(std::span<const std::uint8_t> bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t b : bytes)
    h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// libFuzzer only writes artifacts for crashes, so continuous mode saves its own. Written to a
// temporary name and renamed, so a campaign killed mid-write never leaves a truncated finding.
bool write_atomically(const std::string& path, const void* data, std::size_t size) {
  const std::string temp = path + ".tmp";
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "burnmark: cannot write %s\n", temp.c_str());
    return false;
  }
  const bool written = std::fwrite(data, 1, size, f) == size;
  if (std::fclose(f) != 0 || !written || std::rename(temp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "burnmark: cannot write %s\n", path.c_str());
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

// The bytes, and the program they decoded to beside them (program_text_path): the bytes replay
// under this build's generator, the text under any later one.
void save_finding(Harness& h, std::span<const std::uint8_t> bytes, const Program& program) {
  const std::string path = fmt::format("{}/finding-{:016x}", h.config.findings_dir, fnv1a(bytes));
  const std::string text = to_text(program);
  // The text first: a reader that sees the bytes finds their program already there.
  const bool saved = write_atomically(program_text_path(path), text.data(), text.size()) &&
                     write_atomically(path, bytes.data(), bytes.size());
  if (!saved) ++h.lost;
}

// libFuzzer ends with exit(0) whatever happened to the findings; a lost one must not look like
// a clean run.
void exit_failing_if_findings_were_lost() {
  const Harness& h = harness();
  if (h.lost == 0) return;
  std::fprintf(stderr, "burnmark: %s: %llu findings could not be written to %s\n", h.target,
               static_cast<unsigned long long>(h.lost), h.config.findings_dir.c_str());
  std::_Exit(1);
}

// Before any fuzzing: a findings directory that cannot take a file would lose every finding
// one "cannot write" line at a time. A missing one is created (it is where findings go), but
// only inside a directory that exists: a typo must not build a deep tree of its own.
void check_findings_dir(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::absolute(dir, ec).parent_path();
  if (!std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(parent, ec))
    die(fmt::format("BURNMARK_FINDINGS_DIR: {}: its parent {} is not a directory (create it first)",
                    dir, parent.string()));
  std::filesystem::create_directory(dir, ec);
  if (!std::filesystem::is_directory(dir))
    die(fmt::format("BURNMARK_FINDINGS_DIR: {} is not a directory{}", dir,
                    ec ? " (" + ec.message() + ")" : ""));
  const std::string probe = fmt::format("{}/.burnmark-probe-{}", dir, ::getpid());
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  const bool ok = f != nullptr && std::fputc('\n', f) != EOF;
  const bool closed = f != nullptr && std::fclose(f) == 0;
  std::remove(probe.c_str());
  if (!ok || !closed)
    die(fmt::format("BURNMARK_FINDINGS_DIR: cannot write into {}: {}", dir, std::strerror(errno)));
}

// The list exists (load_config refuses a missing one); a list that does not parse stops the run,
// since running without it would stop again on every bug it holds.
void load_known_bugs(Harness& h) {
  if (h.config.known_bugs.empty()) return;
  std::string error;
  Suppressions list = Suppressions::load(h.config.known_bugs, error);
  if (!error.empty()) die("BURNMARK_KNOWN_BUGS: " + error);
  if (list.empty()) return;
  h.known_count = list.size();
  std::vector<Backend*> raw;
  for (const auto& b : h.backends)
    raw.push_back(b.get());
  // Minimising a candidate judges conventions as the harness does (h.judge, made before this).
  h.known = std::make_unique<KnownBugFilter>(
      std::move(list),
      Runner(std::move(raw), h.oracle, h.config.convention_findings ? nullptr : h.judge.get()));
}

std::string full_report(const Harness& h, const Program& program, const Verdict& verdict) {
  std::string out =
      fmt::format("\n==burnmark== DIVERGENCE in {} ({} backends)\n", h.target, h.backends.size());
  out += to_text(program);
  for (const Outcome& o : h.outcomes)
    out += format_outcome(o, kReportValues);
  out += format_verdict(verdict);
  return out;
}

// One count per divergence kind, in the enum's order, each under its report name; then what the
// known-bug filter spent: `filter_runs` programs it ran to analyse and minimise diverging inputs
// (compare with `inputs`, each one run of every backend) and `filter_memo` runs its memo
// answered instead; `filter_minimised` first-met pre-signatures it minimised and `filter_roots`
// those a known root at the culprit answered without minimising.
std::string summary_line(const Harness& h) {
  std::string line =
      fmt::format("SUMMARY target={} inputs={} findings={}", h.target, h.inputs, h.findings);
  for (std::size_t k = 0; k < kDivergenceKinds; ++k)
    fmt::format_to(std::back_inserter(line), " {}={}", kind_name(static_cast<DivergenceKind>(k)),
                   h.by_kind[k]);
  fmt::format_to(std::back_inserter(line), " suppressed={} conventions={} lost={}", h.suppressed,
                 h.conventions, h.lost);
  fmt::format_to(std::back_inserter(line), " patched_op_inputs={} patched_op_compared={}",
                 h.patched_inputs, h.patched_compared);
  fmt::format_to(std::back_inserter(line),
                 " filter_runs={} filter_memo={} filter_minimised={} filter_roots={}",
                 h.known ? h.known->runs() : 0, h.known ? h.known->memo_hits() : 0,
                 h.known ? h.known->minimisations() : 0, h.known ? h.known->root_answers() : 0);
  // heap_mb=in use/held by malloc (mmapped blocks included): what a run's memory is made of.
  const struct mallinfo2 heap = mallinfo2();
  fmt::format_to(std::back_inserter(line), " heap_mb={}/{}", (heap.uordblks + heap.hblkhd) >> 20,
                 (heap.arena + heap.hblkhd) >> 20);
  // ... of which the filter's memo (bounded: KnownBugFilter::kMemoCapacity)
  fmt::format_to(std::back_inserter(line), " filter_memo_mb={}",
                 h.known ? h.known->memo_bytes() >> 20 : 0);
  // skipped=ref:0,example:12: per backend, in BACKENDS order, the inputs it did not run.
  for (std::size_t i = 0; i < h.backends.size(); ++i)
    fmt::format_to(std::back_inserter(line), "{}{}:{}", i == 0 ? " skipped=" : ",",
                   h.backends[i]->name(), h.skipped[i]);
  line += '\n';
  return line;
}

// torch-compile's compile-cache counters (hits, compiles), as its last outcome's note said
// them: a string the child backend keeps. Only its: the in-process LibTorch backends' note()
// asks LibTorch (at::show_config), whose statics are gone at exit. `burnmark campaign` reads
// these lines (fuzzer_output.h) for its progress line and summary.
void print_compile_note(const Harness& h) {
  for (const auto& b : h.backends)
    if (const std::string note = b->name() == "torch-compile" ? b->note() : ""; !note.empty())
      std::fputs(fmt::format("NOTE backend={} note=\"{}\"\n", b->name(), note).c_str(), stderr);
}

// Continuous mode: the note every this many inputs too (a compile takes seconds, so a
// torch-compile run makes a few inputs a second at best), so a campaign sees the counts while
// it runs, not only at the end.
constexpr std::uint64_t kCompileNoteEvery = 25;

// The campaign's copy of the counts (Harness::stats_path): one line, the SUMMARY's names.
void write_stats(Harness& h) {
  if (h.stats_path.empty() || h.inputs == 0) return;
  h.stats_written = std::chrono::steady_clock::now();
  const std::string line =
      fmt::format("STATS inputs={} patched_op_inputs={} patched_op_compared={}\n", h.inputs,
                  h.patched_inputs, h.patched_compared);
  write_atomically(h.stats_path, line.data(), line.size());
}

void write_final_stats() {
  write_stats(harness());
}

// True when the program has a statement whose op is in Harness::patched_ops.
bool has_patched_op(const Harness& h, const Program& program) {
  if (h.patched_ops.empty()) return false;
  for (const Stmt& s : program.stmts)
    if (s.kind == StmtKind::Op && h.patched_ops[static_cast<std::size_t>(s.instr.op)]) return true;
  return false;
}

// Continuous mode ends with one more SUMMARY line, so a run's totals (the filter's cost among
// them) are there however rarely BURNMARK_SUMMARY_EVERY printed one.
void print_final_summary() {
  const Harness& h = harness();
  if (h.inputs > 0) std::fputs(summary_line(h).c_str(), stderr);
  if (h.inputs > 0) print_compile_note(h);
}

} // namespace

namespace {

// Under `burnmark campaign`, libFuzzer's fork-mode parent and its workers must not outlive the
// campaign: killed outright (SIGKILL, an OOM killer) it cannot stop them, and a worker's parent
// is the shell of libFuzzer's system(), not the campaign. Each process checks that the campaign
// is still there and ends itself within a fraction of a second when it is not.
void leave_with_the_campaign() {
  const char* text = std::getenv("BURNMARK_CAMPAIGN_PID");
  if (text == nullptr) return;
  const long pid = std::strtol(text, nullptr, 10);
  if (pid <= 1) return;
  const auto gone = [path = fmt::format("/proc/{}/stat", pid)] {
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return true;
    char state = 0;
    const bool read = std::fscanf(f, "%*d (%*[^)]) %c", &state) == 1;
    std::fclose(f);
    return !read || state == 'Z'; // a zombie is gone too: its parent has not reaped it yet
  };
  std::thread([gone] {
    while (!gone())
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::_Exit(0);
  }).detach();
}

} // namespace

void initialize(const char* target_name, bool gradients) {
  leave_with_the_campaign();
  Harness& h = harness();
  h.target = target_name;
  ConfigResult config = load_config_from_environment();
  if (!config.ok()) die(config.error());
  h.config = config.config();
  h.oracle = oracle_options(h.config, gradients);
  h.run = run_options(h.config, gradients);
  BackendsResult backends = make_backends(
      h.config.backends,
      RegistryOptions{h.config.threads, h.config.child_timeout, h.config.isolate != 0,
                      static_cast<std::size_t>(h.config.child_memory), "/proc/self/exe",
                      h.config.torch_python, h.config.compile_dynamic != 0, h.config.jax_python,
                      active_plugin_patches_or_exit(h.config)});
  if (!backends.ok()) die(backends.error());
  h.backends = backends.take();
  // BURNMARK_OPS=auto: only the ops every plugin under test lists, so its inputs are not
  // spent on programs it skips.
  h.generator = generator_options(h.config, h.backends);
  if (const std::string ops = op_set_text(h.config, h.backends); !ops.empty()) {
    if (h.generator.ops.empty()) die("BURNMARK_OPS: no op is left to generate: " + ops);
    std::fprintf(stderr, "burnmark: %s: ops=%s\n", target_name, ops.c_str());
  }
  h.skipped.assign(h.backends.size(), 0);
  h.oracle.baselines = version_baselines(h.backends);
  h.outcomes.resize(h.backends.size());
  h.semantic = h.config.semantic_features != 0;
  if (h.backends.front()->name() == "ref")
    h.judge = std::make_unique<ConventionJudge>(
        make_convention_references(), make_all_conventions_references(), make_reference_backend());
  load_known_bugs(h);
  // The whole table, not BURNMARK_PATCHES's selection: `--patches none` counts the same
  // programs. No table (an OSS-Fuzz $OUT): nothing to count.
  if (const std::string table = default_patches_path(); !table.empty()) {
    const PatchTableResult r = load_patch_table(table);
    if (!r.ok()) die(r.error());
    h.patched_ops = patched_ops(r.patches(), h.config.backends);
  }
  if (!h.config.findings_dir.empty()) {
    check_findings_dir(h.config.findings_dir);
    std::atexit(exit_failing_if_findings_were_lost);
    if (std::getenv("BURNMARK_CAMPAIGN_PID") != nullptr) {
      h.stats_path = fmt::format("{}/.stats-{}", h.config.findings_dir, ::getpid());
      std::atexit(write_final_stats);
    }
  }
  // Registered last, so it runs first: before exit_failing_if_findings_were_lost's _Exit.
  if (h.config.mode == HarnessMode::Continuous) std::atexit(print_final_summary);
  // Which list, so a run that skips nothing says why.
  const std::string known =
      h.config.known_bugs.empty()
          ? std::string(std::getenv("BURNMARK_KNOWN_BUGS") != nullptr
                            ? " (off: BURNMARK_KNOWN_BUGS is empty)"
                            : " (off: no list next to the binary; set BURNMARK_KNOWN_BUGS)")
          : " from " + h.config.known_bugs;
  std::fprintf(stderr, "burnmark: %s: BACKENDS=%s MODE=%s known-bugs=%zu%s\n", target_name,
               h.config.backends.c_str(),
               h.config.mode == HarnessMode::Panic ? "panic" : "continuous", h.known_count,
               known.c_str());
  // The fix-and-continue patches each plugin applies (BURNMARK_PATCHES; a campaign sets it to the
  // patches its gate passed), as `burnmark run` says them.
  for (const auto& b : h.backends) {
    std::string ids;
    for (const std::string& id : b->active_patches())
      ids += (ids.empty() ? "" : ", ") + id;
    if (!ids.empty())
      std::fprintf(stderr, "burnmark: %s: patches %s: %s\n", target_name, b->name().c_str(),
                   ids.c_str());
  }
}

const GeneratorOptions& generator_options() {
  return harness().generator;
}

const std::string& mutator_knob() {
  return harness().config.mutator;
}

int value_mutation_percent() {
  const Config& c = harness().config;
  if (c.value_mutations >= 0) return c.value_mutations;
  return backends_compile(c.backends) ? kCompileValueMutations : 0;
}

// malloc keeps what one program's tensors freed for the next, and over a run the free space it
// holds grows in steps to the high-water marks of its arenas (30 minutes of ref,libtorch: 296 MB
// held, 74 MB in use). malloc_trim hands free pages back to the system; every this many inputs
// (a few seconds of ref,libtorch) it costs a few milliseconds.
constexpr std::uint64_t kTrimEvery = 5'000;
// Continuous mode: a SUMMARY line every this many inputs too, besides every
// BURNMARK_SUMMARY_EVERY findings (a minute or two of ref,libtorch).
constexpr std::uint64_t kSummaryInputsEvery = 100'000;
// Under a campaign: the counts file (Harness::stats_path) at most this often.
constexpr std::chrono::seconds kStatsEvery{1};

int test_one_input(const std::uint8_t* data, std::size_t size) {
  Harness& h = harness();
  const std::span<const std::uint8_t> bytes(data, size);
  const Program program = generate(bytes, h.generator);
  bool all_ran = true;
  for (std::size_t i = 0; i < h.backends.size(); ++i) {
    h.outcomes[i] = run_backend(*h.backends[i], program, h.run);
    h.skipped[i] += h.outcomes[i].status == Status::Unsupported;
    all_ran = all_ran && h.outcomes[i].status != Status::Unsupported;
  }
  ++h.inputs;
  // Counted as compared here; the known-bug branch below takes it back, the one way an input
  // that every backend ran ends without a verdict of its own.
  const bool patched = has_patched_op(h, program);
  h.patched_inputs += patched;
  const bool counted = patched && all_ran;
  h.patched_compared += counted;
  if (!h.stats_path.empty() && std::chrono::steady_clock::now() - h.stats_written >= kStatsEvery)
    write_stats(h);
  if (h.inputs % kTrimEvery == 0) malloc_trim(0);
  if (h.config.mode == HarnessMode::Continuous && h.inputs % kCompileNoteEvery == 0)
    print_compile_note(h);
  // A long run with few findings still shows its memory (heap_mb, filter_memo_mb) as it goes.
  if (h.config.mode == HarnessMode::Continuous && h.inputs % kSummaryInputsEvery == 0)
    std::fputs(summary_line(h).c_str(), stderr);
  if (h.semantic) {
    semantic_features(program, h.outcomes, h.features, h.config.semantic_features == 2);
    mark_features(h.features, burnmark_semantic_counters);
  }
  Verdict verdict = compare(h.outcomes, h.oracle);
  if (verdict.agree()) return 0;
  if (h.judge) {
    ConventionJudgement j = h.judge->judge(program, h.run, h.outcomes, verdict, h.oracle);
    if (!j.hits.empty()) {
      ++h.conventions;
      if (h.conventions <= static_cast<std::uint64_t>(h.config.full_reports))
        std::fputs(format_conventions(j.hits).c_str(), stderr);
      // A convention is reported, never agreement; it stops a panic-mode run only on request.
      if (j.residual.agree() && !h.config.convention_findings) return 0;
      if (!h.config.convention_findings) verdict = std::move(j.residual);
    }
  }
  if (h.known && h.known->is_known(program, verdict)) {
    ++h.suppressed;
    h.patched_compared -= counted;
    return 0;
  }

  if (h.config.mode == HarnessMode::Panic) {
    const std::string report = full_report(h, program, verdict);
    std::fputs(report.c_str(), stderr);
    // libFuzzer's SIGABRT handler writes the input as crash-<sha1> and prints its "deadly
    // signal" trace, which reads as a crash of BurnMark: say first that it is the expected stop.
    std::fputs(kPanicMarker, stderr);
    std::fflush(stderr);
    std::abort();
  }

  ++h.findings;
  for (const Divergence& d : verdict.divergences)
    ++h.by_kind.at(static_cast<std::size_t>(d.kind));
  if (!h.config.findings_dir.empty()) save_finding(h, bytes, program);
  if (h.findings <= static_cast<std::uint64_t>(h.config.full_reports)) {
    std::fputs(full_report(h, program, verdict).c_str(), stderr);
  } else if (h.findings % static_cast<std::uint64_t>(h.config.summary_every) == 0) {
    std::fputs(summary_line(h).c_str(), stderr);
  }
  return 0;
}

} // namespace burnmark::fuzz
