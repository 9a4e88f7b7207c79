/* Test fixture: a plugin whose entry refuses to load (returns NULL). */
#include "burnmark/plugin/plugin.h"

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return NULL;
}
