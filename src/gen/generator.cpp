// generate(): decodes fuzzer bytes into a legal program with the shape-aware state machine.
// Every choice reads from the front through ByteReader and picks among alternatives that are
// legal in the current program prefix (gen_detail, shared with the encoder), so no byte string
// is rejected and nothing is patched afterwards.
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/shape_rules.h"
#include "byte_stream.h"
#include "choices.h"

namespace burnmark {
namespace {

using namespace gen_detail;

class Decoder {
public:
  Decoder(std::span<const std::uint8_t> bytes, const GeneratorOptions& options)
      : in_(bytes), k_(normalize(options)) {
    program_.stmts.reserve(static_cast<std::size_t>(k_.max_steps) + 1);
    program_.leaves.reserve(static_cast<std::size_t>(k_.max_leaves));
    scratch_.reserve(static_cast<std::size_t>(k_.max_steps) + 1);
    lane_shapes(k_, lanes_); // depends on the knobs only
  }

  Program run() {
    dtype_ = k_.dtypes[k_.dtype_count > 1 ? in_.choice(k_.dtype_count) : 0];
    program_.float_dtype = dtype_;
    op_wheel(k_, dtype_, wheel_);
    push_step_leaf(fresh_shape(false));
    int ops = 0;
    for (int step = 0; step < k_.max_steps; ++step) {
      if (in_.empty() && ops >= k_.min_ops) break;
      if (in_.choice(kStepAlternatives) >= kFirstLeafStep) {
        if (float_leaves_ < k_.max_leaves)
          push_step_leaf(leaf_shape());
        else
          push_alias(alias_source());
      } else {
        op_step();
        ++ops;
      }
    }
    program_.root = static_cast<Reg>(program_.stmts.size() - 1);
    return std::move(program_);
  }

private:
  std::uint32_t num_regs() const { return static_cast<std::uint32_t>(program_.stmts.size()); }
  std::span<const Stmt> regs() const { return program_.stmts; }
  const Shape& shape_of(Reg r) const { return program_.stmts[static_cast<std::size_t>(r)].shape; }

  std::int64_t dim_up_to(std::int64_t hi) {
    return k_.min_dim + in_.choice(static_cast<std::uint32_t>(hi - k_.min_dim + 1));
  }

  // ---- leaves ----

  // Rank 0 (a scalar, which LibTorch treats as a wrapped number in some kernels) for every leaf
  // but the first, so that a program is never all scalars.
  Shape fresh_shape(bool scalar_allowed = true) {
    const auto ranks = static_cast<std::uint32_t>(max_feasible_rank(k_, 1, 0));
    const int rank = scalar_allowed ? static_cast<int>(in_.choice(ranks + 1))
                                    : 1 + static_cast<int>(in_.choice(ranks));
    Shape s;
    std::int64_t product = 1;
    for (int i = 0; i < rank; ++i) {
      s.push_back(dim_up_to(dim_upper(k_, product, rank - 1 - i)));
      product *= s[i];
    }
    return s;
  }

  Shape leaf_shape() {
    const auto mode = static_cast<LeafMode>(in_.choice(kLeafModeCount));
    if (mode == LeafMode::Fresh) return fresh_shape();
    if (mode == LeafMode::LaneLength) {
      if (lanes_.empty()) return fresh_shape();
      return lanes_[in_.choice(static_cast<std::uint32_t>(lanes_.size()))];
    }
    leaf_sources(k_, regs(), mode, scratch_);
    if (scratch_.empty()) return fresh_shape();
    const Shape& src = shape_of(scratch_[in_.choice(static_cast<std::uint32_t>(scratch_.size()))]);
    switch (mode) {
    case LeafMode::Fresh:
    case LeafMode::LaneLength: break;
    case LeafMode::ResampleOneDim: {
      const int axis = static_cast<int>(in_.choice(static_cast<std::uint32_t>(src.rank())));
      Shape s = src;
      s[axis] = dim_up_to(dim_upper(k_, src.numel() / src[axis], 0));
      return s;
    }
    case LeafMode::MatmulReady: return matmul_ready_shape(src);
    case LeafMode::BroadcastSuffix: {
      const int keep = 1 + static_cast<int>(in_.choice(static_cast<std::uint32_t>(src.rank())));
      Shape s;
      for (int i = src.rank() - keep; i < src.rank(); ++i)
        s.push_back(src[i]);
      return s;
    }
    }
    return fresh_shape();
  }

