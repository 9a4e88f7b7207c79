// The generator's decision space, shared by the decoder (generate) and the encoder: the order of
// alternatives at every choice point, and which registers, dims and values are legal choices in
// a given program prefix. Both directions compute these from the same functions, so a choice
// the encoder writes is the choice the decoder reads back.
#pragma once

#include <array>
#include <bit>
#include <bitset>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/program.h"
#include "burnmark/ir/shape_rules.h"

namespace burnmark::gen_detail {

// GeneratorOptions with every knob clamped into its legal range; both directions use this.
struct Knobs {
  int max_leaves;
  int min_ops;
  int min_dim;
  int max_dim;
  std::int64_t max_elements; // every generated tensor's element count is at most this
  int max_steps;
  // A leaf seed entry is special when its tag byte is >= 256 - special_tags, so on uniform bytes
  // the share of special entries is special_tags / 256. 0 disables special values entirely.
  int special_tags;
  // An op with edge values takes a fresh leaf of them as operand 0 when the op's tag byte is
  // >= 256 - edge_tags (0: no tag byte is read; at most 255, so "no edge leaf" stays encodable).
  int edge_tags;
  // A leaf step's leaf takes a non-contiguous layout when its layout tag byte (read after its
  // shape) is >= 256 - layout_tags (0: no tag byte is read; at most 255, so contiguous stays
  // encodable).
  int layout_tags;
  std::array<FloatDType, std::size(kFloatDTypes)> dtypes; // distinct, in the options' order
  std::uint32_t dtype_count;                              // at least 1
  bool forward_mode;
  bool second_order;
  bool restricted;                 // GeneratorOptions::ops was not empty
  std::bitset<kOpCount> permitted; // by Op; every op when not restricted
};
Knobs normalize(const GeneratorOptions& options);

// Whether programs of `dtype` drawn under these knobs may contain `op`.
inline bool drawn(const Knobs& k, Op op, FloatDType dtype) {
  return k.permitted[static_cast<std::size_t>(op)] && op_generated_at(op, dtype) &&
         (!k.forward_mode || op_generated_in_forward_mode(op)) &&
         (!k.second_order || op_generated_in_second_order(op));
}

// Caps the choice counts so that every choice fits the two-byte form.
inline constexpr int kMaxStepsLimit = 1024;

// Step kind: alternatives 0..6 are op steps and 7..9 leaf steps (30%); zeros, which is what an
// exhausted input reads, therefore give ops, so MIN_OPS always terminates.
inline constexpr std::uint32_t kStepAlternatives = 10;
inline constexpr std::uint32_t kFirstLeafStep = 7;

// LaneLength: a 1-D or 2-D leaf whose element count is just below, at or above a multiple of a
// SIMD width (lane_shapes), where kernels switch between their vector body and scalar tail.
enum class LeafMode : std::uint8_t {
  Fresh,
  ResampleOneDim,
  MatmulReady,
  BroadcastSuffix,
  LaneLength
};
inline constexpr std::uint32_t kLeafModeCount = 5;

// A generator op step picks a family from this wheel, then an op of that family (in ops.def
// order). Weighted towards the elementwise families, where most ops are; index 0 is Unary, the
// one family that applies to every f32 register, so zero bytes always make a legal op. Select
// makes two statements: a comparison, then a where on its mask; Compare is never drawn alone.
// Index makes an i64 index leaf, then the op that takes it; Masked, like Select, a comparison
// and then the masked_fill or masked_scatter on its mask.
inline constexpr std::array<OpFamily, 26> kCategoryWheel = {
    OpFamily::Unary,      OpFamily::Unary,     OpFamily::Unary,     OpFamily::Activation,
    OpFamily::Activation, OpFamily::Binary,    OpFamily::Binary,    OpFamily::Binary,
    OpFamily::Select,     OpFamily::Matmul,    OpFamily::Transpose, OpFamily::ReduceDim,
    OpFamily::ReduceDim,  OpFamily::ReduceAll, OpFamily::AlongDim,  OpFamily::AlongDim,
    OpFamily::Similarity, OpFamily::Concat,    OpFamily::Repeat,    OpFamily::Linalg,
    OpFamily::Linalg,     OpFamily::View,      OpFamily::View,      OpFamily::Index,
    OpFamily::Index,      OpFamily::Masked};

// The op step's wheel for programs of `dtype`: kCategoryWheel itself without an op restriction
// (so unrestricted decoding never changes), else its entries whose family can draw an op
// (family_drawable), in order. May be empty: the op step then adds nothing.
void op_wheel(const Knobs& k, FloatDType dtype, std::vector<OpFamily>& out);
// Whether a step of `family` can draw some op in `dtype` (Select and Masked: their op and a
// comparison).
bool family_drawable(const Knobs& k, OpFamily family, FloatDType dtype);

constexpr std::size_t family_size(OpFamily f) {
  std::size_t n = 0;
  for (const OpInfo& info : kOpTable)
    n += info.family == f ? 1 : 0;
  return n;
}
// The ops of one family, in ops.def order: the alternatives of that family's op choice.
template <OpFamily F> constexpr std::array<Op, family_size(F)> family_ops() {
  std::array<Op, family_size(F)> out{};
  std::size_t n = 0;
  for (const OpInfo& info : kOpTable)
    if (info.family == F) out[n++] = info.op;
  return out;
}
inline constexpr auto kUnaryOps = family_ops<OpFamily::Unary>();
inline constexpr auto kActivationOps = family_ops<OpFamily::Activation>();
inline constexpr auto kBinaryOps = family_ops<OpFamily::Binary>();
inline constexpr auto kCompareOps = family_ops<OpFamily::Compare>();
inline constexpr auto kDimReduceOps = family_ops<OpFamily::ReduceDim>();
inline constexpr auto kAllReduceOps = family_ops<OpFamily::ReduceAll>();
inline constexpr auto kAlongDimOps = family_ops<OpFamily::AlongDim>();
inline constexpr auto kSimilarityOps = family_ops<OpFamily::Similarity>();
inline constexpr auto kLinalgOps = family_ops<OpFamily::Linalg>();
inline constexpr auto kViewOps = family_ops<OpFamily::View>();
inline constexpr auto kIndexOps = family_ops<OpFamily::Index>();
inline constexpr auto kMaskedOps = family_ops<OpFamily::Masked>();
// tril/triu diagonal offsets -2..2 and roll shifts -n..n are drawn as choice - offset.
inline constexpr int kMaxDiagonalOffset = 2;
// The Select step writes its where explicitly; the family holds exactly that one op.
static_assert(family_size(OpFamily::Select) == 1);

// The attributes of an op's table entry: its attributes with the structural ones (dims, keepdim,
// times), which the step chooses separately, at their defaults.
Attrs table_key(const Attrs& a);

// ---- leaf shapes ----

bool dims_in_range(const Knobs& k, const Shape& s);
// Largest leaf rank whose smallest shape (known_product times min_dim per free dim) fits the
// element cap, given `fixed` dims already decided. At least fixed + 1 is always feasible here.
int max_feasible_rank(const Knobs& k, std::int64_t known_product, int fixed);
// Upper bound for the next free dim so that the remaining free dims can still take min_dim.
std::int64_t dim_upper(const Knobs& k, std::int64_t known_product, int free_after);
// Registers a leaf mode may copy dims from (rank >= 1 and the copied dims within range).
void leaf_sources(const Knobs& k, std::span<const Stmt> regs, LeafMode mode, std::vector<Reg>& out);

// Shapes of n = 8k - 1, 8k, 8k + 1 elements for 8k in 8..256 within the dims of the knobs: [n]
// when n fits one dim, else [a, n / a] with the smallest such a.
void lane_shapes(const Knobs& k, std::vector<Shape>& out);

// ---- op operands ----

// The f32 registers of the prefix: the candidates for an op's first operand and for aliases.
void float_registers(std::span<const Stmt> regs, std::vector<Reg>& out);
// Where's value operands: registers that broadcast with `with` (the mask, then mask and a).
void where_partners(const Knobs& k, std::span<const Stmt> regs, const Shape& mask, const Shape* a,
                    std::vector<Reg>& out);

void binary_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out);
// binary_partners that broadcast to a (a itself among them): masked_scatter's mask keeps a's shape.
void broadcast_into_partners(const Knobs& k, std::span<const Stmt> regs, Reg a,
                             std::vector<Reg>& out);
