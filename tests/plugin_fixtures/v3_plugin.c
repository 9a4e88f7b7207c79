/* Test fixture: a plugin as it was built against plugin ABI version 3 (the last version before
 * dtypes and strides), with the v3 table spelled out here since plugin.h now describes v4. The
 * host must refuse it, naming both versions, and never call anything in it: run() aborts. */
#include <stdint.h>
#include <stdlib.h>

#include "burnmark/plugin/plugin.h"

typedef struct V3Table {
  uint32_t abi_version;
  uint32_t reserved;
  const char* name;
  const char* description;
  const uint32_t* supported_ops;
  uint32_t num_supported_ops;
  int32_t computes_gradients;
  void* (*create)(const char** error);
  void (*destroy)(void* context);
  int32_t (*run)(void* context, const void* program, const void* options, void* result);
  void (*release_result)(void* context, void* result);
} V3Table;

static const uint32_t ops[] = {0 /* add */};

static int32_t run(void* context, const void* program, const void* options, void* result) {
  (void)context;
  (void)program;
  (void)options;
  (void)result;
  abort();
}
static void release(void* context, void* result) {
  (void)context;
  (void)result;
  abort();
}

static const V3Table table = {
    .abi_version = 3u,
    .name = "v3_plugin",
    .description = "test fixture built against plugin ABI v3",
    .supported_ops = ops,
    .num_supported_ops = 1,
    .computes_gradients = 1,
    .run = run,
    .release_result = release,
};

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  /* A v3 plugin returned its own table type; the host reads only the first field. */
  return (const BurnmarkPluginV1*)(const void*)&table;
}
