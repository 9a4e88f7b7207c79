// Turns a BACKENDS spec ("ref,libtorch", "all", "ref,./my_plugin.so") into backends. The first
// entry is the reference the oracle compares the others against.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "burnmark/driver/driver.h"
#include "burnmark/oracle/oracle.h"
#include "burnmark/plugin/loader.h"

namespace burnmark {

struct RegistryOptions {
  int libtorch_threads = 1;           // BURNMARK_THREADS
  double child_timeout = 60;          // BURNMARK_CHILD_TIMEOUT, seconds
  bool isolate_plugins = false;       // BURNMARK_ISOLATE: every plugin entry as child:ENTRY
  std::size_t child_memory_mb = 4096; // BURNMARK_CHILD_MEMORY; 0 = no limit
  // The program child backends execute to serve (ChildSpec::server); tests name the CLI, since
  // a test binary does not serve.
  std::string child_server = "/proc/self/exe";
  // BURNMARK_TORCH_PYTHON_EXE: the interpreter of the Python torch backends; "auto" = the
  // checkout's .deps/torch-2.15.0/bin/python.
  std::string torch_python = "auto";
  bool compile_dynamic = false; // BURNMARK_COMPILE_DYNAMIC: torch-compile's dynamic=True
  // BURNMARK_JAX_PYTHON_EXE: the jax backend's interpreter; "auto" = the checkout's
  // .deps/jax-0.10.2/bin/python.
  std::string jax_python = "auto";
  // BURNMARK_PATCHES resolved (active_plugin_patches): handed to every plugin loaded in this
  // process; a patch a plugin does not know is reported on stderr and not applied.
  std::vector<PluginPatch> patches = {};
};

struct BackendsResult {
  // The backends in spec order, or one line: "BACKENDS: unknown backend 'xyz' (valid: ...)".
  std::variant<std::vector<std::unique_ptr<Backend>>, std::string> value;
  bool ok() const { return std::holds_alternative<std::vector<std::unique_ptr<Backend>>>(value); }
  std::vector<std::unique_ptr<Backend>> take() { return std::move(std::get<0>(value)); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// Names accepted besides plugins, in the order `all` expands to.
std::span<const std::string_view> builtin_backend_names();

// Each comma-separated entry is a built-in name, `all` (every built-in, in table order), a
// plugin name or path (load_plugin_backend), or `child:ENTRY` / `child[VAR=value;...]:ENTRY`:
// ENTRY (a built-in or a plugin) run in a child process with those environment settings, named
// by the entry's whole text. A name appearing twice, after expanding `all` and
// after loading plugins, is an error: comparing a backend with itself hides nothing but doubles
// the cost, and is most likely a typo in the spec.
//
// `NAME@RELEASE` (`libtorch@1.13`, any libtorch built-in) is NAME run by a child process whose
// server is a burnmark built against LibTorch RELEASE: the path in BURNMARK_LIBTORCH_<RELEASE
// with '_' for '.'> (BURNMARK_LIBTORCH_1_13), else that release's preset build trees under this
// source tree (build/test-1.13, build/fuzz-1.13; build/test, build/fuzz for 2.15). It is started
// at once: a missing server, one built against another release (its ready frame's platform) or
// speaking another wire format is this function's error.
BackendsResult make_backends(std::string_view spec, const RegistryOptions& options);

// The version-differential pairs among `backends` for OracleOptions::baselines: for each
// `NAME@RELEASE` beside NAME, the older of the two LibTorch releases (this build's is
// libtorch_release()) is the other's baseline. Empty when there is no such pair.
std::vector<Baseline> version_baselines(std::span<const std::unique_ptr<Backend>> backends);

} // namespace burnmark
