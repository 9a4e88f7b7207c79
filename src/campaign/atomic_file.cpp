// Atomic file replacement (see atomic_file.h).
#include "burnmark/campaign/atomic_file.h"

#include "burnmark/ir/input_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>

namespace burnmark {

std::string write_file_atomically(const std::filesystem::path& path, std::string_view bytes,
                                  bool durable) {
  // The pid keeps two processes (two campaigns on one findings dir) from sharing a temporary;
  // a leading dot keeps directory scans that skip hidden files from picking it up.
  const std::filesystem::path tmp =
      path.parent_path() / fmt::format(".{}.tmp.{}", path.filename().string(), ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return fmt::format("cannot write {}: {}", tmp.string(), why);
    }
    done += static_cast<std::size_t>(n);
  }
  if (durable) ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), why);
  }
  return "";
}

bool read_whole_file(const std::filesystem::path& path, std::string& out) {
  std::string error;
  std::optional<std::string> text = read_input_file(path, error);
  if (!text) return false;
  out = std::move(*text);
  return true;
}

} // namespace burnmark
