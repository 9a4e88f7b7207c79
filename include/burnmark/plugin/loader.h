// Loads a dlopen'd backend (a plugin speaking include/burnmark/plugin/plugin.h) and wraps it
// as a Backend. Every failure is a one-line message for the user, never an exception.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "burnmark/driver/driver.h"

namespace burnmark {

// How the host lays out each leaf it hands a plugin that accepts strided inputs for every op of
// the program (BurnmarkOpSupport.strided_inputs); a plugin that does not always gets contiguous
// row-major leaves, whatever is chosen here. Declared (the default, and every campaign's): each
// leaf in the layout its program declares (Leaf::layout through strided_view: a fresh buffer of
// storage_size elements, the elements no view reaches NaN). The others are test-only overrides
// that win over the declared layout, for every leaf: Contiguous is row-major, Permuted stores
// dims in reverse order (a transpose's storage), Stepped puts each element 2 apart from offset 3
// in a larger buffer whose gaps hold NaN (-1 for indices).
enum class PluginLeafLayout { Declared, Contiguous, Permuted, Stepped, PermutedStepped };

// A fix-and-continue patch to activate (docs/patches.md): `id` is its corpus/patches.txt id,
// `plugin` the name of the plugin that implements it (its backend column without "plugin:").
struct PluginPatch {
  std::string plugin;
  std::string id;
};

struct PluginLoadOptions {
  PluginLeafLayout leaf_layout = PluginLeafLayout::Declared;
  // The active patches (BURNMARK_PATCHES), of every plugin: those naming this plugin's table
  // name are passed to its set_patches entry. A patch the plugin does not know (or a plugin
  // without set_patches) is not applied and gives one line in PluginLoadResult::warnings.
  std::vector<PluginPatch> patches = {};
};

struct PluginLoadResult {
  std::variant<std::unique_ptr<Backend>, std::string> value; // the backend, or why not
  // Loaded, but something asked for was not done: one line each ("plugin 'eigen' does not know
  // patch 'x': not applied"). The registry prints them on stderr.
  std::vector<std::string> warnings = {};
  bool ok() const { return std::holds_alternative<std::unique_ptr<Backend>>(value); }
  std::unique_ptr<Backend> take() { return std::move(std::get<std::unique_ptr<Backend>>(value)); }
  const std::string& error() const { return std::get<std::string>(value); }
};

// `name_or_path` is either a path to a shared object (contains '/' or ends in ".so") or a
// plugin name, looked up as burnmark_<name>.so (or libburnmark_<name>.so) in BURNMARK_PLUGIN_PATH
// (colon-separated), then in the build tree's plugin directory (<build>/plugins), then in the
// install's plugin directory (<libdir>/burnmark/plugins).
//
// The backend is named by the plugin's own table (BurnmarkPluginV1::name), not by its file; the
// registry checks names for duplicates. Its run() reports Status::Unsupported, without calling
// the plugin, when the program uses an op outside the plugin's list (message "<op> (op id N)"),
// an op the plugin does not declare for the program's float dtype ("<op> (op id N) in bf16: ..."),
// forward mode or H·v from a plugin without run_jvp / run_hvp, or gradients from a forward-only
// plugin; a malformed plugin result (wrong shape, count or dtype) is Status::Error with a
// message. A plugin built for another ABI version (v3 included) is refused, naming both versions.
// The backend's active_patches() are the patches its set_patches accepted.
PluginLoadResult load_plugin_backend(std::string_view name_or_path,
                                     const PluginLoadOptions& options = {});

} // namespace burnmark
