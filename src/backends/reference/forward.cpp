// Forward of every op, one case each: LibTorch's semantics (broadcasting, layout, reductions,
// matmul) over the scalar formulas of approx.h.
#include "approx_activation.h"
#include "approx_binary.h"
#include "approx_elementary.h"
#include "approx_normalize.h"
#include "approx_scan.h"
#include "approx_transcendental.h"
#include "indexing.h"
#include "linalg.h"
#include "linalg_det.h"
#include "rows.h"
#include "tape.h"
#include "views.h"

namespace burnmark::ref {
namespace {

template <class F> void elementwise(const Node& a, const Node& b, Node& out, F f) {
  map_binary(out.shape, a.shape, a.value, b.shape, b.value, out.value, f);
}

// Sum or mean over a walk (a mean as PyTorch computes it: reduce()'s `mean`).
void reduction(const Node& a, const Walk& w, bool mean, Node& out, ReduceScratch& s) {
  reduce(a.value, w, out.shape.numel(), out.value, s, mean);
}

// where(cond, a, b), all three broadcast to the result.
void select(const Node& cond, const Node& a, const Node& b, Node& out) {
  out.value.resize(out.shape.numel());
  const std::array<const Node*, 3> in = {&cond, &a, &b};
  ternary_walk(out.shape, in, [&](std::int64_t i, const std::array<std::int64_t, 3>& at) {
    out.value.set(i, where_forward(cond.value.at(at[0]), a.value.at(at[1]), b.value.at(at[2]), {}));
  });
}

// cosine_similarity: both operands broadcast to their common shape, then reduced along dim.
void cosine(const Node& a, const Node& b, const Attrs& at, Node& out, ReduceScratch& s) {
  const Shape over = *broadcast(a.shape, b.shape);
  gather(a.value, broadcast_walk(over, a.shape, a.shape), s.wide_a);
  gather(b.value, broadcast_walk(over, b.shape, b.shape), s.wide_b);
  const Rows r = rows_along(over, at.dim);
  out.value.resize(r.count());
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(s.wide_a, r, row, s.x);
    gather_row(s.wide_b, r, row, s.y);
    out.value.set(row, cosine_forward(Row(s.x), Row(s.y), s.terms));
  }
}

} // namespace

