// `burnmark campaign`: runs a fuzz target for a fixed time on N libFuzzer workers and keeps a
// ledger of the distinct bugs it finds, each minimised once with C++ and Python reproducers.
// The work is in burnmark_campaign (campaign.h); this file finds the fuzzer and the seed
// corpus, builds the backends that re-check findings, and parses arguments.
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app.h"
#include "burnmark/campaign/campaign.h"
#include "burnmark/campaign/dir_lock.h"
#include "burnmark/campaign/merge.h"
#include "burnmark/gen/generator.h"
#include "burnmark/patches/gate.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

namespace {

namespace fs = std::filesystem;

// The target as the build tree lays it out: <build>/fuzz/<target>, with this binary at
// <build>/src/cli/burnmark (or anywhere else below <build>).
std::optional<fs::path> find_fuzzer(std::string_view target) {
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (int up = 0; up < 4 && !ec && !dir.empty(); ++up, dir = dir.parent_path()) {
    const fs::path candidate = dir / "fuzz" / std::string(target);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (dir == dir.parent_path()) break;
  }
  return std::nullopt;
}

// The seed corpus of a build tree's sources: <source>/corpus/<target>, the source directory
// read from <build>/CMakeCache.txt, for a campaign started outside the checkout.
std::optional<fs::path> source_seeds(const fs::path& fuzzer, std::string_view target) {
  std::ifstream cache(fuzzer.parent_path().parent_path() / "CMakeCache.txt");
  constexpr std::string_view kKey = "BurnMark_SOURCE_DIR:STATIC=";
  for (std::string line; std::getline(cache, line);)
    if (line.starts_with(kKey)) return fs::path(line.substr(kKey.size())) / "corpus" / target;
  return std::nullopt;
}

std::optional<int> at_least(std::string_view text, int least) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < least) return std::nullopt;
  return v;
}

std::optional<int> positive(std::string_view text) {
  return at_least(text, 1);
}

// The options as given; each is checked (and its one-line error given) before the campaign
// starts, in the order the hand-written parser checked them.
struct CampaignArgs {
  std::string target = "fuzz_autograd";
  std::optional<std::string> time, workers, min_free, out, fuzzer, seeds, known_path, patches;
  std::vector<std::string> merge; // --merge DIR...: merge these campaign directories into --out
};

// --merge: the ledgers, findings, crashes and corpora of several campaign directories (from
// several machines) into --out (merge.h). The target is the ledgers'; its fuzzer merges the
// corpora (-merge=1), with the arguments after -- appended.
int merge(const CampaignArgs& a, std::span<const std::string> after_dashes) {
  MergeOptions options;
  options.out = a.out.value_or("findings");
  options.extra_fuzzer_args.assign(after_dashes.begin(), after_dashes.end());
  std::string target;
  for (const std::string& dir : a.merge) {
    options.sources.emplace_back(dir);
    Ledger ledger;
    if (target.empty() && load_ledger(dir, ledger).empty()) target = ledger.target;
  }
  if (target.empty()) target = a.target;
  if (a.fuzzer) {
    options.fuzzer = *a.fuzzer;
  } else if (const std::optional<fs::path> found = find_fuzzer(target)) {
    options.fuzzer = *found;
  } else {
    return usage_error(fmt::format("campaign: cannot find the {} binary next to this build "
                                   "(<build>/fuzz/{}) to merge the corpora; pass --fuzzer PATH",
                                   target, target));
  }
  if (::access(options.fuzzer.c_str(), X_OK) != 0)
    return usage_error(fmt::format("campaign: {}: not an executable", options.fuzzer.string()));
  const Config config = config_or_exit();
  std::error_code ec;
  const std::string known_file = a.known_path.value_or(config.known_bugs);
  if (!known_file.empty()) options.known_bugs = fs::absolute(known_file, ec);

  fs::create_directories(options.out, ec);
  // As a campaign: nothing else may rewrite the merged ledger meanwhile.
  CampaignLock lock;
  std::string takeover;
  if (const std::string error = lock.acquire(options.out, takeover); !error.empty())
    return usage_error("campaign: " + error);
  const MergeSummary s = merge_campaigns(options, std::time(nullptr));
  if (!s.error.empty()) return usage_error("campaign: --merge: " + s.error);
  Ledger merged;
  std::uint64_t inputs = 0;
  if (load_ledger(options.out, merged).empty())
    for (const LedgerEntry& e : merged.entries)
      inputs += e.count;
  fmt::print("MERGE target={} sources={} ledger={} added={} joined={} inputs={} inputs_added={} "
             "crashes_added={} corpus={}->{} ledger_file={}\n",
             s.target, options.sources.size(), merged.entries.size(), s.entries_added,
             s.entries_joined, inputs, s.inputs_added, s.crashes_added, s.corpus_before,
             s.corpus_after, (options.out / "ledger.md").string());
  return kExitAgree;
}

