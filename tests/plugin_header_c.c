/* Compiles plugin.h as C11 (the ABI must stay plain C) and pins down the layout facts a plugin
 * in another language relies on. */
#include "burnmark/plugin/plugin.h"

#include <stddef.h>

_Static_assert(offsetof(BurnmarkPluginV1, abi_version) == 0,
               "abi_version must stay the first field");
_Static_assert(sizeof(BurnmarkShape) == 48, "BurnmarkShape layout");
_Static_assert(sizeof(BurnmarkAttrs) == 112, "BurnmarkAttrs layout");
_Static_assert(sizeof(BurnmarkStmt) == 200, "BurnmarkStmt layout");
_Static_assert(BURNMARK_MAX_OPERANDS == 3, "where takes three operands");
_Static_assert(BURNMARK_PLUGIN_ABI_VERSION == 3u, "this test describes ABI version 3");

/* A C plugin's entry function type-checks against the typedef. */
static const BurnmarkPluginV1* c_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return NULL;
}

BurnmarkPluginEntryFn burnmark_plugin_header_c_entry(void);
BurnmarkPluginEntryFn burnmark_plugin_header_c_entry(void) {
  return &c_entry;
}
