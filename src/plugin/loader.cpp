// Finds, dlopens and handshakes a plugin (include/burnmark/plugin/plugin.h).
#include "burnmark/plugin/loader.h"

namespace burnmark {

PluginLoadResult load_plugin_backend(std::string_view name_or_path) {
  return PluginLoadResult{std::string("plugin loading not implemented yet: ") + std::string(name_or_path)};
}

} // namespace burnmark
