// The op enum, its attributes and the static facts about each op (name, arity, stable id),
// all generated from ops.def so that they cannot drift apart.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace burnmark {

enum class Op : std::uint8_t {
#define BURNMARK_OP(Enum, name, id, arity, attrs, family, params, edges) Enum,
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
};

inline constexpr std::size_t kOpCount = 0
#define BURNMARK_OP(Enum, name, id, arity, attrs, family, params, edges) +1
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
    ;

// Which attributes an op carries; decides the op's text form and which Attrs fields matter.
enum class AttrKind : std::uint8_t {
  None,              // no attributes
  Exponent,          // pow: exponent
  DimKeep,           // reductions along a dimension: dim, keepdim
  TwoDims,           // transpose: dim, dim1
  Dim,               // concat: dim
  DimTimes,          // repeat: dim, times
  Bounds,            // clamp, hardtanh: lo, hi ("min", "max")
  Min,               // clamp_min: lo
  Max,               // clamp_max: hi
  Alpha,             // elu, celu: alpha
  Slope,             // leaky_relu: negative_slope
  Lambd,             // hardshrink, softshrink: lambd
  Softplus,          // softplus: beta, threshold
  Gelu,              // gelu: variant 0 = approximate "none", 1 = "tanh"
  Rounding,          // div_rounded: variant 0 = rounding_mode "trunc", 1 = "floor"
  Weight,            // lerp: weight
  Eps,               // logit: variant 0 = no eps, 1 = eps given
  Correction,        // var, std over every element: correction (in variant, 0 or 1)
  DimKeepCorrection, // var_dim, std_dim: dim, keepdim, correction (in variant)
  Ord,               // vector_norm: ord (in exponent; may be ±inf)
  DimKeepOrd,        // vector_norm_dim: dim, keepdim, ord (in exponent)
  PDim,              // normalize: p (in exponent), dim
  BetaAlpha,         // addmm: beta, alpha
  Shift,             // roll: shifts (in times), dim
  Diagonal,          // tril, triu: diagonal offset (in times)
  Narrow,            // narrow: dim, start (in dim1), length (in times)
  DimIndex,          // select: dim, index (in dim1)
  DimSize,           // expand: dim (of size 1), size (in times)
  DiagonalDims,      // diagonal: offset (in times), dim1 (in dim), dim2 (in dim1)
  ScatterReduce,     // scatter_reduce: dim, reduce (in variant, kScatterReduceNames), include_self
  Fill,              // masked_fill: value
  DimFill,           // index_fill: dim, value (in fill)
  Accumulate,        // index_put: accumulate (in variant, 0 false, 1 true)
  Reshape,           // reshape: variant 0 merges dims dim..dim1, 1 splits dim into times x rest
  Permutation,       // permute: the dims as permutation_code digits (in times)
  Slice,             // slice: dim, start (in dim1), end (in times), step (in variant)
  Chunk,             // chunk: chunks (in times), dim, the chunk taken (in dim1)
  Offset,            // diag_embed: offset (in times)
  Layout,            // relayout: a LeafLayout (layout_attrs in layout.h)
};

// Which generator step produces an op; it also fixes the operand and result types.
enum class OpFamily : std::uint8_t {
  Unary,      // one float tensor, elementwise
  Activation, // one float tensor, elementwise, usually with parameters
  Binary,     // two broadcasting float tensors
  Compare,    // two broadcasting float tensors -> a bool mask (no gradient)
  Select,     // where(mask, a, b): a bool mask and two float tensors, broadcasting
  Matmul,
  Transpose,
  ReduceDim,
  ReduceAll,
  Concat,
  Repeat,
  AlongDim,   // one float tensor, a dim (and parameters): scans and normalisers, same shape
  Similarity, // two broadcasting float tensors reduced along a dim of their broadcast shape
  Linalg,     // matrices and vectors: mm, mv, dot, outer, addmm, trace, bmm; det, slogdet, inv
  View,       // float tensors rearranged: flip, roll, unsqueeze, ..., stack (of two operands)
  Index,      // a float tensor and an i64 index tensor (operand 1): gather ... scatter_reduce
  Masked,     // masked_fill(x, mask, value), masked_scatter(x, mask, source): a float tensor and
              // a bool mask (operand 1)
};

