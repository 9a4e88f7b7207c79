// BACKENDS parsing: the table of built-in backends, `all`, plugin loading and the duplicate
// check. Every failure is one line for the user; nothing throws out of here.
#include "burnmark/backends/registry.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/backends/process.h"
#include "burnmark/plugin/loader.h"
#include "python/python_backend.h"

namespace burnmark {

namespace {

struct Builtin {
  std::string_view name;
  std::unique_ptr<Backend> (*make)(const RegistryOptions&);
};

// Adding a built-in backend is one line here (its factory lives in builtin.h).
constexpr std::array<Builtin, 9> kBuiltins = {{
    {"ref", [](const RegistryOptions&) { return make_reference_backend(); }},
    {"libtorch",
     [](const RegistryOptions& o) { return make_libtorch_backend(o.libtorch_threads); }},
    {"libtorch-strided", [](const RegistryOptions&) { return make_libtorch_strided_backend(); }},
    {"libtorch-inplace", [](const RegistryOptions&) { return make_libtorch_inplace_backend(); }},
    {"libtorch-fwd-over-rev",
     [](const RegistryOptions&) { return make_libtorch_fwd_over_rev_backend(); }},
    {"libtorch-jit", [](const RegistryOptions&) { return make_libtorch_jit_backend(false); }},
    {"libtorch-nnc", [](const RegistryOptions&) { return make_libtorch_jit_backend(true); }},
    // LibTorch picks its kernel set once per process, from this variable: the scalar kernels
    // need a process of their own.
    {"libtorch-scalar",
     [](const RegistryOptions& o) {
       return make_child_backend({"libtorch-scalar",
                                  "libtorch",
                                  {{"ATEN_CPU_CAPABILITY", "default"}},
                                  o.child_server,
                                  o.child_timeout,
                                  o.child_memory_mb,
                                  {},
                                  {},
                                  {},
                                  {}});
     }},
    // LibTorch's thread pool is sized once per process: a child of its own, so the parent's
    // libtorch keeps one thread and the two runs differ only in how kernels split their work.
    {"libtorch-threads",
     [](const RegistryOptions& o) {
       return make_child_backend({"libtorch-threads",
                                  "libtorch",
                                  {{"BURNMARK_THREADS", std::to_string(kThreadsVariantThreads)}},
                                  o.child_server,
                                  o.child_timeout,
                                  o.child_memory_mb,
                                  {},
                                  {},
                                  {},
                                  {}});
     }},
}};

constexpr std::array<std::string_view, kBuiltins.size()> kBuiltinNames = [] {
  std::array<std::string_view, kBuiltins.size()> names{};
  for (std::size_t i = 0; i < kBuiltins.size(); ++i)
    names[i] = kBuiltins[i].name;
  return names;
}();

std::string valid_choices() {
  return fmt::format("valid: {}, all, {}, a plugin name/path, or child:ENTRY",
                     fmt::join(kBuiltinNames, ", "), fmt::join(python_backend_names(), ", "));
}

// `child:ENTRY` or `child[VAR=value;VAR=value]:ENTRY`; nullopt when `entry` is not that form,
// an error line when it is but is malformed.
std::optional<std::variant<ChildSpec, std::string>> child_spec(std::string_view entry,
                                                               const RegistryOptions& options) {
  if (!entry.starts_with("child:") && !entry.starts_with("child[")) return std::nullopt;
  ChildSpec spec;
  spec.name = std::string(entry);
  spec.timeout_seconds = options.child_timeout;
  spec.memory_limit_mb = options.child_memory_mb;
  spec.server = options.child_server;
  std::string_view rest = entry.substr(5);
  if (rest.front() == '[') {
    const std::size_t close = rest.find(']');
    if (close == std::string_view::npos)
      return std::string(fmt::format("BACKENDS: '{}': missing ']'", entry));
    std::string_view settings = rest.substr(1, close - 1);
    rest.remove_prefix(close + 1);
    while (!settings.empty()) {
      const std::string_view item = settings.substr(0, settings.find(';'));
      const std::size_t eq = item.find('=');
      if (eq == 0 || eq == std::string_view::npos)
        return std::string(fmt::format("BACKENDS: '{}': '{}' is not VAR=value", entry, item));
      spec.environment.emplace_back(std::string(item.substr(0, eq)),
                                    std::string(item.substr(eq + 1)));
      settings.remove_prefix(std::min(settings.size(), item.size() + 1));
    }
  }
  if (!rest.starts_with(":") || rest.size() == 1)
    return std::string(fmt::format("BACKENDS: '{}': expected child:ENTRY or "
                                   "child[VAR=value;...]:ENTRY",
                                   entry));
  spec.inner = std::string(rest.substr(1));
  return spec;
}

// The presets that build against each release (CMakePresets.json): where `NAME@RELEASE` finds
// its server by default, test's tree first.
struct ReleasePresets {
  std::string_view release, test, fuzz;
};
constexpr std::array<ReleasePresets, 2> kReleasePresets = {{
    {"1.13", "test-1.13", "fuzz-1.13"},
    {"2.15", "test", "fuzz"},
}};

// "1.13" < "2.15" < "2.16", numerically per component; nullopt unless both are major.minor.
std::optional<bool> release_less(std::string_view a, std::string_view b) {
  const auto parse = [](std::string_view r) -> std::optional<std::pair<int, int>> {
    const std::size_t dot = r.find('.');
    if (dot == 0 || dot == std::string_view::npos || dot + 1 == r.size()) return std::nullopt;
    int major = 0, minor = 0;
    for (char c : r.substr(0, dot)) {
      if (c < '0' || c > '9') return std::nullopt;
      major = major * 10 + (c - '0');
    }
    for (char c : r.substr(dot + 1)) {
      if (c < '0' || c > '9') return std::nullopt;
      minor = minor * 10 + (c - '0');
    }
    return std::pair{major, minor};
  };
  const auto x = parse(a), y = parse(b);
  if (!x || !y) return std::nullopt;
  return *x < *y;
}

// `NAME@RELEASE` for a libtorch built-in NAME: nullopt when `entry` is not that form, an error
// line when its server is missing, else the spec of its child.
std::optional<std::variant<ChildSpec, std::string>> release_spec(std::string_view entry,
                                                                 const RegistryOptions& options) {
  const std::size_t at = entry.rfind('@');
  if (at == std::string_view::npos || entry.starts_with("child")) return std::nullopt;
  const std::string_view name = entry.substr(0, at);
  const std::string_view release = entry.substr(at + 1);
  const bool builtin =
      std::find(kBuiltinNames.begin(), kBuiltinNames.end(), name) != kBuiltinNames.end();
  if (!builtin) return std::nullopt; // a plugin's path may hold an '@'
  if (!(name == "libtorch" || name.starts_with("libtorch-")) ||
      !release_less(release, release).has_value())
    return std::string(fmt::format(
        "BACKENDS: '{}': expected NAME@RELEASE with NAME a libtorch built-in and RELEASE "
        "major.minor (libtorch@1.13)",
        entry));
  std::string variable = fmt::format("BURNMARK_LIBTORCH_{}", release);
  std::replace(variable.begin(), variable.end(), '.', '_');
  const auto presets = std::find_if(kReleasePresets.begin(), kReleasePresets.end(),
                                    [&](const ReleasePresets& p) { return p.release == release; });
  const std::string test_preset = presets != kReleasePresets.end()
                                      ? std::string(presets->test)
                                      : fmt::format("test-{}", release);
  const std::string hint = fmt::format("cmake --preset {0} && cmake --build --preset {0} --target "
                                       "burnmark, or {1}=PATH",
                                       test_preset, variable);
  std::string server;
  if (const char* path = std::getenv(variable.c_str()); path && *path) {
    server = path;
  } else if (presets != kReleasePresets.end()) {
    for (std::string_view preset : {presets->test, presets->fuzz}) {
      const std::string candidate =
          fmt::format("{}/{}/src/cli/burnmark", BURNMARK_BUILD_ROOT, preset);
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec)) {
        server = candidate;
        break;
      }
    }
  }
  std::error_code ec;
  if (server.empty() || !std::filesystem::is_regular_file(server, ec))
    return std::string(
        fmt::format("BACKENDS: {} needs a burnmark built against LibTorch {}: {}{}", entry, release,
                    hint, server.empty() ? "" : fmt::format(" ({} does not exist)", server)));
  ChildSpec spec;
  spec.name = std::string(entry);
  spec.inner = std::string(name);
  spec.server = std::move(server);
  spec.timeout_seconds = options.child_timeout;
  spec.memory_limit_mb = options.child_memory_mb;
  spec.expected_platform = fmt::format("LibTorch {}", release);
  spec.platform_hint =
      fmt::format(" ({} needs one built against LibTorch {}: {})", entry, release, hint);
  return spec;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

} // namespace