  // A right-hand matmul operand for `src`: rows = src's last dim; each batch dim either copies
  // src's aligned batch dim (min_dim when src has none there or it does not fit) or is fresh.
  Shape matmul_ready_shape(const Shape& src) {
    const std::int64_t rows = src[src.rank() - 1];
    const int rank = 2 + static_cast<int>(in_.choice(
                             static_cast<std::uint32_t>(max_feasible_rank(k_, rows, 1) - 1)));
    Shape s;
    std::int64_t product = rows;
    for (int i = 0; i < rank - 2; ++i) {
      const std::int64_t hi = dim_upper(k_, product, rank - 2 - i);
      std::int64_t d = k_.min_dim;
      if (in_.choice(2) == 0) {
        const int aligned = i + src.rank() - rank;
        if (aligned >= 0 && aligned < src.rank() - 2 && src[aligned] >= k_.min_dim &&
            src[aligned] <= hi)
          d = src[aligned];
      } else {
        d = dim_up_to(hi);
      }
      s.push_back(d);
      product *= d;
    }
    s.push_back(rows);
    s.push_back(dim_up_to(dim_upper(k_, product, 0)));
    return s;
  }

  double rounded(double v) const { return round_to(v, dtype_); }

  double seed_value() {
    if (k_.special_tags == 0) return rounded(grid_value(in_.byte()));
    if (in_.byte() < 256 - k_.special_tags) return rounded(grid_value(in_.byte()));
    const std::uint32_t which = in_.choice(special_alternatives(dtype_));
    if (which != raw_bits_escape(dtype_)) return special_value(which, dtype_);
    // NaN payloads collapse to the quiet NaN of the same sign: the text form keeps only that much,
    // and every generated program must survive a text round trip.
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    if (dtype_ == FloatDType::F64) {
      const auto raw = std::bit_cast<double>(in_.u64_le());
      return std::isnan(raw) ? std::copysign(kNaN, raw) : raw;
    }
    const float raw = std::bit_cast<float>(in_.u32_le());
    return std::isnan(raw) ? std::copysign(kNaN, raw) : rounded(raw);
  }

  void push_leaf(const Shape& shape) {
    push_leaf(shape, [&] { return seed_value(); });
  }

  // A leaf step's leaf: its layout (generator.h, "Layouts"), then its values, an expanded
  // leaf's cycled over its compact shape and broadcast.
  void push_step_leaf(const Shape& shape) {
    LeafLayout layout = draw_layout(shape);
    const Shape compact = compact_shape(layout, shape);
    Leaf& leaf = program_.leaves.emplace_back();
    ++float_leaves_;
    leaf.shape = shape;
    cycled_seed(compact.numel(), leaf.data, [&] { return seed_value(); });
    leaf.data = expand_data(layout, shape, leaf.data);
    leaf.layout = std::move(layout);
    push_leaf_stmt(shape, DType::F32);
  }

  LeafLayout draw_layout(const Shape& shape) {
    if (k_.layout_tags == 0 || in_.byte() < 256 - k_.layout_tags) return {};
    return draw_layout_kind(shape, false);
  }

  // A non-contiguous layout of a leaf (relayout: of an op's operand) of `shape`: its kind
  // (layout_kinds), then the kind's parameters.
  LeafLayout draw_layout_kind(const Shape& shape, bool relayout) {
    LeafLayout l;
    std::array<LayoutKind, 4> kinds{};
    const int n = layout_kinds(shape, relayout, kinds);
    l.kind = kinds[in_.choice(static_cast<std::uint32_t>(n))];
    const int rank = shape.rank();
    switch (l.kind) {
    case LayoutKind::Contiguous: break;
    case LayoutKind::Permuted: {
      // Any order but the identity (index 0).
      const int code = nth_permutation_code(
          rank, 1 + static_cast<int>(
                        in_.choice(static_cast<std::uint32_t>(permutation_count(rank) - 1))));
      const auto dims = permutation_dims(code, rank);
      l.dims.assign(dims->begin(), dims->begin() + rank);
      break;
    }
    case LayoutKind::Slice:
      l.dim = static_cast<int>(in_.choice(static_cast<std::uint32_t>(rank)));
      l.step = 2 + static_cast<int>(in_.choice(static_cast<std::uint32_t>(kMaxLayoutStep - 1)));
      break;
    case LayoutKind::Expanded: {
      const std::uint32_t expandable = expandable_dims(shape, relayout);
      l.dims = expanded_dims(1 + in_.choice(expanded_subsets(expandable)), expandable);
      break;
    }
    case LayoutKind::Offset:
      l.offset = 1 + static_cast<int>(in_.choice(static_cast<std::uint32_t>(kMaxLayoutOffset)));
      break;
    }
    return l;
  }

