/* Test fixture: a plugin in plain C that returns malformed results on purpose, so the host's
 * validation can be tested. What it does depends on the root's op:
 *   add: a root of shape [1] whatever the program says
 *   sub: the right root shape with one value too few
 *   mul: a correct root but no gradients
 *   neg: status ERROR with a message
 *   exp: status UNSUPPORTED naming exp, decided at run time
 * It counts run() and release_result() calls so the test can check every result is released. */
#include <stdlib.h>

#include "burnmark/plugin/plugin.h"

BURNMARK_PLUGIN_EXPORT int burnmark_fixture_runs;
BURNMARK_PLUGIN_EXPORT int burnmark_fixture_releases;
int burnmark_fixture_runs = 0;
int burnmark_fixture_releases = 0;

#define F32 BURNMARK_DTYPES_F32
static const BurnmarkOpSupport ops[] = {{0 /* add */, F32, 0, 0},
                                        {1 /* sub */, F32, 0, 0},
                                        {2 /* mul */, F32, 0, 0},
                                        {4 /* neg */, F32, 0, 0},
                                        {6 /* exp */, F32, 0, 0}};

static int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                   BurnmarkResult* result) {
  (void)context;
  (void)options;
  ++burnmark_fixture_runs;
  const BurnmarkStmt* root = &program->stmts[program->root];
  int64_t n = 1;
  for (int i = 0; i < root->shape.rank; ++i)
    n *= root->shape.dims[i];
  double* values = calloc((size_t)n, sizeof(double));
  result->plugin_data = values;
  result->root.shape = root->shape;
  result->root.numel = n;
  result->root.dtype = BURNMARK_DTYPE_F64;
  result->root.data = values;
  result->status = BURNMARK_STATUS_OK;
  switch (root->op) {
  case 0:
    result->root.shape.rank = 1;
    result->root.shape.dims[0] = 1;
    result->root.numel = 1;
    break;
  case 1: result->root.numel = n - 1; break;
  case 2: break;
  case 4:
    result->status = BURNMARK_STATUS_ERROR;
    result->message = "deliberate failure";
    break;
  case 6:
    result->status = BURNMARK_STATUS_UNSUPPORTED;
    result->unsupported_op = 6;
    result->message = "no exp kernel for this shape";
    break;
  }
  return result->status;
}

static void release(void* context, BurnmarkResult* result) {
  (void)context;
  ++burnmark_fixture_releases;
  free(result->plugin_data);
}

static const BurnmarkPluginV1 table = {
    .abi_version = BURNMARK_PLUGIN_ABI_VERSION,
    .name = "bad_result",
    .description = "test fixture returning malformed results",
    .ops = ops,
    .num_ops = sizeof ops / sizeof ops[0],
    .computes_gradients = 1,
    .run = run,
    .release_result = release,
};

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &table;
}
