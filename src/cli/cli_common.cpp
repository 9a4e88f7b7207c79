// Helpers shared by the `burnmark` subcommands (see cli_common.h).
#include "cli_common.h"

#include "burnmark/ir/input_file.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/registry.h"
#include "burnmark/gen/generator.h"
#include "burnmark/ir/text.h"

namespace burnmark::cli {

int usage_error(std::string_view message) {
  fmt::print(stderr, "burnmark: {}\n", message);
  return kExitUsage;
}

bool write_file(std::string_view path, std::span<const std::uint8_t> bytes) {
  std::ofstream out{std::string(path), std::ios::binary | std::ios::trunc};
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out.flush());
}

bool looks_like_text(std::span<const std::uint8_t> bytes) {
  return looks_like_program_text(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

std::optional<Program> load_program(std::string_view path, const Config& config) {
  return load_program(path, generator_options(config));
}

std::optional<Program> load_program(std::string_view path, const GeneratorOptions& decode) {
  std::string error;
  const std::optional<std::string> text = read_input_file(std::string(path), error);
  if (!text) {
    usage_error(error);
    return std::nullopt;
  }
  const std::vector<std::uint8_t> bytes(text->begin(), text->end());
  if (!looks_like_text(bytes)) return generate(bytes, decode);
  ParseResult parsed = parse_program(*text);
  if (!parsed.ok()) {
    usage_error(fmt::format("{}: {}", path, parsed.error()));
    return std::nullopt;
  }
  return std::move(parsed.program());
}

std::optional<std::vector<std::unique_ptr<Backend>>> make_backends_or_report(const Config& config) {
  BackendsResult r =
      make_backends(config.backends,
                    RegistryOptions{config.threads, config.child_timeout, config.isolate != 0,
                                    static_cast<std::size_t>(config.child_memory), "/proc/self/exe",
                                    config.torch_python, config.compile_dynamic != 0,
                                    config.jax_python, active_plugin_patches_or_exit(config)});
  if (!r.ok()) {
    usage_error(r.error());
    return std::nullopt;
  }
  return r.take();
}

OracleOptions oracle_options_for(const Config& config, bool gradients,
                                 std::span<const std::unique_ptr<Backend>> backends) {
  OracleOptions o = oracle_options(config, gradients);
  o.baselines = version_baselines(backends);
  return o;
}

std::unique_ptr<ConventionJudge> convention_judge_for(const Config& config) {
  if (config.convention_findings) return nullptr;
  return std::make_unique<ConventionJudge>(
      make_convention_references(), make_all_conventions_references(), make_reference_backend());
}

Judgement run_and_compare(const Program& program,
                          std::span<const std::unique_ptr<Backend>> backends, const Config& config,
                          bool gradients) {
  Judgement j;
  const RunOptions run = run_options(config, gradients);
  for (const auto& b : backends)
    j.outcomes.push_back(run_backend(*b, program, run));
  j.verdict = compare(j.outcomes, oracle_options_for(config, gradients, backends));
  return j;
}

} // namespace burnmark::cli
