// The programs of programs_per_op.h.
#include "programs_per_op.h"

#include <algorithm>
#include <stdexcept>

#include "burnmark/driver/driver.h"

#include "libtorch_programs.h"

namespace burnmark::testing {
namespace {

std::vector<float> ramp(std::int64_t n, float start, float step) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = start + step * static_cast<float>(i);
  return v;
}

// Inputs inside each later op's domain, away from its kinks, poles and jumps.
std::vector<float> domain_of(Op op) {
  switch (op) {
  case Op::Asin:
  case Op::Acos:
  case Op::Atanh:
  case Op::Erfinv: return {0.5f, -0.25f, 0.75f, -0.625f, 0.125f, 0.3125f};
  case Op::Acosh: return {1.5f, 2.25f, 3.0f, 1.25f, 4.0f, 2.75f};
  case Op::Log2:
  case Op::Log10:
  case Op::Rsqrt:
  case Op::Lgamma:
  case Op::Digamma: return {0.5f, 1.25f, 2.0f, 0.3f, 1.7f, 2.2f};
  case Op::Logit: return {0.2f, 0.7f, 0.45f, 0.9f, 0.05f, 0.6f};
  default: return {0.7f, -1.3f, 2.2f, -0.4f, 0.9f, -2.6f};
  }
}

// Every op past the first vocabulary: one program per entry of its attribute table, a [2,3]
// operand broadcast against a [3] one for binary ops, each comparison as a where's mask.
void later_vocabulary(std::vector<NamedProgram>& out) {
  const std::vector<float> positive = {0.5f, 1.25f, 2.0f};
  const std::vector<float> partner = {0.5f, -1.5f, 2.25f};
  for (const OpInfo& info : kOpTable) {
    if (info.stable_id < 22 || info.stable_id >= 93) continue;
    std::vector<Attrs> tables(info.params.begin(), info.params.end());
    if (tables.empty()) tables.push_back({});
    for (const Attrs& attrs : tables) {
      // torch.clamp with a single NaN bound ignores it (bugs.md, clamp-one-sided-nan-bound).
      if ((info.op == Op::ClampMin && std::isnan(attrs.lo)) ||
          (info.op == Op::ClampMax && std::isnan(attrs.hi)))
        continue;
      // A softplus threshold above ln(FLT_MAX) lets LibTorch's exp overflow below the switch:
      // softplus(0.9, beta=100, threshold=100) is inf there, a LibTorch finding of issue 29
      // (docs/attribute-branches.md), not an agreement to test.
      if (info.op == Op::Softplus && attrs.threshold > 88.72) continue;
      ProgramBuilder b;
      const Reg x = b.leaf({2, 3}, info.op == Op::PowTensor
                                       ? std::vector<float>{0.5f, 1.25f, 2.0f, 0.3f, 1.7f, 2.2f}
                                       : domain_of(info.op));
      switch (info.family) {
      case OpFamily::Unary:
      case OpFamily::Activation:
        out.push_back({info.op, b.finish(b.op(info.op, {x}, attrs))});
        break;
      case OpFamily::Binary: {
        const Reg y = b.leaf({3}, info.op == Op::Xlogy ? positive : partner);
        out.push_back({info.op, b.finish(b.op(info.op, {x, y}, attrs))});
        break;
      }
      case OpFamily::Compare: {
        const Reg y = b.leaf({3}, {0.7f, 1.0f, -2.6f});
        const Reg mask = b.op(info.op, {x, y});
        out.push_back({info.op, b.finish(b.op(Op::Where, {mask, x, y}))});
        out.push_back({Op::Where, b.finish(b.op(Op::Where, {mask, y, x}))});
        break;
      }
      case OpFamily::Select:
      case OpFamily::Matmul:
      case OpFamily::Transpose:
      case OpFamily::ReduceDim:
      case OpFamily::ReduceAll:
      case OpFamily::AlongDim:
      case OpFamily::Similarity:
      case OpFamily::Linalg:
      case OpFamily::View:
      case OpFamily::Index:
      case OpFamily::Masked:
      case OpFamily::Concat:
      case OpFamily::Repeat: break;
      }
    }
  }
}

// The view ops on a [2, 3, 4] operand (a [2, 1, 4] one for squeeze), at several attribute values,
// weighted by a leaf so that every element of the gradient differs.
void view_vocabulary(std::vector<NamedProgram>& out) {
  const auto with = [](int dim, int dim1, int times) {
    Attrs a;
    a.dim = dim;
    a.dim1 = dim1;
    a.times = times;
    return a;
  };
  const std::vector<std::pair<Op, Attrs>> cases = {
      {Op::Flip, with(1, 0, 1)},      {Op::Flip, with(2, 0, 1)},     {Op::Roll, with(1, 0, 1)},
      {Op::Roll, with(2, 0, -3)},     {Op::Roll, with(0, 0, 2)},     {Op::Unsqueeze, with(0, 0, 1)},
      {Op::Unsqueeze, with(3, 0, 1)}, {Op::Squeeze, with(1, 0, 1)},  {Op::Tril, with(0, 0, 0)},
      {Op::Tril, with(0, 0, -1)},     {Op::Triu, with(0, 0, 1)},     {Op::Triu, with(0, 0, -2)},
      {Op::Movedim, with(0, 2, 1)},   {Op::Movedim, with(2, 0, 1)},  {Op::Narrow, with(2, 1, 2)},
      {Op::Narrow, with(1, 0, 3)},    {Op::Select, with(1, 2, 0)},   {Op::Select, with(2, 0, 0)},
      {Op::Expand, with(1, 0, 5)},    {Op::Diagonal, with(1, 2, 0)}, {Op::Diagonal, with(2, 1, 1)},
      {Op::Diagonal, with(0, 2, -1)}};
  for (const auto& [op, attrs] : cases) {
    ProgramBuilder b;
    const Reg x = op == Op::Squeeze || op == Op::Expand
                      ? b.leaf({2, 1, 4}, ramp(8, -1.0f, 0.25f))
                      : b.leaf({2, 3, 4}, ramp(24, -1.5f, 0.125f));
    const Reg r = b.op(op, {x}, attrs);
    const Shape rs = b.shape(r);
    const Reg w = b.leaf(rs, ramp(rs.numel(), 1.0f, 0.25f));
    // exp after the view: LibTorch runs it on the strided view itself.
    out.push_back({op, b.finish(b.op(Op::Mul, {b.op(Op::Exp, {r}), w}))});
  }
}

// The shape views on a [2, 3, 4] operand (stack of two), each after a permute or a transpose
// too, so that LibTorch meets a non-contiguous operand (reshape then copies where a merge is no
// view), and each followed by an elementwise op on its result, weighted by a leaf.
void shape_view_vocabulary(std::vector<NamedProgram>& out) {
  const auto with = [](int dim, int dim1, int times, int variant = 0) {
    Attrs a;
    a.dim = dim;
    a.dim1 = dim1;
    a.times = times;
    a.variant = variant;
    return a;
  };
  const std::array<int, 3> p201 = {2, 0, 1}, p102 = {1, 0, 2}, p012 = {0, 1, 2};
  const std::vector<std::pair<Op, Attrs>> cases = {
      {Op::Reshape, with(0, 1, 1)},
      {Op::Reshape, with(1, 2, 1)},
      {Op::Reshape, with(0, 2, 1)},
      {Op::Reshape, with(2, 0, 2, 1)},
      {Op::Reshape, with(1, 0, 3, 1)},
      {Op::Reshape, with(0, 0, 1, 1)},
      {Op::Permute, with(0, 0, permutation_code(p201))},
      {Op::Permute, with(0, 0, permutation_code(p102))},
      {Op::Permute, with(0, 0, permutation_code(p012))},
      {Op::Slice, with(2, 1, 4, 2)},
      {Op::Slice, with(1, 0, 3, 3)},
      {Op::Slice, with(0, 1, 2, 1)},
      {Op::Slice, with(2, 0, 4, 3)},
      {Op::Stack, with(0, 0, 1)},
      {Op::Stack, with(2, 0, 1)},
      {Op::Stack, with(3, 0, 1)},
      {Op::Chunk, with(1, 2, 4)},
      {Op::Chunk, with(2, 1, 3)},
      {Op::Chunk, with(0, 0, 2)},
      {Op::Chunk, with(2, 3, 4)},
      {Op::DiagEmbed, with(0, 0, 0)},
      {Op::DiagEmbed, with(0, 0, 1)},
      {Op::DiagEmbed, with(0, 0, -1)},
      // relayout: dims stored (1,2,0) outermost first, every other element along dim 1, and
      // storage offset 5 (layout_attrs' fields; expanded needs a size-1 dim, which [2,3,4] lacks).
      {Op::Relayout, with(0, 0, permutation_code(std::array<int, 3>{1, 2, 0}), 1)},
      {Op::Relayout, with(1, 2, 1, 2)},
      {Op::Relayout, with(0, 0, 5, 4)}};
  for (bool strided : {false, true})
    for (const auto& [op, attrs] : cases) {
      ProgramBuilder b;
      Reg x = b.leaf({2, 3, 4}, ramp(24, -1.5f, 0.125f));
      if (strided) {
        // A [2, 3, 4] view of a [4, 3, 2] leaf: every stride differs from the contiguous one.
        const Reg t = b.leaf({4, 3, 2}, ramp(24, 1.25f, -0.125f));
        x = b.op(Op::Transpose, {t}, two_dims(0, 2));
      }
      const Reg r =
          op == Op::Stack ? b.op(op, {x, b.op(Op::Exp, {x})}, attrs) : b.op(op, {x}, attrs);
      const Shape rs = b.shape(r);
      const Reg w = b.leaf(rs, ramp(rs.numel(), 1.0f, 0.25f));
      out.push_back({op, b.finish(b.op(Op::Mul, {b.op(Op::Sin, {r}), w}))});
    }
}

// The matrix and vector ops, each with every entry of its attribute table, weighted by a leaf.
void linalg_vocabulary(std::vector<NamedProgram>& out) {
  for (const OpInfo& info : kOpTable) {
    if (info.family != OpFamily::Linalg) continue;
    std::vector<Attrs> tables(info.params.begin(), info.params.end());
    if (tables.empty()) tables.push_back({});
    for (const Attrs& attrs : tables) {
      ProgramBuilder b;
      const Reg m = b.leaf({2, 3}, ramp(6, -1.25f, 0.5f));
      const Reg n = b.leaf({3, 4}, ramp(12, 0.75f, -0.125f));
      const Reg u = b.leaf({3}, {0.5f, -1.5f, 2.25f});
      const Reg v = b.leaf({2}, {1.25f, -0.75f});
      Reg r = -1;
      switch (info.op) {
      case Op::Mm: r = b.op(info.op, {m, n}); break;
      case Op::Mv: r = b.op(info.op, {m, u}); break;
      case Op::Dot: r = b.op(info.op, {u, b.op(Op::Exp, {u})}); break;
      case Op::Outer: r = b.op(info.op, {v, u}); break;
      case Op::Addmm:
        r = b.op(info.op, {b.leaf({4}, {0.5f, -1.0f, 2.0f, 0.25f}), m, n}, attrs);
        break;
      case Op::Trace:
        r = b.op(info.op, {b.op(Op::Mm, {b.op(Op::Transpose, {m}, two_dims(0, 1)), m})});
        break;
      case Op::Det:
      case Op::Slogdet:
      case Op::Inv: {
        // Two regular 3x3 matrices and a 4x4 one, far from singular (the singular ones are
        // where LibTorch 1.13.1's det gradient is wrong: bugs.md).
        const Reg batch =
            b.leaf({2, 3, 3}, {1.5f, -0.5f, 0.25f, 0.75f, 2.0f, -1.0f, -0.25f, 0.5f, 1.25f, 1.0f,
                               0.5f, 0.0f, -0.5f, 1.0f, 0.25f, 0.0f, 0.25f, 2.0f});
        const Reg four = b.leaf({4, 4}, {2.0f, 0.5f, -0.25f, 0.0f, 0.25f, 1.5f, 0.5f, -0.5f, -1.0f,
                                         0.0f, 1.75f, 0.25f, 0.5f, -0.75f, 0.25f, 1.25f});
        const Reg x = b.op(info.op, {batch});
        const Reg y = b.op(Op::SumAll, {b.op(info.op, {four})});
        r = b.op(Op::Add, {x, y});
        break;
      }
      case Op::Bmm: {
        // Contiguous batches, then a transposed (strided) first operand.
        const Reg x = b.leaf({2, 3, 2}, ramp(12, -1.25f, 0.25f));
        const Reg y = b.leaf({2, 2, 4}, ramp(16, 0.75f, -0.125f));
        const Reg xt =
            b.op(Op::Transpose, {b.leaf({2, 2, 3}, ramp(12, 1.0f, -0.1875f))}, two_dims(1, 2));
        r = b.op(Op::Add, {b.op(info.op, {x, y}), b.op(info.op, {xt, y})});
        break;
      }
      default: continue; // the other families have their own programs
      }
      const Shape rs = b.shape(r).rank() == 0 ? Shape{1} : b.shape(r);
      const Reg w = b.leaf(rs, ramp(rs.numel(), 1.0f, 0.375f));
      out.push_back({info.op, b.finish(b.op(Op::Mul, {r, w}))});
    }
  }
}

// The indexing ops with repeated indices, along dim 0 and dim 1 of a [3, 4] input: gather,
// index_select and take_along_dim (broadcast indices), scatter_add and every scatter_reduce
// entry into a [3, 4] self from a [2, 3] src through a [2, 3] index (LibTorch 1.13's backward
// fails for an index smaller than src: bugs.md, libtorch-scatter-src-grad-index-smaller), and
// masked_fill at every value of its table;
// each weighted by a leaf so that every element of the gradient differs. Values are distinct
// and nonzero, but for one zero in src (prod) and a tie between two src elements (amax/amin
// split it).
void indexing_vocabulary(std::vector<NamedProgram>& out) {
  const std::vector<float> x = {0.5f, -1.25f, 2.0f,  0.75f, 1.5f,  -0.5f,
                                3.0f, -2.0f,  1.25f, 0.25f, -1.5f, 2.5f};
  const auto weighted = [&](ProgramBuilder& b, Op op, Reg r) {
    const Reg w = b.leaf(b.shape(r), ramp(b.shape(r).numel(), 1.0f, 0.25f));
    out.push_back({op, b.finish(b.op(Op::Mul, {r, w}))});
  };
  for (int dim : {0, 1}) {
    {
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg i = b.index_leaf(
          dim == 0 ? Shape{2, 4} : Shape{3, 5},
          dim == 0 ? std::vector<std::int64_t>{2, 0, 2, 1, 0, 0, 1, 2}
                   : std::vector<std::int64_t>{3, 3, 0, 1, 3, 2, 0, 0, 1, 2, 3, 3, 3, 0, 1});
      weighted(b, Op::Gather, b.op(Op::Gather, {a, i}, on_dim(dim)));
    }
    {
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg i = b.index_leaf({5}, {2, 0, 2, 1, 0});
      weighted(b, Op::IndexSelect, b.op(Op::IndexSelect, {a, i}, on_dim(dim)));
    }
    {
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg i = dim == 0 ? b.index_leaf({2, 1}, {2, 2}) : b.index_leaf({1, 3}, {3, 3, 0});
      weighted(b, Op::TakeAlongDim, b.op(Op::TakeAlongDim, {a, i}, on_dim(dim)));
    }
    std::vector<Attrs> scatters(op_info(Op::ScatterReduce).params.begin(),
                                op_info(Op::ScatterReduce).params.end());
    scatters.push_back({});
    for (std::size_t k = 0; k < scatters.size(); ++k) {
      const Op op = k + 1 == scatters.size() ? Op::ScatterAdd : Op::ScatterReduce;
      Attrs at = scatters[k];
      at.dim = dim;
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg src = b.leaf({2, 3}, {1.25f, -0.75f, 3.5f, 1.25f, 0.0f, -2.5f});
      const Reg i = b.index_leaf({2, 3}, dim == 0 ? std::vector<std::int64_t>{0, 2, 0, 0, 2, 0}
                                                  : std::vector<std::int64_t>{0, 0, 3, 2, 2, 2});
      weighted(b, op, b.op(op, {a, i, src}, at));
    }
  }
  // index_add (repeated indices), index_copy (distinct) and index_fill (repeated, every value of
  // its table) along dim 0 and dim 1 of the same [3, 4] self.
  for (int dim : {0, 1}) {
    {
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg src =
          b.leaf(dim == 0 ? Shape{4, 4} : Shape{3, 5}, ramp(dim == 0 ? 16 : 15, -1.75f, 0.375f));
      const Reg i = dim == 0 ? b.index_leaf({4}, {2, 0, 2, 1}) : b.index_leaf({5}, {3, 0, 3, 1, 3});
      weighted(b, Op::IndexAdd, b.op(Op::IndexAdd, {a, i, src}, on_dim(dim)));
    }
    {
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg src =
          b.leaf(dim == 0 ? Shape{2, 4} : Shape{3, 3}, ramp(dim == 0 ? 8 : 9, -1.75f, 0.375f));
      const Reg i = dim == 0 ? b.index_leaf({2}, {2, 0}) : b.index_leaf({3}, {3, 0, 1});
      weighted(b, Op::IndexCopy, b.op(Op::IndexCopy, {a, i, src}, on_dim(dim)));
    }
    for (Attrs at : op_info(Op::IndexFill).params) {
      at.dim = dim;
      ProgramBuilder b;
      const Reg a = b.leaf({3, 4}, x);
      const Reg i = dim == 0 ? b.index_leaf({3}, {2, 0, 2}) : b.index_leaf({3}, {3, 1, 3});
      weighted(b, Op::IndexFill, b.op(Op::IndexFill, {a, i}, at));
    }
  }
  for (const Attrs& at : op_info(Op::MaskedFill).params) {
    ProgramBuilder b;
    const Reg a = b.leaf({3, 4}, x);
    const Reg y = b.leaf({4}, {0.6f, 0.0f, 1.5f, -3.0f});
    weighted(b, Op::MaskedFill, b.op(Op::MaskedFill, {a, b.op(Op::Gt, {a, y})}, at));
  }
  // index_put along dim 0 of the [3, 4] self: distinct rows without accumulate, a repeated row
  // with; masked_scatter from a [3, 4] source on a mask broadcast along rows. The source is
  // self-sized: LibTorch 2.15's forward over reverse fails for a source with more elements than
  // self (bugs.md, libtorch-masked-scatter-fwd-over-rev-source-size); the larger source is
  // checked in test_index_put.cpp and by finite differences.
  for (const Attrs& at : op_info(Op::IndexPut).params) {
    ProgramBuilder b;
    const Reg a = b.leaf({3, 4}, x);
    const Reg src = b.leaf({2, 4}, ramp(8, -1.75f, 0.375f));
    const Reg i = b.index_leaf({2}, {2, at.variant != 0 ? 2 : 0});
    weighted(b, Op::IndexPut, b.op(Op::IndexPut, {a, i, src}, at));
  }
  {
    ProgramBuilder b;
    const Reg a = b.leaf({3, 4}, x);
    const Reg y = b.leaf({4}, {0.6f, 0.0f, 1.5f, -3.0f});
    const Reg src = b.leaf({3, 4}, ramp(12, -1.75f, 0.375f));
    const Reg mask = b.op(Op::Gt, {y, b.leaf({4}, {0.5f, 0.5f, 0.5f, 0.5f})});
    weighted(b, Op::MaskedScatter, b.op(Op::MaskedScatter, {a, mask, src}));
  }
}

// The reductions, scans and normalisers past the first vocabulary, each with every entry of its
// attribute table, along dim 1 of a [2, 3, 4] operand with distinct, nonzero, untied values, and
// weighted by a leaf so that every element of the gradient differs.
void along_dim_vocabulary(std::vector<NamedProgram>& out) {
  // A permutation of 24 distinct values in [-1.6, 1.55]: no ties, no zeros, products in range.
  std::vector<float> data;
  for (int i = 0; i < 24; ++i)
    data.push_back(static_cast<float>((i * 7) % 24 - 11) * 0.125f + 0.0625f);
  for (const OpInfo& info : kOpTable) {
    if (info.stable_id < 93 || info.family == OpFamily::Linalg || info.family == OpFamily::View)
      continue;
    std::vector<Attrs> tables(info.params.begin(), info.params.end());
    if (tables.empty()) tables.push_back({});
    for (Attrs attrs : tables) {
      ProgramBuilder b;
      const Reg x = b.leaf({2, 3, 4}, data);
      attrs.dim = 1;
      switch (info.family) {
      case OpFamily::ReduceAll:
        out.push_back({info.op, b.finish(b.op(Op::Mul, {x, b.op(info.op, {x}, attrs)}))});
        break;
      case OpFamily::ReduceDim:
        for (bool keep : {false, true}) {
          ProgramBuilder bk;
          const Reg xk = bk.leaf({2, 3, 4}, data);
          attrs.keepdim = keep;
          const Reg r = bk.op(info.op, {xk}, attrs);
          const Reg w = bk.leaf(keep ? Shape{2, 1, 4} : Shape{2, 4}, ramp(8, 1.0f, 0.5f));
          out.push_back({info.op, bk.finish(bk.op(Op::Mul, {r, w}))});
        }
        break;
      case OpFamily::AlongDim: {
        const Reg w = b.leaf({2, 3, 4}, ramp(24, 1.0f, -0.125f));
        out.push_back({info.op, b.finish(b.op(Op::Mul, {b.op(info.op, {x}, attrs), w}))});
        break;
      }
      case OpFamily::Similarity: {
        const Reg y = b.leaf({3, 4}, ramp(12, -0.7f, 0.15f));
        const Reg w = b.leaf({2, 4}, ramp(8, 1.0f, 0.5f));
        out.push_back({info.op, b.finish(b.op(Op::Mul, {b.op(info.op, {x, y}, attrs), w}))});
        break;
      }
      case OpFamily::Unary:
      case OpFamily::Activation:
      case OpFamily::Binary:
      case OpFamily::Compare:
      case OpFamily::Select:
      case OpFamily::Matmul:
      case OpFamily::Transpose:
      case OpFamily::Linalg:
      case OpFamily::View:
      case OpFamily::Index:
      case OpFamily::Masked:
      case OpFamily::Concat:
      case OpFamily::Repeat: break;
      }
    }
  }
}

} // namespace