  // Fills `out` with numel values: a seed of 1..kMaxSeedLen entries from next_value, cycled.
  template <class T, class NextValue>
  void cycled_seed(std::int64_t numel, std::vector<T>& out, NextValue next_value) {
    const int seed_len =
        1 + static_cast<int>(
                in_.choice(static_cast<std::uint32_t>(std::min<std::int64_t>(numel, kMaxSeedLen))));
    std::array<T, kMaxSeedLen> seed{};
    for (int i = 0; i < seed_len; ++i)
      seed[static_cast<std::size_t>(i)] = next_value();
    out.resize(static_cast<std::size_t>(numel));
    for (std::int64_t i = 0; i < numel; ++i)
      out[static_cast<std::size_t>(i)] = seed[static_cast<std::size_t>(i % seed_len)];
  }

  // The statement that defines the leaf just appended to the program; returns its register.
  Reg push_leaf_stmt(const Shape& shape, DType dtype) {
    Stmt& s = program_.stmts.emplace_back();
    s.kind = StmtKind::Leaf;
    s.leaf = static_cast<int>(program_.leaves.size() - 1);
    s.shape = shape;
    s.dtype = dtype;
    return static_cast<Reg>(num_regs() - 1);
  }

  template <class NextValue> void push_leaf(const Shape& shape, NextValue next_value) {
    Leaf& leaf = program_.leaves.emplace_back();
    ++float_leaves_;
    leaf.shape = shape;
    cycled_seed(shape.numel(), leaf.data, next_value);
    push_leaf_stmt(shape, DType::F32);
  }

  // An index leaf of `shape` whose values lie in 0..bound-1, cycled from a seed as f32 leaves
  // are, so repeated indices are common.
  Reg push_index_leaf(const Shape& shape, std::int64_t bound) {
    Leaf& leaf = program_.leaves.emplace_back();
    leaf.shape = shape;
    leaf.dtype = DType::I64;
    cycled_seed(shape.numel(), leaf.indices, [&] {
      return static_cast<std::int64_t>(in_.choice(static_cast<std::uint32_t>(bound)));
    });
    return push_leaf_stmt(shape, DType::I64);
  }

  // A 1-D index leaf of `length` distinct values in 0..bound-1 (index_copy's): each drawn from
  // the values not yet taken (choice j takes the j-th smallest of them).
  Reg push_distinct_index_leaf(std::int64_t length, std::int64_t bound) {
    Leaf& leaf = program_.leaves.emplace_back();
    leaf.shape.push_back(length);
    leaf.dtype = DType::I64;
    std::vector<std::int64_t> pool(static_cast<std::size_t>(bound));
    for (std::size_t v = 0; v < pool.size(); ++v)
      pool[v] = static_cast<std::int64_t>(v);
    for (std::int64_t i = 0; i < length; ++i) {
      const std::uint32_t j = in_.choice(static_cast<std::uint32_t>(pool.size()));
      leaf.indices.push_back(pool[j]);
      pool.erase(pool.begin() + j);
    }
    return push_leaf_stmt(leaf.shape, DType::I64);
  }

  // [0..2 batch dims, n, n] within the knobs (matrix_leaf_feasible checked by the caller).
  Shape matrix_shape() {
    const std::int64_t bmax = matrix_batch_max(k_);
    const std::uint32_t batch_ranks = bmax >= k_.min_dim ? 3 : 1;
    const auto batch = static_cast<int>(in_.choice(batch_ranks));
    Shape s;
    for (int i = 0; i < batch; ++i)
      s.push_back(dim_up_to(bmax));
    const std::int64_t n = dim_up_to(matrix_order_max(k_));
    s.push_back(n);
    s.push_back(n);
    return s;
  }

