// Loads a dlopen'd backend (a plugin speaking include/burnmark/plugin/plugin.h) and wraps it
// as a Backend. Every failure is a one-line message for the user, never an exception.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "burnmark/driver/driver.h"

namespace burnmark {

struct PluginLoadResult {
  std::variant<std::unique_ptr<Backend>, std::string> value; // the backend, or why not
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
// the plugin, when the program uses an op outside the plugin's list (message "<op> (op id N)")
// or when gradients are requested from a forward-only plugin; a malformed plugin result (wrong
// shape, count or dtype) is Status::Error with a message.
PluginLoadResult load_plugin_backend(std::string_view name_or_path);

} // namespace burnmark
