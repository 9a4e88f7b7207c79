// Parsing libFuzzer status lines (see fuzzer_output.h). Fields are looked up by name rather
// than position because the two line shapes order and punctuate them differently.
#include "burnmark/campaign/fuzzer_output.h"

#include <charconv>
#include <optional>

namespace burnmark {

namespace {

std::optional<std::uint64_t> number_at(std::string_view s, std::size_t pos) {
  while (pos < s.size() && s[pos] == ' ')
    ++pos;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data() + pos, s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data() + pos) return std::nullopt;
  return v;
}

// The number after `key` ("cov:", "exec/s"), optionally followed by ':'.
std::optional<std::uint64_t> field(std::string_view line, std::string_view key) {
  const std::size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t pos = at + key.size();
  if (pos < line.size() && line[pos] == ':') ++pos;
  return number_at(line, pos);
}

} // namespace

bool parse_fuzzer_line(std::string_view line, FuzzerStats& stats) {
  if (line.starts_with("INFO: Seed: ")) stats.started = true;
  if (line.empty() || line[0] != '#') return false;
  const std::optional<std::uint64_t> execs = number_at(line, 1);
  const std::optional<std::uint64_t> cov = field(line, " cov");
  if (!execs || !cov) return false;
  stats.execs = *execs;
  stats.coverage = *cov;
  if (const auto e = field(line, " exec/s")) stats.exec_per_s = *e;
  if (const auto f = field(line, " ft")) stats.features = *f;
  if (const auto c = field(line, " corp")) stats.corpus = *c;
  ++stats.lines;
  return true;
}

} // namespace burnmark
