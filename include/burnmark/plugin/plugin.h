/* The BurnMark plugin ABI: the one C contract between BurnMark (the host) and a dlopen'd
 * backend (a plugin). A plugin is a shared object exporting one function,
 * burnmark_plugin_entry, which returns a table describing the plugin and the functions the
 * host calls. The host hands the plugin a whole program as plain structs; the plugin hands back
 * the root's values and each leaf's gradient.
 *
 * Modelled on dlpack.h and the ONNX Runtime C API: plain C11 structs and integers only, every
 * pointer's owner stated where it crosses, nothing may throw or longjmp across the boundary.
 * This header is compiled as C in BurnMark's own tests (tests/plugin_header_c.c).
 *
 * Versioning. BURNMARK_PLUGIN_ABI_VERSION changes whenever any struct below changes layout or
 * meaning. The host passes its version to the entry function; the plugin returns its table
 * whose first field is the version the plugin was built against; the host refuses any mismatch
 * and touches nothing else in the table (not even release functions). The first field of
 * BurnmarkPluginV1 is therefore fixed forever (the table keeps its V1 name across versions).
 *
 * Older plugins are REFUSED, not adapted: a v3 plugin loaded by a v4 host fails to load with
 * "speaks plugin ABI version 3, this BurnMark speaks version 4" and is never called. v4 changed
 * the leaf layout (any dtype, strides), the op list (per-op dtypes) and the table (JVP, H·v), so
 * an adapter would have to re-encode every program for the old layout; a rebuild against this
 * header is a few lines (the op list becomes BurnmarkOpSupport entries; see plugin_walk.h).
 *
 * Op ids. Ops are named by their stable numeric id from include/burnmark/ir/ops.def. An id is
 * stable forever: a new op gets a new id, an id is never reused or given a new meaning, and a
 * changed op semantics is a new op. A plugin lists the ids it implements; the host never calls
 * run() with a program containing an op outside that list (it reports the program as
 * unsupported by that plugin instead), so a plugin built today keeps working when ops are added.
 *
 * Dtypes and layouts (v4). Each entry of the op list also says in which float dtypes the plugin
 * runs the op and whether it accepts strided leaves. The host sends a program only when every op
 * in it is declared for the program's float dtype (otherwise the program is unsupported by the
 * plugin, never a divergence), and presents each leaf in the layout the program declares for it
 * (strides, storage offset, a larger buffer whose elements outside the view are NaN) only when
 * every op in it accepts strided inputs; otherwise every leaf is a contiguous row-major copy
 * (strides row-major, offset 0).
 */
#ifndef BURNMARK_PLUGIN_PLUGIN_H
#define BURNMARK_PLUGIN_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2: three operands (where), the mask dtype of comparison results, the activation and
 * binary-op parameters in BurnmarkAttrs.
 * Version 3: rank 5; int64 index leaves (BurnmarkLeaf.dtype and .indices) for the indexing ops;
 * BurnmarkAttrs.include_self (scatter_reduce) and .fill (masked_fill). The table layout
 * (BurnmarkPluginV1) is unchanged.
 * Version 4: dtypes f64, bf16, f16 (BurnmarkProgram.float_dtype, BurnmarkLeaf.data untyped);
 * strides and storage offsets on leaves and results; per-op dtypes and strided-input flags
 * (BurnmarkOpSupport replaces the plain id list); optional run_jvp, run_hvp and set_patches
 * entry points. */
#define BURNMARK_PLUGIN_ABI_VERSION 4u

/* Name of the one symbol a plugin exports (see BurnmarkPluginEntryFn). */
#define BURNMARK_PLUGIN_ENTRY_SYMBOL "burnmark_plugin_entry"

/* Marks the entry function as exported even when the plugin builds with hidden visibility. */
#if defined(_WIN32)
#define BURNMARK_PLUGIN_EXPORT __declspec(dllexport)
#else
#define BURNMARK_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Largest rank of any tensor in a program (burnmark::kMaxRank). */
#define BURNMARK_MAX_RANK 5
/* Element types. A buffer's elements are the C type named; bf16 and f16 are uint16_t holding the
 * bits (bfloat16: the upper half of a float32; f16: IEEE 754 binary16). */
