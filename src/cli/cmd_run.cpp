// `burnmark run [--forward-only] FILE`: replays one program on BACKENDS and shows why they agree
// or not. The exit status is the verdict, so scripts can bisect and minimise with it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app.h"
#include "burnmark/backends/builtin.h"
#include "burnmark/oracle/summary.h"
#include "burnmark/triage/conventions.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

namespace {
constexpr std::size_t kShownValues = 24; // per tensor; long ones keep their first and last values
}

Action define_run(CLI::App& app) {
  struct Args {
    bool gradients = true;
    std::string file;
  };
  auto a = std::make_shared<Args>();
  app.add_flag_callback(
      "--forward-only", [a] { a->gradients = false; },
      "compare values only, no gradients (as fuzz_tensor_ops)");
  app.add_option("FILE", a->file, "a text program or a raw fuzzer input (crash-*)")->required();
  return [a](std::span<const std::string>) {
    const Config config = config_or_exit();
    auto backends = make_backends_or_report(config);
    if (!backends) return kExitUsage;
    // A raw input decodes as under a fuzz target with these backends (BURNMARK_OPS=auto).
    const std::optional<Program> program =
        load_program(a->file, generator_options(config, *backends));
    if (!program) return kExitUsage;

    const Judgement j = run_and_compare(*program, *backends, config, a->gradients);
    for (const Outcome& o : j.outcomes)
      fmt::print("{}", format_outcome(o, kShownValues));
    for (const auto& b : *backends) {
      if (const std::string platform = b->platform(); !platform.empty())
        fmt::print("platform {}: {}\n", b->name(), platform);
      if (const std::string note = b->note(); !note.empty() && note != b->platform())
        fmt::print("note {}: {}\n", b->name(), note);
      if (const std::vector<std::string> patches = b->active_patches(); !patches.empty())
        fmt::print("patches {}: {}\n", b->name(), fmt::join(patches, ", "));
    }
    // Divergences a registered convention (or inductor-lowp-fusion: triage/lowp_fusion.h)
    // explains stay divergences; the CONVENTION lines say which side of which convention each
    // such backend took, and which backends took the reference's own side of a convention the
    // program reaches (nothing diverges there, but a choice was made and is shown).
    if (!j.outcomes.empty() && j.outcomes.front().backend == "ref") {
      ConventionJudge judge(make_convention_references(), make_all_conventions_references(),
                            make_reference_backend());
      const RunOptions run = run_options(config, a->gradients);
      const OracleOptions oracle = oracle_options_for(config, a->gradients, *backends);
      if (!j.verdict.agree())
        fmt::print("{}", format_conventions(
                             judge.judge(*program, run, j.outcomes, j.verdict, oracle).hits));
      fmt::print("{}", format_conventions(
                           judge.reference_sides(*program, run, j.outcomes, j.verdict, oracle)));
    }
    fmt::print("{}", format_verdict(j.verdict));
    return j.verdict.agree() ? kExitAgree : kExitDivergence;
  };
}

} // namespace burnmark::cli
