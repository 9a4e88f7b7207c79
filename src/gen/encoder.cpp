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
#include "burnmark/ir/text.h"
#include "byte_stream.h"
#include "choices.h"

namespace burnmark {
namespace {

using namespace gen_detail;

// Signals an unencodable statement; caught in encode() and turned into EncodeResult's error.
struct Unencodable {
  std::string why;
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

bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

std::uint32_t wheel_index(Category c) {
  return static_cast<std::uint32_t>(std::find(kCategoryWheel.begin(), kCategoryWheel.end(), c) -
                                    kCategoryWheel.begin());
}

class Encoder {
public:
  Encoder(const Program& program, const GeneratorOptions& options)
      : p_(program), k_(normalize(options)) {}

  std::vector<std::uint8_t> run() {
    if (std::string why = validate(p_); !why.empty()) throw Unencodable{"invalid program: " + why};
    if (p_.stmts.front().kind != StmtKind::Leaf)
      throw Unencodable{"the first statement must be a leaf: " + stmt_to_text(p_, 0)};
    const std::size_t steps = p_.stmts.size() - 1;
    if (steps > static_cast<std::size_t>(k_.max_steps))
      throw Unencodable{
          fmt::format("the program has {} steps after its first leaf but max_steps is {}", steps,
                      k_.max_steps)};
    if (p_.root != static_cast<Reg>(steps))
      throw Unencodable{fmt::format(
          "the root is %{}, but the generator always roots the last register %{}", p_.root, steps)};
    int leaves = 0;
    int ops = 0;
    for (std::size_t i = 0; i < p_.stmts.size(); ++i) {
      reg_ = static_cast<Reg>(i);
      const Stmt& s = p_.stmts[i];
      switch (s.kind) {
      case StmtKind::Leaf:
        if (i > 0) {
          if (leaves >= k_.max_leaves)
            fail(fmt::format("a leaf beyond max_leaves={}", k_.max_leaves));
          out_.choice(kFirstLeafStep, kStepAlternatives);
          out_.choice(static_cast<std::uint32_t>(LeafMode::Fresh), kLeafModeCount);
        }
        leaf(p_.leaves[static_cast<std::size_t>(s.leaf)]);
        ++leaves;
        break;
      case StmtKind::Alias:
        if (leaves < k_.max_leaves)
          fail(fmt::format("the generator aliases only once max_leaves={} leaves exist, here {} do",
                           k_.max_leaves, leaves));
        out_.choice(kFirstLeafStep, kStepAlternatives);
        out_.choice(static_cast<std::uint32_t>(s.source), static_cast<std::uint32_t>(i));
        break;
      case StmtKind::Op:
        out_.choice(0, kStepAlternatives);
        op(s.instr);
        ++ops;
        break;
      }
    }
    // The decoder keeps stepping past the end of the bytes until min_ops op steps are done.
    if (ops < k_.min_ops && steps < static_cast<std::size_t>(k_.max_steps))
      throw Unencodable{
          fmt::format("the program has {} op statements but min_ops is {}", ops, k_.min_ops)};
    return out_.take();
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Unencodable{fmt::format("{}: {}", stmt_to_text(p_, reg_), why)};
  }

  std::span<const Stmt> prefix() const { return {p_.stmts.data(), static_cast<std::size_t>(reg_)}; }

  void dim(std::int64_t d, std::int64_t hi) {
    if (d < k_.min_dim || d > hi) fail(fmt::format("dim {} is outside {}..{}", d, k_.min_dim, hi));
    out_.choice(static_cast<std::uint32_t>(d - k_.min_dim),
                static_cast<std::uint32_t>(hi - k_.min_dim + 1));
  }

  // Every leaf is written in fresh mode: it reaches every in-range shape within the cap.
  void leaf(const Leaf& leaf) {
    const Shape& s = leaf.shape;
    const int ranks = max_feasible_rank(k_, 1, 0);
    if (s.rank() > ranks)
      fail(fmt::format("rank {} cannot have every dim >= min_dim={}", s.rank(), k_.min_dim));
    out_.choice(static_cast<std::uint32_t>(s.rank() - 1), static_cast<std::uint32_t>(ranks));
    std::int64_t product = 1;
    for (int i = 0; i < s.rank(); ++i) {
      dim(s[i], dim_upper(k_, product, s.rank() - 1 - i));
      product *= s[i];
    }
    values(leaf.data);
  }

  void values(const std::vector<float>& data) {
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
      value(data[i], i);
  }