typedef enum BurnmarkDType {
  BURNMARK_DTYPE_F32 = 0,  /* float */
  BURNMARK_DTYPE_F64 = 1,  /* double */
  BURNMARK_DTYPE_BOOL = 2, /* a mask register (BurnmarkStmt.dtype only; never an input or output) */
  BURNMARK_DTYPE_I64 = 3,  /* int64_t: an index leaf (never an output) */
  BURNMARK_DTYPE_BF16 = 4, /* uint16_t bits of a bfloat16 */
  BURNMARK_DTYPE_F16 = 5   /* uint16_t bits of an IEEE binary16 */
} BurnmarkDType;

/* Bit masks of float dtypes for BurnmarkOpSupport.dtypes. */
#define BURNMARK_DTYPE_BIT(dtype) (1u << (unsigned)(dtype))
#define BURNMARK_DTYPES_F32 BURNMARK_DTYPE_BIT(BURNMARK_DTYPE_F32)
#define BURNMARK_DTYPES_ALL_FLOAT                                                                  \
  (BURNMARK_DTYPE_BIT(BURNMARK_DTYPE_F32) | BURNMARK_DTYPE_BIT(BURNMARK_DTYPE_F64) |               \
   BURNMARK_DTYPE_BIT(BURNMARK_DTYPE_BF16) | BURNMARK_DTYPE_BIT(BURNMARK_DTYPE_F16))

/* Largest number of operands of any op (where: mask, a, b). */
#define BURNMARK_MAX_OPERANDS 3
/* Largest element count of any tensor in a program the host sends. Programs with a larger
 * tensor (BURNMARK_MAX_ELEMENTS raised for LibTorch's parallel kernels) are unsupported by every
 * plugin: the host reports them so and never calls run(). */
#define BURNMARK_MAX_ELEMENTS 8192

/* ------------------------------------------------------------------------------------------ */
/* The program: host -> plugin. The host owns every byte reachable from a BurnmarkProgram; it   */
/* is valid only for the duration of the run() call it is passed to. A plugin must copy what it */
/* wants to keep, and must not write through any of these pointers.                             */
/* ------------------------------------------------------------------------------------------ */

/* Row-major dense shape. rank 0 is a scalar (one element); dims[rank..] are 0. Every dim is in
 * 1..48 and the element count is at most BURNMARK_MAX_ELEMENTS. */
typedef struct BurnmarkShape {
  int32_t rank;                    /* 0..BURNMARK_MAX_RANK */
  int32_t reserved;                /* 0; keeps dims 8-byte aligned */
  int64_t dims[BURNMARK_MAX_RANK]; /* dims[0] outermost */
} BurnmarkShape;

/* Attributes of an op statement. Which fields are meaningful is fixed by the op (the attr_kind
 * column of ops.def); the others are at their defaults (0, times 1). Dims are non-negative and
 * already normalised (never -1). */
typedef struct BurnmarkAttrs {
  int32_t dim;      /* sum_dim, mean_dim, transpose (first), concat, repeat */
  int32_t dim1;     /* transpose (second) */
  int32_t keepdim;  /* sum_dim, mean_dim: 0 or 1 */
  int32_t times;    /* repeat: how many copies along dim (>= 1) */
  double exponent;  /* pow */
  double lo;        /* clamp, clamp_min, hardtanh lower bound; clamp's may exceed hi (then every
                       element becomes hi) and may be NaN */
  double hi;        /* clamp, clamp_max, hardtanh upper bound; may be NaN for clamp and clamp_max */
  double alpha;     /* elu, celu */
  double slope;     /* leaky_relu: negative_slope */
  double lambd;     /* hardshrink, softshrink */
  double beta;      /* softplus */
  double threshold; /* softplus: the identity is used where x * beta > threshold */
  double weight;    /* lerp: a + weight * (b - a) */
  double eps;       /* logit, when variant is 1: the input is clamped to [eps, 1 - eps] */
  int32_t variant;  /* gelu: 0 approximate="none", 1 "tanh"; div_rounded: 0 rounding_mode="trunc",
                       1 "floor"; logit: 0 no eps, 1 eps given; var/std: correction;
                       scatter_reduce: reduce 0 "sum", 1 "prod", 2 "mean", 3 "amax", 4 "amin";
                       index_put: accumulate 0 false, 1 true */
  int32_t include_self; /* scatter_reduce: 0 or 1 */
  double fill;          /* masked_fill: the value written where the mask is set; index_fill: the
                           value written into the slices the index names */
} BurnmarkAttrs;

