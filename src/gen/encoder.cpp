// encode(): finds bytes that generate() decodes to a given program, by replaying the decoder's
// choice points over the program's own prefix and writing the alternative that reproduces each
// statement. Anything the decoder cannot produce is reported, naming the statement.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <optional>

#include "burnmark/gen/generator.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "byte_stream.h"
#include "choices.h"

namespace burnmark {
namespace {

using namespace gen_detail;

// Signals an unencodable statement; caught in encode() and turned into EncodeResult's error.
struct Unencodable {
  std::string why;
  // Set when the program has fewer op statements than min_ops but its encoding fewer steps than
  // max_steps: that many edge-leaf merges must be undone (see Encoder::unmerged_edges_).
  int steps_short = 0;
};

template <class Table, class Value>
std::optional<std::uint32_t> index_in(const Table& table, const Value& value) {
  const auto it = std::find(table.begin(), table.end(), value);
  if (it == table.end()) return std::nullopt;
  return static_cast<std::uint32_t>(it - table.begin());
}

std::optional<std::uint32_t> index_in(const std::vector<Reg>& candidates, Reg r) {
  const auto it = std::find(candidates.begin(), candidates.end(), r);
  if (it == candidates.end()) return std::nullopt;
  return static_cast<std::uint32_t>(it - candidates.begin());
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}
bool same_bits(std::int64_t a, std::int64_t b) {
  return a == b;
}

class Encoder {
public:
  Encoder(const Program& program, const GeneratorOptions& options, int unmerged_edges = 0)
      : p_(program), k_(normalize(options)), unmerged_edges_(unmerged_edges) {}

  // Why statement i's op is not drawn under these knobs (drawn() said no).
  std::string why_not_drawn(std::size_t i, Op op) const {
    const std::string where = fmt::format("%{}: {} is not generated in {} programs", i, op_name(op),
                                          float_dtype_name(dtype_));
    if (!k_.permitted[static_cast<std::size_t>(op)]) return where + " (not in the op set)";
    if (!op_generated_at(op, dtype_)) return where + " (LibTorch has no kernel for it there)";
    if (k_.forward_mode && !op_generated_in_forward_mode(op))
      return where + " in forward mode (LibTorch has no forward-mode derivative for it)";
    if (libtorch_lacks_second_order(op))
      return where + " to second order (LibTorch has no double backward for it)";
    return where + " to second order (the reference has no second-order rule for it)";
  }

