// A campaign's time series: one line per progress tick in <campaign>/timeseries.tsv, so that
// `burnmark report` can plot exec/s, coverage, corpus size and distinct bugs over time.
//
// The file is append-only: each sample is one write() of one whole line with O_APPEND, so a
// killed campaign loses at most the line being written, and a reader skips a line cut short.
// A campaign continuing a directory continues its series: elapsed seconds and executions are
// offset by the last sample on disk (libFuzzer counts from 0 in every run), so the series stays
// increasing in time across resumes.
//
//   # burnmark-timeseries-1
//   elapsed_s  unix_time  execs  exec_per_s  coverage  features  corpus  bugs  crashes
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace burnmark {

struct TimeSample {
  double elapsed_s = 0;         // since the first campaign on the directory began
  std::time_t unix_time = 0;    // wall clock when the sample was taken
  std::uint64_t execs = 0;      // executions over every campaign on the directory
  std::uint64_t exec_per_s = 0; // libFuzzer's current exec/s
  std::uint64_t coverage = 0;   // libFuzzer's "cov:"
  std::uint64_t features = 0;   // libFuzzer's "ft:"
  std::uint64_t corpus = 0;     // libFuzzer's "corp:" (inputs in the corpus)
  std::uint64_t bugs = 0;       // distinct signatures in the ledger
  std::uint64_t crashes = 0;    // backend failures and fuzzer crashes of this run so far
};

inline constexpr std::string_view kTimeSeriesFile = "timeseries.tsv";

// The samples of dir/timeseries.tsv in file order; a missing file is no samples. Lines that
// are not whole samples (a header, a line cut by a kill) are skipped.
std::vector<TimeSample> load_timeseries(const std::filesystem::path& dir);
// One sample as its line, '\n' included; parse_time_sample reads it back (false when `line` is
// not a whole sample).
std::string time_sample_line(const TimeSample& s);
bool parse_time_sample(std::string_view line, TimeSample& out);

class TimeSeriesWriter {
public:
  TimeSeriesWriter() = default;
  ~TimeSeriesWriter();
  TimeSeriesWriter(const TimeSeriesWriter&) = delete;
  TimeSeriesWriter& operator=(const TimeSeriesWriter&) = delete;

  // Opens dir/timeseries.tsv for appending (writing the header when new) and reads the offsets
  // the next samples continue from. "" on success, else a one-line reason.
  std::string open(const std::filesystem::path& dir);
  // Appends `s` with its elapsed time and executions offset by the previous campaigns' last
  // sample. "" on success (also when open() failed: the series is best effort).
  std::string append(TimeSample s);

  double elapsed_offset() const { return elapsed_offset_; }
  std::uint64_t execs_offset() const { return execs_offset_; }

private:
  int fd_ = -1;
  double elapsed_offset_ = 0;
  std::uint64_t execs_offset_ = 0;
};

} // namespace burnmark