// masked_scatter's source candidates: f32 registers of at least `numel` elements.
void masked_scatter_sources(std::span<const Stmt> regs, std::int64_t numel, std::vector<Reg>& out);
void matmul_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out);
// Registers r for which op(fixed..., r) has a legal shape (the op's last operand).
void shape_partners(const Knobs& k, std::span<const Stmt> regs, Op op, std::span<const Reg> fixed,
                    std::vector<Reg>& out);
// addmm's mat1 candidates: matrices for which some register can be mat2 with input `a`.
void addmm_first(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out);
void concat_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, int dim,
                     std::vector<Reg>& out);
// 1..kMaxRepeat, limited by the cap; 1 always fits.
int max_repeat_times(const Knobs& k, const Shape& s, int dim);
// The sizes expand may give a size-1 dim: 1..kMaxExpand, limited by the element cap.
inline constexpr int kMaxExpand = 8;
int max_expand(const Knobs& k, const Shape& s);
// reshape's alternatives for an operand of shape s, in order: every merge of dims dim..dim1
// (dim < dim1) whose merged size fits a dim, then every split of a dim by a divisor of its size
// (1 and the size included: they add a dim of size 1), while the rank allows one more dim.
void reshape_choices(const Shape& s, std::vector<Attrs>& out);
// permute's alternatives: the rank! permutations, by their index in lexicographic order.
int permutation_count(int rank);
int nth_permutation_code(int rank, int index);
// The index of a permutation code's dims, or -1 when it is not a permutation of rank dims.
int permutation_index(int code, int rank);
// slice steps 1..kMaxSliceStep (step 1 is narrow's view, larger steps a strided one).
inline constexpr int kMaxSliceStep = 3;
// chunk counts kMinChunks..kMaxChunks.
inline constexpr int kMinChunks = 2;
inline constexpr int kMaxChunks = 4;
// diag_embed's offsets in -kMaxDiagEmbedOffset..kMaxDiagEmbedOffset whose result fits the cap.
inline constexpr int kMaxDiagEmbedOffset = 1;
void diag_embed_offsets(const Knobs& k, const Shape& s, std::vector<int>& out);
// stack's partners: f32 registers of a's shape, when a's rank leaves room for the new dim and
// the stacked result fits the cap.
void stack_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out);

