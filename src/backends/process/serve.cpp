// The child's side of a child backend (process.h): the backend named by BURNMARK_CHILD_BACKEND,
// serving requests on BURNMARK_CHILD_FD until the parent closes it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "burnmark/backends/process.h"
#include "burnmark/backends/registry.h"
#include "burnmark/config/config.h"
#include "burnmark/ir/text.h"
#include "wire.h"

namespace burnmark {
namespace {

bool serves = false;

} // namespace

bool this_program_serves() {
  return serves;
}

void serve_backend_if_requested() {
  serves = true;
  const char* inner = std::getenv("BURNMARK_CHILD_BACKEND");
  const char* fd_text = std::getenv("BURNMARK_CHILD_FD");
  if (!inner || !fd_text) return;
  const int fd = std::atoi(fd_text);
  // Whatever this program would otherwise do, the child only serves; _Exit skips the exit
  // handlers of a fuzzer runtime the child never started.
  const auto die = [](const std::string& why) {
    std::fprintf(stderr, "burnmark: child backend: %s\n", why.c_str());
    std::fflush(stderr);
    std::_Exit(3);
  };
  ConfigResult config = load_config_from_environment();
  const int threads = config.ok() ? config.config().threads : 1;
  RegistryOptions options{threads};
  // A plugin in a child applies the patches it would apply in the parent (BURNMARK_PATCHES is
  // inherited with the rest of the environment).
  if (config.ok()) options.patches = active_plugin_patches_or_exit(config.config());
  BackendsResult made = make_backends(inner, options);
  if (!made.ok()) die(made.error());
  std::vector<std::unique_ptr<Backend>> backends = made.take();
  if (backends.size() != 1) die(fmt::format("'{}' is not one backend", inner));
  Backend& backend = *backends.front();
  // Ready: the parent's per-program deadline starts only now, not while LibTorch loads.
  if (wire::write_frame(fd, wire::kReadyPrefix + backend.platform()) != wire::IoResult::Ok)
    std::_Exit(0);
  std::string frame;
  while (wire::read_frame(fd, frame, std::nullopt) == wire::IoResult::Ok) {
    const std::optional<wire::Request> request = wire::decode_request(frame);
    if (!request) die("malformed request");
    ParseResult parsed = parse_program(request->program_text);
    Outcome out;
    if (parsed.ok()) {
      out = backend.run(parsed.program(),
                        RunOptions{request->gradients, request->tangents, request->hessian});
    } else {
      out.status = Status::Error;
      out.message = "the child cannot parse the program: " + parsed.error();
    }
    if (wire::write_frame(fd, wire::encode_response(out, backend.note())) != wire::IoResult::Ok)
      break;
  }
  std::fflush(stderr);
  std::_Exit(0);
}

} // namespace burnmark