  void value(float v, std::size_t element) {
    std::optional<std::uint8_t> grid;
    for (int b = 0; b < 256 && !grid; ++b)
      if (same_bits(grid_value(static_cast<std::uint8_t>(b)), v))
        grid = static_cast<std::uint8_t>(b);
    if (k_.special_tags == 0) {
      if (!grid)
        fail(fmt::format(
            "element {} is {}, but with special_rate 0 a leaf value must be one of the 256 "
            "regular values b/127.5 - 1",
            element, float_to_text(v)));
      out_.byte(*grid);
      return;
    }
    if (grid && k_.special_tags < 256) {
      out_.byte(0);
      out_.byte(*grid);
      return;
    }
    out_.byte(255);
    for (std::uint32_t i = 0; i < kSpecialValues.size(); ++i)
      if (same_bits(kSpecialValues[i], v)) return out_.choice(i, kSpecialAlternatives);
    if (std::isnan(v) && !same_bits(v, std::copysign(std::numeric_limits<float>::quiet_NaN(), v)))
      fail(fmt::format(
          "element {} is a NaN with payload bits {:#010x}; the generator only makes quiet NaNs",
          element, std::bit_cast<std::uint32_t>(v)));
    out_.choice(kRawBitsEscape, kSpecialAlternatives);
    out_.u32_le(std::bit_cast<std::uint32_t>(v));
  }

  void partner(const std::vector<Reg>& candidates, Reg b) {
    const auto index = index_in(candidates, b);
    if (!index) fail(fmt::format("%{} is not among the partners the generator offers", b));
    out_.choice(*index, static_cast<std::uint32_t>(candidates.size()));
  }

  void unary(const Instr& instr) {
    out_.choice(*index_in(kUnaryOps, instr.op), kUnaryOps.size());
    if (instr.op == Op::Pow) {
      const auto e = index_in(kPowExponents, instr.attrs.exponent);
      if (!e) fail("the exponent is not in kPowExponents");
      out_.choice(*e, kPowExponents.size());
    }
    if (instr.op == Op::Clamp) {
      const auto it =
          std::find_if(kClampBounds.begin(), kClampBounds.end(), [&](const ClampBounds& b) {
            return b.lo == instr.attrs.lo && b.hi == instr.attrs.hi;
          });
      if (it == kClampBounds.end()) fail("the bounds are not in kClampBounds");
      out_.choice(static_cast<std::uint32_t>(it - kClampBounds.begin()), kClampBounds.size());
    }
  }

  void op(const Instr& instr) {
    const Reg a = instr.operands[0];
    const Shape& sa = p_.stmts[static_cast<std::size_t>(a)].shape;
    const auto write_dim = [&](int d) {
      out_.choice(static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(sa.rank()));
    };
    const auto head = [&](Category c) {
      out_.choice(wheel_index(c), kCategoryWheel.size());
      out_.choice(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(reg_));
    };
    switch (instr.op) {
    case Op::Neg:
    case Op::Abs:
    case Op::Exp:
    case Op::Log:
    case Op::Sqrt:
    case Op::Pow:
    case Op::Relu:
    case Op::Sigmoid:
    case Op::Tanh:
    case Op::Clamp: head(Category::Unary); return unary(instr);
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
      head(Category::Binary);
      out_.choice(*index_in(kBinaryOps, instr.op), kBinaryOps.size());
      binary_partners(prefix(), a, candidates_);
      return partner(candidates_, instr.operands[1]);
    case Op::Matmul:
      head(Category::Matmul);
      matmul_partners(prefix(), a, candidates_);
      return partner(candidates_, instr.operands[1]);
    case Op::Transpose: {
      head(Category::Transpose);
      write_dim(instr.attrs.dim);
      const int d1 = instr.attrs.dim1;
      out_.choice(static_cast<std::uint32_t>(d1 < instr.attrs.dim ? d1 : d1 - 1),
                  static_cast<std::uint32_t>(sa.rank() - 1));
      return;
    }
    case Op::SumDim:
    case Op::MeanDim:
      head(Category::ReduceDim);
      out_.choice(*index_in(kDimReduceOps, instr.op), kDimReduceOps.size());
      write_dim(instr.attrs.dim);
      return out_.choice(instr.attrs.keepdim ? 1 : 0, 2);
    case Op::SumAll:
    case Op::MeanAll:
      head(Category::ReduceAll);
      return out_.choice(*index_in(kAllReduceOps, instr.op), kAllReduceOps.size());
    case Op::Concat:
      head(Category::Concat);
      write_dim(instr.attrs.dim);
      concat_partners(prefix(), a, instr.attrs.dim, candidates_);
      return partner(candidates_, instr.operands[1]);
    case Op::Repeat: {
      head(Category::Repeat);
      write_dim(instr.attrs.dim);
      const int max_times = max_repeat_times(sa, instr.attrs.dim);
      if (instr.attrs.times < 1 || instr.attrs.times > max_times)
        fail(fmt::format("times must be 1..{} here", max_times));
      return out_.choice(static_cast<std::uint32_t>(instr.attrs.times - 1),
                         static_cast<std::uint32_t>(max_times));
    }
    }
  }

  const Program& p_;
  Knobs k_;
  Reg reg_ = 0;
  ByteWriter out_;
  std::vector<Reg> candidates_;
};

} // namespace

EncodeResult encode(const Program& program, const GeneratorOptions& options) {
  try {
    return EncodeResult{Encoder(program, options).run()};
  } catch (const Unencodable& e) {
    return EncodeResult{e.why};
  }
}

} // namespace burnmark
