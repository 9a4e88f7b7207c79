// The campaign's time series file (see timeseries.h): one tab-separated line per sample.
#include "burnmark/campaign/timeseries.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "burnmark/campaign/atomic_file.h"

namespace burnmark {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader =
    "# burnmark-timeseries-1\n"
    "# elapsed_s\tunix_time\texecs\texec_per_s\tcoverage\tfeatures\tcorpus\tbugs\tcrashes\n";
constexpr std::size_t kFields = 9;

template <typename T> bool number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

} // namespace

std::string time_sample_line(const TimeSample& s) {
  return fmt::format("{:.1f}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", s.elapsed_s,
                     static_cast<long long>(s.unix_time), s.execs, s.exec_per_s, s.coverage,
                     s.features, s.corpus, s.bugs, s.crashes);
}

bool parse_time_sample(std::string_view line, TimeSample& out) {
  if (line.ends_with('\n')) line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return false;
  std::vector<std::string_view> f;
  for (std::size_t start = 0;;) {
    const std::size_t tab = line.find('\t', start);
    f.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  // A line cut short by a kill may still parse; load_timeseries skips it by its missing newline.
  if (f.size() != kFields) return false;
  TimeSample s;
  long long unix_time = 0;
  if (!number(f[0], s.elapsed_s) || !number(f[1], unix_time) || !number(f[2], s.execs) ||
      !number(f[3], s.exec_per_s) || !number(f[4], s.coverage) || !number(f[5], s.features) ||
      !number(f[6], s.corpus) || !number(f[7], s.bugs) || !number(f[8], s.crashes))
    return false;
  s.unix_time = static_cast<std::time_t>(unix_time);
  out = s;
  return true;
}

std::vector<TimeSample> load_timeseries(const fs::path& dir) {
  std::vector<TimeSample> out;
  std::string text;
  if (!read_whole_file(dir / kTimeSeriesFile, text)) return out;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t eol = text.find('\n', start);
    if (eol == std::string::npos) break; // the last line, cut short by a kill
    TimeSample s;
    if (parse_time_sample(std::string_view(text).substr(start, eol - start), s)) out.push_back(s);
    start = eol + 1;
  }
  return out;
}

TimeSeriesWriter::~TimeSeriesWriter() {
  if (fd_ >= 0) ::close(fd_);
}

std::string TimeSeriesWriter::open(const fs::path& dir) {
  const fs::path file = dir / kTimeSeriesFile;
  std::string text;
  const bool existed = read_whole_file(file, text);
  if (const std::vector<TimeSample> before = load_timeseries(dir); !before.empty()) {
    elapsed_offset_ = before.back().elapsed_s;
    execs_offset_ = before.back().execs;
  }
  fd_ = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return fmt::format("cannot open {}: {}", file.string(), std::strerror(errno));
  // A new file gets the header; one whose last line a kill cut short gets that line ended, so
  // the next sample starts a line of its own (the cut one is then skipped).
  if (!existed || text.empty()) {
    if (!write_all(fd_, kHeader)) return fmt::format("cannot write {}", file.string());
  } else if (!text.ends_with('\n') && !write_all(fd_, "\n")) {
    return fmt::format("cannot write {}", file.string());
  }
  return "";
}

std::string TimeSeriesWriter::append(TimeSample s) {
  if (fd_ < 0) return "";
  s.elapsed_s += elapsed_offset_;
  s.execs += execs_offset_;
  if (!write_all(fd_, time_sample_line(s)))
    return fmt::format("cannot append to {}: {}", kTimeSeriesFile, std::strerror(errno));
  return "";
}

} // namespace burnmark