  std::vector<std::uint8_t> run() {
    if (std::string why = validate(p_); !why.empty()) throw Unencodable{"invalid program: " + why};
    if (p_.stmts.front().kind != StmtKind::Leaf)
      throw Unencodable{"the first statement must be a leaf: " + stmt_to_text(p_, 0)};
    const auto last = static_cast<Reg>(p_.stmts.size() - 1);
    if (p_.root != last)
      throw Unencodable{fmt::format(
          "the root is %{}, but the generator always roots the last register %{}", p_.root, last)};
    dtype_ = p_.float_dtype;
    const auto dtypes_end = k_.dtypes.begin() + k_.dtype_count;
    const auto dtype_at = std::find(k_.dtypes.begin(), dtypes_end, dtype_);
    if (dtype_at == dtypes_end)
      throw Unencodable{
          fmt::format("the program is {}, which the generator's dtypes do not include",
                      float_dtype_name(dtype_))};
    if (k_.dtype_count > 1)
      out_.choice(static_cast<std::uint32_t>(dtype_at - k_.dtypes.begin()), k_.dtype_count);
    op_wheel(k_, dtype_, wheel_);
    for (std::size_t i = 0; i < p_.stmts.size(); ++i)
      if (p_.stmts[i].kind == StmtKind::Op && !drawn(k_, p_.stmts[i].instr.op, dtype_))
        throw Unencodable{why_not_drawn(i, p_.stmts[i].instr.op)};
    int leaves = 0;
    int ops = 0;
    std::size_t steps = 0;
    for (std::size_t i = 0; i < p_.stmts.size(); ++i) {
      reg_ = static_cast<Reg>(i);
      const Stmt& s = p_.stmts[i];
      if (i > 0) ++steps;
      switch (s.kind) {
      case StmtKind::Leaf:
        if (s.dtype == DType::I64) {
          // The decoder makes an index leaf inside the op step of the indexing op that takes it.
          if (i + 1 >= p_.stmts.size() || p_.stmts[i + 1].kind != StmtKind::Op ||
              op_info(p_.stmts[i + 1].instr.op).family != OpFamily::Index ||
              p_.stmts[i + 1].instr.operands[1] != static_cast<Reg>(i))
            fail("the generator makes an index leaf only for the indexing op right after it");
          ++i; // index leaves do not count towards max_leaves
          reg_ = static_cast<Reg>(i);
          out_.choice(0, kStepAlternatives);
          index_step(p_.stmts[i].instr);
          ++ops;
          break;
        }
        if (i > 0) {
          if (leaves >= k_.max_leaves)
            fail(fmt::format("a leaf beyond max_leaves={}", k_.max_leaves));
          // A matrix leaf feeding the det, slogdet or inv right after it is made inside that
          // op step.
          if (matrix_leaf_before(i)) {
            ++leaves;
            i = matrix_op_step(i + 1);
            ++ops;
            break;
          }
          // A leaf that only feeds the op right after it may be that op's edge leaf, which the
          // decoder makes inside the op step; encoding it so keeps the step count.
          if (const std::optional<Reg> like = edge_leaf_stand_in(i);
              like && unmerged_edges_-- <= 0) {
            ++leaves;
            i = op_step(i + 1, *like);
            ++ops;
            break;
          }
          out_.choice(kFirstLeafStep, kStepAlternatives);
          out_.choice(static_cast<std::uint32_t>(LeafMode::Fresh), kLeafModeCount);
        }
        leaf(p_.leaves[static_cast<std::size_t>(s.leaf)], i == 0);
        ++leaves;
        break;
      case StmtKind::Alias:
        if (leaves < k_.max_leaves)
          fail(fmt::format("the generator aliases only once max_leaves={} leaves exist, here {} do",
                           k_.max_leaves, leaves));
        out_.choice(kFirstLeafStep, kStepAlternatives);
        float_registers(prefix(), candidates_);
        partner(candidates_, s.source);
        break;
      case StmtKind::Op:
        i = op_step(i, std::nullopt);
        ++ops;
        break;
      }
    }
    if (steps > static_cast<std::size_t>(k_.max_steps))
      throw Unencodable{fmt::format(
          "the program takes {} generator steps after its first leaf but max_steps is {}", steps,
          k_.max_steps)};
    // The decoder keeps stepping past the end of the bytes until min_ops op steps are done.
    if (ops < k_.min_ops && steps < static_cast<std::size_t>(k_.max_steps))
      throw Unencodable{
          fmt::format("the program has {} op statements but min_ops is {}", ops, k_.min_ops),
          static_cast<int>(static_cast<std::size_t>(k_.max_steps) - steps)};
    return out_.take();
  }

private:
  // Encodes the op step of statement i (with its where, for a comparison); with `edge_like`, the
  // statement before i is the op's edge leaf and the op step names edge_like as its operand.
  // Returns the last statement the step made.
  std::size_t op_step(std::size_t i, std::optional<Reg> edge_like) {
    const Instr& instr = p_.stmts[i].instr;
    edge_leaf_ = edge_like ? static_cast<int>(i - 1) : -1;
    if (edge_like) reg_ = static_cast<Reg>(i - 1);
    Instr named = instr;
    if (edge_like) named.operands[0] = *edge_like;
    out_.choice(0, kStepAlternatives);
    if (op_info(instr.op).family != OpFamily::Compare) {
      op(named);
      return i;
    }
    // One Select step makes the comparison and the where that takes its mask; one Masked step
    // the comparison and the masked_fill.
    const Instr* next = i + 1 < p_.stmts.size() && p_.stmts[i + 1].kind == StmtKind::Op
                            ? &p_.stmts[i + 1].instr
                            : nullptr;
    const auto self = static_cast<Reg>(i);
    if (next && next->op == Op::Where && next->operands[0] == self)
      select(named, *next, static_cast<Reg>(i + 1));
    else if (next && (next->op == Op::MaskedFill || next->op == Op::MaskedScatter) &&
             next->operands[1] == self)
      masked(named, *next, static_cast<Reg>(i + 1));
    else
      fail("the generator makes a comparison only as the mask of the where or masked_fill right "
           "after it");
    return i + 1;
  }

  // Statement i is a leaf the decoder can build as the matrix operand of the square op after it.
  bool matrix_leaf_before(std::size_t i) const {
    if (i + 1 >= p_.stmts.size()) return false;
    const Stmt& next = p_.stmts[i + 1];
    return next.kind == StmtKind::Op && square_op(next.instr.op) &&
           next.instr.operands[0] == static_cast<Reg>(i) &&
           matrix_leaf_shape(k_, p_.stmts[i].shape) && contiguous_leaf(i);
  }

  // Only leaf steps lay a leaf out; edge and matrix leaves are contiguous.
  bool contiguous_leaf(std::size_t i) const {
    return p_.leaves[static_cast<std::size_t>(p_.stmts[i].leaf)].layout.contiguous();
  }

  int leaves_in_prefix() const {
    int n = 0;
    for (const Stmt& s : prefix())
      n += s.kind == StmtKind::Leaf && s.dtype == DType::F32 ? 1 : 0; // index leaves do not count
    return n;
  }

  // The op step of the square op at statement i whose operand is the matrix leaf at i - 1. The
  // step's first operand is a stand-in (register 0, a leaf); the decoder builds the leaf instead.
  std::size_t matrix_op_step(std::size_t i) {
    const Op op = p_.stmts[i].instr.op;
    reg_ = static_cast<Reg>(i - 1);
    out_.choice(0, kStepAlternatives);
    head(OpFamily::Linalg, 0);
    choose_op(kLinalgOps, op);
    if (small_square(p_.stmts[0].shape)) out_.choice(1, 2);
    matrix_leaf(p_.leaves[static_cast<std::size_t>(p_.stmts[i - 1].leaf)]);
    reg_ = static_cast<Reg>(i);
    return i;
  }