std::vector<NamedProgram> programs_per_op() {
  std::vector<NamedProgram> out;
  const auto unary = [&](Op op, std::vector<float> data, Attrs attrs = {}) {
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, std::move(data));
    out.push_back({op, b.finish(b.op(op, {x}, attrs))});
  };
  const std::vector<float> mixed = {0.5f, -1.25f, 2.0f, -0.3f, 1.7f, -2.2f};
  const std::vector<float> positive = {0.5f, 1.25f, 2.0f, 0.3f, 1.7f, 2.2f};
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div}) {
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, mixed);
    const Reg y = b.leaf({3}, {0.5f, -1.5f, 2.0f});
    out.push_back({op, b.finish(b.op(op, {x, y}))});
  }
  for (Op op : {Op::Neg, Op::Abs, Op::Exp, Op::Relu, Op::Sigmoid, Op::Tanh})
    unary(op, mixed);
  for (Op op : {Op::Log, Op::Sqrt})
    unary(op, positive);
  for (double c : kPowExponents)
    unary(Op::Pow, positive, exponent(c));
  for (const ClampBounds& cb : kClampBounds)
    unary(Op::Clamp, {-2.0f, -0.7f, -0.2f, 0.1f, 0.4f, 3.0f}, bounds(cb.lo, cb.hi));
  for (Op op : {Op::SumAll, Op::MeanAll}) {
    // Through a broadcast back onto the input, so the rank-0 result's gradient is not just one.
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, mixed);
    out.push_back({op, b.finish(b.op(Op::Mul, {x, b.op(op, {x})}))});
  }
  for (Op op : {Op::SumDim, Op::MeanDim})
    for (bool keep : {false, true}) {
      ProgramBuilder b;
      const Reg x = b.leaf({2, 3, 4}, ramp(24, -2.5f, 0.25f));
      const Reg r = b.op(op, {x}, dim_keep(1, keep));
      const Reg w = b.leaf(keep ? Shape{2, 1, 4} : Shape{2, 4}, ramp(8, 1.0f, 0.5f));
      out.push_back({op, b.finish(b.op(Op::Mul, {r, w}))});
    }
  {
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3, 4}, ramp(24, -7.0f, 1.0f));
    const Reg w = b.leaf({4, 3, 2}, ramp(24, 0.5f, 0.3f));
    out.push_back(
        {Op::Transpose, b.finish(b.op(Op::Mul, {b.op(Op::Transpose, {x}, two_dims(0, 2)), w}))});
  }
  {
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, mixed);
    const Reg y = b.leaf({2, 2}, {-1, -2, -3, -4});
    const Reg w = b.leaf({2, 5}, ramp(10, -2.0f, 0.5f));
    out.push_back({Op::Concat, b.finish(b.op(Op::Mul, {b.op(Op::Concat, {x, y}, on_dim(1)), w}))});
  }
  for (int dim : {0, 1}) {
    ProgramBuilder b;
    const Reg x = b.leaf({2, 3}, mixed);
    const Reg w = b.leaf(dim == 0 ? Shape{6, 3} : Shape{2, 9}, ramp(18, 1.0f, 0.25f));
    out.push_back(
        {Op::Repeat, b.finish(b.op(Op::Mul, {b.op(Op::Repeat, {x}, dim_times(dim, 3)), w}))});
  }
  for (const auto& [sa, sb] :
       std::vector<std::pair<Shape, Shape>>{{{2, 3}, {3, 4}}, {{1, 2, 3}, {2, 3, 4}}}) {
    ProgramBuilder b;
    const Reg x = b.leaf(sa, ramp(sa.numel(), -1.0f, 0.5f));
    const Reg y = b.leaf(sb, ramp(sb.numel(), 1.0f, -0.25f));
    out.push_back({Op::Matmul, b.finish(b.op(Op::Matmul, {x, y}))});
  }
  later_vocabulary(out);
  along_dim_vocabulary(out);
  linalg_vocabulary(out);
  indexing_vocabulary(out);
  view_vocabulary(out);
  shape_view_vocabulary(out);
  return out;
}

Program perturbed_along_tangents(const Program& p, double step) {
  Program q = p;
  for (std::size_t k = 0; k < q.leaves.size(); ++k) {
    Leaf& leaf = q.leaves[k];
    if (leaf.dtype != DType::F32) continue;
    const HostTensor u = leaf_tangent(leaf.shape, k);
    for (std::size_t i = 0; i < leaf.data.size(); ++i) {
      const double moved = leaf.data[i] + step * u.values[i];
      leaf.data[i] = static_cast<float>(moved);
      if (static_cast<double>(leaf.data[i]) != moved)
        throw std::logic_error("a perturbed leaf value is not exact in f32");
    }
  }
  return q;
}

bool has_comparison(const Program& p) {
  return std::any_of(p.stmts.begin(), p.stmts.end(), [](const Stmt& s) {
    return s.kind == StmtKind::Op && op_info(s.instr.op).family == OpFamily::Compare;
  });
}

} // namespace burnmark::testing