/* An input tensor: floating (the program's float_dtype) and gradient-tracked, or int64 indices
 * for the indexing ops (operand 1 of gather ... scatter_reduce; never differentiated, values in
 * range for the op's dim, no gradient is expected for it). Element (i0, .., ik) is
 * data[storage_offset + i0 * strides[0] + .. + ik * strides[k]], counted in elements of dtype.
 * Strides are >= 0 (0 along an expanded dim) and no two elements overlap unless a stride is 0;
 * a plugin whose ops do not all accept strided inputs always gets row-major strides, offset 0. */
typedef struct BurnmarkLeaf {
  BurnmarkShape shape;
  int64_t numel;                      /* product of shape.dims[0..rank) (1 for a scalar) */
  const void* data;                   /* host-owned, read-only: the storage the strides index */
  int32_t dtype;                      /* a BurnmarkDType: the program's float_dtype, or I64 */
  int32_t reserved;                   /* 0 */
  int64_t strides[BURNMARK_MAX_RANK]; /* in elements; entries past rank are 0 */
  int64_t storage_offset;             /* in elements, from data */
} BurnmarkLeaf;

/* What defines a register. Register i is defined by statement i. */
typedef enum BurnmarkStmtKind {
  BURNMARK_STMT_LEAF = 0,  /* a new gradient-tracked input: program->leaves[stmt.leaf] */
  BURNMARK_STMT_ALIAS = 1, /* the very same tensor as register stmt.source: same autograd node,
                              not a copy, so gradients flowing into either reach the same leaf */
  BURNMARK_STMT_OP = 2     /* the result of op stmt.op applied to stmt.operands */
} BurnmarkStmtKind;

typedef struct BurnmarkStmt {
  int32_t kind;                            /* a BurnmarkStmtKind */
  uint32_t op;                             /* OP: stable op id (ops.def); 0 otherwise */
  int32_t leaf;                            /* LEAF: index into program->leaves; -1 otherwise */
  int32_t source;                          /* ALIAS: an earlier register; -1 otherwise */
  int32_t num_operands;                    /* OP: the op's arity; 0 otherwise */
  int32_t operands[BURNMARK_MAX_OPERANDS]; /* OP: earlier registers; unused entries are -1 */
  int32_t dtype; /* the program's float_dtype; BURNMARK_DTYPE_BOOL for a comparison's mask (and an
                    alias of one): values 0 or 1, never differentiated, only ever operand 0 of
                    where or operand 1 of masked_fill and masked_scatter, never the root;
                    BURNMARK_DTYPE_I64 for an index leaf */
  int32_t reserved;    /* 0 */
  BurnmarkAttrs attrs; /* OP: the op's attributes; defaults otherwise */
  BurnmarkShape shape; /* the register's shape, as BurnMark's shape rules infer it */
} BurnmarkStmt;

/* A whole SSA program. Well formed by construction: operands refer to earlier registers, every
 * leaf is defined exactly once and in order, shapes obey the rules of each op. */
typedef struct BurnmarkProgram {
  int32_t num_leaves;
  int32_t num_stmts;
  const BurnmarkLeaf* leaves; /* num_leaves entries, in leaf order */
  const BurnmarkStmt* stmts;  /* num_stmts entries; register i is stmts[i] */
  int32_t root;               /* the register whose values (and whose backward) are wanted */
  int32_t float_dtype; /* BURNMARK_DTYPE_F32, F64, BF16 or F16: the dtype of every float register
                          and float leaf; each op's result is rounded to it (as LibTorch stores) */
} BurnmarkProgram;

typedef struct BurnmarkRunOptions {
  /* 1: also run backward from the root, seeded with ones, and return one gradient per leaf.
   * Only ever 1 for a plugin whose computes_gradients is 1. */
  int32_t gradients;
  int32_t reserved; /* 0 */
} BurnmarkRunOptions;

/* ------------------------------------------------------------------------------------------ */
/* The result: plugin -> host. The HOST owns the BurnmarkResult struct itself (it zeroes it     */
/* before run()); the PLUGIN owns every buffer the result points to. Those buffers stay valid   */
/* and unchanged until the host passes the same result to release_result(), which the host      */
/* calls exactly once after every run() call, whatever the status.                              */
/* ------------------------------------------------------------------------------------------ */

