// Backends in a child process: the same backend, run by a child that the harness talks to over
// a socket, so that the child can have its own environment (LibTorch reads
// ATEN_CPU_CAPABILITY once per process) and so that a crash, an exit or a hang of the backend
// is an outcome of its own kind (Status::Crash, Status::Hang, Status::Oom) instead of the
// harness's end.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "burnmark/driver/driver.h"

namespace burnmark {

struct ChildSpec {
  std::string name;  // in reports: "libtorch-scalar", "child:libtorch"
  std::string inner; // the BACKENDS entry the child runs: a built-in name or a plugin
  std::vector<std::pair<std::string, std::string>> environment; // set in the child only
  // An executable whose entry point calls serve_backend_if_requested() first: the burnmark CLI
  // and the fuzz targets do, so the default re-executes the running program.
  std::string server = "/proc/self/exe";
  double timeout_seconds = 60; // BURNMARK_CHILD_TIMEOUT; a run taking longer is a hang
  // BURNMARK_CHILD_MEMORY: a child whose resident memory grows past this many MB while it runs
  // a program is killed, and the outcome is an oom; 0 = no limit.
  std::size_t memory_limit_mb = 4096;
  // When not empty, the platform the child's ready frame must name ("LibTorch 1.13": followed by
  // a space or the end), and what to say when it does not: a server built against another
  // release fails to start instead of being compared under the wrong name.
  std::string expected_platform;
  std::string platform_hint;
  std::vector<std::string> arguments; // the server's argv after its path
  // How a run becomes the request frame; unset: wire.h's request (the program's text). A server
  // of another kind (a Python interpreter running src/backends/python/burnmark_child.py) takes
  // its own request; it answers with the same response frame. An Outcome instead of a frame is
  // the run's answer without asking the child (a program the server's framework cannot express).
  std::function<std::variant<std::string, Outcome>(const Program&, const RunOptions&)> encode;
};

// The child starts at the first run and again after every crash or hang.
std::unique_ptr<Backend> make_child_backend(ChildSpec spec);

// The same, started now: a server that cannot start (missing, another release, another wire
// format) is one line for the caller instead of an error outcome on every program.
std::variant<std::unique_ptr<Backend>, std::string> make_started_child_backend(ChildSpec spec);

// First thing in main() and LLVMFuzzerInitialize(): when this process was started as a child
// backend it serves its parent until the parent goes away, then exits; otherwise it returns at
// once.
void serve_backend_if_requested();
// Whether serve_backend_if_requested() was called in this process, i.e. whether the running
// program can be its own child's server (a program that cannot would run its own main instead).
bool this_program_serves();

} // namespace burnmark