// The patches this campaign applies (docs/patches.md, "Campaigns"): by default every patch of
// the table that passes its gate; --patches or BURNMARK_PATCHES choose others (none, all, ids),
// gated the same way. One line per patch not applied, and why. nullopt after a usage error.
std::optional<std::vector<std::string>> campaign_patches(const CampaignArgs& a,
                                                         const Config& config) {
  const char* env = std::getenv("BURNMARK_PATCHES");
  if (a.patches && env != nullptr && *a.patches != env) {
    usage_error(fmt::format("campaign: --patches {} and BURNMARK_PATCHES={} disagree; give one",
                            *a.patches, env));
    return std::nullopt;
  }
  const std::string knob = a.patches ? *a.patches : env != nullptr ? std::string(env) : "all";
  const bool chosen = a.patches || env != nullptr;
  if (knob == "none") {
    fmt::print(stderr, "campaign: patches on: none ({})\n",
               a.patches ? "--patches none" : "BURNMARK_PATCHES=none");
    return std::vector<std::string>{};
  }
  const std::string table_path = default_patches_path();
  if (table_path.empty() && !chosen) {
    fmt::print(
        stderr,
        "campaign: patches on: none (no patch table beside this binary or in its checkout)\n");
    return std::vector<std::string>{};
  }
  const PatchTableResult table =
      table_path.empty()
          ? PatchTableResult{std::string("no patch table found (corpus/patches.txt)")}
          : load_patch_table(table_path);
  PatchTableResult selected = table.ok() ? select_patches(table.patches(), knob) : table;
  if (!selected.ok()) {
    std::string error = selected.error();
    if (a.patches && error.starts_with("BURNMARK_PATCHES:"))
      error = "--patches:" + error.substr(std::string_view("BURNMARK_PATCHES:").size());
    usage_error("campaign: " + error);
    return std::nullopt;
  }
  // As `burnmark patches check` runs it: gradients on, the environment's tolerance.
  const GatedPatches gated = gate_patches(selected.patches(), plugin_names_in(config.backends),
                                          (fs::path(table_path).parent_path() / "bugs").string(),
                                          run_options(config, true), oracle_options(config, true));
  // By default, patches of plugins the campaign does not run are expected: one line for them all.
  std::vector<std::string> elsewhere;
  for (const std::string& line : gated.not_applied) {
    if (!chosen && line.ends_with(" is not in BACKENDS")) {
      elsewhere.push_back(line.substr(0, line.find(' ')));
      continue;
    }
    fmt::print(stderr, "campaign: patch {}\n", line);
  }
  if (!elsewhere.empty())
    fmt::print(stderr, "campaign: {} patches are for plugins not in BACKENDS: {}\n",
               elsewhere.size(), fmt::join(elsewhere, ", "));
  std::vector<std::string> ids;
  for (const Patch& p : gated.applied)
    ids.push_back(p.id);
  fmt::print(stderr, "campaign: patches on: {}\n",
             ids.empty() ? "none" : fmt::format("{}", fmt::join(ids, ", ")));
  return ids;
}

