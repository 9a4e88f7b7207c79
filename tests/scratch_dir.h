// tests/scratch_dir.h: where a test puts its temporary files. Every test process gets one root,
// <temp_directory_path()>/burnmark-test-<pid>, made on first use and removed when that process
// exits; tests ask for named directories under it. The suite used to make its own folders in /tmp
// and leave them there (about 1 GB per run, thousands of folders: CI's disk ran out).
//
// gtest_discover_tests runs each test in its own process, so the root lives as long as one test.
// It is removed by a function-local static's destructor, which runs at exit() and on return from
// main, failed assertions included. A forked child that leaves through exit() runs it too, so
// only the process that made the root removes it (getpid() is compared). A process killed by a
// signal (a crash, ctest's timeout) cannot clean up; the next test process removes its root once
// that pid is gone (stale_roots below).
#pragma once

#include <sys/types.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

namespace burnmark::testing {

namespace scratch_detail {

constexpr const char* kPrefix = "burnmark-test-";

// The pid a root's name carries, or 0 when `name` is not a root's.
inline pid_t root_pid(const std::string& name) {
  const std::string prefix = kPrefix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  pid_t pid = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || pid > 100000000) return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

// Removes the roots of test processes that died without cleaning up: their pid no longer runs
// (ESRCH; a live process of another user answers EPERM and is left alone).
inline void remove_stale_roots(const std::filesystem::path& parent) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(parent, ec), end; !ec && it != end;
       it.increment(ec)) {
    const pid_t pid = root_pid(it->path().filename().string());
    if (pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == -1 && errno == ESRCH) {
      std::error_code ignored;
      std::filesystem::remove_all(it->path(), ignored);
    }
  }
}

class Root {
public:
  Root() : owner_(::getpid()) {
    const std::filesystem::path parent = std::filesystem::temp_directory_path();
    remove_stale_roots(parent);
    path_ = parent / (kPrefix + std::to_string(owner_));
    std::error_code ec;
    std::filesystem::remove_all(path_, ec); // an earlier process's with this pid: it is gone
    std::filesystem::create_directories(path_);
  }
  ~Root() {
    if (::getpid() != owner_) return; // a forked child leaving: the root is its parent's
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  Root(const Root&) = delete;
  Root& operator=(const Root&) = delete;
  const std::filesystem::path& path() const { return path_; }

private:
  pid_t owner_;
  std::filesystem::path path_;
};

} // namespace scratch_detail

// This process's root, made on first use, removed at its exit.
inline const std::filesystem::path& scratch_root() {
  static const scratch_detail::Root root;
  return root.path();
}

// An empty directory `name` (a relative path) under the root: whatever an earlier call in this
// process left there is removed first.
inline std::filesystem::path scratch_dir(const std::string& name) {
  const std::filesystem::path dir = scratch_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace burnmark::testing
