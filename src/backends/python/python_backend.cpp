// The Python backends: the table of frameworks (name -> emitter, runner, interpreter knob), the
// request frame, and the child spec that runs `<python> burnmark_child.py --framework NAME`.
// Spawning, crashes, hangs and ooms are the child backend's (src/backends/process).
#include "python_backend.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "burnmark/backends/process.h"
#include "python_source.h"

namespace burnmark {
namespace {

// One row per Python backend; the jax backend is one more row (its emitter, runner and knob).
struct PythonFramework {
  std::string_view backend;                  // the BACKENDS name
  std::string_view runner;                   // burnmark_child.py --framework: runner_<module>.py
  PythonFunction (*emit)(const Program&);    // the program as one Python function
  std::string RegistryOptions::*interpreter; // its knob's value; "auto" = the checkout's venv
  std::string_view knob;                     // that knob's name, for the error line
  std::string_view venv;                     // under the checkout's .deps/
  std::string_view install;                  // the command that installs the venv
  std::string_view platform;                 // what its ready frame must start with
};

constexpr std::string_view kTorchInstall = "BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh";
constexpr std::array<PythonFramework, 3> kFrameworks = {{
    {"torch-eager-py", "torch", torch_function, &RegistryOptions::torch_python,
     "BURNMARK_TORCH_PYTHON_EXE", "torch-2.15.0", kTorchInstall, "torch 2.15.0"},
    {"torch-compile", "torch-compile", torch_function, &RegistryOptions::torch_python,
     "BURNMARK_TORCH_PYTHON_EXE", "torch-2.15.0", kTorchInstall, "torch 2.15.0"},
    {"jax", "jax", jax_function, &RegistryOptions::jax_python, "BURNMARK_JAX_PYTHON_EXE",
     "jax-0.10.2", "tools/install-deps.sh", "jax 0.10.2"},
}};

constexpr std::array<std::string_view, kFrameworks.size()> kNames = [] {
  std::array<std::string_view, kFrameworks.size()> names{};
  for (std::size_t i = 0; i < kFrameworks.size(); ++i)
    names[i] = kFrameworks[i].backend;
  return names;
}();

// The request's version: burnmark_child.py refuses another.
constexpr std::uint32_t kRequestVersion = 1;

template <class T> void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
void put_string(std::string& out, std::string_view s) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}
template <class T> void put_values(std::string& out, const std::vector<T>& v) {
  put<std::uint64_t>(out, v.size());
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Where burnmark_child.py is: installed beside the binary's share/, else this source tree.
std::string script_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path() / ".." / "share" / "burnmark" / "python";
    if (std::filesystem::is_regular_file(installed / "burnmark_child.py", ec))
      return installed.lexically_normal().string();
  }
  return BURNMARK_PYTHON_DIR;
}

} // namespace

std::string encode_python_request(const Program& program, const std::string& source,
                                  const RunOptions& options) {
  std::string out;
  put<std::uint32_t>(out, kRequestVersion);
  put<std::uint8_t>(out, options.gradients ? 1 : 0);
  put<std::uint8_t>(out, options.tangents ? 1 : 0);
  put<std::uint8_t>(out, options.hessian ? 1 : 0);
  put_string(out, source);
  put_string(out, float_dtype_name(program.float_dtype));
  put<std::uint32_t>(out, static_cast<std::uint32_t>(program.leaves.size()));
  for (std::size_t k = 0; k < program.leaves.size(); ++k) {
    const Leaf& leaf = program.leaves[k];
    const bool index = leaf.dtype == DType::I64;
    put<std::uint8_t>(out, index ? 1 : 0);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(leaf.shape.rank()));
    for (int d = 0; d < leaf.shape.rank(); ++d)
      put<std::int64_t>(out, leaf.shape[d]);
    if (index)
      put_values(out, leaf.indices);
    else
      put_values(out, leaf.data);
    // Index leaves have no direction (empty); the others leaf_tangent's, as every backend's.
    const bool directions = (options.tangents || options.hessian) && !index;
    put_values(out, directions ? leaf_tangent(leaf.shape, k).values : std::vector<double>{});
  }
  return out;
}

std::span<const std::string_view> python_backend_names() {
  return kNames;
}

std::optional<std::variant<std::unique_ptr<Backend>, std::string>>
make_python_backend(std::string_view entry, const RegistryOptions& options) {
  const auto row = std::find_if(kFrameworks.begin(), kFrameworks.end(),
                                [&](const PythonFramework& f) { return f.backend == entry; });
  if (row == kFrameworks.end()) return std::nullopt;
  const std::string& chosen = options.*(row->interpreter);
  const std::string python = chosen.empty() || chosen == "auto"
                                 ? fmt::format("{}/{}/bin/python", BURNMARK_DEPS_DIR, row->venv)
                                 : chosen;
  const std::string hint = fmt::format(" (install it with {}, or set {} to a Python that has it)",
                                       row->install, row->knob);
  if (::access(python.c_str(), X_OK) != 0)
    return std::string(fmt::format("BACKENDS: {} needs Python with {}: {} is not an executable{}",
                                   entry, row->platform, python, hint));
  ChildSpec spec;
  spec.name = std::string(entry);
  spec.inner = std::string(entry);
  spec.server = python;
  spec.arguments = {script_dir() + "/burnmark_child.py", "--framework", std::string(row->runner),
                    "--options",
                    fmt::format(R"({{"threads": {}, "dynamic": {}}})", options.libtorch_threads,
                                options.compile_dynamic ? "true" : "false")};
  spec.timeout_seconds = options.child_timeout;
  spec.memory_limit_mb = options.child_memory_mb;
  spec.expected_platform = std::string(row->platform);
  spec.platform_hint = hint;
  spec.encode = [emit = row->emit](const Program& program,
                                   const RunOptions& run) -> std::variant<std::string, Outcome> {
    const PythonFunction f = emit(program);
    if (!f.unsupported.empty()) {
      Outcome out;
      out.status = Status::Unsupported;
      out.message = f.unsupported;
      return out;
    }
    return encode_python_request(program, f.source, run);
  };
  auto started = make_started_child_backend(std::move(spec));
  if (auto* error = std::get_if<std::string>(&started))
    return std::string(fmt::format("BACKENDS: {}", *error));
  return std::move(std::get<std::unique_ptr<Backend>>(started));
}

} // namespace burnmark
