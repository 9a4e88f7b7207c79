// Finds, dlopens and handshakes a plugin (include/burnmark/plugin/plugin.h). Every failure
// becomes one line saying what went wrong and where, because the user typed the name in BACKENDS
// and needs to know which of several things to fix.
#include "burnmark/plugin/loader.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "burnmark/plugin/plugin.h"
#include "plugin_backend.h"

namespace burnmark {

namespace {

bool is_path(std::string_view s) {
  return s.find('/') != std::string_view::npos ||
         (s.size() >= 3 && s.substr(s.size() - 3) == ".so");
}

// The plugin directory of the installation this program runs from (the executable's folder,
// then the relative path from bin/ to the plugins), or "" when that is not known.
std::string installed_plugin_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  return (exe.parent_path() / BURNMARK_PLUGIN_INSTALL_RELDIR).lexically_normal().string();
}

// Directories searched for a plugin given by name, in order: BURNMARK_PLUGIN_PATH, the
// installation the program runs from (so `cmake --install --prefix P` works wherever P is), the
// build tree, the configured install prefix.
std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("BURNMARK_PLUGIN_PATH")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (std::string installed = installed_plugin_dir(); !installed.empty())
    dirs.push_back(std::move(installed));
  dirs.emplace_back(BURNMARK_PLUGIN_BUILD_DIR);
  dirs.emplace_back(BURNMARK_PLUGIN_INSTALL_DIR);
  return dirs;
}

PluginLoadResult fail(std::string message) {
  return PluginLoadResult{std::move(message)};
}

// Hands the plugin the active patches that name it (set_patches) and returns those it applies.
// An id it does not know is dropped with one warning and the rest handed over again, so one
// stale id never costs the others; a plugin without set_patches applies none.
std::vector<std::string> apply_patches(const BurnmarkPluginV1& table, void* context,
                                       const std::vector<PluginPatch>& patches,
                                       std::vector<std::string>& warnings) {
  std::vector<std::string> ids;
  for (const PluginPatch& p : patches)
    if (p.plugin == table.name && std::find(ids.begin(), ids.end(), p.id) == ids.end())
      ids.push_back(p.id);
  if (ids.empty()) return ids;
  if (table.set_patches == nullptr) {
    for (const std::string& id : ids)
      warnings.push_back(
          fmt::format("plugin '{}' takes no patches: patch '{}' not applied", table.name, id));
    return {};
  }
  while (true) {
    std::vector<const char*> c_ids;
    for (const std::string& id : ids)
      c_ids.push_back(id.c_str());
    const char* unknown = nullptr;
    if (table.set_patches(context, c_ids.data(), static_cast<std::uint32_t>(c_ids.size()),
                          &unknown) == 0)
      return ids;
    // Compared by content: the plugin must point into ids[], but a copy must not loop forever.
    const auto it = unknown == nullptr
                        ? ids.end()
                        : std::find(ids.begin(), ids.end(), std::string_view(unknown));
    if (it == ids.end()) {
      warnings.push_back(fmt::format(
          "plugin '{}' refused its patches without naming an unknown one: none applied ({})",
          table.name, fmt::join(ids, ", ")));
      table.set_patches(context, nullptr, 0, &unknown);
      return {};
    }
    warnings.push_back(fmt::format(
        "plugin '{}' does not know patch '{}' (corpus/patches.txt): not applied", table.name, *it));
    ids.erase(it);
    if (ids.empty()) {
      table.set_patches(context, nullptr, 0, &unknown);
      return ids;
    }
  }
}

} // namespace

