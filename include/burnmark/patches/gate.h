// The validation gate of a fix-and-continue patch (docs/patches.md, `burnmark patches check`):
// the bug's minimal program must still diverge with the patch off and must agree with it on.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "burnmark/driver/driver.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/patches/patches.h"

namespace burnmark {

struct PatchCheck {
  enum class Status {
    Pass,           // off: diverges; on: agrees
    NotHere,        // off: agrees (or is not run) on a platform the bug program's seen-on
                    // header does not name (the bug shows on other ISAs only); on: does not
                    // diverge. Not a failure.
    NotLoadBearing, // off: agrees where seen-on says it diverged (fixed upstream, or the patch
                    // was never needed)
    StillDiverges,  // on: diverges (the workaround does not cover the bug's program)
    Error,          // could not be checked: no program, plugin not loadable, id unknown to it
  };
  std::string id;
  std::string backend;
  Status status = Status::Error;
  std::string off;      // what the program did with the patch off ("diverges: forward, 2 elements")
  std::string on;       // with only this patch on
  std::string platform; // the plugin's platform() string, as seen-on headers name it
  std::string seen_on;  // NotHere: the header's entries for this plugin ("onednn @ ...; ...")
  // Pass only: a campaign applies a patch whose bug shows here, nothing else.
  bool passed() const { return status == Status::Pass; }
  // Neither fail nor error: what `burnmark patches check` and patches_gate accept.
  bool ok() const { return status == Status::Pass || status == Status::NotHere; }
};

// Replays `bugs_dir`/<id>.txt on the reference (`ref`) and the patch's plugin, loaded twice:
// with no patch active, then with this patch alone. "Off diverges" is asked for only where the
// program's `# seen-on:` header names "<plugin> @ <the plugin's platform()>" (or has no such
// header): elsewhere an agreeing (or unsupported) "off" is NotHere, as test_patches and test_bugs
// treat a platform the bug was not measured on. "On agrees" is asked for everywhere. `run` and
// `oracle` are what `burnmark run` uses (gradients on); the plugin is found as BACKENDS finds it
// (BURNMARK_PLUGIN_PATH, then the build tree).
PatchCheck check_patch(const Patch& patch, const std::string& bugs_dir, const RunOptions& run,
                       const OracleOptions& oracle);

// One fixed-shape line: "PATCH <id> <backend> pass: off diverges (...), on agrees", "...
// not-here: off agrees on <platform> (seen on <seen_on>), on agrees", "... fail: off agrees:
// fixed upstream or not load-bearing", "... fail: off ..., on diverges (...)", "... error: ...".
std::string format_patch_check(const PatchCheck& check);

// What a campaign does with the patches it was asked for (gate_patches).
struct GatedPatches {
  std::vector<Patch> applied;           // passed their gate, in table order
  std::vector<std::string> not_applied; // one line each: "ID not applied: why"
};

// The campaign's start (docs/patches.md, "Campaigns"): each of `chosen` whose plugin is in
// `plugins` (plugin_names_in) runs its gate and is applied when it passes; the others are not
// applied, each with its reason (its plugin is not in BACKENDS, or its gate's line).
GatedPatches gate_patches(const std::vector<Patch>& chosen, const std::vector<std::string>& plugins,
                          const std::string& bugs_dir, const RunOptions& run,
                          const OracleOptions& oracle);

} // namespace burnmark