int campaign(const CampaignArgs& a, std::span<const std::string> after_dashes) {
  if (!a.merge.empty()) return merge(a, after_dashes);
  const std::string& target = a.target;
  CampaignOptions options;
  options.out = a.out.value_or("findings");
  options.extra_fuzzer_args.assign(after_dashes.begin(), after_dashes.end());
  const std::optional<std::string>&fuzzer = a.fuzzer, &seeds = a.seeds, &known_path = a.known_path;
  if (a.min_free) {
    const std::optional<int> v = positive(*a.min_free);
    if (!v)
      return usage_error(
          fmt::format("campaign: --min-free needs a positive number of MB, not '{}'", *a.min_free));
    options.min_free_mb = static_cast<std::uint64_t>(*v);
  }
  for (const auto& [flag, text, field] : {std::tuple{"--time", &a.time, &options.seconds},
                                          std::tuple{"--workers", &a.workers, &options.workers}}) {
    if (!*text) continue;
    const bool workers = field == &options.workers; // 0 = one process
    const std::optional<int> v = at_least(**text, workers ? 0 : 1);
    if (!v)
      return usage_error(fmt::format("campaign: {} needs a {} integer, not '{}'", flag,
                                     workers ? "non-negative" : "positive", **text));
    // More workers than a few per core only thrash (each loads LibTorch and its backends).
    const int max_workers = 4 * static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (field == &options.workers && *v > max_workers)
      return usage_error(
          fmt::format("campaign: --workers {} is more than {} (4 per core here)", *v, max_workers));
    *field = *v;
  }
  const Config config = config_or_exit();
  const bool gradients = target == "fuzz_autograd";
  // A Python backend in BACKENDS: one process unless --workers says otherwise. A fork job lasts
  // 1, 2, 3... s and each starts a new Python child, so it would import torch or jax and
  // recompile every structure it meets, job after job (0.42 exec/s measured, docs/backends.md).
  if (!a.workers && backends_have_python(config.backends)) options.workers = 0;

  if (fuzzer) {
    options.fuzzer = *fuzzer;
  } else if (const std::optional<fs::path> found = find_fuzzer(target)) {
    options.fuzzer = *found;
  } else {
    return usage_error(fmt::format("campaign: cannot find the {} binary next to this build "
                                   "(<build>/fuzz/{}); pass --fuzzer PATH",
                                   target, target));
  }
  if (::access(options.fuzzer.c_str(), X_OK) != 0)
    return usage_error(fmt::format("campaign: {}: not an executable", options.fuzzer.string()));
  std::error_code ec;
  options.seeds = seeds ? fs::path(*seeds) : fs::path("corpus") / target;
  if (seeds && !fs::is_directory(options.seeds, ec))
    return usage_error(fmt::format("campaign: --seeds {}: not a directory", *seeds));
  if (!seeds && !fs::is_directory(options.seeds, ec))
    options.seeds = source_seeds(options.fuzzer, target).value_or(options.seeds);

  // --known, else BURNMARK_KNOWN_BUGS (by default the list installed with, or beside, this
  // binary; load_config refused a missing one); empty: nothing is known.
  Suppressions known;
  const std::string known_file = known_path.value_or(config.known_bugs);
  if (!known_file.empty()) {
    std::string error;
    known = Suppressions::load(known_file, error);
    if (!error.empty())
      return usage_error(
          fmt::format("campaign: {}: {}", known_path ? "--known" : "BURNMARK_KNOWN_BUGS", error));
    options.known_bugs = fs::absolute(known_file, ec);
  }

  fs::create_directories(options.out, ec);
  // Before the ledger is read: a second campaign on the directory would lose the first one's
  // updates (each rewrites the whole ledger from its own copy).
  CampaignLock lock;
  std::string takeover;
  if (const std::string error = lock.acquire(options.out, takeover); !error.empty())
    return usage_error("campaign: " + error);
  if (!takeover.empty()) fmt::print(stderr, "campaign: {}\n", takeover);
  Ledger ledger;
  if (const std::string error = load_ledger(options.out, ledger); !error.empty())
    return usage_error(fmt::format("campaign: {} (move it away to start a new ledger)", error));
  if (!ledger.target.empty() && ledger.target != target)
    return usage_error(fmt::format("campaign: {} holds a {} ledger, not {}", options.out.string(),
                                   ledger.target, target));
  ledger.target = target;
  // The saved inputs are the truth: a killed campaign may have saved some the ledger does not
  // count yet. Rewritten (atomically) at once, so the ledger on disk is right from here on.
  if (const std::vector<std::string> changes = recount_from_disk(options.out, ledger);
      !changes.empty()) {
    for (const std::string& c : changes)
      fmt::print(stderr, "campaign: recounted {}\n", c);
    if (const std::string error = save_ledger(options.out, ledger, std::time(nullptr));
        !error.empty())
      return usage_error("campaign: " + error);
  }

  const std::optional<std::vector<std::string>> patches = campaign_patches(a, config);
  if (!patches) return kExitUsage;
  // The campaign's own backends (which re-check and minimise findings) and its fuzzers apply the
  // same patches.
  Config patched = config;
  patched.patches = patches->empty() ? "none" : fmt::format("{}", fmt::join(*patches, ","));
  options.patches = patched.patches;
  auto backends = make_backends_or_report(patched);
  if (!backends) return kExitUsage;
  std::vector<Backend*> raw;
  for (const auto& b : *backends)
    raw.push_back(b.get());
  const std::unique_ptr<ConventionJudge> conventions = convention_judge_for(config);
  Runner runner(raw, oracle_options_for(config, gradients, *backends), conventions.get());
  FindingsOptions findings;
  findings.gradients = gradients;
  findings.tangents = config.tangents != 0;
  findings.hessian = gradients && config.hvp != 0;
  findings.tolerance = config.tolerance;
  findings.patches = *patches;
  FindingsBook book(options.out, std::move(ledger), std::move(known), runner, *raw.front(),
                    findings);
  const GeneratorOptions decode = generator_options(config);
  options.decode = [decode](std::span<const std::uint8_t> bytes) {
    return generate(bytes, decode);
  };

  fmt::print(stderr, "campaign: {} for {}s {}, BACKENDS={}, seeds {}, findings in {}\n",
             options.fuzzer.string(), options.seconds,
             options.workers == 0
                 ? std::string("in one process (restarted on the corpus after a crash)")
                 : fmt::format("on {} worker(s)", options.workers),
             config.backends, options.seeds.string(), options.out.string());
  const CampaignSummary s = burnmark::run_campaign(options, book);
  if (!s.error.empty()) return usage_error("campaign: " + s.error);
  // A "fuzzer" that exited by itself having run nothing (not a libFuzzer binary) is not a
  // campaign that found nothing. One the campaign stopped at its time ran as long as it was asked
  // to: executing nothing then (a short --time while LibTorch loads) is a note. Findings are
  // executions too: a fork-mode parent whose every input crashes a backend may end before it
  // prints a status line.
  if (s.stats.execs == 0 && book.inputs() == 0 && s.stopped_at_time)
    fmt::print(
        stderr, "campaign: {} executed nothing before the time was up{}\n", options.fuzzer.string(),
        s.stats.started ? "" : " (and printed no libFuzzer banner: is it a libFuzzer target?)");
  if (s.stats.execs == 0 && book.inputs() == 0 && !s.stopped_at_time)
    return usage_error(fmt::format("campaign: {} reported no executions (is it a libFuzzer "
                                   "target? its output is in {})",
                                   options.fuzzer.string(),
                                   (options.out / ".scratch" / "fuzzer.log").string()));
  std::size_t fresh = 0;
  for (const LedgerEntry& e : book.ledger().entries)
    fresh += e.status == "new" ? 1 : 0;
  // compile_hits/compile_misses: torch-compile's cache over the campaign (one-process mode only:
  // fork-mode workers' notes go to libFuzzer's job logs); restarts: one-process mode's.
  fmt::print("CAMPAIGN target={} execs={} diverging={} signatures={} ledger={} new={} crashes={} "
             "ledger_file={} restarts={} compile_hits={} compile_misses={} patched_op_inputs={} "
             "patched_op_compared={} counted_inputs={} patches={}\n",
             target, s.stats.execs, s.diverging_inputs, book.signatures_this_run(),
             book.ledger().entries.size(), fresh, s.backend_failures + s.crashes,
             (options.out / "ledger.md").string(), s.restarts, s.stats.compile_hits,
             s.stats.compile_misses, s.patched_op_inputs, s.patched_op_compared, s.counted_inputs,
             patches->size());
  // A campaign cut short by a full disk did not do what it was asked: never a clean status.
  if (!s.stopped_early.empty()) return usage_error("campaign: stopped early: " + s.stopped_early);
  // Like `run`: 1 when there is something to look at (a new bug), 0 when every bug is known.
  return fresh > 0 ? kExitDivergence : kExitAgree;
}

} // namespace