  // Rows cycle over R seed rows; a seed row is fresh values, zeros, or twice or minus the seed
  // row before it (exactly, unless doubling overflows the dtype), so that the matrix is singular.
  void push_matrix_leaf(const Shape& shape) {
    const std::int64_t n = shape[shape.rank() - 1];
    const std::int64_t rows = shape.numel() / n;
    const auto seed_rows =
        static_cast<std::int64_t>(1 + in_.choice(static_cast<std::uint32_t>(rows)));
    std::vector<double> seed(static_cast<std::size_t>(seed_rows * n));
    for (std::int64_t k = 0; k < seed_rows; ++k) {
      const auto kind =
          static_cast<SeedRow>(in_.choice(seed_row_kinds(static_cast<std::size_t>(k))));
      for (std::int64_t j = 0; j < n; ++j) {
        const auto at = static_cast<std::size_t>(k * n + j);
        switch (kind) {
        case SeedRow::Fresh: seed[at] = seed_value(); break;
        case SeedRow::Zero: seed[at] = 0.0; break;
        case SeedRow::Twice:
          seed[at] = rounded(2.0 * seed[at - static_cast<std::size_t>(n)]);
          break;
        case SeedRow::Negated: seed[at] = -seed[at - static_cast<std::size_t>(n)]; break;
        }
      }
    }
    Leaf& leaf = program_.leaves.emplace_back();
    ++float_leaves_;
    leaf.shape = shape;
    leaf.data.resize(static_cast<std::size_t>(shape.numel()));
    for (std::int64_t t = 0; t < rows; ++t)
      for (std::int64_t j = 0; j < n; ++j)
        leaf.data[static_cast<std::size_t>(t * n + j)] =
            seed[static_cast<std::size_t>((t % seed_rows) * n + j)];
    push_leaf_stmt(shape, DType::F32);
  }

  // det, slogdet, inv: operand a when it is a small square matrix (unless the step builds a
  // matrix leaf instead), a fresh matrix leaf when a leaf fits, else another square register.
  void square_step(Op op, Reg a) {
    const bool can_build = float_leaves_ < k_.max_leaves && matrix_leaf_feasible(k_);
    if (small_square(shape_of(a)) && (!can_build || in_.choice(2) == 0)) {
      push_op(op, {a}, {});
      return;
    }
    if (can_build) {
      push_matrix_leaf(matrix_shape());
      push_op(op, {static_cast<Reg>(num_regs() - 1)}, {});
      return;
    }
    square_registers(regs(), scratch_);
    if (scratch_.empty()) return fallback(a);
    push_op(op, {pick(scratch_)}, {});
  }

  // Only f32 registers are aliased: the root (the last register) must never be a mask.
  Reg alias_source() {
    float_registers(regs(), scratch_);
    return pick(scratch_);
  }

  void push_alias(Reg source) {
    const Shape shape = shape_of(source);
    Stmt& s = program_.stmts.emplace_back();
    s.kind = StmtKind::Alias;
    s.source = source;
    s.shape = shape;
    s.dtype = program_.stmts[static_cast<std::size_t>(source)].dtype;
  }

  // ---- ops ----

  // A leaf of the op's edge values shaped like `like`, when the op's tag byte asks for one and
  // a leaf fits; returns the register to use as the op's first operand.
  Reg maybe_edge_leaf(Op op, Reg like) {
    const std::span<const float> edges = op_info(op).edges;
    if (k_.edge_tags == 0 || edges.empty()) return like;
    if (in_.byte() < 256 - k_.edge_tags) return like;
    const Shape shape = shape_of(like);
    // Leaves keep within FUZZ_MIN_DIM..FUZZ_MAX_DIM, edge leaves included.
    if (shape.rank() < 1 || !dims_in_range(k_, shape) || float_leaves_ >= k_.max_leaves)
      return like;
    const auto alternatives = static_cast<std::uint32_t>(edges.size() + 1);
    push_leaf(shape, [&] {
      const std::uint32_t which = in_.choice(alternatives);
      return which < edges.size() ? rounded(edges[which]) : seed_value();
    });
    return static_cast<Reg>(num_regs() - 1);
  }

  // Pushes op over `operands` (operand 0 possibly replaced by an edge leaf); returns its register.
  Reg push_op(Op op, std::array<Reg, kMaxArity> operands, const Attrs& attrs) {
    const auto arity = static_cast<std::size_t>(op_arity(op));
    operands[0] = maybe_edge_leaf(op, operands[0]);
    std::array<Shape, kMaxArity> in;
    for (std::size_t i = 0; i < arity; ++i)
      in[i] = shape_of(operands[i]);
    const ShapeResult result = infer_shape(op, attrs, std::span<const Shape>(in.data(), arity));
    // The choice points only offer legal alternatives; a failure here is a generator bug.
    if (!result.ok() || result.shape().numel() > k_.max_elements) __builtin_trap();
    Stmt& s = program_.stmts.emplace_back();
    s.kind = StmtKind::Op;
    s.instr.op = op;
    s.instr.operands.assign(operands.begin(),
                            operands.begin() + static_cast<std::ptrdiff_t>(arity));
    s.instr.attrs = attrs;
    s.shape = result.shape();
    s.dtype = result_dtype(op);
    return static_cast<Reg>(num_regs() - 1);
  }