PluginLoadResult load_plugin_backend(std::string_view name_or_path,
                                     const PluginLoadOptions& options) {
  std::string path;
  if (is_path(name_or_path)) {
    path = std::string(name_or_path);
    std::error_code ec;
    const std::filesystem::file_status st = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(st)) return fail(fmt::format("plugin '{}': no such file", path));
    // Checked before dlopen, which opens a FIFO for reading and blocks until a writer comes, and
    // reads a device such as /dev/zero without end.
    if (!std::filesystem::is_regular_file(st))
      return fail(fmt::format("plugin '{}': is {}, not a shared object file", path,
                              std::filesystem::is_directory(st) ? "a directory"
                              : std::filesystem::is_fifo(st)    ? "a FIFO"
                                                                : "a device or special file"));
  } else {
    std::vector<std::string> tried;
    for (const std::string& dir : search_dirs()) {
      for (const char* prefix : {"burnmark_", "libburnmark_"}) {
        std::string candidate = fmt::format("{}/{}{}.so", dir, prefix, name_or_path);
        std::error_code ec;
        if (path.empty() && std::filesystem::is_regular_file(candidate, ec)) path = candidate;
        tried.push_back(std::move(candidate));
      }
      if (!path.empty()) break;
    }
    if (path.empty())
      return fail(fmt::format(
          "plugin '{}' not found; looked for {} (set BURNMARK_PLUGIN_PATH to add directories)",
          name_or_path, fmt::join(tried, ", ")));
  }

  // RTLD_LOCAL: two plugins bundling different builds of the same library must not see each
  // other's symbols. RTLD_NOW: a missing symbol is a load error now, not a crash mid-run.
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return fail(
        fmt::format("plugin '{}' cannot be loaded: {}", path, why ? why : "unknown dlopen error"));
  }
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });

  dlerror();
  void* sym = dlsym(handle, BURNMARK_PLUGIN_ENTRY_SYMBOL);
  if (sym == nullptr)
    return fail(fmt::format("plugin '{}' is not a BurnMark plugin: it does not export {}", path,
                            BURNMARK_PLUGIN_ENTRY_SYMBOL));
  auto entry = reinterpret_cast<BurnmarkPluginEntryFn>(sym);
  const BurnmarkPluginV1* table = entry(BURNMARK_PLUGIN_ABI_VERSION);
  if (table == nullptr)
    return fail(fmt::format("plugin '{}' refused to load: {} returned null for host ABI version {}",
                            path, BURNMARK_PLUGIN_ENTRY_SYMBOL, BURNMARK_PLUGIN_ABI_VERSION));
  // Only abi_version is read before the versions are known to match: the rest of the table may
  // have another layout.
  if (table->abi_version != BURNMARK_PLUGIN_ABI_VERSION)
    return fail(fmt::format(
        "plugin '{}' speaks plugin ABI version {}, this BurnMark speaks version {}; rebuild "
        "the plugin against this BurnMark's plugin.h",
        path, table->abi_version, BURNMARK_PLUGIN_ABI_VERSION));
  if (table->name == nullptr || table->name[0] == '\0' || table->run == nullptr ||
      table->release_result == nullptr || (table->num_ops > 0 && table->ops == nullptr))
    return fail(fmt::format(
        "plugin '{}' has an incomplete table (name, run, release_result and the op list "
        "are required)",
        path));

  void* context = nullptr;
  if (table->create != nullptr) {
    const char* why = nullptr;
    context = table->create(&why);
    if (context == nullptr)
      return fail(
          fmt::format("plugin '{}' failed to initialise: {}", path, why ? why : "no reason given"));
  }
  std::vector<std::string> warnings;
  std::vector<std::string> applied = apply_patches(*table, context, options.patches, warnings);
  // Optional: a plugin built before it existed simply has no platform line.
  const auto platform =
      reinterpret_cast<BurnmarkPluginPlatformFn>(dlsym(handle, BURNMARK_PLUGIN_PLATFORM_SYMBOL));
  PluginLoadResult loaded{std::make_unique<PluginBackend>(
      std::move(library), table, context, platform, options.leaf_layout, std::move(applied))};
  loaded.warnings = std::move(warnings);
  return loaded;
}

} // namespace burnmark