  void matrix_leaf(const Leaf& leaf) {
    const Shape& s = leaf.shape;
    const std::int64_t bmax = matrix_batch_max(k_);
    out_.choice(static_cast<std::uint32_t>(s.rank() - 2), bmax >= k_.min_dim ? 3 : 1);
    for (int i = 0; i + 2 < s.rank(); ++i)
      dim(s[i], bmax);
    const std::int64_t n = s[s.rank() - 1];
    dim(n, matrix_order_max(k_));
    const std::int64_t rows = s.numel() / n;
    const auto& d = leaf.data;
    const auto row_equals = [&](std::int64_t a, std::int64_t b) {
      for (std::int64_t j = 0; j < n; ++j)
        if (!same_bits(d[static_cast<std::size_t>(a * n + j)],
                       d[static_cast<std::size_t>(b * n + j)]))
          return false;
      return true;
    };
    std::int64_t period = 1;
    const auto cycles = [&](std::int64_t r) {
      for (std::int64_t t = r; t < rows; ++t)
        if (!row_equals(t, t % r)) return false;
      return true;
    };
    while (!cycles(period))
      ++period;
    out_.choice(static_cast<std::uint32_t>(period - 1), static_cast<std::uint32_t>(rows));
    const auto at = [&](std::int64_t k, std::int64_t j) {
      return d[static_cast<std::size_t>(k * n + j)];
    };
    for (std::int64_t k = 0; k < period; ++k) {
      const auto all = [&](auto same) {
        for (std::int64_t j = 0; j < n; ++j)
          if (!same(j)) return false;
        return true;
      };
      const std::uint32_t kinds = seed_row_kinds(static_cast<std::size_t>(k));
      if (all([&](std::int64_t j) { return same_bits(at(k, j), 0.0); })) {
        out_.choice(static_cast<std::uint32_t>(SeedRow::Zero), kinds);
      } else if (k > 0 && all([&](std::int64_t j) {
                   return same_bits(at(k, j), rounded(2.0 * at(k - 1, j)));
                 })) {
        out_.choice(static_cast<std::uint32_t>(SeedRow::Twice), kinds);
      } else if (k > 0 && all([&](std::int64_t j) { return same_bits(at(k, j), -at(k - 1, j)); })) {
        out_.choice(static_cast<std::uint32_t>(SeedRow::Negated), kinds);
      } else {
        out_.choice(static_cast<std::uint32_t>(SeedRow::Fresh), kinds);
        for (std::int64_t j = 0; j < n; ++j)
          value(at(k, j), static_cast<std::size_t>(k * n + j));
      }
    }
  }

  // For a leaf at statement i that may be the edge leaf of the op at i + 1: an earlier f32
  // register of the same shape for the op step to name instead (the decoder replaces it by the
  // edge leaf), when the op has edge values and the leaf is not also its other operand.
  std::optional<Reg> edge_leaf_stand_in(std::size_t i) const {
    if (k_.edge_tags == 0 || i + 1 >= p_.stmts.size()) return std::nullopt;
    const Stmt& next = p_.stmts[i + 1];
    if (next.kind != StmtKind::Op || op_info(next.instr.op).edges.empty()) return std::nullopt;
    const auto leaf = static_cast<Reg>(i);
    // The decoder makes edge leaves of rank >= 1 only.
    if (next.instr.operands[0] != leaf || p_.stmts[i].shape.rank() < 1 ||
        !dims_in_range(k_, p_.stmts[i].shape) || !contiguous_leaf(i))
      return std::nullopt;
    for (std::size_t k = 1; k < next.instr.operands.size(); ++k)
      if (next.instr.operands[k] == leaf) return std::nullopt;
    // A masked_scatter's comparison stands in for the scatter's self, which it was made from.
    if (i + 2 < p_.stmts.size() && p_.stmts[i + 2].kind == StmtKind::Op &&
        p_.stmts[i + 2].instr.op == Op::MaskedScatter &&
        p_.stmts[i + 2].instr.operands[1] == static_cast<Reg>(i + 1)) {
      const Reg self = p_.stmts[i + 2].instr.operands[0];
      if (self < leaf && p_.stmts[static_cast<std::size_t>(self)].shape == p_.stmts[i].shape)
        return self;
      return std::nullopt;
    }
    for (std::size_t r = 0; r < i; ++r)
      if (p_.stmts[r].dtype == DType::F32 && p_.stmts[r].shape == p_.stmts[i].shape)
        return static_cast<Reg>(r);
    return std::nullopt;
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw Unencodable{fmt::format("{}: {}", stmt_to_text(p_, reg_), why)};
  }

  std::span<const Stmt> prefix() const { return {p_.stmts.data(), static_cast<std::size_t>(reg_)}; }

  void dim(std::int64_t d, std::int64_t hi) {
    if (d < k_.min_dim || d > hi) fail(fmt::format("dim {} is outside {}..{}", d, k_.min_dim, hi));
    out_.choice(static_cast<std::uint32_t>(d - k_.min_dim),
                static_cast<std::uint32_t>(hi - k_.min_dim + 1));
  }