  // The op's attributes from its ops.def table, when it has one.
  Attrs params(Op op) {
    const std::span<const Attrs> table = op_info(op).params;
    if (table.empty()) return {};
    return rounded_attrs(table[in_.choice(static_cast<std::uint32_t>(table.size()))], dtype_);
  }

  // One of `ops` that the program's dtype is generated with, or none when no op is (the step
  // then becomes a unary op, as steps that cannot apply do).
  template <std::size_t N> std::optional<Op> draw_op(const std::array<Op, N>& ops) {
    drawable_.clear();
    for (Op op : ops)
      if (drawn(k_, op, dtype_)) drawable_.push_back(op);
    if (drawable_.empty()) return std::nullopt;
    return drawable_[in_.choice(static_cast<std::uint32_t>(drawable_.size()))];
  }

  template <std::size_t N> void elementwise(const std::array<Op, N>& ops, Reg a) {
    const std::optional<Op> op = draw_op(ops);
    if (!op) return fallback(a);
    push_op(*op, {a}, params(*op));
  }

  // What a step does when its family cannot apply to `a`. Without an op restriction, a unary op
  // (every dtype has some). With one, the first of unary, activation, binary and reduce-all
  // ops that has a permitted op (each applies to any register), else nothing: the step adds no
  // statement, so no op set can make decoding loop or fail.
  void fallback(Reg a) {
    if (!k_.restricted) return elementwise(kUnaryOps, a);
    if (const std::optional<Op> op = draw_op(kUnaryOps))
      return (void)push_op(*op, {a}, params(*op));
    if (const std::optional<Op> op = draw_op(kActivationOps))
      return (void)push_op(*op, {a}, params(*op));
    if (const std::optional<Op> op = draw_op(kBinaryOps)) {
      binary_partners(k_, regs(), a, scratch_);
      const Reg b = pick(scratch_);
      return (void)push_op(*op, {a, b}, params(*op));
    }
    if (const std::optional<Op> op = draw_op(kAllReduceOps))
      return (void)push_op(*op, {a}, params(*op));
  }

  Reg pick(const std::vector<Reg>& candidates) {
    return candidates[in_.choice(static_cast<std::uint32_t>(candidates.size()))];
  }

