// `burnmark minimize FILE`, `burnmark triage DIR` and `burnmark sweep FILE`: from a crash
// artifact to a filable bug — the minimal program, one line per distinct bug with its
// signature, and the conditions the bug needs. The work is in the burnmark_triage library;
// this file parses arguments and prints.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include <fmt/format.h>

#include "app.h"
#include "burnmark/ir/text.h"
#include "burnmark/patches/patches.h"
#include "burnmark/triage/suppress.h"
#include "burnmark/triage/sweep.h"
#include "burnmark/triage/triage.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {
namespace {

struct Args {
  bool gradients = true;
  bool minimize_first = false;      // sweep --minimize
  bool as_is = false;               // minimize --as-is: characterise without minimising
  std::optional<std::string> known; // --known FILE
  std::string target;               // FILE or DIR
};

// The flag every one of these commands takes, and its FILE or DIR.
std::shared_ptr<Args> add_common(CLI::App& app, const char* target, const char* what) {
  auto a = std::make_shared<Args>();
  app.add_flag_callback(
      "--forward-only", [a] { a->gradients = false; },
      "values only, no gradients (as fuzz_tensor_ops)");
  app.add_option(target, a->target, what)->required();
  return a;
}

std::vector<Backend*> raw(const std::vector<std::unique_ptr<Backend>>& backends) {
  std::vector<Backend*> out;
  for (const auto& b : backends)
    out.push_back(b.get());
  return out;
}

std::string join(const std::vector<std::string>& v, std::string_view sep,
                 std::string_view empty = "-") {
  if (v.empty()) return std::string(empty);
  return fmt::format("{}", fmt::join(v, sep));
}

std::string signature_line(const Signature& s) {
  return fmt::format("signature={} kinds={} ops={} special={}", s.id, join(s.kinds, ","),
                     join(s.ops, ","), join(s.specials, ","));
}

std::string roots_line(const std::vector<RootCause>& roots) {
  std::vector<std::string> words;
  for (const RootCause& r : roots)
    words.push_back(fmt::format("{} {}", r.id, root_words(r)));
  return join(words, " + ");
}

// A compiled root reproducing eager's fault is known by eager's root (listed_root_ids).
std::vector<std::string> root_ids(const std::vector<RootCause>& roots) {
  return listed_root_ids(roots);
}

int minimize(const Args* a) {
  const Config config = config_or_exit();
  // Backends first: a raw input decodes with their op set (BURNMARK_OPS=auto), as it was fuzzed.
  auto backends = make_backends_or_report(config);
  if (!backends) return kExitUsage;
  const std::optional<Program> program =
      load_program(a->target, generator_options(config, *backends));
  if (!program) return kExitUsage;
  const std::unique_ptr<ConventionJudge> conventions = convention_judge_for(config);
  Runner runner(raw(*backends), oracle_options_for(config, a->gradients, *backends),
                conventions.get());
  // --as-is: a program already minimal (a bugs.md program) keeps its values; minimising it again
  // may wander to another fault of the same op (the minimiser only keeps the culprit's op).
  MinimizeOptions minimize_options;
  if (a->as_is) minimize_options.max_checks = 0;
  const std::optional<Characterization> c = characterize(runner, *program, minimize_options);
  if (!c) {
    fmt::print(stderr, "burnmark: minimize: {}: the backends agree, nothing to minimise\n",
               a->target);
    return kExitAgree;
  }
  // Stdout is the minimal program itself, so `burnmark minimize F > min.txt` gives a file that
  // `burnmark run` and `burnmark sweep` take; the facts around it are comment lines.
  fmt::print("# {}\n", signature_line(c->signature));
  fmt::print("# root {}\n", roots_line(c->signature.roots));
  fmt::print("# culprit={} primary={} statements={}->{} checks={}{}\n", c->finding.culprit_label,
             c->finding.primary, program->stmts.size(), c->minimized.stmts.size(), c->checks,
             c->exhausted && !a->as_is ? " (budget exhausted: not a fixpoint)" : "");
  fmt::print("{}", to_text(c->minimized));
  return kExitDivergence;
}

// For each known bug the findings matched: patched (corpus/patches.txt has a patch of that id,
// active when BURNMARK_PATCHES selects it, else available) or only suppressed by its signature
// (docs/patches.md). Then one line counting both.
void print_patched(const std::vector<std::pair<std::string, std::size_t>>& known_files,
                   const Config& config) {
  std::vector<Patch> table, active;
  if (const std::string path = default_patches_path(); !path.empty()) {
    const PatchTableResult t = load_patch_table(path);
    if (t.ok()) table = t.patches();
    const PatchTableResult on = t.ok() ? select_patches(table, config.patches) : t;
    if (on.ok()) active = on.patches();
  }
  const auto has = [](const std::vector<Patch>& in, const std::string& id) {
    return std::any_of(in.begin(), in.end(), [&](const Patch& p) { return p.id == id; });
  };
  std::size_t patched = 0;
  for (const auto& [anchor, files] : known_files) {
    if (has(table, anchor)) {
      ++patched;
      fmt::print("PATCHED {} patch={} {} files={}\n", anchor, anchor,
                 has(active, anchor) ? "active" : "available", files);
    } else {
      fmt::print("SUPPRESSED {} files={}\n", anchor, files);
    }
  }
  fmt::print("KNOWN bugs={} patched={} suppressed={}\n", known_files.size(), patched,
             known_files.size() - patched);
}

int triage_dir(const Args* a) {
  namespace fs = std::filesystem;
  const fs::path dir{a->target};
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return usage_error(fmt::format("triage: {}: not a directory", dir.string()));
  const Config config = config_or_exit();

  // --known, else BURNMARK_KNOWN_BUGS (by default the list installed with, or beside, this
  // binary; load_config refused a missing one); empty: nothing is known.
  Suppressions known;
  const std::string known_path = a->known.value_or(config.known_bugs);
  if (!known_path.empty()) {
    std::string error;
    known = Suppressions::load(known_path, error);
    if (!error.empty())
      return usage_error(
          fmt::format("triage: {}: {}", a->known ? "--known" : "BURNMARK_KNOWN_BUGS", error));
  }

  // A campaign directory (it has a ledger) keeps its inputs one folder per signature; any other
  // directory is a flat folder of findings.
  std::vector<std::string> paths;
  const bool campaign = fs::exists(dir / "ledger.json", ec);
  if (campaign) {
    for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name.starts_with("input-") && name.ends_with(".bin") &&
          entry.path().parent_path().parent_path() == dir)
        paths.push_back(entry.path().string());
    }
  } else {
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.is_regular_file() && !entry.path().filename().string().starts_with("."))
        paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  auto backends = make_backends_or_report(config);
  if (!backends) return kExitUsage;
  const GeneratorOptions decode = generator_options(config, *backends); // as they were fuzzed
  std::vector<TriageInput> inputs;
  std::size_t unreadable = 0;
  for (const std::string& p : paths) {
    std::optional<Program> program = load_program(p, decode); // prints why it failed
    if (!program) {
      ++unreadable;
      continue;
    }
    inputs.push_back(TriageInput{p, std::move(*program)});
  }
  const std::unique_ptr<ConventionJudge> conventions = convention_judge_for(config);
  Runner runner(raw(*backends), oracle_options_for(config, a->gradients, *backends),
                conventions.get());

  const bool tty = isatty(fileno(stderr)) != 0;
  TriageOptions options;
  options.progress = [&](std::string_view stage, std::size_t done, std::size_t total) {
    // A terminal gets one line redrawn in place; a log gets a line per tenth of the work.
    if (tty) {
      fmt::print(stderr, "\rtriage: {} {}/{}{}", stage, done, total, done == total ? "\n" : "");
    } else if (done == total || done % std::max<std::size_t>(1, total / 10) == 0) {
      fmt::print(stderr, "triage: {} {}/{}\n", stage, done, total);
    }
  };
  const TriageReport report = triage(runner, inputs, options);

  // Root causes first, each followed by the signatures (op graphs) that reached it. A root is
  // known when the list names it, or names every one of its signatures.
  std::size_t diverging = 0, new_signatures = 0, new_roots = 0;
  std::vector<std::pair<std::string, std::size_t>> known_files; // anchor, files; first seen first
  for (const RootGroup& r : report.roots) {
    const KnownBug* root_known = known.find_root(root_ids(r.roots));
    bool all_known = true;
    for (std::size_t i : r.groups)
      all_known = all_known && known.find_graph(report.groups[i].signature) != nullptr;
    const KnownBug* shown = root_known  ? root_known
                            : all_known ? known.find_graph(report.groups[r.groups[0]].signature)
                                        : nullptr;
    new_roots += shown ? 0 : 1;
    fmt::print("ROOT {} count={} signatures={} known={} {}\n", r.key, r.members, r.groups.size(),
               shown ? shown->anchor : "-", roots_line(r.roots));
    for (std::size_t i : r.groups) {
      const TriageGroup& g = report.groups[i];
      const KnownBug* k = known.find_graph(g.signature);
      new_signatures += k ? 0 : 1;
      diverging += g.members.size();
      // Known by its root alone: the same fault reached another way, which is worth saying.
      const std::string how = k || !root_known ? "" : " (known by its root)";
      if (const KnownBug* by = k ? k : root_known) {
        auto it = std::find_if(known_files.begin(), known_files.end(),
                               [&](const auto& f) { return f.first == by->anchor; });
        if (it == known_files.end()) it = known_files.insert(known_files.end(), {by->anchor, 0});
        it->second += g.members.size();
      }
      fmt::print("  BUG {} count={} dtype={} kinds={} ops={} special={} example={} culprit={} "
                 "known={}{}\n",
                 g.signature.id, g.members.size(), float_dtype_name(g.minimized.float_dtype),
                 join(g.signature.kinds, ","), join(g.signature.ops, ","),
                 join(g.signature.specials, ","), g.representative,
                 g.signature.culprit_id.empty() ? "-" : g.signature.culprit_id,
                 k            ? k->anchor
                 : root_known ? root_known->anchor
                              : "-",
                 how);
    }
  }
  fmt::print("TRIAGE files={} diverging={} bugs={} roots={} agreeing={} unreadable={}\n",
             paths.size(), diverging, report.groups.size(), report.roots.size(),
             report.agreeing.size(), unreadable);
  // How far root causes fold the graph-level view, for a person to check the merges below.
  fmt::print("FOLD signatures={} roots={} not-known-signatures={} not-known-roots={}\n",
             report.groups.size(), report.roots.size(), new_signatures, new_roots);
  print_patched(known_files, config);
  for (const RootGroup& r : report.roots) {
    fmt::print("\n# root {} ({} signatures, {} files)\n# {}\n", r.key, r.groups.size(), r.members,
               roots_line(r.roots));
    for (std::size_t i : r.groups) {
      const TriageGroup& g = report.groups[i];
      const KnownBug* k = known.find(g.signature);
      fmt::print("\n# bug {} ({} files{}{})\n# {}\n{}", g.signature.id, g.members.size(),
                 k ? ", known: " : "", k ? k->anchor + " " + k->description : "",
                 signature_line(g.signature), to_text(g.minimized));
    }
  }
  return report.groups.empty() ? kExitAgree : kExitDivergence;
}