typedef enum BurnmarkStatus {
  BURNMARK_STATUS_OK = 0,
  /* The plugin cannot run an op of this program (e.g. a kernel is missing for these shapes):
   * result->unsupported_op names it. The host skips the plugin for this program; never a
   * divergence. */
  BURNMARK_STATUS_UNSUPPORTED = 1,
  /* The library raised an error: result->message says what. A divergence when the reference
   * succeeded. */
  BURNMARK_STATUS_ERROR = 2
} BurnmarkStatus;

/* A tensor read out of the plugin. Element (i0, .., ik) is data[storage_offset + sum i * stride],
 * with stride = strides[] when has_strides is 1 and row-major (offset ignored) when it is 0. */
typedef struct BurnmarkTensorOut {
  BurnmarkShape shape; /* must equal the shape the host expects (checked) */
  int64_t numel;       /* number of logical values; must equal the shape's count */
  int32_t dtype;       /* F32, F64, BF16 or F16 (widened exactly by the host; any float
                          dtype is accepted, the values are compared as they are) */
  int32_t has_strides; /* 0: contiguous row-major; 1: strides and storage_offset hold */
  const void* data;    /* plugin-owned. For a gradient, NULL means no gradient reached
                          this leaf, which the host reads as zeros. */
  int64_t strides[BURNMARK_MAX_RANK]; /* has_strides: in elements, >= 0 */
  int64_t storage_offset;             /* has_strides: in elements, from data */
  const double* error_bound; /* nullable, plugin-owned, numel values: per-element bound on how
                                far a correct float32 result may lie from data. Used only when
                                this plugin is the trusted side (the first backend); a plugin
                                under test has its bound shown in reports, never used to excuse
                                its values. */
} BurnmarkTensorOut;

typedef struct BurnmarkResult {
  int32_t status;                 /* a BurnmarkStatus; equal to run()'s return value */
  uint32_t unsupported_op;        /* UNSUPPORTED: stable id of the op the plugin cannot run */
  const char* message;            /* nullable, plugin-owned, NUL-terminated: the error (ERROR) or a
                                     detail (UNSUPPORTED) */
  BurnmarkTensorOut root;         /* OK: the root register's values */
  int32_t num_grads;              /* OK with gradients requested: program->num_leaves; else 0 */
  int32_t reserved;               /* 0 */
  const BurnmarkTensorOut* grads; /* plugin-owned, num_grads entries, in leaf order */
  BurnmarkTensorOut tangent;      /* run_jvp, OK: J·u, the root's derivative along the tangents */
  int32_t num_hvps;               /* run_hvp, OK: program->num_leaves; else 0 */
  int32_t reserved2;              /* 0 */
  const BurnmarkTensorOut* hvps;  /* run_hvp: plugin-owned, num_hvps entries in leaf order, H·v
                                     of sum(root); NULL data = zeros (as for grads) */
  void* plugin_data; /* the plugin's own bookkeeping for release_result; host ignores it */
} BurnmarkResult;

/* ------------------------------------------------------------------------------------------ */
/* The plugin table.                                                                           */
/* ------------------------------------------------------------------------------------------ */

/* What the plugin declares about one op. */
typedef struct BurnmarkOpSupport {
  uint32_t op;            /* stable op id (ops.def) */
  uint32_t dtypes;        /* BURNMARK_DTYPE_BIT of each float dtype the op runs in; 0 = none */
  int32_t strided_inputs; /* 1: the op reads operands through BurnmarkLeaf strides; 0: the host
                             hands contiguous copies when the program contains this op */
  int32_t reserved;       /* 0 */
} BurnmarkOpSupport;