  // Every leaf is written in fresh mode: it reaches every in-range shape within the cap (rank 0
  // for every leaf but the first).
  void leaf(const Leaf& leaf, bool first) {
    const Shape& s = leaf.shape;
    const int ranks = max_feasible_rank(k_, 1, 0);
    if (s.rank() > ranks)
      fail(fmt::format("rank {} cannot have every dim >= min_dim={}", s.rank(), k_.min_dim));
    if (first && s.rank() == 0) fail("the generator's first leaf has rank >= 1");
    if (first)
      out_.choice(static_cast<std::uint32_t>(s.rank() - 1), static_cast<std::uint32_t>(ranks));
    else
      out_.choice(static_cast<std::uint32_t>(s.rank()), static_cast<std::uint32_t>(ranks + 1));
    std::int64_t product = 1;
    for (int i = 0; i < s.rank(); ++i) {
      dim(s[i], dim_upper(k_, product, s.rank() - 1 - i));
      product *= s[i];
    }
    layout(leaf.layout, s);
    values(compact_data(leaf.layout, s, leaf.data),
           [&](double v, std::size_t element) { value(v, element); });
  }

  // The layout tag and choices the decoder's draw_layout reads.
  void layout(const LeafLayout& l, const Shape& s) {
    if (k_.layout_tags == 0) {
      if (!l.contiguous())
        fail("the leaf has a layout, but with layout_rate 0 every leaf is contiguous");
      return;
    }
    if (l.contiguous()) return out_.byte(0);
    out_.byte(255);
    layout_kind(l, s, false);
  }

  // The choices the decoder's draw_layout_kind reads (relayout: for an op's operand).
  void layout_kind(const LeafLayout& l, const Shape& s, bool relayout) {
    const int rank = s.rank();
    std::array<LayoutKind, 4> kinds{};
    const int n = layout_kinds(s, relayout, kinds);
    const auto at = std::find(kinds.begin(), kinds.begin() + n, l.kind);
    if (at == kinds.begin() + n) fail("the generator draws no such layout for this shape");
    out_.choice(static_cast<std::uint32_t>(at - kinds.begin()), static_cast<std::uint32_t>(n));
    switch (l.kind) {
    case LayoutKind::Contiguous: break;
    case LayoutKind::Permuted:
      out_.choice(static_cast<std::uint32_t>(permutation_index(permutation_code(l.dims), rank) - 1),
                  static_cast<std::uint32_t>(permutation_count(rank) - 1));
      break;
    case LayoutKind::Slice:
      out_.choice(static_cast<std::uint32_t>(l.dim), static_cast<std::uint32_t>(rank));
      out_.choice(static_cast<std::uint32_t>(l.step - 2),
                  static_cast<std::uint32_t>(kMaxLayoutStep - 1));
      break;
    case LayoutKind::Expanded: {
      const std::uint32_t expandable = expandable_dims(s, relayout);
      out_.choice(expanded_index(l.dims, expandable) - 1, expanded_subsets(expandable));
      break;
    }
    case LayoutKind::Offset:
      out_.choice(static_cast<std::uint32_t>(l.offset - 1),
                  static_cast<std::uint32_t>(kMaxLayoutOffset));
      break;
    }
  }

  // The seed length, then each seed entry through `entry`.
  // f32 data bit for bit, index values by value.
  template <class T, class Entry> void values(const std::vector<T>& data, Entry entry) {
    const std::size_t max_len = std::min<std::size_t>(data.size(), kMaxSeedLen);
    std::size_t period = 1;
    const auto repeats_every = [&](std::size_t len) {
      for (std::size_t i = len; i < data.size(); ++i)
        if (!same_bits(data[i], data[i % len])) return false;
      return true;
    };
    while (period <= max_len && !repeats_every(period))
      ++period;
    if (period > max_len)
      fail(fmt::format(
          "its {} values do not repeat with a period of at most {}, and leaf data is a seed of "
          "1..{} values cycled over the elements",
          data.size(), kMaxSeedLen, kMaxSeedLen));
    out_.choice(static_cast<std::uint32_t>(period - 1), static_cast<std::uint32_t>(max_len));
    for (std::size_t i = 0; i < period; ++i)
      entry(data[i], i);
  }

  void value(double v, std::size_t element) {
    std::optional<std::uint8_t> grid;
    for (int b = 0; b < 256 && !grid; ++b)
      if (same_bits(rounded(grid_value(static_cast<std::uint8_t>(b))), v))
        grid = static_cast<std::uint8_t>(b);
    if (k_.special_tags == 0) {
      if (!grid)
        fail(fmt::format(
            "element {} is {}, but with special_rate 0 a leaf value must be one of the 256 "
            "regular values b/127.5 - 1",
            element, value_to_text(v, dtype_)));
      out_.byte(*grid);
      return;
    }
    if (grid && k_.special_tags < 256) {
      out_.byte(0);
      out_.byte(*grid);
      return;
    }
    out_.byte(255);
    const std::uint32_t alternatives = special_alternatives(dtype_);
    for (std::uint32_t i = 0; i < special_table_size(dtype_); ++i)
      if (same_bits(special_value(i, dtype_), v)) return out_.choice(i, alternatives);
    if (std::isnan(v) && !same_bits(v, std::copysign(std::numeric_limits<double>::quiet_NaN(), v)))
      fail(fmt::format(
          "element {} is a NaN with payload bits {:#018x}; the generator only makes quiet NaNs",
          element, std::bit_cast<std::uint64_t>(v)));
    out_.choice(raw_bits_escape(dtype_), alternatives);
    if (dtype_ == FloatDType::F64)
      out_.u64_le(std::bit_cast<std::uint64_t>(v));
    else
      out_.u32_le(std::bit_cast<std::uint32_t>(static_cast<float>(v)));
  }

