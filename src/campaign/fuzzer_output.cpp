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

// "NOTE backend=torch-compile note=\"... (compile cache: H hits, C compiles)\"".
void parse_compile_note(std::string_view line, FuzzerStats& stats) {
  constexpr std::string_view kKey = "(compile cache: ";
  const std::size_t at = line.find(kKey);
  if (at == std::string_view::npos) return;
  const std::optional<std::uint64_t> hits = number_at(line, at + kKey.size());
  const std::optional<std::uint64_t> misses = field(line, " hits,");
  if (!hits || !misses) return;
  // Fewer of either than the last note: a new child (restarted after a crash), counting from 0.
  // (A new child that has already passed both counts goes unnoticed: its counts then replace
  // the old child's; the fuzzer's own restarts are told by new_fuzzer_process.)
  if (*hits < stats.last_hits || *misses < stats.last_misses) new_fuzzer_process(stats);
  stats.last_hits = *hits;
  stats.last_misses = *misses;
  stats.compile_hits = stats.compile_hits_before + *hits;
  stats.compile_misses = stats.compile_misses_before + *misses;
}

} // namespace

void new_fuzzer_process(FuzzerStats& stats) {
  stats.compile_hits_before += stats.last_hits;
  stats.compile_misses_before += stats.last_misses;
  stats.last_hits = stats.last_misses = 0;
}

bool parse_fuzzer_line(std::string_view line, FuzzerStats& stats) {
  if (line.starts_with("INFO: Seed: ")) stats.started = true;
  if (line.starts_with("NOTE backend=torch-compile ")) parse_compile_note(line, stats);
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