// ---- index leaves ----

// The length an index may have along `dim` of `s` (gather, index_select, take_along_dim): up to
// twice the dim plus two, so that repeated indices are common, within kMaxDim and the cap of a
// result shaped like s with that dim replaced.
std::int64_t max_index_length(const Knobs& k, const Shape& s, int dim);
// scatter's src candidates: f32 registers of a's rank (a itself included).
void scatter_sources(std::span<const Stmt> regs, Reg a, std::vector<Reg>& out);
// index_add's and index_copy's source candidates: f32 registers equal to a's shape off `dim`
// (a itself included), for index_copy no longer than a along dim (its indices are distinct).
void index_update_sources(std::span<const Stmt> regs, Reg a, int dim, bool distinct,
                          std::vector<Reg>& out);
// How large dim d of a scatter index may be: src's size, and self's too off dim.
inline std::int64_t scatter_index_limit(const Shape& self, const Shape& src, int dim, int d) {
  return d == dim ? src[d] : std::min(src[d], self[d]);
}

// ---- det, slogdet, inv: small square operands ----

// A det-family step either takes a [..., n, n] register (n <= kMaxSquareOrder) or builds a
// matrix leaf for its operand: 0..2 batch dims of min_dim..kMaxMatrixBatch, n of
// min_dim..kMaxSquareOrder, and rows cycling over R seed rows (1 <= R <= rows), each seed row
// fresh values, zeros, twice or minus the previous seed row. R < n repeats rows and the other
// kinds give zero rows and scaled rows, so exactly singular matrices are common; R >= n reaches
// every matrix.
inline constexpr std::int64_t kMaxMatrixBatch = 3;
enum class SeedRow : std::uint8_t { Fresh, Zero, Twice, Negated };
// The first seed row has no previous one: only Fresh and Zero.
constexpr std::uint32_t seed_row_kinds(std::size_t row) {
  return row == 0 ? 2 : 4;
}
// Knobs allow some matrix leaf (n = min_dim <= kMaxSquareOrder).
bool matrix_leaf_feasible(const Knobs& k);
// The largest n and batch dim a matrix leaf may take (callers check feasibility first).
std::int64_t matrix_order_max(const Knobs& k);
std::int64_t matrix_batch_max(const Knobs& k);
// A shape a matrix leaf can take under the knobs.
bool matrix_leaf_shape(const Knobs& k, const Shape& s);
// f32 registers of shape [..., n, n] with n <= kMaxSquareOrder.
void square_registers(std::span<const Stmt> regs, std::vector<Reg>& out);
constexpr bool square_op(Op op) {
  return op == Op::Det || op == Op::Slogdet || op == Op::Inv;
}