// The element type of a register. Leaves and almost every op are f32; comparisons make masks;
// the indexing ops take i64 index leaves (made with the op, never differentiated).
enum class DType : std::uint8_t { F32, Bool, I64 };
// The dtype's spelling in the text form: "f32", "bool", "i64".
constexpr std::string_view dtype_name(DType d) {
  switch (d) {
  case DType::F32: return "f32";
  case DType::Bool: return "bool";
  case DType::I64: return "i64";
  }
  return "?";
}

// Attributes of one instruction. Only the fields named by the op's AttrKind are meaningful;
// the others stay at their defaults so that equality and text round trips are exact. Scalar
// parameters hold f32 values (the text form prints floats), and equality is bitwise so that a
// NaN bound equals itself.
struct Attrs {
  int dim = 0;
  int dim1 = 0;
  bool keepdim = false;
  int times = 1;
  double exponent = 0.0;     // pow's exponent; vector_norm's ord and normalize's p
  double lo = 0.0;           // clamp, clamp_min, hardtanh
  double hi = 0.0;           // clamp, clamp_max, hardtanh
  double alpha = 0.0;        // elu, celu, addmm
  double slope = 0.0;        // leaky_relu's negative_slope
  double lambd = 0.0;        // hardshrink, softshrink
  double beta = 0.0;         // softplus, addmm
  double threshold = 0.0;    // softplus
  double weight = 0.0;       // lerp
  double eps = 0.0;          // logit, when variant is 1
  double fill = 0.0;         // masked_fill's and index_fill's value
  int variant = 0;           // gelu approximate, div_rounded rounding_mode, logit has eps, var/std
                             // correction, scatter_reduce's reduce, index_put's accumulate
  bool include_self = false; // scatter_reduce
  bool operator==(const Attrs& other) const;
};

} // namespace burnmark

#include "burnmark/ir/op_tables.h"

namespace burnmark {

struct OpInfo {
  Op op;
  std::string_view name;
  std::uint32_t stable_id;
  int arity;
  AttrKind attr_kind;
  OpFamily family;
  std::span<const Attrs> params; // attribute values the generator draws from (empty: structural)
  std::span<const float> edges;  // edge inputs mixed into the leaves that feed the op
};

inline constexpr std::array<OpInfo, kOpCount> kOpTable = {{
#define BURNMARK_OP(Enum, name, id, arity, attrs, family, params, edges)                           \
  {Op::Enum, name, id, arity, AttrKind::attrs, OpFamily::family, params, edges},
#include "burnmark/ir/ops.def"
#undef BURNMARK_OP
}};

constexpr const OpInfo& op_info(Op op) {
  return kOpTable[static_cast<std::size_t>(op)];
}
constexpr std::string_view op_name(Op op) {
  return op_info(op).name;
}
constexpr int op_arity(Op op) {
  return op_info(op).arity;
}
constexpr DType result_dtype(Op op) {
  return op_info(op).family == OpFamily::Compare ? DType::Bool : DType::F32;
}
// The dtype operand i of op must have.
constexpr DType operand_dtype(Op op, int i) {
  switch (op_info(op).family) {
  case OpFamily::Select: return i == 0 ? DType::Bool : DType::F32;
  case OpFamily::Masked: return i == 1 ? DType::Bool : DType::F32;
  case OpFamily::Index: return i == 1 ? DType::I64 : DType::F32;
  default: return DType::F32;
  }
}
// scatter_reduce's reduce names, in variant order.
inline constexpr std::array<std::string_view, 5> kScatterReduceNames = {"sum", "prod", "mean",
                                                                        "amax", "amin"};
enum class ScatterReduction : std::uint8_t { Sum, Prod, Mean, Amax, Amin };
// Largest arity of any op (where).
inline constexpr int kMaxArity = 3;

std::optional<Op> op_from_name(std::string_view name);
std::optional<Op> op_from_stable_id(std::uint32_t id);

// Repeat counts allowed by the generator (the shape cap may forbid the larger ones).
inline constexpr int kMaxRepeat = 4;

} // namespace burnmark
