// `burnmark bench [--forward-only] [--seconds S] DIR`: programs per second without libFuzzer.
// Every input in DIR is decoded once (as `run` would), then run in a plain loop for about S
// seconds: through each backend of BACKENDS alone, then through all of them with the oracle. The
// first figures are the bare cost of a backend on these programs (for `libtorch`, LibTorch's own
// calls and BurnMark's tensor set-up, nothing else); comparing them with the fuzz target's exec/s
// on the same inputs (tools/bench.sh) shows what libFuzzer and the harness cost. A backend's
// rate counts only the programs it runs: those it reports Unsupported (a plugin's missing ops)
// are left out of its loop and shown as "skipped N of M", as are, on the oracle's line, the
// programs some backend skips. Raw inputs decode as under a fuzz target (BURNMARK_OPS=auto).
#include <chrono>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "app.h"
#include "burnmark/oracle/oracle.h"
#include "cli_common.h"
#include "commands.h"

namespace burnmark::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Runs `one` over the programs, round after round, until `seconds` passed (at least one round);
// programs per second.
template <class F> double rate(const std::vector<Program>& programs, double seconds, F one) {
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  std::size_t done = 0;
  do {
    for (const Program& p : programs) {
      one(p);
      ++done;
    }
  } while (Clock::now() < until);
  return static_cast<double>(done) / std::chrono::duration<double>(Clock::now() - start).count();
}

struct BenchArgs {
  bool gradients = true;
  std::string seconds_text = "10";
  std::string dir;
};

int bench(const BenchArgs& a) {
  const bool gradients = a.gradients;
  const std::string& value = a.seconds_text;
  char* end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(seconds > 0) || seconds > 86400)
    return usage_error(
        fmt::format("bench: --seconds needs a number of seconds in (0, 86400], not '{}'", value));
  const std::string& dir = a.dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return usage_error(fmt::format("bench: {}: not a directory", dir));
  const Config config = config_or_exit();
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file() && !e.path().filename().string().starts_with("."))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) return usage_error(fmt::format("bench: {} holds no inputs", dir));
  auto backends = make_backends_or_report(config);
  if (!backends) return kExitUsage;
  const GeneratorOptions decode = generator_options(config, *backends);
  std::vector<Program> programs;
  for (const auto& f : files) {
    std::optional<Program> p = load_program(f.string(), decode);
    if (!p) return kExitUsage;
    programs.push_back(std::move(*p));
  }

  const RunOptions run = run_options(config, gradients);
  fmt::print("# programs/s over {} inputs of {}, about {} s each, no libFuzzer\n", programs.size(),
             dir, seconds);
  const auto line = [&](const std::string& name, const std::vector<Program>& ran, double r) {
    const std::size_t skipped = programs.size() - ran.size();
    if (ran.empty())
      fmt::print("{:<40} {:>10} skipped {} of {}\n", name, "-", skipped, programs.size());
    else if (skipped > 0)
      fmt::print("{:<40} {:>10.0f} skipped {} of {}\n", name, r, skipped, programs.size());
    else
      fmt::print("{:<40} {:>10.0f}\n", name, r);
  };
  std::vector<bool> run_by_every(programs.size(), true);
  for (const auto& b : *backends) {
    // One warm-up round: first calls load kernels and, for child backends, start the child.
    // It also finds the programs this backend skips, which its rate leaves out.
    std::vector<Program> runs;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      if (run_backend(*b, programs[i], run).status == Status::Unsupported)
        run_by_every[i] = false;
      else
        runs.push_back(programs[i]);
    }
    const double r =
        runs.empty() ? 0 : rate(runs, seconds, [&](const Program& p) { run_backend(*b, p, run); });
    line(b->name(), runs, r);
  }
  std::vector<Program> run_by_all;
  for (std::size_t i = 0; i < programs.size(); ++i)
    if (run_by_every[i]) run_by_all.push_back(programs[i]);
  const double all = run_by_all.empty() ? 0 : rate(run_by_all, seconds, [&](const Program& p) {
    (void)run_and_compare(p, *backends, config, gradients);
  });
  line(fmt::format("{} with the oracle", config.backends), run_by_all, all);
  return kExitAgree;
}

} // namespace

Action define_bench(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  app.add_flag_callback(
      "--forward-only", [a] { a->gradients = false; },
      "values only, no gradients (as fuzz_tensor_ops)");
  app.add_option("--seconds", a->seconds_text, "about how long each measurement runs (default 10)")
      ->type_name("S");
  app.add_option("DIR", a->dir, "a folder of inputs (text programs or raw fuzzer inputs)")
      ->required();
  return [a](std::span<const std::string>) { return bench(*a); };
}

} // namespace burnmark::cli
