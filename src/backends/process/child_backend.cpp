// The parent's side of a child backend (process.h): spawn, one request and one response per
// run, and a crash, an exit or a time-out turned into an outcome naming the backend.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "burnmark/backends/process.h"
#include "burnmark/ir/text.h"
#include "wire.h"

extern char** environ;

namespace burnmark {
namespace {

constexpr std::chrono::seconds kStartupTimeout{300};

// The process's resident set (its threads' included), in MB; 0 when it cannot be read.
std::size_t resident_mb(pid_t pid) {
  std::ifstream statm(fmt::format("/proc/{}/statm", pid));
  std::size_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)) / (std::size_t{1024} * 1024);
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended";
}

class ChildBackend final : public Backend {
public:
  explicit ChildBackend(ChildSpec spec) : spec_(std::move(spec)) {}
  ~ChildBackend() override { stop(false); }
  ChildBackend(const ChildBackend&) = delete;
  ChildBackend& operator=(const ChildBackend&) = delete;

  const std::string& name() const override { return spec_.name; }
  std::string note() const override { return note_; }
  std::string platform() const override { return platform_; }

  // Starts the child unless it runs: "" or why it cannot start.
  std::string ensure_started() { return pid_ > 0 ? "" : start(); }

  Outcome run(const Program& program, const RunOptions& options) override {
    Outcome out;
    out.backend = spec_.name;
    if (pid_ <= 0) {
      if (std::string error = start(); !error.empty()) {
        out.status = Status::Error;
        out.message = fmt::format("cannot start the child running '{}': {}", spec_.inner, error);
        return out;
      }
    }
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::milliseconds(static_cast<long long>(spec_.timeout_seconds * 1000));
    std::string request;
    if (spec_.encode) {
      auto encoded = spec_.encode(program, options);
      if (auto* answer = std::get_if<Outcome>(&encoded)) {
        answer->backend = spec_.name;
        return std::move(*answer);
      }
      request = std::get<std::string>(std::move(encoded));
    } else {
      request = wire::encode_request(
          {to_text(program), options.gradients, options.tangents, options.hessian});
    }
    std::string frame;
    wire::IoResult io = wire::write_frame(socket_, request);
    if (io == wire::IoResult::Ok) {
      const std::optional<std::size_t> over = wait_for_answer(deadline);
      if (over) {
        stop(true);
        out.status = Status::Oom;
        out.message = fmt::format("the child running '{}' grew to {} MB, past "
                                  "BURNMARK_CHILD_MEMORY={} (killed; restarted at the next run)",
                                  spec_.inner, *over, spec_.memory_limit_mb);
        return out;
      }
      io = wire::read_frame(socket_, frame, deadline);
    }
    if (io == wire::IoResult::TimedOut) {
      stop(true);
      out.status = Status::Hang;
      out.message = fmt::format("no answer from the child running '{}' within {} s (killed; "
                                "restarted at the next run)",
                                spec_.inner, spec_.timeout_seconds);
      return out;
    }
    if (io != wire::IoResult::Ok) {
      const std::string how = stop(false);
      out.status = Status::Crash;
      out.message =
          fmt::format("the child running '{}' {} (restarted at the next run)", spec_.inner, how);
      return out;
    }
    std::optional<Outcome> decoded = wire::decode_response(frame, note_);
    if (!decoded) {
      stop(true);
      out.status = Status::Crash;
      out.message = fmt::format("the child running '{}' sent a malformed answer", spec_.inner);
      return out;
    }
    decoded->backend = spec_.name;
    return std::move(*decoded);
  }

private:
  // Waits until the answer starts to arrive or the deadline passes, watching the child's
  // resident memory meanwhile; its size in MB when it grew past the limit.
  std::optional<std::size_t> wait_for_answer(std::chrono::steady_clock::time_point deadline) {
    constexpr std::chrono::milliseconds kSlice{50};
    while (true) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return std::nullopt;
      const auto until = spec_.memory_limit_mb > 0 ? std::min(deadline, now + kSlice) : deadline;
      if (wire::wait_readable(socket_, until) == wire::IoResult::Ok) return std::nullopt;
      if (spec_.memory_limit_mb == 0) continue;
      const std::size_t mb = resident_mb(pid_);
      if (mb > spec_.memory_limit_mb) return mb;
    }
  }

  std::string start() {
    if (std::getenv("BURNMARK_CHILD_BACKEND"))
      return "a child backend does not start children of its own";
    if (spec_.server == "/proc/self/exe" && !this_program_serves())
      return "this program cannot be its own child's server (its entry point does not call "
             "serve_backend_if_requested)";
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0)
      return std::strerror(errno);
    // The environment is built before spawning: nothing but exec runs in the child.
    std::vector<std::string> env;
    const auto overridden = [&](std::string_view entry) {
      const std::string_view key = entry.substr(0, entry.find('='));
      for (const auto& [k, v] : spec_.environment)
        if (k == key) return true;
      return key == "BURNMARK_CHILD_BACKEND" || key == "BURNMARK_CHILD_FD";
    };
    for (char** e = environ; *e; ++e)
      if (!overridden(*e)) env.emplace_back(*e);
    for (const auto& [k, v] : spec_.environment)
      env.push_back(k + "=" + v);
    env.push_back("BURNMARK_CHILD_BACKEND=" + spec_.inner);
    env.push_back("BURNMARK_CHILD_FD=3");
    std::vector<char*> envp;
    for (std::string& e : env)
      envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string server = spec_.server;
    std::vector<std::string> args = spec_.arguments;
    std::vector<char*> argv{server.data()};
    for (std::string& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // fd 3 is the socket; stdin and stdout are nothing (a child must not read the harness's
    // input, and libFuzzer's banner must not reach anyone); stderr is shared, so a crashing
    // backend's last words are seen.
    posix_spawn_file_actions_adddup2(&actions, sockets[1], 3);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, server.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(sockets[1]);
    if (rc != 0) {
      ::close(sockets[0]);
      return fmt::format("{}: {}", server, std::strerror(rc));
    }
    pid_ = pid;
    socket_ = sockets[0];
    // Loading LibTorch or a plugin is not the program's time: wait for the child to be ready
    // with a deadline of its own.
    std::string ready;
    const wire::IoResult io =
        wire::read_frame(socket_, ready, std::chrono::steady_clock::now() + kStartupTimeout);
    if (io == wire::IoResult::Ok && ready.starts_with(wire::kReadyPrefix)) {
      platform_ = ready.substr(wire::kReadyPrefix.size());
      if (platform_matches()) return "";
      stop(true);
      return fmt::format("{} is not a {} build: its platform is '{}'{}", server,
                         spec_.expected_platform, platform_, spec_.platform_hint);
    }
    if (io == wire::IoResult::Ok && ready.starts_with(wire::kFailedPrefix)) {
      stop(true);
      return ready.substr(wire::kFailedPrefix.size()) + spec_.platform_hint;
    }
    // Another build's ready frame: the same protocol's greeting with another version.
    constexpr std::string_view kGreeting = "burnmark child ready ";
    if (io == wire::IoResult::Ok && ready.starts_with(kGreeting)) {
      stop(true);
      const std::string_view theirs = std::string_view(ready).substr(0, ready.find(';'));
      const std::string_view ours =
          std::string_view(wire::kReadyPrefix).substr(0, wire::kReadyPrefix.find(';'));
      return fmt::format("{} speaks another wire format ('{}', this build '{}'): build both from "
                         "the same source{}",
                         server, theirs, ours, spec_.platform_hint);
    }
    const std::string how = stop(true);
    return io == wire::IoResult::TimedOut
               ? fmt::format("not ready after {} s", kStartupTimeout.count())
               : fmt::format("it {} before it was ready", how);
  }

  bool platform_matches() const {
    const std::string& want = spec_.expected_platform;
    if (want.empty()) return true;
    return platform_.starts_with(want) &&
           (platform_.size() == want.size() || platform_[want.size()] == ' ' ||
            platform_[want.size()] == ',');
  }

  // Ends the child (killing it first when `kill`) and says how it ended.
  std::string stop(bool kill) {
    if (pid_ <= 0) return "was not running";
    if (kill) ::kill(pid_, SIGKILL);
    ::close(socket_); // a serving child reads EOF and exits
    socket_ = -1;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return describe_exit(status);
  }

  ChildSpec spec_;
  pid_t pid_ = -1;
  int socket_ = -1;
  std::string note_;
  std::string platform_; // from the ready frame
};

} // namespace

std::unique_ptr<Backend> make_child_backend(ChildSpec spec) {
  return std::make_unique<ChildBackend>(std::move(spec));
}

std::variant<std::unique_ptr<Backend>, std::string> make_started_child_backend(ChildSpec spec) {
  auto child = std::make_unique<ChildBackend>(std::move(spec));
  if (std::string error = child->ensure_started(); !error.empty())
    return fmt::format("cannot start the child running '{}': {}", child->name(), error);
  return std::unique_ptr<Backend>(std::move(child));
}

} // namespace burnmark