  void partner(const std::vector<Reg>& candidates, Reg b) {
    const auto index = index_in(candidates, b);
    if (!index) fail(fmt::format("%{} is not among the partners the generator offers", b));
    out_.choice(*index, static_cast<std::uint32_t>(candidates.size()));
  }

  // The index of `op` among the family's ops the program's dtype is generated with.
  template <std::size_t N> void choose_op(const std::array<Op, N>& ops, Op op) {
    std::uint32_t index = 0;
    std::uint32_t drawable = 0;
    for (Op o : ops) {
      if (!drawn(k_, o, dtype_)) continue;
      if (o == op) index = drawable;
      ++drawable;
    }
    out_.choice(index, drawable);
  }

  // The attribute choice of ops with a table in ops.def.
  void params(const Instr& instr) {
    const std::span<const Attrs> table = op_info(instr.op).params;
    if (table.empty()) return;
    const Attrs key = table_key(instr.attrs);
    const auto it = std::find_if(table.begin(), table.end(), [&](const Attrs& entry) {
      return rounded_attrs(entry, dtype_) == key;
    });
    if (it == table.end())
      fail(fmt::format("these attributes are not in {}'s table in op_tables.h", op_name(instr.op)));
    out_.choice(static_cast<std::uint32_t>(it - table.begin()),
                static_cast<std::uint32_t>(table.size()));
  }

  // The edge-leaf tag the decoder reads as it pushes an op with edge values, and the edge leaf's
  // values when this op step carries one.
  void edge_tag(Op op) {
    if (k_.edge_tags == 0 || op_info(op).edges.empty()) return;
    if (edge_leaf_ < 0) return out_.byte(0);
    out_.byte(255);
    const std::span<const float> edges = op_info(op).edges;
    const Reg leaf_reg = edge_leaf_;
    edge_leaf_ = -1;
    const Leaf& leaf =
        p_.leaves[static_cast<std::size_t>(p_.stmts[static_cast<std::size_t>(leaf_reg)].leaf)];
    values(leaf.data, [&](double v, std::size_t element) {
      const auto alternatives = static_cast<std::uint32_t>(edges.size() + 1);
      for (std::size_t k = 0; k < edges.size(); ++k)
        if (same_bits(rounded(edges[k]), v))
          return out_.choice(static_cast<std::uint32_t>(k), alternatives);
      out_.choice(static_cast<std::uint32_t>(edges.size()), alternatives);
      value(v, element);
    });
    // The op's remaining choices see the edge leaf in the prefix, as the decoder's do.
    reg_ = leaf_reg + 1;
  }

  // The op step's family and first operand (an index among the f32 registers).
  void head(OpFamily family, Reg a) {
    // Every op passed drawn(), so its family is on the wheel (the first of its entries).
    const auto at = std::find(wheel_.begin(), wheel_.end(), family);
    out_.choice(static_cast<std::uint32_t>(at - wheel_.begin()),
                static_cast<std::uint32_t>(wheel_.size()));
    float_registers(prefix(), candidates_);
    partner(candidates_, a);
  }

  // The comparison that opens a Select or Masked step (a Masked step's op is chosen first;
  // masked_scatter's comparison partner broadcasts to a).
  void comparison(OpFamily family, const Instr& cmp, std::optional<Op> masked_op = {}) {
    const Reg a = cmp.operands[0];
    head(family, a);
    if (masked_op) choose_op(kMaskedOps, *masked_op);
    choose_op(kCompareOps, cmp.op);
    if (masked_op == Op::MaskedScatter)
      broadcast_into_partners(k_, prefix(), a, candidates_);
    else
      binary_partners(k_, prefix(), a, candidates_);
    partner(candidates_, cmp.operands[1]);
    edge_tag(cmp.op);
  }

  void select(const Instr& cmp, const Instr& where, Reg where_reg) {
    comparison(OpFamily::Select, cmp);
    // The where's choices are made with the comparison already in the prefix.
    reg_ = where_reg;
    const Shape& mask = p_.stmts[static_cast<std::size_t>(where.operands[0])].shape;
    where_partners(k_, prefix(), mask, nullptr, candidates_);
    partner(candidates_, where.operands[1]);
    const Shape& sx = p_.stmts[static_cast<std::size_t>(where.operands[1])].shape;
    where_partners(k_, prefix(), mask, &sx, candidates_);
    partner(candidates_, where.operands[2]);
  }