Action define_campaign(CLI::App& app) {
  auto a = std::make_shared<CampaignArgs>();
  const auto text = [&app](const char* name, std::optional<std::string>& field, const char* type,
                           const char* help) {
    app.add_option_function<std::string>(
           name, [&field](const std::string& v) { field = v; }, help)
        ->type_name(type);
  };
  app.add_option("--target", a->target, "the fuzz target (default fuzz_autograd)")
      ->type_name("fuzz_autograd|fuzz_tensor_ops")
      ->check(check_with([](const std::string& t) {
        return t == "fuzz_autograd" || t == "fuzz_tensor_ops"
                   ? std::string()
                   : fmt::format("unknown target '{}' (fuzz_autograd or fuzz_tensor_ops)", t);
      }));
  text("--time", a->time, "S", "seconds to fuzz (default 60)");
  text("--workers", a->workers, "N",
       "libFuzzer workers, -fork=N (at most 4 per core); 0 = one process for the whole campaign, "
       "restarted on the corpus after a crash (default 1; 0 when BACKENDS has a Python backend: "
       "torch-eager-py, torch-compile, jax)");
  text("--out", a->out, "DIR", "the findings folder and its ledger (default findings)");
  text("--fuzzer", a->fuzzer, "PATH",
       "the fuzz target's binary (default: the one of this build, <build>/fuzz/TARGET)");
  text("--seeds", a->seeds, "DIR",
       "the seed corpus (default corpus/TARGET, else the source tree's of this build)");
  text("--known", a->known_path, "FILE",
       "the known-bug list (default: BURNMARK_KNOWN_BUGS, see --help-env)");
  text("--min-free", a->min_free, "MB",
       "free space the findings folder must keep; below it the campaign does not start, or stops "
       "(default 64)");
  text("--patches", a->patches, "none|all|ID,...",
       "fix-and-continue patches (corpus/patches.txt) to apply, each only if it passes its gate "
       "(default: all, so every validated patch; BURNMARK_PATCHES sets it too)");
  app.add_option("--merge", a->merge,
                 "merge these campaign directories (ledgers, findings, crashes, corpora) into "
                 "--out instead of fuzzing; counts are the distinct saved inputs, so merging a "
                 "directory twice adds nothing")
      ->type_name("DIR...")
      ->expected(1, -1);
  return [a](std::span<const std::string> after_dashes) { return campaign(*a, after_dashes); };
}

} // namespace burnmark::cli