  void op_step() {
    if (wheel_.empty()) return; // an op set with nothing this dtype can draw
    const OpFamily family = wheel_[in_.choice(static_cast<std::uint32_t>(wheel_.size()))];
    float_registers(regs(), scratch_);
    const Reg a = pick(scratch_);
    const Shape sa = shape_of(a);
    const auto choose_dim = [&] {
      return static_cast<int>(in_.choice(static_cast<std::uint32_t>(sa.rank())));
    };
    Attrs attrs;
    switch (family) {
    case OpFamily::Unary: return elementwise(kUnaryOps, a);
    case OpFamily::Activation: return elementwise(kActivationOps, a);
    case OpFamily::Binary: {
      const std::optional<Op> drawn = draw_op(kBinaryOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      binary_partners(k_, regs(), a, scratch_);
      const Reg b = pick(scratch_);
      push_op(op, {a, b}, params(op));
      return;
    }
    case OpFamily::Compare: // never on the wheel: comparisons come with their where
    case OpFamily::Select: {
      const Reg mask = comparison(a);
      const Shape sm = shape_of(mask);
      where_partners(k_, regs(), sm, nullptr, scratch_);
      const Reg x = pick(scratch_);
      const Shape sx = shape_of(x);
      where_partners(k_, regs(), sm, &sx, scratch_);
      push_op(Op::Where, {mask, x, pick(scratch_)}, {});
      return;
    }
    case OpFamily::Masked: {
      const std::optional<Op> drawn = draw_op(kMaskedOps);
      if (!drawn) return fallback(a);
      if (*drawn == Op::MaskedScatter) return masked_scatter_step(a);
      const Reg mask = comparison(a);
      where_partners(k_, regs(), shape_of(mask), nullptr, scratch_);
      const Reg x = pick(scratch_);
      push_op(Op::MaskedFill, {x, mask}, params(Op::MaskedFill));
      return;
    }
    case OpFamily::Index: return index_step(a);
    case OpFamily::Matmul:
      matmul_partners(k_, regs(), a, scratch_);
      if (scratch_.empty() || !drawn(k_, Op::Matmul, dtype_)) return fallback(a);
      push_op(Op::Matmul, {a, pick(scratch_)}, attrs);
      return;
    case OpFamily::Transpose: {
      if (sa.rank() < 2) return fallback(a);
      attrs.dim = choose_dim();
      const int other = static_cast<int>(in_.choice(static_cast<std::uint32_t>(sa.rank() - 1)));
      attrs.dim1 = other < attrs.dim ? other : other + 1;
      push_op(Op::Transpose, {a}, attrs);
      return;
    }
    case OpFamily::ReduceDim: {
      if (sa.rank() < 1) return fallback(a);
      const std::optional<Op> drawn = draw_op(kDimReduceOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      const int dim = choose_dim();
      const bool keepdim = in_.choice(2) == 1;
      attrs = params(op);
      attrs.dim = dim;
      attrs.keepdim = keepdim;
      push_op(op, {a}, attrs);
      return;
    }
    case OpFamily::ReduceAll: {
      const std::optional<Op> drawn = draw_op(kAllReduceOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      push_op(op, {a}, params(op));
      return;
    }
    case OpFamily::AlongDim: {
      if (sa.rank() < 1) return fallback(a);
      const std::optional<Op> drawn = draw_op(kAlongDimOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      const int dim = choose_dim();
      attrs = params(op);
      attrs.dim = dim;
      push_op(op, {a}, attrs);
      return;
    }
    case OpFamily::View: {
      const std::optional<Op> drawn = draw_op(kViewOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      const int rank = sa.rank();
      const auto pick_int = [&](int n) {
        return static_cast<int>(in_.choice(static_cast<std::uint32_t>(n)));
      };
      switch (op) {
      case Op::Flip:
      case Op::Roll:
      case Op::Narrow:
        if (rank < 1) return fallback(a);
        attrs.dim = choose_dim();
        if (op == Op::Roll) {
          const int n = static_cast<int>(sa[attrs.dim]);
          attrs.times = pick_int(2 * n + 1) - n;
        }
        if (op == Op::Narrow) {
          const int n = static_cast<int>(sa[attrs.dim]);
          attrs.dim1 = pick_int(n);
          attrs.times = 1 + pick_int(n - attrs.dim1);
        }
        break;
      case Op::Unsqueeze:
        if (rank >= kMaxRank) return fallback(a);
        attrs.dim = pick_int(rank + 1);
        break;
      case Op::Squeeze: {
        std::vector<int> ones;
        for (int d = 0; d < rank; ++d)
          if (sa[d] == 1) ones.push_back(d);
        if (ones.empty()) return fallback(a);
        attrs.dim = ones[static_cast<std::size_t>(pick_int(static_cast<int>(ones.size())))];
        break;
      }
      case Op::Tril:
      case Op::Triu:
        if (rank < 2) return fallback(a);
        attrs.times = pick_int(2 * kMaxDiagonalOffset + 1) - kMaxDiagonalOffset;
        break;
      case Op::Movedim:
        if (rank < 2) return fallback(a);
        attrs.dim = choose_dim();
        attrs.dim1 = choose_dim();
        break;
      case Op::Select:
        if (rank < 1) return fallback(a);
        attrs.dim = choose_dim();
        attrs.dim1 = pick_int(static_cast<int>(sa[attrs.dim]));
        break;
      case Op::Expand: {
        std::vector<int> ones;
        for (int d = 0; d < rank; ++d)
          if (sa[d] == 1) ones.push_back(d);
        if (ones.empty()) return fallback(a);
        attrs.dim = ones[static_cast<std::size_t>(pick_int(static_cast<int>(ones.size())))];
        attrs.times = 1 + pick_int(max_expand(k_, sa));
        break;
      }
      case Op::Diagonal: {
        if (rank < 2) return fallback(a);
        attrs.dim = choose_dim();
        const int other = pick_int(rank - 1);
        attrs.dim1 = other < attrs.dim ? other : other + 1;
        // Offsets from -(rows - 1) to cols - 1 keep at least one element.
        const int rows = static_cast<int>(sa[attrs.dim]), cols = static_cast<int>(sa[attrs.dim1]);
        attrs.times = pick_int(rows + cols - 1) - (rows - 1);
        break;
      }
      case Op::Reshape:
        reshape_choices(sa, attr_choices_);
        if (attr_choices_.empty()) return fallback(a);
        attrs = attr_choices_[in_.choice(static_cast<std::uint32_t>(attr_choices_.size()))];
        break;
      case Op::Permute:
        if (rank < 2) return fallback(a);
        attrs.times = nth_permutation_code(rank, pick_int(permutation_count(rank)));
        break;
      case Op::Slice: {
        if (rank < 1) return fallback(a);
        attrs.dim = choose_dim();
        const int n = static_cast<int>(sa[attrs.dim]);
        attrs.dim1 = pick_int(n);
        attrs.times = attrs.dim1 + 1 + pick_int(n - attrs.dim1);
        attrs.variant = 1 + pick_int(kMaxSliceStep);
        break;
      }
      case Op::Stack: {
        stack_partners(k_, regs(), a, scratch_);
        if (scratch_.empty()) return fallback(a);
        const Reg b = pick(scratch_);
        attrs.dim = pick_int(rank + 1);
        push_op(op, {a, b}, attrs);
        return;
      }
      case Op::Chunk: {
        if (rank < 1) return fallback(a);
        attrs.dim = choose_dim();
        attrs.times = kMinChunks + pick_int(kMaxChunks - kMinChunks + 1);
        // Only the chunks LibTorch makes: fewer than asked when the dim is short.
        attrs.dim1 = pick_int(static_cast<int>(chunk_count(sa[attrs.dim], attrs.times)));
        break;
      }
      case Op::Relayout:
        // layout_rate 0 means no layouts at all: no leaf's, no relayout's.
        if (k_.layout_tags == 0) return fallback(a);
        attrs = layout_attrs(draw_layout_kind(sa, true));
        break;
      case Op::DiagEmbed:
        diag_embed_offsets(k_, sa, ints_);
        if (ints_.empty()) return fallback(a);
        attrs.times = ints_[in_.choice(static_cast<std::uint32_t>(ints_.size()))];
        break;
      default: return fallback(a); // not a view op: kViewOps holds only the cases above
      }
      push_op(op, {a}, attrs);
      return;
    }
    case OpFamily::Linalg: {
      const std::optional<Op> drawn = draw_op(kLinalgOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      if (square_op(op)) return square_step(op, a);
      if (op == Op::Trace) {
        if (sa.rank() != 2) return fallback(a);
        push_op(op, {a}, attrs);
        return;
      }
      if (op == Op::Addmm) {
        addmm_first(k_, regs(), a, scratch_);
        if (scratch_.empty()) return fallback(a);
        const Reg m1 = pick(scratch_);
        const std::array<Reg, 2> fixed = {a, m1};
        shape_partners(k_, regs(), op, fixed, scratch_);
        const Reg m2 = pick(scratch_);
        push_op(op, {a, m1, m2}, params(op));
        return;
      }
      const std::array<Reg, 1> fixed = {a};
      shape_partners(k_, regs(), op, fixed, scratch_);
      if (scratch_.empty()) return fallback(a);
      push_op(op, {a, pick(scratch_)}, attrs);
      return;
    }
    case OpFamily::Similarity: {
      const std::optional<Op> drawn = draw_op(kSimilarityOps);
      if (!drawn) return fallback(a);
      const Op op = *drawn;
      binary_partners(k_, regs(), a, scratch_);
      const Reg b = pick(scratch_);
      const auto both = broadcast(sa, shape_of(b));
      if (!both || both->rank() < 1) return fallback(a);
      attrs.dim = static_cast<int>(in_.choice(static_cast<std::uint32_t>(both->rank())));
      push_op(op, {a, b}, attrs);
      return;
    }
    case OpFamily::Concat: {
      if (sa.rank() < 1) return fallback(a);
      attrs.dim = choose_dim();
      concat_partners(k_, regs(), a, attrs.dim, scratch_);
      if (scratch_.empty()) return fallback(a);
      push_op(Op::Concat, {a, pick(scratch_)}, attrs);
      return;
    }
    case OpFamily::Repeat: {
      if (sa.rank() < 1) return fallback(a);
      attrs.dim = choose_dim();
      attrs.times = 1 + static_cast<int>(in_.choice(
                            static_cast<std::uint32_t>(max_repeat_times(k_, sa, attrs.dim))));
      push_op(Op::Repeat, {a}, attrs);
      return;
    }
    }
  }

  // The comparison of a and a broadcast partner that opens a Select or Masked step: its mask.
  // With into_a, a partner that broadcasts to a, so the mask has a's shape.
  Reg comparison(Reg a, bool into_a = false) {
    // Restricted, the wheel offers Select and Masked only when some comparison is permitted.
    const Op cmp =
        k_.restricted ? *draw_op(kCompareOps) : kCompareOps[in_.choice(kCompareOps.size())];
    if (into_a)
      broadcast_into_partners(k_, regs(), a, scratch_);
    else
      binary_partners(k_, regs(), a, scratch_);
    return push_op(cmp, {a, pick(scratch_)}, {});
  }

  // masked_scatter into a: the mask a comparison of a (so it broadcasts to a), the source any
  // register with at least a's element count (a itself among them), so every mask fits.
  void masked_scatter_step(Reg a) {
    const Reg mask = comparison(a, true);
    masked_scatter_sources(regs(), shape_of(a).numel(), scratch_);
    push_op(Op::MaskedScatter, {a, mask, pick(scratch_)}, {});
  }

  // An indexing op on `a` (rank >= 1): its dim, for scatter its src, the index leaf's shape
  // and values, then the op.
  void index_step(Reg a) {
    const Shape sa = shape_of(a);
    if (sa.rank() < 1) return fallback(a);
    const std::optional<Op> drawn = draw_op(kIndexOps);
    if (!drawn) return fallback(a);
    const Op op = *drawn;
    Attrs attrs = params(op);
    // index_put's one index is along dim 0 (torch.index_put_ with a 1-tuple of indices).
    if (op != Op::IndexPut)
      attrs.dim = static_cast<int>(in_.choice(static_cast<std::uint32_t>(sa.rank())));
    const auto upto = [&](std::int64_t n) { return 1 + in_.choice(static_cast<std::uint32_t>(n)); };
    Shape index;
    Reg src = -1;
    switch (op) {
    case Op::Gather:
    case Op::TakeAlongDim:
      for (int d = 0; d < sa.rank(); ++d) {
        if (d == attrs.dim)
          index.push_back(upto(max_index_length(k_, sa, d)));
        else if (op == Op::Gather)
          index.push_back(upto(sa[d]));
        else
          index.push_back(in_.choice(2) == 0 ? sa[d] : 1); // 1: broadcast against the input
      }
      break;
    case Op::IndexSelect: index.push_back(upto(max_index_length(k_, sa, attrs.dim))); break;
    case Op::ScatterAdd:
    case Op::ScatterReduce: {
      scatter_sources(regs(), a, scratch_);
      src = pick(scratch_);
      const Shape ssrc = shape_of(src);
      // Half the time the largest index, which is src's shape when src fits self off dim:
      // LibTorch 1.13's scatter backward fails for an index smaller than src (bugs.md,
      // libtorch-scatter-src-grad-index-smaller), which would hide every other fault there.
      const bool largest = in_.choice(2) == 0;
      for (int d = 0; d < sa.rank(); ++d) {
        const std::int64_t limit = scatter_index_limit(sa, ssrc, attrs.dim, d);
        index.push_back(largest ? limit : upto(limit));
      }
      break;
    }
    // source: a register equal to a off dim; its size along dim is the index's length.
    case Op::IndexAdd:
    case Op::IndexCopy:
    case Op::IndexPut:
      index_update_sources(regs(), a, attrs.dim, index_values_distinct(op, attrs), scratch_);
      src = pick(scratch_);
      index.push_back(shape_of(src)[attrs.dim]);
      break;
    case Op::IndexFill: index.push_back(upto(max_index_length(k_, sa, attrs.dim))); break;
    default: return fallback(a); // not an indexing op: kIndexOps holds only the cases above
    }
    const Reg idx = index_values_distinct(op, attrs)
                        ? push_distinct_index_leaf(index[0], sa[attrs.dim])
                        : push_index_leaf(index, sa[attrs.dim]);
    push_op(op, {a, idx, src}, attrs);
  }

  ByteReader in_;
  Knobs k_;
  Program program_;
  int float_leaves_ = 0;               // MAX_LEAVES counts the gradient-tracked leaves only
  FloatDType dtype_ = FloatDType::F32; // the program's, drawn first
  std::vector<Reg> scratch_;           // candidate registers, reused across steps
  std::vector<Op> drawable_;           // draw_op's alternatives, reused across steps
  std::vector<OpFamily> wheel_;        // op_wheel for the program's dtype
  std::vector<Attrs> attr_choices_;    // reshape's alternatives, reused across steps
  std::vector<int> ints_;              // diag_embed's offsets, reused across steps
  std::vector<Shape> lanes_;           // lane_shapes of the knobs
};

} // namespace

Program generate(std::span<const std::uint8_t> bytes, const GeneratorOptions& options) {
  return Decoder(bytes, options).run();
}

} // namespace burnmark
