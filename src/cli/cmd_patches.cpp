// `burnmark patches check [ID...]`: the validation gate of the fix-and-continue patches
// (docs/patches.md). Each patch's minimal program must diverge with the patch off (where its
// seen-on header says the bug shows; elsewhere an agreeing "off" is `not-here`) and agree with it
// on; one PATCH line each, then a PATCHES total. Exit 1 when any patch fails its gate.
#include <filesystem>
#include <fmt/format.h>

#include "app.h"
#include "burnmark/patches/gate.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

Action define_patches(CLI::App& app) {
  struct Args {
    std::string action;
    std::vector<std::string> ids;
    std::string table, bugs;
  };
  auto a = std::make_shared<Args>();
  app.add_option("ACTION", a->action, "check: run the gate")
      ->required()
      ->check(check_with([](const std::string& s) {
        return s == "check" ? std::string() : fmt::format("unknown action '{}' (valid: check)", s);
      }));
  app.add_option("ID", a->ids, "the patches to check (default: every patch of the table)");
  app.add_option("--table", a->table,
                 "the patch table (default: the checkout's corpus/patches.txt)");
  app.add_option(
      "--bugs", a->bugs,
      "the folder of the bugs' minimal programs ID.txt (default: bugs/ beside the table)");
  return [a](std::span<const std::string>) {
    const Config config = config_or_exit();
    const std::string table_path = a->table.empty() ? default_patches_path() : a->table;
    if (table_path.empty())
      return usage_error("patches: no patch table found; name one with --table");
    const PatchTableResult table = load_patch_table(table_path);
    if (!table.ok()) return usage_error(table.error());
    std::vector<Patch> chosen = table.patches();
    if (!a->ids.empty()) {
      std::string list;
      for (const std::string& id : a->ids)
        list += (list.empty() ? "" : ",") + id;
      const PatchTableResult selected = select_patches(table.patches(), list);
      if (!selected.ok()) return usage_error(selected.error());
      chosen = selected.patches();
    }
    const std::string bugs =
        a->bugs.empty() ? (std::filesystem::path(table_path).parent_path() / "bugs").string()
                        : a->bugs;
    // As `burnmark run` replays a program: gradients on, the environment's tolerance.
    const RunOptions run = run_options(config, true);
    const OracleOptions oracle = oracle_options(config, true);
    std::size_t passed = 0, not_here = 0;
    for (const Patch& patch : chosen) {
      const PatchCheck check = check_patch(patch, bugs, run, oracle);
      passed += check.passed();
      not_here += check.status == PatchCheck::Status::NotHere;
      fmt::print("{}\n", format_patch_check(check));
      std::fflush(stdout);
    }
    const std::size_t failed = chosen.size() - passed - not_here; // errors included
    fmt::print("PATCHES {} checked: {} pass, {} not seen here, {} fail\n", chosen.size(), passed,
               not_here, failed);
    return failed == 0 ? kExitAgree : kExitDivergence;
  };
}

} // namespace burnmark::cli
