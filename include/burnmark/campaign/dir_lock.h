// One campaign per findings directory: an exclusive flock(2) on <dir>/.campaign.lock, held for
// the campaign's lifetime. The kernel drops the lock when its holder dies however it dies
// (kill -9 included), so a stale lock never blocks a directory; the file's text (pid, host,
// start time) only names the holder in the refusal and in the takeover note.
#pragma once

#include <filesystem>
#include <string>

namespace burnmark {

class CampaignLock {
public:
  CampaignLock() = default;
  ~CampaignLock();
  CampaignLock(CampaignLock&& other) noexcept;
  CampaignLock& operator=(CampaignLock&& other) noexcept;
  CampaignLock(const CampaignLock&) = delete;
  CampaignLock& operator=(const CampaignLock&) = delete;

  // Takes the lock on `dir` (which must exist), without waiting. "" on success; else one line
  // saying who holds it, e.g. "findings is in use by the campaign pid 4242 on host ci-3 since
  // 2026-11-30T14:05:09Z". `note` is set when a campaign that ended without releasing the lock
  // (killed) held it last: "taking over findings from pid 4242 on host ci-3 (started ...),
  // which is gone".
  std::string acquire(const std::filesystem::path& dir, std::string& note);
  bool held() const { return fd_ >= 0; }
  // Clears the holder's text and drops the lock (the destructor does it too).
  void release();

private:
  int fd_ = -1;
  std::filesystem::path path_;
};

// The lock file's name inside a findings directory.
inline constexpr const char* kCampaignLockFile = ".campaign.lock";

} // namespace burnmark
