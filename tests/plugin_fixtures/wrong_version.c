/* Test fixture: a plugin built against a future ABI; the host must refuse it, naming both
 * versions, without reading anything past abi_version. */
#include "burnmark/plugin/plugin.h"

static const BurnmarkPluginV1 table = {.abi_version = BURNMARK_PLUGIN_ABI_VERSION + 1u};

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &table;
}