// ---- leaf layouts ----

// The dims an expanded layout may name, as a bit mask (bit d: dim d): every dim of a leaf (its
// values are made equal along them); for relayout only the dims of size 1, where stride 0 keeps
// every value of the register.
inline std::uint32_t expandable_dims(const Shape& s, bool relayout) {
  std::uint32_t mask = 0;
  for (int d = 0; d < s.rank(); ++d)
    if (!relayout || s[d] == 1) mask |= 1u << d;
  return mask;
}
// The non-contiguous layout kinds a leaf (or relayout's operand) of shape s may take, in choice
// order: permuted from rank 2, slice from rank 1, expanded when some dim is expandable, offset
// at any rank. Returns how many.
inline int layout_kinds(const Shape& s, bool relayout, std::array<LayoutKind, 4>& out) {
  int n = 0;
  if (s.rank() >= 2) out[static_cast<std::size_t>(n++)] = LayoutKind::Permuted;
  if (s.rank() >= 1) out[static_cast<std::size_t>(n++)] = LayoutKind::Slice;
  if (expandable_dims(s, relayout) != 0) out[static_cast<std::size_t>(n++)] = LayoutKind::Expanded;
  out[static_cast<std::size_t>(n++)] = LayoutKind::Offset;
  return n;
}
// Expanded dims are chosen as index - 1 among the 2^k - 1 non-empty subsets of the k expandable
// dims: bit i of the index is the i-th expandable dim (for a leaf, bit d is dim d).
inline std::uint32_t expanded_subsets(std::uint32_t expandable) {
  return (1u << std::popcount(expandable)) - 1;
}
inline std::uint32_t expanded_index(const std::vector<int>& dims, std::uint32_t expandable) {
  std::uint32_t index = 0;
  for (int d : dims)
    index |= 1u << std::popcount(expandable & ((1u << d) - 1));
  return index;
}
inline std::vector<int> expanded_dims(std::uint32_t index, std::uint32_t expandable) {
  std::vector<int> dims;
  for (int d = 0, i = 0; d < kMaxRank; ++d)
    if (expandable & (1u << d)) {
      if (index & (1u << i)) dims.push_back(d);
      ++i;
    }
  return dims;
}

