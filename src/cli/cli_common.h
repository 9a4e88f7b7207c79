// Helpers every `burnmark` subcommand shares: exit codes, loading a FILE as a program, building
// BACKENDS, running and judging. Failures print one "burnmark: ..." line to stderr.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "burnmark/config/config.h"
#include "burnmark/driver/driver.h"
#include "burnmark/ir/program.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/triage/conventions.h"

namespace burnmark::cli {

inline constexpr int kExitAgree = 0;
inline constexpr int kExitDivergence = 1;
inline constexpr int kExitUsage = 2;

// Prints "burnmark: <message>" on stderr and returns kExitUsage, for `return usage_error(...)`.
int usage_error(std::string_view message);

bool write_file(std::string_view path, std::span<const std::uint8_t> bytes);

// True when the bytes are a text program: a "# burnmark program" line, or a first line that is
// neither blank nor a '#' comment starting "%0 =". Anything else is a raw libFuzzer input.
bool looks_like_text(std::span<const std::uint8_t> bytes);

// A text program is parsed; raw bytes are decoded by generate() with the env's generator
// options, exactly as the fuzz targets do. nullopt after printing the reason.
std::optional<Program> load_program(std::string_view path, const Config& config);
// The same with the generator options given: generator_options(config, backends) decodes raw
// bytes exactly as a fuzz target running those backends does (BURNMARK_OPS=auto).
std::optional<Program> load_program(std::string_view path, const GeneratorOptions& decode);

// BACKENDS built per the config; nullopt after printing the registry's one-line error.
std::optional<std::vector<std::unique_ptr<Backend>>> make_backends_or_report(const Config& config);

// oracle_options() with the version-differential pairs among `backends` (version_baselines), so
// that a verdict names regressions.
OracleOptions oracle_options_for(const Config& config, bool gradients,
                                 std::span<const std::unique_ptr<Backend>> backends);

// The judge of registered conventions triage's Runner uses, so that minimising never keeps a
// program for a convention; null with BURNMARK_CONVENTION_FINDINGS=1, which makes them findings.
std::unique_ptr<ConventionJudge> convention_judge_for(const Config& config);

struct Judgement {
  std::vector<Outcome> outcomes; // in BACKENDS order; [0] is the reference
  Verdict verdict;
};
Judgement run_and_compare(const Program& program,
                          std::span<const std::unique_ptr<Backend>> backends, const Config& config,
                          bool gradients);

} // namespace burnmark::cli