  void masked(const Instr& cmp, const Instr& fill, Reg fill_reg) {
    comparison(OpFamily::Masked, cmp, fill.op);
    reg_ = fill_reg;
    if (fill.op == Op::MaskedScatter) {
      // self is the comparison's first operand; the source was picked after the comparison.
      if (fill.operands[0] != cmp.operands[0])
        fail("the generator makes masked_scatter into the first operand of its mask's comparison");
      const Shape& self = p_.stmts[static_cast<std::size_t>(fill.operands[0])].shape;
      masked_scatter_sources(prefix(), self.numel(), candidates_);
      return partner(candidates_, fill.operands[2]);
    }
    const Shape& mask = p_.stmts[static_cast<std::size_t>(fill.operands[1])].shape;
    where_partners(k_, prefix(), mask, nullptr, candidates_);
    partner(candidates_, fill.operands[0]);
    params(fill);
  }

  // The index step: op, reduce table entry, dim, src, the index leaf's shape and values.
  void index_step(const Instr& instr) {
    const Reg a = instr.operands[0];
    const Shape& sa = p_.stmts[static_cast<std::size_t>(a)].shape;
    head(OpFamily::Index, a);
    choose_op(kIndexOps, instr.op);
    params(instr);
    const int dim = instr.attrs.dim;
    if (instr.op != Op::IndexPut) // index_put's dim is 0, not a choice
      out_.choice(static_cast<std::uint32_t>(dim), static_cast<std::uint32_t>(sa.rank()));
    const Reg index_reg = instr.operands[1];
    const Leaf& index =
        p_.leaves[static_cast<std::size_t>(p_.stmts[static_cast<std::size_t>(index_reg)].leaf)];
    const Shape& si = index.shape;
    const auto upto = [&](std::int64_t v, std::int64_t n, int d) {
      if (v < 1 || v > n) fail(fmt::format("index dim {} must be 1..{} here", d, n));
      out_.choice(static_cast<std::uint32_t>(v - 1), static_cast<std::uint32_t>(n));
    };
    switch (instr.op) {
    case Op::Gather:
    case Op::TakeAlongDim:
      for (int d = 0; d < sa.rank(); ++d) {
        if (d == dim) {
          upto(si[d], max_index_length(k_, sa, d), d);
        } else if (instr.op == Op::Gather) {
          upto(si[d], sa[d], d);
        } else {
          if (si[d] != sa[d] && si[d] != 1)
            fail("take_along_dim's indices match the input or are 1 off dim");
          out_.choice(si[d] == sa[d] ? 0 : 1, 2);
        }
      }
      break;
    case Op::IndexSelect: upto(si[0], max_index_length(k_, sa, dim), 0); break;
    case Op::ScatterAdd:
    case Op::ScatterReduce: {
      // The decoder picked src before pushing the index leaf: the same f32 candidates.
      scatter_sources(prefix(), a, candidates_);
      partner(candidates_, instr.operands[2]);
      const Shape& ssrc = p_.stmts[static_cast<std::size_t>(instr.operands[2])].shape;
      bool largest = true;
      for (int d = 0; d < sa.rank(); ++d)
        largest = largest && si[d] == scatter_index_limit(sa, ssrc, dim, d);
      out_.choice(largest ? 0 : 1, 2);
      if (!largest)
        for (int d = 0; d < sa.rank(); ++d)
          upto(si[d], scatter_index_limit(sa, ssrc, dim, d), d);
      break;
    }
    case Op::IndexAdd:
    case Op::IndexCopy:
    case Op::IndexPut: {
      // The decoder picked the source first; its size along dim is the index's length.
      index_update_sources(prefix(), a, dim, index_values_distinct(instr.op, instr.attrs),
                           candidates_);
      partner(candidates_, instr.operands[2]);
      break;
    }
    case Op::IndexFill: upto(si[0], max_index_length(k_, sa, dim), 0); break;
    default: fail("not an indexing op");
    }
    if (index_values_distinct(instr.op, instr.attrs))
      return distinct_values(index.indices, sa[dim]);
    values(index.indices, [&](std::int64_t v, std::size_t) {
      out_.choice(static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(sa[dim]));
    });
  }

  // push_distinct_index_leaf's choices: each value's place among the values not yet taken.
  void distinct_values(const std::vector<std::int64_t>& indices, std::int64_t bound) {
    std::vector<std::int64_t> pool(static_cast<std::size_t>(bound));
    for (std::size_t v = 0; v < pool.size(); ++v)
      pool[v] = static_cast<std::int64_t>(v);
    for (std::int64_t v : indices) {
      const auto at = std::find(pool.begin(), pool.end(), v);
      if (at == pool.end()) fail(fmt::format("index value {} is repeated or out of range", v));
      out_.choice(static_cast<std::uint32_t>(at - pool.begin()),
                  static_cast<std::uint32_t>(pool.size()));
      pool.erase(at);
    }
  }

