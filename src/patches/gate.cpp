// The patch gate (see burnmark/patches/gate.h): reference vs the plugin with the patch off, then
// on.
#include "burnmark/patches/gate.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <memory>
#include <sstream>
#include <string_view>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/input_file.h"
#include "burnmark/ir/text.h"
#include "burnmark/plugin/loader.h"

namespace burnmark {
namespace {

// What one replay showed, for the report line; `diverged` says which way it went.
std::string replay(Backend& reference, Backend& plugin, const Program& program,
                   const RunOptions& run, const OracleOptions& oracle, bool& diverged) {
  std::vector<Outcome> outcomes;
  outcomes.push_back(run_backend(reference, program, run));
  outcomes.push_back(run_backend(plugin, program, run));
  const Verdict verdict = compare(outcomes, oracle);
  diverged = !verdict.agree();
  if (verdict.compared == 0) {
    // Skipped (an op the plugin does not list) is neither agreement nor divergence.
    diverged = false;
    return fmt::format("not run by {}: {}", plugin.name(), outcomes[1].message);
  }
  if (!diverged) return "agrees";
  const Divergence& d = verdict.divergences.front();
  std::size_t elements = 0;
  for (const Divergence& each : verdict.divergences)
    elements += each.count;
  return fmt::format("diverges ({}{}, {} element{}, first {} vs {})", kind_name(d.kind),
                     d.kind == DivergenceKind::Gradient ? fmt::format(" of leaf {}", d.leaf) : "",
                     elements, elements == 1 ? "" : "s", d.expected, d.actual);
}

// The `# seen-on:` header's entries for `plugin` ("onednn @ <platform>"), "; "-joined, and
// whether the header exists at all.
bool seen_on_header(const std::string& text, const std::string& plugin, std::string& entries) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("# seen-on:")) continue;
    std::istringstream list(line.substr(std::string_view("# seen-on:").size()));
    for (std::string entry; std::getline(list, entry, ';');) {
      const std::size_t first = entry.find_first_not_of(' ');
      if (first == std::string::npos) continue;
      entry = entry.substr(first);
      if (entry.starts_with(plugin + " @ ")) entries += (entries.empty() ? "" : "; ") + entry;
    }
    return true;
  }
  return false;
}

} // namespace

PatchCheck check_patch(const Patch& patch, const std::string& bugs_dir, const RunOptions& run,
                       const OracleOptions& oracle) {
  PatchCheck check;
  check.id = patch.id;
  check.backend = patch.backend;
  const auto error = [&](std::string why) {
    check.status = PatchCheck::Status::Error;
    check.off = std::move(why);
    return check;
  };
  std::string why;
  const std::filesystem::path file = std::filesystem::path(bugs_dir) / (patch.id + ".txt");
  const std::optional<std::string> text = read_input_file(file, why);
  if (!text) return error(fmt::format("no bug program: {}", why));
  const ParseResult parsed = parse_program(*text);
  if (!parsed.ok()) return error(fmt::format("{}: {}", file.string(), parsed.error()));

  PluginLoadResult off = load_plugin_backend(patch.plugin);
  if (!off.ok()) return error(off.error());
  PluginLoadOptions with;
  with.patches.push_back(PluginPatch{patch.plugin, patch.id});
  PluginLoadResult on = load_plugin_backend(patch.plugin, with);
  if (!on.ok()) return error(on.error());
  if (!on.warnings.empty()) return error(on.warnings.front());
  std::unique_ptr<Backend> unpatched = off.take(), patched = on.take();
  const std::unique_ptr<Backend> reference = make_reference_backend();
  check.platform = unpatched->platform();
  std::string seen;
  // The bug was measured on other platforms only: its absence here is not the library's fix.
  const bool elsewhere = seen_on_header(*text, patch.plugin, seen) &&
                         seen.find(patch.plugin + " @ " + check.platform) == std::string::npos;

  bool off_diverges = false, on_diverges = false;
  check.off = replay(*reference, *unpatched, parsed.program(), run, oracle, off_diverges);
  check.on = replay(*reference, *patched, parsed.program(), run, oracle, on_diverges);
  if (!off_diverges && elsewhere) {
    // Agrees, or not run at all (this ISA's oneDNN has no primitive for it): either way the bug
    // does not show here. With the patch on it must not diverge either.
    check.seen_on = seen.empty() ? "no platform of this plugin" : seen;
    check.status = on_diverges ? PatchCheck::Status::StillDiverges : PatchCheck::Status::NotHere;
  } else if (!off_diverges) {
    check.status =
        check.off == "agrees" ? PatchCheck::Status::NotLoadBearing : PatchCheck::Status::Error;
  } else if (on_diverges || check.on != "agrees") {
    check.status = PatchCheck::Status::StillDiverges;
  } else {
    check.status = PatchCheck::Status::Pass;
  }
  return check;
}

std::string format_patch_check(const PatchCheck& c) {
  const std::string head = fmt::format("PATCH {} {}", c.id, c.backend);
  switch (c.status) {
  case PatchCheck::Status::Pass: return fmt::format("{} pass: off {}, on {}", head, c.off, c.on);
  case PatchCheck::Status::NotHere:
    return fmt::format("{} not-here: off {} on {} (seen on {}), on {}", head, c.off, c.platform,
                       c.seen_on, c.on);
  case PatchCheck::Status::NotLoadBearing:
    return fmt::format("{} fail: off agrees: fixed upstream or not load-bearing", head);
  case PatchCheck::Status::StillDiverges:
    return fmt::format("{} fail: off {}, on {}", head, c.off, c.on);
  case PatchCheck::Status::Error: return fmt::format("{} error: {}", head, c.off);
  }
  return head;
}

GatedPatches gate_patches(const std::vector<Patch>& chosen, const std::vector<std::string>& plugins,
                          const std::string& bugs_dir, const RunOptions& run,
                          const OracleOptions& oracle) {
  GatedPatches out;
  for (const Patch& patch : chosen) {
    if (std::find(plugins.begin(), plugins.end(), patch.plugin) == plugins.end()) {
      out.not_applied.push_back(
          fmt::format("{} not applied: {} is not in BACKENDS", patch.id, patch.backend));
      continue;
    }
    const PatchCheck check = check_patch(patch, bugs_dir, run, oracle);
    if (check.passed()) {
      out.applied.push_back(patch);
      continue;
    }
    // The gate's own line, after its "PATCH ID BACKEND " head.
    const std::string line = format_patch_check(check);
    const std::string head = fmt::format("PATCH {} {} ", patch.id, patch.backend);
    out.not_applied.push_back(
        fmt::format("{} not applied: gate {}", patch.id,
                    line.starts_with(head) ? line.substr(head.size()) : line));
  }
  return out;
}

} // namespace burnmark
