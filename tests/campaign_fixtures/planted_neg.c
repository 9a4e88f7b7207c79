/* Test fixture for campaigns: a plugin with one planted bug that a fuzz target finds within
 * seconds, so a short campaign can check that hundreds of diverging inputs become one bug.
 *   - a root that depends on a neg: status ERROR ("planted: neg kernel failed"), a divergence;
 *   - a root that is a leaf (or an alias of one): its values, gradient ones for that leaf
 *     (zeros for the others) — correct, so it agrees;
 *   - anything else: UNSUPPORTED, which the host skips.
 * Statements the root does not read are ignored, as a real library never runs them.
 * So every diverging program minimises to neg(leaf) with the one signature
 * "planted:error / neg(leaf)". It claims every op so that the host passes it every program. */
#include <stdlib.h>
#include <string.h>

#include "burnmark/plugin/plugin.h"

/* f32 only, contiguous: run() copies a leaf's buffer as it is. */
#define OP(id)                                                                                     \
  { id, BURNMARK_DTYPES_F32, 0, 0 }
static const BurnmarkOpSupport ops[] = {
    OP(0),  OP(1),  OP(2),  OP(3),  OP(4),  OP(5),  OP(6),  OP(7),  OP(8),  OP(9),  OP(10),
    OP(11), OP(12), OP(13), OP(14), OP(15), OP(16), OP(17), OP(18), OP(19), OP(20), OP(21)};
enum { kNeg = 4 };

typedef struct Buffers {
  float* root;
  float* ones;
  BurnmarkTensorOut* grads;
} Buffers;

static int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                   BurnmarkResult* result) {
  (void)context;
  /* Operands are earlier registers, so one backward sweep marks the root's cone. */
  char* needed = calloc((size_t)program->num_stmts, 1);
  needed[program->root] = 1;
  int has_neg = 0;
  uint32_t other_op = 0;
  int has_other = 0;
  for (int32_t i = program->root; i >= 0; --i) {
    const BurnmarkStmt* s = &program->stmts[i];
    if (!needed[i]) continue;
    if (s->kind == BURNMARK_STMT_ALIAS) needed[s->source] = 1;
    if (s->kind != BURNMARK_STMT_OP) continue;
    for (int32_t k = 0; k < s->num_operands; ++k)
      needed[s->operands[k]] = 1;
    if (s->op == kNeg) {
      has_neg = 1;
    } else {
      has_other = 1;
      other_op = s->op;
    }
  }
  free(needed);
  if (has_neg) {
    result->status = BURNMARK_STATUS_ERROR;
    result->message = "planted: neg kernel failed";
    return result->status;
  }
  if (has_other) {
    result->status = BURNMARK_STATUS_UNSUPPORTED;
    result->unsupported_op = other_op;
    return result->status;
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
