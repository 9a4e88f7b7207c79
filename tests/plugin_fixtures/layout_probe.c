/* Test fixture: reports how the host laid out leaf 0 instead of computing anything. It declares
 * add (id 0) with strided inputs and neg (id 4) without, in every float dtype, and returns as the
 * root (f64, whatever its shape, which must have at least 8 elements) leaf 0's strides[0],
 * strides[1], storage_offset, dtype, then its elements (0,0), (0,1), (1,0) and (1,2) read
 * through the strides, widened to double, then (if the root has 9 elements) how many NaN the
 * storage holds from element 0 to the last one the view reaches; the rest is 0. The root goes back
 * strided (ABI v4): element i of its row-major order at 1 + 2 * i of a larger buffer, so the host
 * reads it right only by honouring the result's strides and offset. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "burnmark/plugin/plugin.h"

static const BurnmarkOpSupport ops[] = {
    {.op = 0, .dtypes = BURNMARK_DTYPES_ALL_FLOAT, .strided_inputs = 1},
    {.op = 4, .dtypes = BURNMARK_DTYPES_ALL_FLOAT, .strided_inputs = 0},
};

static double element(const BurnmarkLeaf* l, int64_t i, int64_t j) {
  const int64_t at = l->storage_offset + i * l->strides[0] + j * l->strides[1];
  switch (l->dtype) {
  case BURNMARK_DTYPE_F32: return ((const float*)l->data)[at];
  case BURNMARK_DTYPE_F64: return ((const double*)l->data)[at];
  case BURNMARK_DTYPE_BF16: {
    const uint32_t bits = (uint32_t)((const uint16_t*)l->data)[at] << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
  }
  case BURNMARK_DTYPE_F16: {
    /* binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. */
    const uint16_t h = ((const uint16_t*)l->data)[at];
    const int exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1f) return fraction ? NAN : sign * INFINITY;
    if (exponent == 0) return sign * fraction / 16777216.0;                   /* 2^-24 */
    return sign * (1024 + fraction) * ((double)(1 << exponent) / 33554432.0); /* 2^-25 */
  }
  default: return -1;
  }
}

/* NaN elements in data[0 .. last element the rank-2 view reaches]: the host's filler. */
static double nans(const BurnmarkLeaf* l) {
  const int64_t last = l->storage_offset + (l->shape.dims[0] - 1) * l->strides[0] +
                       (l->shape.dims[1] - 1) * l->strides[1];
  double count = 0;
  for (int64_t at = 0; at <= last; ++at) {
    BurnmarkLeaf flat = *l;
    flat.storage_offset = at;
    flat.strides[0] = flat.strides[1] = 0;
    const double v = element(&flat, 0, 0);
    count += v != v;
  }
  return count;
}

static int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                   BurnmarkResult* result) {
  (void)context;
  (void)options;
  const BurnmarkStmt* root = &program->stmts[program->root];
  int64_t n = 1;
  for (int i = 0; i < root->shape.rank; ++i)
    n *= root->shape.dims[i];
  double* values = calloc((size_t)(2 * n + 1), sizeof(double));
  const BurnmarkLeaf* l = &program->leaves[0];
  const double probe[9] = {(double)l->strides[0], (double)l->strides[1], (double)l->storage_offset,
                           (double)l->dtype,      element(l, 0, 0),      element(l, 0, 1),
                           element(l, 1, 0),      element(l, 1, 2),      n >= 9 ? nans(l) : 0};
  for (int64_t i = 0; i < 2 * n + 1; ++i)
    values[i] = -1; /* the gaps: read only by a host that ignores the strides */
  for (int64_t i = 0; i < n; ++i)
    values[1 + 2 * i] = i < 9 ? probe[i] : 0;
  result->plugin_data = values;
  result->root.shape = root->shape;
  result->root.numel = n;
  result->root.has_strides = 1;
  result->root.storage_offset = 1;
  int64_t step = 2;
  for (int i = root->shape.rank - 1; i >= 0; --i) {
    result->root.strides[i] = step;
    step *= root->shape.dims[i];
  }
  result->root.dtype = BURNMARK_DTYPE_F64;
  result->root.data = values;
  result->status = BURNMARK_STATUS_OK;
  return result->status;
}

static void release(void* context, BurnmarkResult* result) {
  (void)context;
  free(result->plugin_data);
}

static const BurnmarkPluginV1 table = {
    .abi_version = BURNMARK_PLUGIN_ABI_VERSION,
    .name = "layout_probe",
    .description = "test fixture reporting the layout of leaf 0",
    .ops = ops,
    .num_ops = sizeof ops / sizeof ops[0],
    .computes_gradients = 0,
    .run = run,
    .release_result = release,
};

BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version);
BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &table;
}
