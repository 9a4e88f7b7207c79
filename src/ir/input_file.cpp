// read_input_file (input_file.h): stat first, then read what stat allowed.
#include "burnmark/ir/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace burnmark {

std::optional<std::string> read_input_file(const std::filesystem::path& path, std::string& error,
                                           std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno));
    return std::nullopt;
  }
  if (S_ISDIR(st.st_mode)) {
    error = fmt::format("{}: is a directory, not a file", path.string());
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    error = fmt::format("{}: is not a regular file (a FIFO, device or socket)", path.string());
    return std::nullopt;
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    error = fmt::format("{}: is {} bytes, more than the {} a BurnMark input may have",
                        path.string(), st.st_size, max_bytes);
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno));
    return std::nullopt;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) {
    error = fmt::format("{}: read error", path.string());
    return std::nullopt;
  }
  return bytes.str();
}

} // namespace burnmark