typedef struct BurnmarkPluginV1 {
  /* BURNMARK_PLUGIN_ABI_VERSION as the plugin saw it when compiled. Always the first field. */
  uint32_t abi_version;
  uint32_t reserved; /* 0 */

  /* Static strings (live as long as the shared object is loaded). name is a short identifier
   * ([a-z0-9_-]+) the host reports the backend under; description is one human-readable line
   * (library and version, precision, device). */
  const char* name;
  const char* description;

  /* The ops the plugin implements, one entry per op id, in any order; static storage. */
  const BurnmarkOpSupport* ops;
  uint32_t num_ops;

  /* 1: run() can compute gradients (BurnmarkRunOptions.gradients may be 1). 0: forward only. */
  int32_t computes_gradients;

  /* Nullable. Makes the per-backend state (library handles, scratch buffers) passed to every
   * other function; called once after a successful handshake. Returns NULL on failure and may
   * then point *error at a static or plugin-lifetime message. When create is NULL, context is
   * NULL everywhere. */
  void* (*create)(const char** error);

  /* Nullable. Frees what create() made; called once, before the host unloads the plugin, after
   * every result has been released. */
  void (*destroy)(void* context);

  /* Runs one program. program and options are host-owned and valid during the call only.
   * result points at a zeroed host-owned struct that the plugin fills (buffers plugin-owned, see
   * above). Returns result->status. Must not throw, abort or longjmp: every failure is a status.
   * The host calls run() on one context from one thread at a time. */
  int32_t (*run)(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                 BurnmarkResult* result);

  /* Frees the buffers a run() attached to result (called exactly once per run(), whatever the
   * status). The host does not read result afterwards. */
  void (*release_result)(void* context, BurnmarkResult* result);

  /* Nullable: forward mode. As run() (gradients per options), and also result->tangent, the
   * root's derivative J·u along u = tangents: program->num_leaves host-owned entries valid during
   * the call, in leaf order, each shaped and typed as its leaf (contiguous; an index leaf's entry
   * has data NULL). NULL here: the host reports forward mode unsupported by the plugin. Released
   * by release_result like any run. */
  int32_t (*run_jvp)(void* context, const BurnmarkProgram* program,
                     const BurnmarkRunOptions* options, const BurnmarkLeaf* tangents,
                     BurnmarkResult* result);

  /* Nullable: second order. As run() (gradients per options), and also result->hvps: per leaf
   * the gradient of <grad sum(root), v> (H·v), with v = directions, laid out as run_jvp's
   * tangents. NULL here: the host reports second order unsupported by the plugin. */
  int32_t (*run_hvp)(void* context, const BurnmarkProgram* program,
                     const BurnmarkRunOptions* options, const BurnmarkLeaf* directions,
                     BurnmarkResult* result);

  /* Nullable: fix-and-continue patches (docs/patches.md), each a small workaround in the plugin
   * for one known bug, named by its id in BurnMark's corpus/patches.txt (= its bugs.md id). NULL:
   * the plugin knows no patches. The host calls it after create() and before the first run(),
   * with the ids of the active patches for this plugin: ids[0..count) are host-owned NUL-terminated
   * strings valid during the call only (the plugin copies what it keeps; count may be 0). Each
   * call replaces the whole active set. Returns 0 when every id is known and the set is active.
   * Otherwise returns nonzero, leaves NO patch active, and points *unknown_id at the first id it
   * does not know (one of ids[], so host-owned); the host reports that id as not applied and may
   * call again without it. Must not throw across the boundary. (Added to v4 before its release.) */
  int32_t (*set_patches)(void* context, const char* const* ids, uint32_t count,
                         const char** unknown_id);
} BurnmarkPluginV1;

/* The one exported symbol, named BURNMARK_PLUGIN_ENTRY_SYMBOL:
 *
 *   BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1* burnmark_plugin_entry(uint32_t
 * host_abi_version);
 *
 * Returns a pointer to a static table (never freed), or NULL if the plugin cannot load at all.
 * A plugin built for another ABI version still returns its table: the host reads abi_version,
 * sees the mismatch and reports both numbers. */
typedef const BurnmarkPluginV1* (*BurnmarkPluginEntryFn)(uint32_t host_abi_version);

/* Optional second export, named BURNMARK_PLUGIN_PLATFORM_SYMBOL:
 *
 *   BURNMARK_PLUGIN_EXPORT const char* burnmark_plugin_platform(void* context);
 *
 * One line naming the kernels the plugin's library chose on this processor (its version and
 * instruction set, and the CPU vendor where its kernels use approximate instructions whose
 * results differ between vendors), e.g. "oneDNN 3.0.0 avx512_core_amx". A behaviour measured
 * on one platform may not hold on another, so tests and bug records pin it to this line.
 * context is what create() returned (or NULL). The string is owned by the plugin and lives as
 * long as the context. Added without an ABI version change: the host calls it only if the
 * symbol exists, and a plugin without it has an empty platform. */
#define BURNMARK_PLUGIN_PLATFORM_SYMBOL "burnmark_plugin_platform"
typedef const char* (*BurnmarkPluginPlatformFn)(void* context);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* BURNMARK_PLUGIN_PLUGIN_H */