std::span<const std::string_view> builtin_backend_names() {
  return kBuiltinNames;
}

BackendsResult make_backends(std::string_view spec, const RegistryOptions& options) {
  auto fail = [](std::string message) { return BackendsResult{std::move(message)}; };

  // Expand first, so that duplicates are caught before anything (LibTorch, a plugin) is loaded.
  std::vector<std::string_view> entries;
  std::string_view rest = spec;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    if (entry.empty())
      return fail(fmt::format("BACKENDS: empty entry in '{}' ({})", spec, valid_choices()));
    if (entry == "all") {
      entries.insert(entries.end(), kBuiltinNames.begin(), kBuiltinNames.end());
    } else {
      entries.push_back(entry);
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  for (std::size_t i = 0; i < entries.size(); ++i)
    if (std::find(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(i), entries[i]) !=
        entries.begin() + static_cast<std::ptrdiff_t>(i))
      return fail(
          fmt::format("BACKENDS: duplicate backend '{}' in '{}' (each backend may appear once)",
                      entries[i], spec));

  std::vector<std::unique_ptr<Backend>> backends;
  for (std::string_view entry : entries) {
    const auto builtin = std::find_if(kBuiltins.begin(), kBuiltins.end(),
                                      [&](const Builtin& b) { return b.name == entry; });
    if (builtin != kBuiltins.end()) {
      backends.push_back(builtin->make(options));
      continue;
    }
    if (auto python = make_python_backend(entry, options)) {
      if (const auto* error = std::get_if<std::string>(&*python)) return fail(*error);
      backends.push_back(std::get<std::unique_ptr<Backend>>(std::move(*python)));
      continue;
    }
    if (auto versioned = release_spec(entry, options)) {
      if (const auto* error = std::get_if<std::string>(&*versioned)) return fail(*error);
      auto started = make_started_child_backend(std::get<ChildSpec>(std::move(*versioned)));
      if (const auto* error = std::get_if<std::string>(&started))
        return fail(fmt::format("BACKENDS: {}", *error));
      backends.push_back(std::get<std::unique_ptr<Backend>>(std::move(started)));
      continue;
    }
    auto child = child_spec(entry, options);
    // With isolation on, a plugin entry is its child: form, loaded in the child only.
    if (!child && options.isolate_plugins)
      child = child_spec("child:" + std::string(entry), options);
    if (child) {
      if (const auto* error = std::get_if<std::string>(&*child)) return fail(*error);
      backends.push_back(make_child_backend(std::get<ChildSpec>(std::move(*child))));
      continue;
    }
    PluginLoadOptions load;
    load.patches = options.patches;
    PluginLoadResult plugin = load_plugin_backend(entry, load);
    if (!plugin.ok())
      return fail(fmt::format("BACKENDS: unknown backend '{}' ({}): {}", entry, valid_choices(),
                              plugin.error()));
    for (const std::string& warning : plugin.warnings)
      std::fprintf(stderr, "burnmark: %s\n", warning.c_str());
    backends.push_back(plugin.take());
  }
  // A plugin may call itself by a built-in's name (or two paths may be the same plugin).
  for (std::size_t i = 0; i < backends.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (backends[i]->name() == backends[j]->name())
        return fail(fmt::format(
            "BACKENDS: duplicate backend '{}' in '{}' (entries {} and {} are the same backend)",
            backends[i]->name(), spec, j + 1, i + 1));
  return BackendsResult{std::move(backends)};
}

std::vector<Baseline> version_baselines(std::span<const std::unique_ptr<Backend>> backends) {
  std::vector<Baseline> out;
  const std::string ours = libtorch_release();
  for (const auto& b : backends) {
    const std::string& versioned = b->name();
    const std::size_t at = versioned.rfind('@');
    if (at == std::string::npos || versioned.starts_with("child")) continue;
    const std::string name = versioned.substr(0, at);
    if (std::none_of(backends.begin(), backends.end(),
                     [&](const auto& other) { return other->name() == name; }))
      continue;
    const std::string release = versioned.substr(at + 1);
    if (release_less(release, ours).value_or(false))
      out.push_back({name, versioned});
    else if (release_less(ours, release).value_or(false))
      out.push_back({versioned, name});
  }
  return out;
}

} // namespace burnmark
