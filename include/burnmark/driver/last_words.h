// Which backend was running when the process died. A plugin run in-process (no BURNMARK_ISOLATE)
// that segfaults, aborts or calls exit() takes the whole process with it; the one thing left to
// do is to say which backend it was. Callers run backends inside a RunningBackend scope; a
// process that installs its last words (the `burnmark` CLI) prints one line naming that backend
// on the way out. Header-only, so every library that runs backends shares the one marker.
#pragma once

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <string_view>

namespace burnmark {

namespace last_words_detail {
// Written before the flag is raised and read only by the signal handler and exit hook, which
// must not allocate: a fixed buffer, NUL-terminated.
inline char running_backend[128] = {};
inline volatile std::sig_atomic_t backend_running = 0;
} // namespace last_words_detail

class RunningBackend {
public:
  explicit RunningBackend(std::string_view name) {
    using namespace last_words_detail;
    const std::size_t n = std::min(name.size(), sizeof running_backend - 1);
    std::copy_n(name.data(), n, running_backend);
    running_backend[n] = '\0';
    backend_running = 1;
  }
  ~RunningBackend() { last_words_detail::backend_running = 0; }
  RunningBackend(const RunningBackend&) = delete;
  RunningBackend& operator=(const RunningBackend&) = delete;
};

// For SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT, and for exit() called while a backend runs:
// one `burnmark: backend 'NAME' ...` line on stderr. A signal then takes its default action (the
// shell sees 128 + signal); exit() inside a backend ends with status 3, never 0 ("agree").
// Outside a RunningBackend scope nothing changes.
void install_last_words();

} // namespace burnmark
