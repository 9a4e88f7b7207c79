// Reading libFuzzer's own status lines for the campaign's progress display. Both shapes are
// understood:
//   plain / -jobs:  "#4096\tpulse  cov: 412 ft: 980 corp: 37/2104b lim: 43 exec/s: 2048 rss: 61Mb"
//   -fork=N parent: "#80123: cov: 512 ft: 1201 corp: 60 exec/s 3100 oom/timeout/crash: 0/0/0 ..."
// and the fuzz targets' torch-compile note (fuzz_common.cpp, every 25 inputs and at exit):
//   NOTE backend=torch-compile note="cache hit (compile cache: 211 hits, 227 compiles)"
// A line that is none of these leaves the stats unchanged.
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
  // torch-compile's compile cache over the run: the note's counts, summed over the Python
  // children (a child restarted after a crash, a fuzzer restarted in one-process mode, counts
  // from 0 again; the counts it had are kept in the *_before fields).
  std::uint64_t compile_hits = 0, compile_misses = 0;
  std::uint64_t compile_hits_before = 0, compile_misses_before = 0;
  std::uint64_t last_hits = 0, last_misses = 0; // the latest note's own counts
};

// True when `line` was a status line (and `stats` was updated from it); the start banner sets
// `stats.started` and is not one.
bool parse_fuzzer_line(std::string_view line, FuzzerStats& stats);

// A new fuzzer process (a one-process campaign's restart): its children count from 0, the
// counts so far are kept.
void new_fuzzer_process(FuzzerStats& stats);

} // namespace burnmark