void forward_rule(const Node& a, const Node* b, const Node* c, Node& out, ReduceScratch& s) {
  const Attrs& at = out.attrs;
  Buf& o = out.value;
  switch (out.op) {
  case Op::Add: return elementwise(a, *b, out, [](Approx x, Approx y) { return add(x, y); });
  case Op::Sub: return elementwise(a, *b, out, [](Approx x, Approx y) { return sub(x, y); });
  case Op::Mul: return elementwise(a, *b, out, [](Approx x, Approx y) { return mul(x, y); });
  case Op::Div: return elementwise(a, *b, out, [](Approx x, Approx y) { return div(x, y); });
  case Op::Neg: return map_unary(a.value, o, [](Approx x) { return neg(x); });
  case Op::Abs: return map_unary(a.value, o, [](Approx x) { return abs(x); });
  case Op::Exp: return map_unary(a.value, o, [](Approx x) { return exp(x); });
  case Op::Log: return map_unary(a.value, o, [](Approx x) { return log(x); });
  case Op::Sqrt: return map_unary(a.value, o, [](Approx x) { return sqrt(x); });
  case Op::Pow: return map_unary(a.value, o, [c = at.exponent](Approx x) { return pow(x, c); });
  case Op::Relu: return map_unary(a.value, o, [](Approx x) { return relu(x); });
  case Op::Sigmoid: return map_unary(a.value, o, [](Approx x) { return sigmoid(x); });
  case Op::Tanh: return map_unary(a.value, o, [](Approx x) { return tanh(x); });
  case Op::Clamp:
    // The bounds are f32 scalars on the LibTorch side.
    return map_unary(a.value, o, [lo = to_opmath(at.lo), hi = to_opmath(at.hi)](Approx x) {
      return clamp(x, lo, hi);
    });
  case Op::SumAll: return reduction(a, plain_walk(a.shape), false, out, s);
  case Op::MeanAll: return reduction(a, plain_walk(a.shape), true, out, s);
  case Op::SumDim: return reduction(a, reduce_dim_walk(a.shape, at.dim), false, out, s);
  case Op::MeanDim: return reduction(a, reduce_dim_walk(a.shape, at.dim), true, out, s);
  case Op::Transpose: return gather(a.value, transpose_walk(a.shape, at.dim, at.dim1), o);
  case Op::Concat:
    o.resize(out.shape.numel());
    scatter(a.value, concat_part_walk(a.shape, b->shape, at.dim, 0), o);
    scatter(b->value, concat_part_walk(a.shape, b->shape, at.dim, 1), o);
    return;
  case Op::Repeat: return gather(a.value, repeat_walk(a.shape, at.dim, at.times), o);
  // bmm is matmul with equal batch sizes: the same per-batch products and bounds.
  case Op::Matmul:
  case Op::Bmm: return matmul(a.shape, a.value, b->shape, b->value, out.shape, o);
  case Op::Sin: return map_unary(a.value, o, [&at](Approx x) { return sin_forward(x, at); });
  case Op::Cos: return map_unary(a.value, o, [&at](Approx x) { return cos_forward(x, at); });
  case Op::Tan: return map_unary(a.value, o, [&at](Approx x) { return tan_forward(x, at); });
  case Op::Asin: return map_unary(a.value, o, [&at](Approx x) { return asin_forward(x, at); });
  case Op::Acos: return map_unary(a.value, o, [&at](Approx x) { return acos_forward(x, at); });
  case Op::Atan: return map_unary(a.value, o, [&at](Approx x) { return atan_forward(x, at); });
  case Op::Sinh: return map_unary(a.value, o, [&at](Approx x) { return sinh_forward(x, at); });
  case Op::Cosh: return map_unary(a.value, o, [&at](Approx x) { return cosh_forward(x, at); });
  case Op::Asinh: return map_unary(a.value, o, [&at](Approx x) { return asinh_forward(x, at); });
  case Op::Acosh: return map_unary(a.value, o, [&at](Approx x) { return acosh_forward(x, at); });
  case Op::Atanh: return map_unary(a.value, o, [&at](Approx x) { return atanh_forward(x, at); });
  case Op::Erf: return map_unary(a.value, o, [&at](Approx x) { return erf_forward(x, at); });
  case Op::Erfc: return map_unary(a.value, o, [&at](Approx x) { return erfc_forward(x, at); });
  case Op::Erfinv: return map_unary(a.value, o, [&at](Approx x) { return erfinv_forward(x, at); });
  case Op::Log1p: return map_unary(a.value, o, [&at](Approx x) { return log1p_forward(x, at); });
  case Op::Expm1: return map_unary(a.value, o, [&at](Approx x) { return expm1_forward(x, at); });
  case Op::Log2: return map_unary(a.value, o, [&at](Approx x) { return log2_forward(x, at); });
  case Op::Log10: return map_unary(a.value, o, [&at](Approx x) { return log10_forward(x, at); });
  case Op::Exp2: return map_unary(a.value, o, [&at](Approx x) { return exp2_forward(x, at); });
  case Op::Rsqrt: return map_unary(a.value, o, [&at](Approx x) { return rsqrt_forward(x, at); });
  case Op::Reciprocal:
    return map_unary(a.value, o, [&at](Approx x) { return reciprocal_forward(x, at); });
  case Op::Square: return map_unary(a.value, o, [&at](Approx x) { return square_forward(x, at); });
  case Op::Sign: return map_unary(a.value, o, [&at](Approx x) { return sign_forward(x, at); });
  case Op::Sgn: return map_unary(a.value, o, [&at](Approx x) { return sgn_forward(x, at); });
  case Op::Floor: return map_unary(a.value, o, [&at](Approx x) { return floor_forward(x, at); });
  case Op::Ceil: return map_unary(a.value, o, [&at](Approx x) { return ceil_forward(x, at); });
  case Op::Round: return map_unary(a.value, o, [&at](Approx x) { return round_forward(x, at); });
  case Op::Trunc: return map_unary(a.value, o, [&at](Approx x) { return trunc_forward(x, at); });
  case Op::Frac: return map_unary(a.value, o, [&at](Approx x) { return frac_forward(x, at); });
  case Op::Lgamma: return map_unary(a.value, o, [&at](Approx x) { return lgamma_forward(x, at); });
  case Op::Digamma:
    return map_unary(a.value, o, [&at](Approx x) { return digamma_forward(x, at); });
  case Op::ClampMin:
    return map_unary(a.value, o, [&at](Approx x) { return clamp_min_forward(x, at); });
  case Op::ClampMax:
    return map_unary(a.value, o, [&at](Approx x) { return clamp_max_forward(x, at); });
  case Op::LogSigmoid:
    return map_unary(a.value, o, [&at](Approx x) { return logsigmoid_forward(x, at); });
  case Op::Softplus:
    return map_unary(a.value, o, [&at](Approx x) { return softplus_forward(x, at); });
  case Op::Gelu: return map_unary(a.value, o, [&at](Approx x) { return gelu_forward(x, at); });
  case Op::Silu: return map_unary(a.value, o, [&at](Approx x) { return silu_forward(x, at); });
  case Op::Mish: return map_unary(a.value, o, [&at](Approx x) { return mish_forward(x, at); });
  case Op::Elu: return map_unary(a.value, o, [&at](Approx x) { return elu_forward(x, at); });
  case Op::Selu: return map_unary(a.value, o, [&at](Approx x) { return selu_forward(x, at); });
  case Op::Celu: return map_unary(a.value, o, [&at](Approx x) { return celu_forward(x, at); });
  case Op::LeakyRelu:
    return map_unary(a.value, o, [&at](Approx x) { return leaky_relu_forward(x, at); });
  case Op::Hardtanh:
    return map_unary(a.value, o, [&at](Approx x) { return hardtanh_forward(x, at); });
  case Op::Relu6: return map_unary(a.value, o, [&at](Approx x) { return relu6_forward(x, at); });
  case Op::Hardsigmoid:
    return map_unary(a.value, o, [&at](Approx x) { return hardsigmoid_forward(x, at); });
  case Op::Hardswish:
    return map_unary(a.value, o, [&at](Approx x) { return hardswish_forward(x, at); });
  case Op::Softsign:
    return map_unary(a.value, o, [&at](Approx x) { return softsign_forward(x, at); });
  case Op::Hardshrink:
    return map_unary(a.value, o, [&at](Approx x) { return hardshrink_forward(x, at); });
  case Op::Softshrink:
    return map_unary(a.value, o, [&at](Approx x) { return softshrink_forward(x, at); });
  case Op::Tanhshrink:
    return map_unary(a.value, o, [&at](Approx x) { return tanhshrink_forward(x, at); });
  case Op::Logit: return map_unary(a.value, o, [&at](Approx x) { return logit_forward(x, at); });
  case Op::Maximum:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return maximum_forward(x, y, at); });
  case Op::Minimum:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return minimum_forward(x, y, at); });
  case Op::Fmax:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return fmax_forward(x, y, at); });
  case Op::Fmin:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return fmin_forward(x, y, at); });
  case Op::Atan2:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return atan2_forward(x, y, at); });
  case Op::PowTensor:
    return elementwise(a, *b, out,
                       [&at](Approx x, Approx y) { return pow_tensor_forward(x, y, at); });
  case Op::Remainder:
    return elementwise(a, *b, out,
                       [&at](Approx x, Approx y) { return remainder_forward(x, y, at); });
  case Op::Fmod:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return fmod_forward(x, y, at); });
  case Op::DivRounded:
    return elementwise(a, *b, out,
                       [&at](Approx x, Approx y) { return div_rounded_forward(x, y, at); });
  case Op::Hypot:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return hypot_forward(x, y, at); });
  case Op::Xlogy:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return xlogy_forward(x, y, at); });
  case Op::Copysign:
    return elementwise(a, *b, out,
                       [&at](Approx x, Approx y) { return copysign_forward(x, y, at); });
  case Op::Lerp:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return lerp_forward(x, y, at); });
  case Op::Lt:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return lt_forward(x, y, at); });
  case Op::Le:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return le_forward(x, y, at); });
  case Op::Gt:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return gt_forward(x, y, at); });
  case Op::Ge:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return ge_forward(x, y, at); });
  case Op::Eq:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return eq_forward(x, y, at); });
  case Op::Ne:
    return elementwise(a, *b, out, [&at](Approx x, Approx y) { return ne_forward(x, y, at); });
  case Op::Where: return select(a, *b, *c, out);
  case Op::Prod: return reduce_rows(a.value, rows_all(a.shape), o, s, prod_forward);
  case Op::ProdDim: return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s, prod_forward);
  case Op::Amax:
  case Op::Max:
    return reduce_rows(a.value, rows_all(a.shape), o, s,
                       [](Row x) { return extreme_of(x, true).value; });
  case Op::Amin:
  case Op::Min:
    return reduce_rows(a.value, rows_all(a.shape), o, s,
                       [](Row x) { return extreme_of(x, false).value; });
  case Op::AmaxDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [](Row x) { return extreme_of(x, true).value; });
  case Op::AminDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [](Row x) { return extreme_of(x, false).value; });
  case Op::MaxDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [](Row x) { return extreme_of(x, true, true).value; });
  case Op::MinDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [](Row x) { return extreme_of(x, false, true).value; });
  case Op::Var:
    return reduce_rows(a.value, rows_all(a.shape), o, s,
                       [c = at.variant](Row x) { return var_forward(x, c); });
  case Op::Std:
    return reduce_rows(a.value, rows_all(a.shape), o, s,
                       [c = at.variant](Row x) { return std_forward(x, c); });
  case Op::VarDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [c = at.variant](Row x) { return var_forward(x, c); });
  case Op::StdDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [c = at.variant](Row x) { return std_forward(x, c); });
  case Op::VectorNorm:
    return reduce_rows(a.value, rows_all(a.shape), o, s,
                       [p = at.exponent](Row x) { return vector_norm_forward(x, p); });
  case Op::NormDim:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s,
                       [p = at.exponent](Row x) { return vector_norm_forward(x, p); });
  case Op::Logsumexp:
    return reduce_rows(a.value, rows_along(a.shape, at.dim), o, s, logsumexp_forward);
  case Op::Cumsum: return map_rows(a.value, rows_along(a.shape, at.dim), o, s, cumsum_forward);
  case Op::Cumprod: return map_rows(a.value, rows_along(a.shape, at.dim), o, s, cumprod_forward);
  case Op::Logcumsumexp:
    return map_rows(a.value, rows_along(a.shape, at.dim), o, s, logcumsumexp_forward);
  case Op::Softmax: return map_rows(a.value, rows_along(a.shape, at.dim), o, s, softmax_forward);
  case Op::LogSoftmax:
    return map_rows(a.value, rows_along(a.shape, at.dim), o, s, log_softmax_forward);
  case Op::Normalize:
    return map_rows(a.value, rows_along(a.shape, at.dim), o, s,
                    [p = at.exponent](Row x, RowOut y) { normalize_forward(x, p, y); });
  case Op::CosineSimilarity: return cosine(a, *b, at, out, s);
  case Op::Mm:
  case Op::Mv:
  case Op::Dot:
  case Op::Outer: return linalg_product(out.op, a, *b, o);
  case Op::Addmm: return addmm_forward(a, *b, *c, out, s);
  case Op::Trace: o.resize(1); return o.set(0, trace_forward(a, s));
  case Op::Det: return det_forward(a, o, false);
  case Op::Slogdet: return det_forward(a, o, true);
  case Op::Inv: return inv_forward(a, o, s.error_possible);
  case Op::Flip:
  case Op::Roll:
  case Op::Unsqueeze:
  case Op::Squeeze:
  case Op::Tril:
  case Op::Triu:
  case Op::Movedim:
  case Op::Select:
  case Op::Expand:
  case Op::Diagonal:
  case Op::Reshape:
  case Op::Relayout:
  case Op::Permute:
  case Op::Slice:
  case Op::Chunk:
  case Op::DiagEmbed:
  case Op::Narrow: return view_forward(a, out, s.index);
  case Op::Gather:
  case Op::IndexSelect:
  case Op::TakeAlongDim: return take_forward(a, *b, out, s.index);
  case Op::ScatterAdd:
  case Op::ScatterReduce: return scatter_forward(a, *b, *c, out, s);
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill:
  case Op::IndexPut: return index_update_forward(a, *b, c, out, s);
  case Op::MaskedScatter: return masked_scatter_forward(a, *b, *c, out);
  case Op::MaskedFill:
    return elementwise(a, *b, out, [v = static_cast<float>(at.fill)](Approx x, Approx m) {
      return masked_fill_forward(x, m, v);
    });
  case Op::Stack: return stack_forward(a, *b, out);
  }
}

} // namespace burnmark::ref