  void op(const Instr& instr) {
    const Reg a = instr.operands[0];
    const Shape& sa = p_.stmts[static_cast<std::size_t>(a)].shape;
    const auto write_dim = [&](int d) {
      out_.choice(static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(sa.rank()));
    };
    const OpFamily family = op_info(instr.op).family;
    switch (family) {
    case OpFamily::Unary:
      head(family, a);
      choose_op(kUnaryOps, instr.op);
      params(instr);
      return edge_tag(instr.op);
    case OpFamily::Activation:
      head(family, a);
      choose_op(kActivationOps, instr.op);
      params(instr);
      return edge_tag(instr.op);
    case OpFamily::Binary:
      head(family, a);
      choose_op(kBinaryOps, instr.op);
      binary_partners(k_, prefix(), a, candidates_);
      partner(candidates_, instr.operands[1]);
      params(instr);
      return edge_tag(instr.op);
    case OpFamily::Compare: // written by select() together with their where
    case OpFamily::Select:
    case OpFamily::Masked:
      fail("the generator makes a where or masked_fill only right after the comparison that makes "
           "its mask");
    case OpFamily::Index:
      fail("the generator makes an indexing op only right after its index leaf");
    case OpFamily::Matmul:
      head(family, a);
      matmul_partners(k_, prefix(), a, candidates_);
      return partner(candidates_, instr.operands[1]);
    case OpFamily::Transpose: {
      head(family, a);
      write_dim(instr.attrs.dim);
      const int d1 = instr.attrs.dim1;
      out_.choice(static_cast<std::uint32_t>(d1 < instr.attrs.dim ? d1 : d1 - 1),
                  static_cast<std::uint32_t>(sa.rank() - 1));
      return;
    }
    case OpFamily::ReduceDim:
      head(family, a);
      choose_op(kDimReduceOps, instr.op);
      write_dim(instr.attrs.dim);
      out_.choice(instr.attrs.keepdim ? 1 : 0, 2);
      params(instr);
      return edge_tag(instr.op);
    case OpFamily::ReduceAll:
      head(family, a);
      choose_op(kAllReduceOps, instr.op);
      params(instr);
      return edge_tag(instr.op);
    case OpFamily::AlongDim:
      head(family, a);
      choose_op(kAlongDimOps, instr.op);
      write_dim(instr.attrs.dim);
      params(instr);
      return edge_tag(instr.op);
    case OpFamily::View: {
      head(family, a);
      choose_op(kViewOps, instr.op);
      const Attrs& at = instr.attrs;
      const auto write = [&](int v, int n) {
        out_.choice(static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(n));
      };
      const int rank = sa.rank();
      if (instr.op == Op::Flip || instr.op == Op::Roll || instr.op == Op::Narrow) {
        write_dim(at.dim);
        const int n = static_cast<int>(sa[at.dim]);
        if (instr.op == Op::Roll) {
          if (at.times < -n || at.times > n)
            fail(fmt::format("roll shifts must be -{0}..{0} here", n));
          write(at.times + n, 2 * n + 1);
        }
        if (instr.op == Op::Narrow) {
          write(at.dim1, n);
          write(at.times - 1, n - at.dim1);
        }
      } else if (instr.op == Op::Unsqueeze) {
        write(at.dim, rank + 1);
      } else if (instr.op == Op::Squeeze) {
        int index = 0, count = 0;
        for (int d = 0; d < rank; ++d)
          if (sa[d] == 1) {
            if (d == at.dim) index = count;
            ++count;
          }
        write(index, count);
      } else if (instr.op == Op::Tril || instr.op == Op::Triu) {
        if (at.times < -kMaxDiagonalOffset || at.times > kMaxDiagonalOffset)
          fail("tril/triu diagonal must be -2..2 to be encodable");
        write(at.times + kMaxDiagonalOffset, 2 * kMaxDiagonalOffset + 1);
      } else if (instr.op == Op::Movedim) {
        // The decoder falls back to another op for a movedim of rank < 2.
        if (rank < 2) fail("the generator moves dims of rank >= 2 only");
        write_dim(at.dim);
        write_dim(at.dim1);
      } else if (instr.op == Op::Select) {
        write_dim(at.dim);
        write(at.dim1, static_cast<int>(sa[at.dim]));
      } else if (instr.op == Op::Expand) {
        int index = 0, count = 0;
        for (int d = 0; d < rank; ++d)
          if (sa[d] == 1) {
            if (d == at.dim) index = count;
            ++count;
          }
        write(index, count);
        if (at.times < 1 || at.times > max_expand(k_, sa))
          fail(fmt::format("expand size must be 1..{} here", max_expand(k_, sa)));
        write(at.times - 1, max_expand(k_, sa));
      } else if (instr.op == Op::Diagonal) {
        write_dim(at.dim);
        write(at.dim1 < at.dim ? at.dim1 : at.dim1 - 1, rank - 1);
        const int rows = static_cast<int>(sa[at.dim]), cols = static_cast<int>(sa[at.dim1]);
        write(at.times + rows - 1, rows + cols - 1);
      } else if (instr.op == Op::Reshape) {
        reshape_choices(sa, attr_choices_);
        const auto index = index_in(attr_choices_, at);
        if (!index) fail("this reshape is not among the merges and splits the generator offers");
        write(static_cast<int>(*index), static_cast<int>(attr_choices_.size()));
      } else if (instr.op == Op::Permute) {
        if (rank < 2) fail("the generator permutes only tensors of rank >= 2");
        write(permutation_index(at.times, rank), permutation_count(rank));
      } else if (instr.op == Op::Slice) {
        write_dim(at.dim);
        const int n = static_cast<int>(sa[at.dim]);
        if (at.variant > kMaxSliceStep)
          fail(fmt::format("slice step must be 1..{} to be encodable", kMaxSliceStep));
        write(at.dim1, n);
        write(at.times - at.dim1 - 1, n - at.dim1);
        write(at.variant - 1, kMaxSliceStep);
      } else if (instr.op == Op::Stack) {
        stack_partners(k_, prefix(), a, candidates_);
        partner(candidates_, instr.operands[1]);
        write(at.dim, rank + 1);
      } else if (instr.op == Op::Chunk) {
        write_dim(at.dim);
        if (at.times < kMinChunks || at.times > kMaxChunks)
          fail(fmt::format("chunks must be {}..{} to be encodable", kMinChunks, kMaxChunks));
        write(at.times - kMinChunks, kMaxChunks - kMinChunks + 1);
        write(at.dim1, static_cast<int>(chunk_count(sa[at.dim], at.times)));
      } else if (instr.op == Op::Relayout) {
        const LeafLayout l = attrs_layout(at);
        if (k_.layout_tags == 0) fail("with layout_rate 0 the generator draws no relayout");
        if (l.contiguous()) fail("the generator draws relayout to non-contiguous layouts only");
        layout_kind(l, sa, true);
      } else if (instr.op == Op::DiagEmbed) {
        diag_embed_offsets(k_, sa, ints_);
        const auto it = std::find(ints_.begin(), ints_.end(), at.times);
        if (it == ints_.end())
          fail(fmt::format("diag_embed offset must be -{0}..{0} to be encodable",
                           kMaxDiagEmbedOffset));
        write(static_cast<int>(it - ints_.begin()), static_cast<int>(ints_.size()));
      }
      return edge_tag(instr.op);
    }
    case OpFamily::Linalg: {
      head(family, a);
      choose_op(kLinalgOps, instr.op);
      if (square_op(instr.op)) {
        // The operand itself, not a built matrix leaf (matrix_op_step writes those).
        if (leaves_in_prefix() < k_.max_leaves && matrix_leaf_feasible(k_)) out_.choice(0, 2);
        return;
      }
      if (instr.op == Op::Trace) return edge_tag(instr.op);
      if (instr.op == Op::Addmm) {
        addmm_first(k_, prefix(), a, candidates_);
        partner(candidates_, instr.operands[1]);
        const std::array<Reg, 2> fixed = {a, instr.operands[1]};
        shape_partners(k_, prefix(), instr.op, fixed, candidates_);
        partner(candidates_, instr.operands[2]);
        params(instr);
        return edge_tag(instr.op);
      }
      const std::array<Reg, 1> fixed = {a};
      shape_partners(k_, prefix(), instr.op, fixed, candidates_);
      partner(candidates_, instr.operands[1]);
      return edge_tag(instr.op);
    }
    case OpFamily::Similarity: {
      head(family, a);
      choose_op(kSimilarityOps, instr.op);
      binary_partners(k_, prefix(), a, candidates_);
      partner(candidates_, instr.operands[1]);
      const Shape& sb = p_.stmts[static_cast<std::size_t>(instr.operands[1])].shape;
      const auto both = broadcast(sa, sb);
      out_.choice(static_cast<std::uint32_t>(instr.attrs.dim),
                  static_cast<std::uint32_t>(both->rank()));
      return edge_tag(instr.op);
    }
    case OpFamily::Concat:
      head(family, a);
      write_dim(instr.attrs.dim);
      concat_partners(k_, prefix(), a, instr.attrs.dim, candidates_);
      return partner(candidates_, instr.operands[1]);
    case OpFamily::Repeat: {
      head(family, a);
      write_dim(instr.attrs.dim);
      const int max_times = max_repeat_times(k_, sa, instr.attrs.dim);
      if (instr.attrs.times < 1 || instr.attrs.times > max_times)
        fail(fmt::format("times must be 1..{} here", max_times));
      return out_.choice(static_cast<std::uint32_t>(instr.attrs.times - 1),
                         static_cast<std::uint32_t>(max_times));
    }
    }
  }

