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
_Static_assert(BURNMARK_PLUGIN_ABI_VERSION == 4u, "this test describes ABI version 4");
/* v4: leaves carry any dtype with strides and an offset; results may be strided. */
_Static_assert(sizeof(BurnmarkLeaf) == 120, "BurnmarkLeaf layout");
_Static_assert(offsetof(BurnmarkLeaf, strides) == 72, "BurnmarkLeaf strides");
_Static_assert(sizeof(BurnmarkTensorOut) == 128, "BurnmarkTensorOut layout");
_Static_assert(sizeof(BurnmarkOpSupport) == 16, "BurnmarkOpSupport layout");
_Static_assert(BURNMARK_DTYPE_BF16 == 4 && BURNMARK_DTYPE_F16 == 5, "dtype numbers are fixed");
_Static_assert(BURNMARK_DTYPES_ALL_FLOAT == 0x33u, "f32 | f64 | bf16 | f16");

/* A C plugin's op list and table: f32-only add, every float dtype and strided inputs for neg,
 * without forward mode or H·v (NULL entry points). */
static const BurnmarkOpSupport c_ops[] = {
    {.op = 0, .dtypes = BURNMARK_DTYPES_F32, .strided_inputs = 0},
    {.op = 4, .dtypes = BURNMARK_DTYPES_ALL_FLOAT, .strided_inputs = 1},
};
static const BurnmarkPluginV1 c_table = {
    .abi_version = BURNMARK_PLUGIN_ABI_VERSION,
    .name = "c_header_test",
    .ops = c_ops,
    .num_ops = sizeof c_ops / sizeof c_ops[0],
    .run_jvp = NULL,
    .run_hvp = NULL,
};

/* A C plugin's entry function type-checks against the typedef. */
static const BurnmarkPluginV1* c_entry(uint32_t host_abi_version) {
  return host_abi_version == BURNMARK_PLUGIN_ABI_VERSION ? &c_table : NULL;
}

BurnmarkPluginEntryFn burnmark_plugin_header_c_entry(void);
BurnmarkPluginEntryFn burnmark_plugin_header_c_entry(void) {
  return &c_entry;
}
