// The findings directory's lock (see dir_lock.h).
#include "burnmark/campaign/dir_lock.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include "burnmark/campaign/ledger.h"

namespace burnmark {

namespace {

struct Holder {
  std::string pid, host, started;
};

// The holder's text: "pid=4242 host=ci-3 started=2026-11-30T14:05:09Z\n".
Holder parse_holder(const std::string& text) {
  Holder h;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find_first_of(" \n", pos);
    const std::string field = text.substr(pos, end == std::string::npos ? end : end - pos);
    if (field.starts_with("pid=")) h.pid = field.substr(4);
    if (field.starts_with("host=")) h.host = field.substr(5);
    if (field.starts_with("started=")) h.started = field.substr(8);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return h;
}

std::string read_fd(int fd) {
  std::string text;
  char buf[512];
  ssize_t n;
  off_t at = 0;
  while ((n = ::pread(fd, buf, sizeof buf, at)) > 0) {
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  return text;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "?";
  return buf;
}

} // namespace

CampaignLock::~CampaignLock() {
  release();
}

CampaignLock::CampaignLock(CampaignLock&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

CampaignLock& CampaignLock::operator=(CampaignLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

std::string CampaignLock::acquire(const std::filesystem::path& dir, std::string& note) {
  release();
  note.clear();
  const std::filesystem::path path = dir / kCampaignLockFile;
  // O_CLOEXEC: the fuzzer the campaign spawns must not inherit the lock, or a killed campaign's
  // lingering fuzzer would keep the directory locked.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot open {}: {}", path.string(), std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const Holder h = parse_holder(read_fd(fd));
    ::close(fd);
    if (err != EWOULDBLOCK)
      return fmt::format("cannot lock {}: {}", path.string(), std::strerror(err));
    // The holder writes its text right after taking the lock: in that instant it reads empty.
    return fmt::format("{} is in use by the campaign pid {} on host {} since {} (one campaign "
                       "per directory; use another --out)",
                       dir.string(), h.pid.empty() ? "?" : h.pid, h.host.empty() ? "?" : h.host,
                       h.started.empty() ? "?" : h.started);
  }
  // A holder that released the lock cleared its text; text left means it was killed.
  const Holder last = parse_holder(read_fd(fd));
  if (!last.pid.empty()) {
    const bool here = last.host == host_name();
    const bool alive = here && ::kill(std::atoi(last.pid.c_str()), 0) == 0;
    note = fmt::format("taking over {} from the campaign pid {} on host {} (started {}), which "
                       "ended without releasing it{}",
                       dir.string(), last.pid, last.host, last.started,
                       here && !alive ? " (that pid is gone)" : "");
  }
  const std::string text = fmt::format("pid={} host={} started={}\n", ::getpid(), host_name(),
                                       iso_utc(std::time(nullptr)));
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return fmt::format("cannot write {}: {}", path.string(), why);
  }
  fd_ = fd;
  path_ = path;
  return "";
}

void CampaignLock::release() {
  if (fd_ < 0) return;
  // Cleared while still locked, so that the next holder knows this one ended cleanly.
  if (::ftruncate(fd_, 0) != 0) {
  }
  ::close(fd_);
  fd_ = -1;
}

} // namespace burnmark