  double rounded(double v) const { return round_to(v, dtype_); }

  const Program& p_;
  Knobs k_;
  FloatDType dtype_ = FloatDType::F32;
  Reg reg_ = 0;
  // Edge-leaf merges still to skip (encode's second pass): each such leaf is a leaf step.
  int unmerged_edges_ = 0;
  int edge_leaf_ = -1; // the register of the edge leaf the current op step carries, if any
  ByteWriter out_;
  std::vector<Reg> candidates_;
  std::vector<OpFamily> wheel_; // op_wheel for the program's dtype
  std::vector<Attrs> attr_choices_;
  std::vector<int> ints_;
};

} // namespace

EncodeResult encode(const Program& program, const GeneratorOptions& options) {
  try {
    return EncodeResult{Encoder(program, options).run()};
  } catch (const Unencodable& e) {
    if (e.steps_short == 0) return EncodeResult{e.why};
    // The decoder ran all max_steps steps: a leaf the first pass merged into the edge step of
    // the op after it was (as far as the bytes can tell) a leaf step of its own, so encode that
    // many of them as leaf steps instead.
    try {
      return EncodeResult{Encoder(program, options, e.steps_short).run()};
    } catch (const Unencodable& again) {
      return EncodeResult{again.why};
    }
  }
}

} // namespace burnmark
