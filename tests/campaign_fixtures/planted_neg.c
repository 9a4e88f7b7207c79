/* Test fixture for campaigns: a plugin with one planted bug that a fuzz target finds within
 * seconds, so a short campaign can check that hundreds of diverging inputs become one bug.
 *   - a program containing neg: status ERROR ("planted: neg kernel failed"), a divergence;
 *   - a program of leaves and aliases only: the root leaf's values, gradient ones for that
 *     leaf (zeros for the others) — correct, so it agrees;
 *   - anything else: UNSUPPORTED, which the host skips.
 * So every diverging program minimises to neg(leaf) with the one signature
 * "planted:error / neg(leaf)". It claims every op so that the host passes it every program. */
#include <stdlib.h>
#include <string.h>

#include "burnmark/plugin/plugin.h"

static const uint32_t ops[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                               11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
enum { kNeg = 4 };

typedef struct Buffers {
  float* root;
  float* ones;
  BurnmarkTensorOut* grads;
} Buffers;

static int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                   BurnmarkResult* result) {
  (void)context;
  for (int32_t i = 0; i < program->num_stmts; ++i) {
    const BurnmarkStmt* s = &program->stmts[i];
    if (s->kind != BURNMARK_STMT_OP) continue;
    if (s->op == kNeg) {
      result->status = BURNMARK_STATUS_ERROR;
      result->message = "planted: neg kernel failed";
      return result->status;
    }
  }
  for (int32_t i = 0; i < program->num_stmts; ++i) {
    const BurnmarkStmt* s = &program->stmts[i];
    if (s->kind == BURNMARK_STMT_OP) {
      result->status = BURNMARK_STATUS_UNSUPPORTED;
      result->unsupported_op = s->op;
      return result->status;
    }
  }
  int32_t reg = program->root;
  while (program->stmts[reg].kind == BURNMARK_STMT_ALIAS)
    reg = program->stmts[reg].source;
  const int32_t leaf_index = program->stmts[reg].leaf;
  const BurnmarkLeaf* leaf = &program->leaves[leaf_index];
  Buffers* b = calloc(1, sizeof *b);
  b->root = malloc((size_t)leaf->numel * sizeof(float));
  memcpy(b->root, leaf->data, (size_t)leaf->numel * sizeof(float));
  result->plugin_data = b;
  result->root.shape = program->stmts[program->root].shape;
  result->root.numel = leaf->numel;
  result->root.dtype = BURNMARK_DTYPE_F32;
  result->root.data = b->root;
  if (options->gradients) {
    b->ones = malloc((size_t)leaf->numel * sizeof(float));
    for (int64_t k = 0; k < leaf->numel; ++k)
      b->ones[k] = 1.0f;
    b->grads = calloc((size_t)program->num_leaves, sizeof *b->grads);
    for (int32_t l = 0; l < program->num_leaves; ++l) {
      b->grads[l].shape = program->leaves[l].shape;
      b->grads[l].numel = program->leaves[l].numel;
      b->grads[l].dtype = BURNMARK_DTYPE_F32;
      b->grads[l].data = l == leaf_index ? b->ones : NULL; /* NULL reads as zeros */
    }
    result->num_grads = program->num_leaves;
    result->grads = b->grads;
  }
  result->status = BURNMARK_STATUS_OK;
  return result->status;
}

static void release(void* context, BurnmarkResult* result) {
  (void)context;
  Buffers* b = result->plugin_data;
  if (b == NULL) return;
  free(b->root);
  free(b->ones);
  free(b->grads);
  free(b);
}

static const BurnmarkPluginV1 table = {
    .abi_version = BURNMARK_PLUGIN_ABI_VERSION,
    .name = "planted",
    .description = "test fixture: neg always fails (one planted bug)",
    .supported_ops = ops,
    .num_supported_ops = sizeof ops / sizeof ops[0],
    .computes_gradients = 1,
    .run = run,
    .release_result = release,
};

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &table;
}
