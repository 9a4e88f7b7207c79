// The CLI's last words (see burnmark/driver/last_words.h): a fatal signal or an exit() inside a
// backend names that backend on stderr before the process goes.
#include "burnmark/driver/last_words.h"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>

namespace burnmark {
namespace {

constexpr int kExitInsideBackend = 3;

// Only write(2) from here on: the handler runs on whatever state the backend left behind.
void say(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

void say_backend(const char* what) {
  say("burnmark: backend '");
  say(last_words_detail::running_backend);
  say(what);
  say(" (BURNMARK_ISOLATE=1 or child:");
  say(last_words_detail::running_backend);
  say(" runs it in a child process, where this is a finding and the run goes on)\n");
}

const char* signal_name(int signal) {
  switch (signal) {
  case SIGSEGV: return "' died of SIGSEGV while running the program";
  case SIGBUS: return "' died of SIGBUS while running the program";
  case SIGFPE: return "' died of SIGFPE while running the program";
  case SIGILL: return "' died of SIGILL while running the program";
  case SIGABRT: return "' aborted (SIGABRT) while running the program";
  }
  return "' died of a signal while running the program";
}

extern "C" void on_fatal_signal(int signal) {
  if (last_words_detail::backend_running) say_backend(signal_name(signal));
  // SA_RESETHAND restored the default action: the process ends as the signal says.
  ::raise(signal);
}

extern "C" void on_exit_inside_backend() {
  if (!last_words_detail::backend_running) return;
  say_backend("' called exit() while running the program, which is not a result");
  ::_exit(kExitInsideBackend);
}

} // namespace

void install_last_words() {
  // Its own stack, so that a backend that overflowed its stack still gets its line.
  static std::array<char, std::size_t{64} * 1024> stack;
  stack_t ss{};
  ss.ss_sp = stack.data();
  ss.ss_size = stack.size();
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    ::sigaction(signal, &sa, nullptr);
  std::atexit(on_exit_inside_backend);
}

} // namespace burnmark
