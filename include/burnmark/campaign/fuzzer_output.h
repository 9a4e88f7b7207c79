// Reading libFuzzer's own status lines for the campaign's progress display. Both shapes are
// understood:
//   plain / -jobs:  "#4096\tpulse  cov: 412 ft: 980 corp: 37/2104b lim: 43 exec/s: 2048 rss: 61Mb"
//   -fork=N parent: "#80123: cov: 512 ft: 1201 corp: 60 exec/s 3100 oom/timeout/crash: 0/0/0 ..."
// A line that is neither leaves the stats unchanged.
#pragma once

#include <cstdint>
#include <string_view>

namespace burnmark {

struct FuzzerStats {
  std::uint64_t execs = 0; // the "#N" counter (total executions so far)
  std::uint64_t exec_per_s = 0;
  std::uint64_t coverage = 0; // "cov:" (covered PCs/edges)
  std::uint64_t features = 0; // "ft:" (libFuzzer's features: edges with hit counts and more)
  std::uint64_t corpus = 0;   // "corp:" (inputs in the corpus)
  std::uint64_t lines = 0;    // status lines seen
  // libFuzzer's start banner ("INFO: Seed: N") was seen: a libFuzzer target that began, even
  // if it was stopped before its first status line.
  bool started = false;
};

// True when `line` was a status line (and `stats` was updated from it); the start banner sets
// `stats.started` and is not one.
bool parse_fuzzer_line(std::string_view line, FuzzerStats& stats);

} // namespace burnmark
