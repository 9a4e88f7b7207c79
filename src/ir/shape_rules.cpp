// Shape rule of every op. One case per op and no default, so a new op in ops.def does not
// compile until its rule is written here.
#include "burnmark/ir/shape_rules.h"

#include <algorithm>
#include <string>

#include "burnmark/ir/layout.h"

namespace burnmark {
namespace {

ShapeResult fail(std::string why) {
  return ShapeResult{std::move(why)};
}

ShapeResult capped(Shape s) {
  if (!s.within_cap()) return fail("result " + s.to_string() + " exceeds the allocation cap");
  return ShapeResult{s};
}

bool valid_axis(int dim, const Shape& s) {
  return dim >= 0 && dim < s.rank();
}

ShapeResult reduce_dim(const Attrs& a, const Shape& in) {
  if (!valid_axis(a.dim, in))
    return fail("dim " + std::to_string(a.dim) + " out of range for " + in.to_string());
  Shape out;
  for (int i = 0; i < in.rank(); ++i) {
    if (i != a.dim)
      out.push_back(in[i]);
    else if (a.keepdim)
      out.push_back(1);
  }
  return capped(out);
}

bool valid_correction(const Attrs& a) {
  return a.variant == 0 || a.variant == 1;
}

ShapeResult broadcast_pair(const Shape& a, const Shape& b) {
  const auto out = broadcast(a, b);
  if (!out) return fail("shapes " + a.to_string() + " and " + b.to_string() + " do not broadcast");
  return capped(*out);
}

ShapeResult matmul(const Shape& a, const Shape& b) {
  if (a.rank() < 2 || b.rank() < 2) return fail("matmul needs operands of rank 2 to 4");
  if (a[a.rank() - 1] != b[b.rank() - 2])
    return fail("matmul inner dimensions differ: " + a.to_string() + " @ " + b.to_string());
  Shape batch_a, batch_b;
  for (int i = 0; i + 2 < a.rank(); ++i)
    batch_a.push_back(a[i]);
  for (int i = 0; i + 2 < b.rank(); ++i)
    batch_b.push_back(b[i]);
  const auto batch = broadcast(batch_a, batch_b);
  if (!batch) return fail("matmul batch dimensions do not broadcast");
  Shape out = *batch;
  out.push_back(a[a.rank() - 2]);
  out.push_back(b[b.rank() - 1]);
  return capped(out);
}

ShapeResult concat(const Attrs& at, const Shape& a, const Shape& b) {
  if (a.rank() != b.rank() || a.rank() == 0)
    return fail("concat needs operands of equal rank >= 1");
  if (!valid_axis(at.dim, a)) return fail("concat dim out of range");
  Shape out = a;
  for (int i = 0; i < a.rank(); ++i) {
    if (i == at.dim)
      out[i] = a[i] + b[i];
    else if (a[i] != b[i])
      return fail("concat operands differ outside dim " + std::to_string(at.dim));
  }
  return capped(out);
}

// gather's and scatter's index: the rank of `of`, each dim no larger than of's (off dim only,
// when off_dim_only).
bool index_fits(const Shape& index, const Shape& of, int dim, bool off_dim_only) {
  if (index.rank() != of.rank()) return false;
  for (int d = 0; d < of.rank(); ++d)
    if ((d != dim || !off_dim_only) && index[d] > of[d]) return false;
  return true;
}

ShapeResult indexing(Op op, const Attrs& at, std::span<const Shape> in) {
  const Shape& x = in[0];
  const Shape& index = in[1];
  if (!valid_axis(at.dim, x))
    return fail(std::string(op_name(op)) + " dim out of range for " + x.to_string());
  switch (op) {
  case Op::Gather:
    if (!index_fits(index, x, at.dim, true))
      return fail("gather's index must have the input's rank and fit it off dim");
    return capped(index);
  case Op::IndexSelect: {
    if (index.rank() != 1) return fail("index_select takes a 1-D index");
    Shape out = x;
    out[at.dim] = index[0];
    return capped(out);
  }
  case Op::TakeAlongDim: {
    if (index.rank() != x.rank())
      return fail("take_along_dim's indices must have the input's rank");
    Shape off = x;
    off[at.dim] = index[at.dim];
    return broadcast_pair(off, index);
  }
  case Op::ScatterAdd:
  case Op::ScatterReduce:
    if (in[2].rank() != x.rank() || !index_fits(index, in[2], at.dim, false) ||
        !index_fits(index, x, at.dim, true))
      return fail(std::string(op_name(op)) +
                  "'s index must have self's rank, fit src, and fit self off dim");
    if (op == Op::ScatterReduce && (at.variant < 0 || at.variant >= 5))
      return fail("scatter_reduce's reduce must be one of sum, prod, mean, amax, amin");
    return capped(x);
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill:
  case Op::IndexPut: {
    if (index.rank() != 1) return fail(std::string(op_name(op)) + " takes a 1-D index");
    if (op == Op::IndexPut && at.dim != 0) return fail("index_put's one index is along dim 0");
    if (op == Op::IndexPut && at.variant != 0 && at.variant != 1)
      return fail("index_put's accumulate must be 0 or 1");
    if (op == Op::IndexFill) return capped(x);
    // source: self with dim's size replaced by the index's length.
    Shape source = x;
    source[at.dim] = index[0];
    if (!(in[2] == source))
      return fail(std::string(op_name(op)) + "'s source must be " + source.to_string() +
                  ", self with the index's length along dim");
    return capped(x);
  }
  default: return fail("not an indexing op");
  }
}

} // namespace

bool index_values_distinct(Op op, const Attrs& attrs) {
  switch (op) {
  case Op::IndexCopy: return true;
  case Op::IndexPut: return attrs.variant == 0;
  default: return false;
  }
}

std::int64_t index_bound(Op op, const Attrs& attrs, std::span<const Shape> operands) {
  switch (op_info(op).family) {
  case OpFamily::Index: return operands[0][attrs.dim];
  default: return 0;
  }
}

std::array<int, kMaxRank> moved_axes(int rank, int source, int destination) {
  std::array<int, kMaxRank> axes{};
  int k = 0;
  for (int j = 0; j < rank; ++j) {
    if (j == destination) {
      axes[static_cast<std::size_t>(j)] = source;
      continue;
    }
    if (k == source) ++k;
    axes[static_cast<std::size_t>(j)] = k++;
  }
  return axes;
}

std::int64_t diagonal_length(std::int64_t rows, std::int64_t cols, int offset) {
  const std::int64_t n =
      offset >= 0 ? std::min(rows, cols - offset) : std::min(rows + offset, cols);
  return std::max<std::int64_t>(n, 0);
}

int permutation_code(std::span<const int> dims) {
  int code = 0;
  for (int d : dims)
    code = code * 10 + d + 1;
  return code;
}

std::optional<std::array<int, kMaxRank>> permutation_dims(int code, int rank) {
  std::array<int, kMaxRank> dims{};
  std::array<bool, kMaxRank> seen{};
  if (code < 0) return std::nullopt;
  for (int i = rank - 1; i >= 0; --i) {
    const int d = code % 10 - 1;
    code /= 10;
    if (d < 0 || d >= rank || seen[static_cast<std::size_t>(d)]) return std::nullopt;
    seen[static_cast<std::size_t>(d)] = true;
    dims[static_cast<std::size_t>(i)] = d;
  }
  if (code != 0) return std::nullopt; // more digits than the rank
  return dims;
}

std::int64_t chunk_size(std::int64_t n, int chunks) {
  return (n + chunks - 1) / chunks;
}

std::int64_t chunk_count(std::int64_t n, int chunks) {
  const std::int64_t size = chunk_size(n, chunks);
  return (n + size - 1) / size;
}

Shape moved_shape(const Shape& s, int source, int destination) {
  const auto axes = moved_axes(s.rank(), source, destination);
  Shape out;
  for (int j = 0; j < s.rank(); ++j)
    out.push_back(s[axes[static_cast<std::size_t>(j)]]);
  return out;
}

ShapeResult infer_shape(Op op, const Attrs& attrs, std::span<const Shape> in) {
  if (static_cast<int>(in.size()) != op_arity(op))
    return fail(std::string(op_name(op)) + " takes " + std::to_string(op_arity(op)) + " operands");
  switch (op) {
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Maximum:
  case Op::Minimum:
  case Op::Fmax:
  case Op::Fmin:
  case Op::Atan2:
  case Op::PowTensor:
  case Op::Remainder:
  case Op::Fmod:
  case Op::DivRounded:
  case Op::Hypot:
  case Op::Xlogy:
  case Op::Copysign:
  case Op::Lerp:
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne: return broadcast_pair(in[0], in[1]);
  case Op::Where: {
    const ShapeResult ab = broadcast_pair(in[1], in[2]);
    if (!ab.ok()) return ab;
    return broadcast_pair(in[0], ab.shape());
  }
  case Op::Sin:
  case Op::Cos:
  case Op::Tan:
  case Op::Asin:
  case Op::Acos:
  case Op::Atan:
  case Op::Sinh:
  case Op::Cosh:
  case Op::Asinh:
  case Op::Acosh:
  case Op::Atanh:
  case Op::Erf:
  case Op::Erfc:
  case Op::Erfinv:
  case Op::Log1p:
  case Op::Expm1:
  case Op::Log2:
  case Op::Log10:
  case Op::Exp2:
  case Op::Rsqrt:
  case Op::Reciprocal:
  case Op::Square:
  case Op::Sign:
  case Op::Sgn:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  case Op::Trunc:
  case Op::Frac:
  case Op::Lgamma:
  case Op::Digamma:
  case Op::ClampMin:
  case Op::ClampMax:
  case Op::LogSigmoid:
  case Op::Softplus:
  case Op::Gelu:
  case Op::Silu:
  case Op::Mish:
  case Op::Elu:
  case Op::Selu:
  case Op::Celu:
  case Op::LeakyRelu:
  case Op::Hardtanh:
  case Op::Relu6:
  case Op::Hardsigmoid:
  case Op::Hardswish:
  case Op::Softsign:
  case Op::Hardshrink:
  case Op::Softshrink:
  case Op::Tanhshrink:
  case Op::Logit:
  case Op::Neg:
  case Op::Abs:
  case Op::Exp:
  case Op::Log:
  case Op::Sqrt:
  case Op::Pow:
  case Op::Relu:
  case Op::Sigmoid:
  case Op::Tanh:
  case Op::Clamp: return capped(in[0]);
  case Op::Var:
  case Op::Std:
    if (!valid_correction(attrs)) return fail("correction must be 0 or 1");
    return ShapeResult{Shape::scalar()};
  case Op::SumAll:
  case Op::MeanAll:
  case Op::Prod:
  case Op::Amax:
  case Op::Amin:
  case Op::Max:
  case Op::Min:
  case Op::VectorNorm: return ShapeResult{Shape::scalar()};
  case Op::VarDim:
  case Op::StdDim:
    if (!valid_correction(attrs)) return fail("correction must be 0 or 1");
    return reduce_dim(attrs, in[0]);
  case Op::SumDim:
  case Op::MeanDim:
  case Op::ProdDim:
  case Op::AmaxDim:
  case Op::AminDim:
  case Op::MaxDim:
  case Op::MinDim:
  case Op::Logsumexp:
  case Op::NormDim: return reduce_dim(attrs, in[0]);
  case Op::Cumsum:
  case Op::Cumprod:
  case Op::Logcumsumexp:
  case Op::Softmax:
  case Op::LogSoftmax:
  case Op::Normalize:
    if (!valid_axis(attrs.dim, in[0]))
      return fail("dim " + std::to_string(attrs.dim) + " out of range for " + in[0].to_string());
    return capped(in[0]);
  case Op::Flip:
  case Op::Roll:
    if (!valid_axis(attrs.dim, in[0])) return fail("dim out of range for " + in[0].to_string());
    return capped(in[0]);
  case Op::Unsqueeze: {
    if (attrs.dim < 0 || attrs.dim > in[0].rank() || in[0].rank() >= kMaxRank)
      return fail("unsqueeze dim must be 0..rank and the rank below " + std::to_string(kMaxRank));
    Shape out;
    for (int i = 0; i <= in[0].rank(); ++i) {
      if (i == attrs.dim) out.push_back(1);
      if (i < in[0].rank()) out.push_back(in[0][i]);
    }
    return capped(out);
  }
  case Op::Squeeze: {
    if (!valid_axis(attrs.dim, in[0]) || in[0][attrs.dim] != 1)
      return fail("squeeze needs a dim of size 1");
    Shape out;
    for (int i = 0; i < in[0].rank(); ++i)
      if (i != attrs.dim) out.push_back(in[0][i]);
    return capped(out);
  }
  case Op::Tril:
  case Op::Triu:
    if (in[0].rank() < 2) return fail("tril and triu need rank >= 2");
    return capped(in[0]);
  case Op::Movedim: {
    if (!valid_axis(attrs.dim, in[0]) || !valid_axis(attrs.dim1, in[0]))
      return fail("movedim dims out of range for " + in[0].to_string());
    return capped(moved_shape(in[0], attrs.dim, attrs.dim1));
  }
  case Op::Narrow: {
    if (!valid_axis(attrs.dim, in[0]) || attrs.dim1 < 0 || attrs.times < 1 ||
        attrs.dim1 + attrs.times > in[0][attrs.dim])
      return fail("narrow needs 0 <= start, 1 <= length, start + length <= the dim's size");
    Shape out = in[0];
    out[attrs.dim] = attrs.times;
    return capped(out);
  }
  case Op::Select: {
    if (!valid_axis(attrs.dim, in[0]) || attrs.dim1 < 0 || attrs.dim1 >= in[0][attrs.dim])
      return fail("select needs a dim and an index within it");
    Shape out;
    for (int i = 0; i < in[0].rank(); ++i)
      if (i != attrs.dim) out.push_back(in[0][i]);
    return capped(out);
  }
  case Op::Expand: {
    if (!valid_axis(attrs.dim, in[0]) || in[0][attrs.dim] != 1 || attrs.times < 1)
      return fail("expand needs a dim of size 1 and a size >= 1");
    Shape out = in[0];
    out[attrs.dim] = attrs.times;
    return capped(out);
  }
  case Op::Diagonal: {
    const Shape& s = in[0];
    if (!valid_axis(attrs.dim, s) || !valid_axis(attrs.dim1, s) || attrs.dim == attrs.dim1)
      return fail("diagonal needs two distinct dims");
    const std::int64_t length = diagonal_length(s[attrs.dim], s[attrs.dim1], attrs.times);
    if (length < 1) return fail("diagonal offset leaves no elements");
    Shape out;
    for (int i = 0; i < s.rank(); ++i)
      if (i != attrs.dim && i != attrs.dim1) out.push_back(s[i]);
    out.push_back(length);
    return capped(out);
  }
  case Op::Reshape: {
    const Shape& s = in[0];
    Shape out;
    if (attrs.variant == 0) {
      if (!valid_axis(attrs.dim, s) || !valid_axis(attrs.dim1, s) || attrs.dim >= attrs.dim1)
        return fail("reshape merges dims start_dim < end_dim within the rank");
      std::int64_t merged = 1;
      for (int i = 0; i < s.rank(); ++i) {
        if (i < attrs.dim || i > attrs.dim1) out.push_back(s[i]);
        if (i >= attrs.dim && i <= attrs.dim1) merged *= s[i];
        if (i == attrs.dim1) out.push_back(merged);
      }
    } else if (attrs.variant == 1) {
      if (!valid_axis(attrs.dim, s) || s.rank() >= kMaxRank || attrs.times < 1 ||
          s[attrs.dim] % attrs.times != 0)
        return fail("reshape splits a dim by a factor of its size, below rank " +
                    std::to_string(kMaxRank));
      for (int i = 0; i < s.rank(); ++i) {
        if (i != attrs.dim) {
          out.push_back(s[i]);
          continue;
        }
        out.push_back(attrs.times);
        out.push_back(s[i] / attrs.times);
      }
    } else {
      return fail("reshape merges (variant 0) or splits (variant 1)");
    }
    return capped(out);
  }
  case Op::Permute: {
    const auto dims = permutation_dims(attrs.times, in[0].rank());
    if (!dims) return fail("permute needs a permutation of the dims of " + in[0].to_string());
    Shape out;
    for (int i = 0; i < in[0].rank(); ++i)
      out.push_back(in[0][(*dims)[static_cast<std::size_t>(i)]]);
    return capped(out);
  }
  case Op::Slice: {
    if (!valid_axis(attrs.dim, in[0]) || attrs.dim1 < 0 || attrs.dim1 >= attrs.times ||
        attrs.times > in[0][attrs.dim] || attrs.variant < 1)
      return fail("slice needs 0 <= start < end <= the dim's size and step >= 1");
    Shape out = in[0];
    out[attrs.dim] = (attrs.times - attrs.dim1 + attrs.variant - 1) / attrs.variant;
    return capped(out);
  }
  case Op::Stack: {
    if (!(in[0] == in[1])) return fail("stack needs operands of one shape");
    if (attrs.dim < 0 || attrs.dim > in[0].rank() || in[0].rank() >= kMaxRank)
      return fail("stack dim must be 0..rank and the rank below " + std::to_string(kMaxRank));
    Shape out;
    for (int i = 0; i <= in[0].rank(); ++i) {
      if (i == attrs.dim) out.push_back(2);
      if (i < in[0].rank()) out.push_back(in[0][i]);
    }
    return capped(out);
  }
  case Op::Chunk: {
    if (!valid_axis(attrs.dim, in[0]) || attrs.times < 1)
      return fail("chunk needs a dim and chunks >= 1");
    const std::int64_t n = in[0][attrs.dim];
    if (attrs.dim1 < 0 || attrs.dim1 >= chunk_count(n, attrs.times))
      return fail("chunk index beyond the chunks LibTorch makes");
    const std::int64_t size = chunk_size(n, attrs.times);
    Shape out = in[0];
    out[attrs.dim] = std::min(size, n - attrs.dim1 * size);
    return capped(out);
  }
  case Op::DiagEmbed: {
    const Shape& s = in[0];
    if (s.rank() < 1 || s.rank() >= kMaxRank)
      return fail("diag_embed needs rank 1.." + std::to_string(kMaxRank - 1));
    const std::int64_t n = s[s.rank() - 1] + (attrs.times < 0 ? -attrs.times : attrs.times);
    Shape out;
    for (int i = 0; i + 1 < s.rank(); ++i)
      out.push_back(s[i]);
    out.push_back(n);
    out.push_back(n);
    return capped(out);
  }
  case Op::Relayout: {
    const LeafLayout layout = attrs_layout(attrs);
    // One layout, one spelling: only the fields layout_attrs sets.
    if (!(layout_attrs(layout) == attrs)) return fail("relayout's attributes are not a layout");
    const std::string why = check_relayout(layout, in[0]);
    if (!why.empty()) return fail(why);
    return capped(in[0]);
  }
  case Op::Bmm:
    if (in[0].rank() != 3 || in[1].rank() != 3 || in[0][0] != in[1][0] || in[0][2] != in[1][1])
      return fail("bmm needs [b, n, k] @ [b, k, m]");
    return capped(Shape{in[0][0], in[0][1], in[1][2]});
  case Op::Mm:
    if (in[0].rank() != 2 || in[1].rank() != 2 || in[0][1] != in[1][0])
      return fail("mm needs [n, k] @ [k, m]");
    return capped(Shape{in[0][0], in[1][1]});
  case Op::Mv:
    if (in[0].rank() != 2 || in[1].rank() != 1 || in[0][1] != in[1][0])
      return fail("mv needs [n, k] and [k]");
    return capped(Shape{in[0][0]});
  case Op::Dot:
    if (in[0].rank() != 1 || !(in[0] == in[1])) return fail("dot needs two vectors of one length");
    return ShapeResult{Shape::scalar()};
  case Op::Outer:
    if (in[0].rank() != 1 || in[1].rank() != 1) return fail("outer needs two vectors");
    return capped(Shape{in[0][0], in[1][0]});
  case Op::Addmm: {
    if (in[1].rank() != 2 || in[2].rank() != 2 || in[1][1] != in[2][0])
      return fail("addmm needs mat1 [n, k] and mat2 [k, m]");
    const Shape out{in[1][0], in[2][1]};
    const auto b = broadcast(in[0], out);
    if (!b || !(*b == out)) return fail("addmm's input must broadcast to " + out.to_string());
    return capped(out);
  }
  case Op::Trace:
    if (in[0].rank() != 2) return fail("trace needs a matrix");
    return ShapeResult{Shape::scalar()};
  case Op::Det:
  case Op::Slogdet:
  case Op::Inv: {
    if (!small_square(in[0]))
      return fail(std::string(op_name(op)) +
                  " needs [..., n, n] with n <= " + std::to_string(kMaxSquareOrder));
    if (op == Op::Inv) return capped(in[0]);
    Shape out;
    for (int i = 0; i + 2 < in[0].rank(); ++i)
      out.push_back(in[0][i]);
    return ShapeResult{out};
  }
  case Op::CosineSimilarity: {
    const ShapeResult both = broadcast_pair(in[0], in[1]);
    if (!both.ok()) return both;
    Attrs dropped = attrs;
    dropped.keepdim = false;
    return reduce_dim(dropped, both.shape());
  }
  case Op::Transpose: {
    if (!valid_axis(attrs.dim, in[0]) || !valid_axis(attrs.dim1, in[0]) || attrs.dim == attrs.dim1)
      return fail("transpose needs two distinct dims within rank " + std::to_string(in[0].rank()));
    Shape out = in[0];
    out[attrs.dim] = in[0][attrs.dim1];
    out[attrs.dim1] = in[0][attrs.dim];
    return capped(out);
  }
  case Op::Concat: return concat(attrs, in[0], in[1]);
  case Op::Repeat: {
    if (!valid_axis(attrs.dim, in[0])) return fail("repeat dim out of range");
    if (attrs.times < 1 || attrs.times > kMaxRepeat)
      return fail("repeat times must be 1.." + std::to_string(kMaxRepeat));
    Shape out = in[0];
    out[attrs.dim] *= attrs.times;
    return capped(out);
  }
  case Op::Matmul: return matmul(in[0], in[1]);
  case Op::Gather:
  case Op::IndexSelect:
  case Op::TakeAlongDim:
  case Op::ScatterAdd:
  case Op::ScatterReduce:
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill:
  case Op::IndexPut: return indexing(op, attrs, in);
  case Op::MaskedFill: return broadcast_pair(in[0], in[1]);
  case Op::MaskedScatter: {
    // The in-place form's contract: the mask broadcasts to self, which keeps its shape; source
    // holds at least self's element count, so every set mask element has one to take.
    const auto out = broadcast(in[0], in[1]);
    if (!out || !(*out == in[0]))
      return fail("masked_scatter's mask " + in[1].to_string() + " must broadcast to self " +
                  in[0].to_string());
    if (in[2].numel() < in[0].numel())
      return fail("masked_scatter's source " + in[2].to_string() +
                  " must hold at least self's element count");
    return capped(in[0]);
  }
  }
  return fail("unknown op");
}

bool small_square(const Shape& s) {
  const int r = s.rank();
  return r >= 2 && s[r - 1] == s[r - 2] && s[r - 1] >= 1 && s[r - 1] <= kMaxSquareOrder;
}

} // namespace burnmark
