/* Test fixture: a plugin that fails the way real ones do, for the child-backend tests. The first
 * leaf's first value picks what run() does:
 *   13: segfault   14: exit(0)   15: hang   16: abort()
 *   17: grow by 64 MB of touched memory at a time up to 4 GB, then hang (a runaway allocation)
 *   anything else: UNSUPPORTED
 * so that a test can crash it, then check that the restarted child answers again. With
 * BURNMARK_FIXTURE_ALWAYS=segv in its environment it segfaults on every program (it claims every
 * op, so a fuzz target's programs all reach it); with BURNMARK_FIXTURE_ALWAYS=mix it segfaults on
 * about 1 program in 16 and hangs on about 1 in 64, picked by the first value's bits, so that a
 * campaign meets both among ordinary programs. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burnmark/plugin/plugin.h"

#define NUM_OPS 150
static BurnmarkOpSupport ops[NUM_OPS];

static int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                   BurnmarkResult* result) {
  (void)context;
  (void)options;
  /* The first element of leaf 0 (an f32 program: the only dtype this fixture declares). */
  const BurnmarkLeaf* leaf0 = program->num_leaves > 0 ? &program->leaves[0] : NULL;
  const float first = leaf0 && leaf0->data && leaf0->dtype == BURNMARK_DTYPE_F32
                          ? ((const float*)leaf0->data)[leaf0->storage_offset]
                          : 0;
  const char* always = getenv("BURNMARK_FIXTURE_ALWAYS");
  uint32_t bits = 0;
  memcpy(&bits, &first, sizeof bits);
  bits *= 2654435761u; /* spread the low bits of nearby values */
  const int mix = always && always[0] == 'm';
  if (first == 13 || (always && always[0] == 's') || (mix && (bits >> 28) == 0)) raise(SIGSEGV);
  if (mix && (bits >> 26) == 63)
    for (;;)
      pause();
  if (first == 14) exit(0);
  if (first == 15)
    for (;;)
      pause();
  if (first == 16) abort();
  if (first == 17) {
    /* Kept reachable, so the compiler cannot drop the allocations as dead. */
    static char* volatile blocks[64];
    for (int i = 0; i < 64; ++i) {
      blocks[i] = malloc((size_t)64 << 20);
      if (blocks[i] == NULL) break;
      memset(blocks[i], 1, (size_t)64 << 20);
    }
    for (;;)
      pause();
  }
  result->status = BURNMARK_STATUS_UNSUPPORTED;
  result->unsupported_op = 4;
  result->message = "this fixture computes nothing";
  return result->status;
}

static void release(void* context, BurnmarkResult* result) {
  (void)context;
  (void)result;
}

static const BurnmarkPluginV1 table = {
    .abi_version = BURNMARK_PLUGIN_ABI_VERSION,
    .name = "misbehaving",
    .description = "test fixture that crashes, exits or hangs on request",
    .ops = ops,
    .num_ops = NUM_OPS,
    .computes_gradients = 1,
    .run = run,
    .release_result = release,
};

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  for (uint32_t i = 0; i < NUM_OPS; ++i)
    ops[i] = (BurnmarkOpSupport){.op = i, .dtypes = BURNMARK_DTYPES_F32};
  return &table;
}