int sweep_file(const Args* a) {
  const Config config = config_or_exit();
  auto backends = make_backends_or_report(config);
  if (!backends) return kExitUsage;
  std::optional<Program> program = load_program(a->target, generator_options(config, *backends));
  if (!program) return kExitUsage;
  const std::unique_ptr<ConventionJudge> conventions = convention_judge_for(config);
  Runner runner(raw(*backends), oracle_options_for(config, a->gradients, *backends),
                conventions.get());
  if (a->minimize_first) {
    const std::optional<Characterization> c = characterize(runner, *program);
    if (c) program = c->minimized;
  }
  const SweepResult r = sweep(runner, *program);
  if (r.rows.empty()) {
    fmt::print(stderr, "burnmark: sweep: {}: the backends agree, nothing to sweep\n", a->target);
    return kExitAgree;
  }
  fmt::print("{}", format_sweep(r));
  return kExitDivergence;
}

} // namespace

Action define_minimize(CLI::App& app) {
  auto a = add_common(app, "FILE", "a diverging program: text or a raw fuzzer input (crash-*)");
  app.add_flag("--as-is", a->as_is, "characterise the program without minimising it");
  return [a](std::span<const std::string>) { return minimize(a.get()); };
}

Action define_triage(CLI::App& app) {
  auto a = add_common(app, "DIR", "a folder of findings, or a campaign's --out folder");
  app.add_option_function<std::string>(
         "--known", [a](const std::string& file) { a->known = file; },
         "the known-bug list (default: BURNMARK_KNOWN_BUGS, see --help-env)")
      ->type_name("FILE");
  return [a](std::span<const std::string>) { return triage_dir(a.get()); };
}

Action define_sweep(CLI::App& app) {
  auto a = add_common(app, "FILE", "a diverging program, minimal best (see minimize)");
  app.add_flag("--minimize", a->minimize_first, "minimise the program first");
  return [a](std::span<const std::string>) { return sweep_file(a.get()); };
}

} // namespace burnmark::cli