// ---- leaf values ----

// Seeds are 1..kMaxSeedLen entries cycled over the leaf's elements.
inline constexpr int kMaxSeedLen = 16;

// A regular seed byte b becomes static_cast<float>(b) / 127.5f - 1.0f, computed in single
// precision: 256 values from -1 to 1 (both exact), identical for every backend.
constexpr float grid_value(std::uint8_t b) {
  return static_cast<float>(b) / 127.5f - 1.0f;
}

inline constexpr std::array<float, 14> kSpecialValues = {
    std::numeric_limits<float>::quiet_NaN(),
    std::numeric_limits<float>::infinity(),
    -std::numeric_limits<float>::infinity(),
    0.0f,
    -0.0f,
    1e-40f,                            // subnormal
    std::numeric_limits<float>::min(), // smallest normal
    1.0f,
    -1.0f,
    1e30f,
    -1e30f,
    3e38f,
    -3e38f,
    1e-30f};
// f16 has neither f32's range nor its subnormals: the same roles at f16's own extremes (its
// smallest subnormal and normal, values past its range, its largest finite value).
inline constexpr std::array<float, 14> kSpecialValuesF16 = {std::numeric_limits<float>::quiet_NaN(),
                                                            std::numeric_limits<float>::infinity(),
                                                            -std::numeric_limits<float>::infinity(),
                                                            0.0f,
                                                            -0.0f,
                                                            0x1p-24f, // smallest subnormal
                                                            0x1p-14f, // smallest normal
                                                            1.0f,
                                                            -1.0f,
                                                            65520.0f, // rounds to inf
                                                            -65520.0f,
                                                            65504.0f, // largest finite
                                                            -65504.0f,
                                                            0x1p-20f};
// f64 programs draw from kSpecialValues and then from these, which no f32 holds: f64's own
// extremes and subnormals, magnitudes just past f32's range or below its normals, and the inputs
// at which exp, cosh and sinh overflow (or exp underflows) in f64 rather than in f32.
inline constexpr std::array<double, 16> kSpecialValuesF64 = {
    std::numeric_limits<double>::max(),
    -std::numeric_limits<double>::max(),
    std::numeric_limits<double>::min(),        // smallest normal
    std::numeric_limits<double>::denorm_min(), // smallest subnormal
    1e-310,                                    // mid subnormal
    1e300,
    -1e300,
    1e200,
    3.5e38, // just past f32's largest finite
    -1e39,
    1e-39,  // subnormal in f32, normal in f64
    709.78, // exp just below DBL_MAX
    710.0,  // exp overflows
    710.47, // cosh and sinh just below DBL_MAX
    -745.0, // exp at the smallest subnormal
    -746.0, // exp underflows to 0
};

// How many table entries a program of `dtype` draws from; the raw-bits escape comes after them.
constexpr std::uint32_t special_table_size(FloatDType dtype) {
  return static_cast<std::uint32_t>(kSpecialValues.size() +
                                    (dtype == FloatDType::F64 ? kSpecialValuesF64.size() : 0));
}

// Special value `which` of the table for `dtype`, rounded to it.
inline double special_value(std::uint32_t which, FloatDType dtype) {
  if (which >= kSpecialValues.size()) return kSpecialValuesF64[which - kSpecialValues.size()];
  const float v = dtype == FloatDType::F16 ? kSpecialValuesF16[which] : kSpecialValues[which];
  return round_to(v, dtype);
}

// The special alternative after the table: raw bits, four little-endian bytes of an f32 (eight
// of an f64 in f64 programs), so that any value of the dtype at all is reachable and encodable.
constexpr std::uint32_t raw_bits_escape(FloatDType dtype) {
  return special_table_size(dtype);
}
constexpr std::uint32_t special_alternatives(FloatDType dtype) {
  return special_table_size(dtype) + 1;
}

} // namespace burnmark::gen_detail
