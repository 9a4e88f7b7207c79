// Forward mode: every op's derivative along its operands' tangents (J·u), built from the rules
// the reference already has, so that values, gradients and tangents share one formula per op.
//
// - Elementwise ops: PyTorch's auto_element_wise forward derivative is the backward formula
//   with the gradient replaced by each operand's tangent, summed over operands. Here too: the
//   backward rule run with the output's gradient seeded by the tangent, one operand at a time.
// - Linear ops (views, sums, cumsum, gathers): J·u is the op applied to the tangents
//   (auto_linear), so the forward rule runs on them.
// - Products (matmul, mm, dot, ...): one forward run per operand with that operand's tangent.
// - The rest (reductions, normalisers, scans, det, inv, scatter_reduce): the Jacobian contracted
//   with the tangents, one backward run per output position of a row. LibTorch's own formulas
//   for these differ in where a 0 * inf appears, so a non-finite result there is left
//   indeterminate rather than judged.
//
// An operand without a tangent (an index, a mask, a value only index leaves feed) contributes
// nothing, as LibTorch's efficient zero tensors do.
#include <array>
#include <cstdint>

#include "approx_scan.h"
#include "linalg_det.h"
#include "rows.h"
#include "tape.h"

namespace burnmark::ref {
namespace {

// Above this many multiply-adds the contraction is skipped and the tangent left indeterminate:
// one backward run per position of a 4,096-element row would take seconds.
constexpr std::int64_t kContractionBudget = std::int64_t{1} << 22;

// Operands that carry values: bit k for operand k.
using DataOperands = unsigned;
constexpr DataOperands kFirst = 1U;
constexpr DataOperands kFirstTwo = 3U;
constexpr DataOperands kFirstAndThird = 5U;
constexpr DataOperands kAllThree = 7U;

bool carries_tangent(const std::array<const Node*, 3>& in, DataOperands data, std::size_t k) {
  return ((data >> k) & 1U) != 0 && in[k] != nullptr && in[k]->has_tan;
}

// The tangent of `in` broadcast to `over` (the shape the op's rules see that operand at).
void broadcast_tangent(const Node& in, const Shape& over, Buf& dst) {
  if (in.shape == over) return dst.assign(in.tan);
  gather(in.tan, broadcast_walk(over, in.shape, in.shape), dst);
}

void fill(Buf& b, std::int64_t n, Approx value) {
  b.resize(n);
  for (std::int64_t i = 0; i < n; ++i)
    b.set(i, value);
}

// The tangent broadcast to `over`, zeros for an operand without one.
void tangent_or_zero(const Node& in, const Shape& over, Buf& dst) {
  if (in.has_tan) return broadcast_tangent(in, over, dst);
  fill(dst, over.numel(), {0.0, 0.0});
}

void add_term(Node& out, Buf& term) {
  if (!out.has_tan) {
    std::swap(out.tan, term);
    out.has_tan = true;
    return;
  }
  for (std::int64_t i = 0; i < term.size(); ++i)
    out.tan.set(i, add(out.tan.at(i), term.at(i)));
}

void run_backward(const Node& out, const std::array<const Node*, 3>& in, DataOperands wanted,
                  TangentScratch& t, ReduceScratch& s) {
  for (std::size_t k = 0; k < kMaxArity; ++k)
    t.dx[k].wanted = ((wanted >> k) & 1U) != 0;
  backward_rule(out, *in[0], in[1], in[2], t.dx, s);
}

// auto_element_wise: sum over operands of backward(gradient := that operand's tangent).
void elementwise(Node& out, const std::array<const Node*, 3>& in, DataOperands data,
                 TangentScratch& t, ReduceScratch& s) {
  for (std::size_t k = 0; k < kMaxArity; ++k) {
    if (!carries_tangent(in, data, k)) continue;
    broadcast_tangent(*in[k], out.shape, out.grad);
    run_backward(out, in, 1U << k, t, s);
    if (!t.dx[k].wanted) continue;                   // the rule answered with a symbolic zero
    if (!(t.dx[k].shape == out.shape)) std::abort(); // an elementwise rule at another shape
    add_term(out, t.dx[k].buf);
  }
}

// The forward rule with operand `k` (or every data operand, k < 0) replaced by its tangent; an
// operand without one reads as zeros.
void forward_on_tangents(const Node& out, const std::array<const Node*, 3>& in, DataOperands data,
                         int k, const Attrs& attrs, TangentScratch& t, ReduceScratch& s) {
  std::array<const Node*, 3> use = in;
  for (std::size_t j = 0; j < kMaxArity; ++j) {
    if (((data >> j) & 1U) == 0 || in[j] == nullptr) continue;
    if (k >= 0 && static_cast<std::size_t>(k) != j) continue;
    Node& n = t.operand[j];
    n.shape = in[j]->shape;
    if (in[j]->has_tan)
      n.value.assign(in[j]->tan);
    else
      fill(n.value, n.shape.numel(), {0.0, 0.0});
    use[j] = &n;
  }
  t.result.shape = out.shape;
  t.result.op = out.op;
  t.result.attrs = attrs;
  forward_rule(*use[0], use[1], use[2], t.result, s);
}

// auto_linear: J·u = op(u).
void linear(Node& out, const std::array<const Node*, 3>& in, DataOperands data, TangentScratch& t,
            ReduceScratch& s, const Attrs& attrs) {
  forward_on_tangents(out, in, data, -1, attrs, t, s);
  std::swap(out.tan, t.result.value);
  out.has_tan = true;
}

// A product linear in each operand: sum over operands of op(..., u_k, ...).
void multilinear(Node& out, const std::array<const Node*, 3>& in, DataOperands data,
                 TangentScratch& t, ReduceScratch& s) {
  for (std::size_t k = 0; k < kMaxArity; ++k) {
    if (!carries_tangent(in, data, k)) continue;
    forward_on_tangents(out, in, data, static_cast<int>(k), out.attrs, t, s);
    add_term(out, t.result.value);
  }
}

// addmm(self, m1, m2) = beta self + alpha m1 m2, as derivatives.yaml's forward formula:
// maybe_multiply(self_t, beta) + maybe_multiply(mat1_t.mm(mat2_p), alpha) + the same for mat2.
// The products are plain mm's scaled afterwards (not a gemm with alpha, which skips the product
// at alpha = 0), so an overflowing product times alpha = 0 is NaN, as in LibTorch.
void addmm(Node& out, const std::array<const Node*, 3>& in, TangentScratch& t, ReduceScratch& s) {
  const auto scaled = [](Buf& b, double by) {
    if (by == 1.0) return; // maybe_multiply
    for (std::int64_t i = 0; i < b.size(); ++i)
      b.set(i, mul(Approx{by, 0.0}, b.at(i)));
  };
  if (in[0]->has_tan) {
    broadcast_tangent(*in[0], out.shape, t.term);
    scaled(t.term, out.attrs.beta);
    add_term(out, t.term);
  }
  Node product;
  product.op = Op::Mm;
  product.shape = out.shape;
  for (std::size_t k = 1; k < 3; ++k) {
    if (!in[k]->has_tan) continue;
    const std::array<const Node*, 3> factors = {in[1], in[2], nullptr};
    forward_on_tangents(product, factors, kFirstTwo, static_cast<int>(k - 1), Attrs{}, t, s);
    scaled(t.result.value, out.attrs.alpha);
    add_term(out, t.result.value);
  }
}

// Offsets of a walk over `r`'s tensor into its row index (the reduced result's layout).
Walk row_walk(const Rows& r) {
  Walk w;
  w.rank = 3;
  w.dims = {r.outer, r.n, r.inner};
  w.a = {r.inner, 0, 1};
  return w;
}

// Adds, per row of `rows` (laid over the shape of the operand's gradient d), the sum of
// d * tangent into t.sum (which `first` starts).
void contract_one(const Node& in, const InputGrad& d, const Rows& rows, bool first,
                  TangentScratch& t, ReduceScratch& s) {
  broadcast_tangent(in, d.shape, t.wide);
  t.product.resize(d.buf.size());
  for (std::int64_t i = 0; i < d.buf.size(); ++i)
    t.product.set(i, mul(d.buf.at(i), t.wide.at(i)));
  reduce(t.product, row_walk(rows), rows.count(), first ? t.sum : t.term, s);
  if (!first)
    for (std::int64_t r = 0; r < rows.count(); ++r)
      t.sum.set(r, add(t.sum.at(r), t.term.at(r)));
}

// The contraction over every operand with a tangent (the backward rule has run).
void contract(const std::array<const Node*, 3>& in, DataOperands data, const Rows& rows,
              TangentScratch& t, ReduceScratch& s) {
  bool first = true;
  for (std::size_t k = 0; k < kMaxArity; ++k) {
    if (!carries_tangent(in, data, k) || !t.dx[k].wanted) continue;
    contract_one(*in[k], t.dx[k], rows, first, t, s);
    first = false;
  }
  if (first) fill(t.sum, rows.count(), {0.0, 0.0}); // every rule answered with a symbolic zero
}

DataOperands wanted_of(const std::array<const Node*, 3>& in, DataOperands data) {
  DataOperands w = 0;
  for (std::size_t k = 0; k < kMaxArity; ++k)
    if (carries_tangent(in, data, k)) w |= 1U << k;
  return w;
}

Approx judged_only_if_finite(Approx a) {
  return std::isfinite(a.v) ? a : Approx{a.v, kInf};
}

// A reduction: each input element feeds exactly one result, its row's. One backward run with a
// gradient of ones gives every d result / d element; J·u is their contraction row by row.
void per_row(Node& out, const std::array<const Node*, 3>& in, DataOperands data, const Rows& rows,
             TangentScratch& t, ReduceScratch& s) {
  fill(out.grad, out.shape.numel(), {1.0, 0.0});
  run_backward(out, in, wanted_of(in, data), t, s);
  contract(in, data, rows, t, s);
  out.tan.resize(rows.count());
  for (std::int64_t r = 0; r < rows.count(); ++r)
    out.tan.set(r, judged_only_if_finite(t.sum.at(r)));
  out.has_tan = true;
}

void all_indeterminate(Node& out) {
  fill(out.tan, out.shape.numel(), unknown(std::numeric_limits<double>::quiet_NaN()));
  out.has_tan = true;
}

// A row-to-row op (scans, softmax, inv per matrix): the result's position j of every row at
// once, one backward run each.
void per_position(Node& out, const std::array<const Node*, 3>& in, DataOperands data,
                  const Rows& rows, TangentScratch& t, ReduceScratch& s) {
  const std::int64_t numel = out.shape.numel();
  if (rows.n * numel > kContractionBudget) return all_indeterminate(out);
  out.tan.resize(numel);
  for (std::int64_t j = 0; j < rows.n; ++j) {
    fill(out.grad, numel, {0.0, 0.0});
    for (std::int64_t r = 0; r < rows.count(); ++r)
      out.grad.set(rows.offset(r, j), {1.0, 0.0});
    run_backward(out, in, wanted_of(in, data), t, s);
    contract(in, data, rows, t, s);
    for (std::int64_t r = 0; r < rows.count(); ++r)
      out.tan.set(rows.offset(r, j), judged_only_if_finite(t.sum.at(r)));
  }
  out.has_tan = true;
}

// No structure to use: one backward run per result element, contracted over everything.
void dense(Node& out, const std::array<const Node*, 3>& in, DataOperands data, TangentScratch& t,
           ReduceScratch& s) {
  const std::int64_t numel = out.shape.numel();
  std::int64_t inputs = 0;
  for (std::size_t k = 0; k < kMaxArity; ++k)
    if (carries_tangent(in, data, k)) inputs += in[k]->shape.numel();
  if (numel * inputs > kContractionBudget) return all_indeterminate(out);
  out.tan.resize(numel);
  for (std::int64_t i = 0; i < numel; ++i) {
    fill(out.grad, numel, {0.0, 0.0});
    out.grad.set(i, {1.0, 0.0});
    run_backward(out, in, wanted_of(in, data), t, s);
    // Each operand's gradient is at its own shape here (scatter's are): one row of all of it.
    bool first = true;
    for (std::size_t k = 0; k < kMaxArity; ++k) {
      if (!carries_tangent(in, data, k) || !t.dx[k].wanted) continue;
      contract_one(*in[k], t.dx[k], rows_all(t.dx[k].shape), first, t, s);
      first = false;
    }
    const Approx total = first ? Approx{0.0, 0.0} : t.sum.at(0);
    out.tan.set(i, judged_only_if_finite(total));
  }
  out.has_tan = true;
}

// derivatives.yaml's own forward formula for div, (self_t - other_t * result) / other_p: the
// backward formula's two terms would overflow separately where the exact sum is small (x / x
// at a subnormal x: inf - inf, while the tangent is 0).
void div_tangent(Node& out, const Node& a, const Node& b, TangentScratch& t) {
  const std::int64_t n = out.shape.numel();
  tangent_or_zero(a, out.shape, t.term);
  if (b.has_tan) {
    broadcast_tangent(b, out.shape, t.wide);
    gather(b.value, broadcast_walk(out.shape, b.shape, b.shape), t.product);
    for (std::int64_t i = 0; i < n; ++i)
      t.term.set(i, sub(t.term.at(i), mul(t.wide.at(i), out.value.at(i))));
  } else {
    gather(b.value, broadcast_walk(out.shape, b.shape, b.shape), t.product);
  }
  out.tan.resize(n);
  for (std::int64_t i = 0; i < n; ++i)
    out.tan.set(i, div(t.term.at(i), t.product.at(i)));
  out.has_tan = true;
}

// atan2(self, other): derivatives.yaml's own forward formula,
// (-self_p * other_t + other_p * self_t) / (self_p.pow(2) + other_p.pow(2)). The backward
// formula's terms, grad * other * recip and grad * -self * recip, meet 0 * inf where the squares
// underflow (atan2(0, 1e-42): the tangent is -inf, not NaN).
void atan2_tangent(Node& out, const Node& a, const Node& b, TangentScratch& t) {
  const std::int64_t n = out.shape.numel();
  tangent_or_zero(a, out.shape, t.term);
  tangent_or_zero(b, out.shape, t.wide);
  gather(a.value, broadcast_walk(out.shape, a.shape, a.shape), t.product);
  gather(b.value, broadcast_walk(out.shape, b.shape, b.shape), t.sum);
  out.tan.resize(n);
  for (std::int64_t i = 0; i < n; ++i) {
    const Approx y = t.product.at(i);
    const Approx x = t.sum.at(i);
    const Approx num = add(mul(neg(y), t.wide.at(i)), mul(x, t.term.at(i)));
    out.tan.set(i, div(num, add(mul(y, y), mul(x, x))));
  }
  out.has_tan = true;
}

// maximum, minimum, fmax, fmin at a tie: a kink, where any convex combination of the two
// tangents is a subgradient's (LibTorch's forward formula takes the mean for maximum and other's
// for fmax, its backward all of self's for fmax): the bound spans both tangents.
void ties_span_both_tangents(Node& out, const Node& a, const Node& b, TangentScratch& t) {
  const std::int64_t n = out.shape.numel();
  tangent_or_zero(a, out.shape, t.term);
  tangent_or_zero(b, out.shape, t.wide);
  Buf& av = t.product;
  gather(a.value, broadcast_walk(out.shape, a.shape, a.shape), av);
  gather(b.value, broadcast_walk(out.shape, b.shape, b.shape), t.sum);
  for (std::int64_t i = 0; i < n; ++i) {
    if (!(av.at(i).v == t.sum.at(i).v)) continue; // NaN never ties
    const Approx ta = t.term.at(i);
    const Approx tb = t.wide.at(i);
    if (!std::isfinite(ta.v) || !std::isfinite(tb.v)) {
      out.tan.set(i, ta.v == tb.v ? ta : Approx{ta.v, kInf});
      continue;
    }
    const double mid = 0.5 * (ta.v + tb.v);
    out.tan.set(i, {mid, std::fabs(ta.v - tb.v) / 2 + std::max(ta.e, tb.e) + out.tan.at(i).e});
  }
}

Rows square_rows(const Shape& s) {
  const std::int64_t n = square_order(s);
  return Rows{square_count(s), n * n, 1};
}

} // namespace

void tangent_rule(Node& out, const Node& a, const Node* b, const Node* c, TangentScratch& t,
                  ReduceScratch& s) {
  const std::array<const Node*, 3> in = {&a, b, c};
  const Attrs& at = out.attrs;
  switch (out.op) {
  case Op::Div: return div_tangent(out, a, *b, t);
  case Op::Atan2: return atan2_tangent(out, a, *b, t);
  case Op::Maximum:
  case Op::Minimum:
  case Op::Fmax:
  case Op::Fmin:
    elementwise(out, in, kFirstTwo, t, s);
    return ties_span_both_tangents(out, a, *b, t);
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Neg:
  case Op::Abs:
  case Op::Exp:
  case Op::Log:
  case Op::Sqrt:
  case Op::Pow:
  case Op::Relu:
  case Op::Sigmoid:
  case Op::Tanh:
  case Op::Clamp:
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
  case Op::PowTensor:
  case Op::Remainder:
  case Op::Fmod:
  case Op::DivRounded:
  case Op::Hypot:
  case Op::Xlogy:
  case Op::Copysign: return elementwise(out, in, kFirstTwo, t, s);
  // Linear in (start, end) jointly: derivatives.yaml's lerp(self_t, end_t, weight).
  case Op::Lerp: return linear(out, in, kFirstTwo, t, s, at);
  case Op::Where: return elementwise(out, in, kAllThree & ~1U, t, s);
  case Op::MaskedFill:
  case Op::IndexFill: {
    Attrs zero_fill = at; // the filled value is a constant: its derivative is zero
    zero_fill.fill = 0.0;
    return linear(out, in, kFirst, t, s, zero_fill);
  }
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne: return; // a mask carries no derivative
  case Op::SumAll:
  case Op::MeanAll:
  case Op::SumDim:
  case Op::MeanDim:
  case Op::Transpose:
  case Op::Repeat:
  case Op::Cumsum:
  case Op::Trace:
  case Op::Flip:
  case Op::Roll:
  case Op::Unsqueeze:
  case Op::Squeeze:
  case Op::Tril:
  case Op::Triu:
  case Op::Movedim:
  case Op::Narrow:
  case Op::Select:
  case Op::Expand:
  case Op::Diagonal:
  case Op::Reshape:
  case Op::Relayout:
  case Op::Permute:
  case Op::Slice:
  case Op::Chunk:
  case Op::DiagEmbed:
  case Op::Gather:
  case Op::IndexSelect:
  case Op::TakeAlongDim: return linear(out, in, kFirst, t, s, at);
  case Op::Concat:
  case Op::Stack: return linear(out, in, kFirstTwo, t, s, at);
  case Op::ScatterAdd:
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexPut:
  // masked_scatter is linear in (self, source) jointly; the mask is a constant.
  case Op::MaskedScatter: return linear(out, in, kFirstAndThird, t, s, at);
  case Op::Matmul:
  case Op::Bmm:
  case Op::Mm:
  case Op::Mv:
  case Op::Dot:
  case Op::Outer: return multilinear(out, in, kFirstTwo, t, s);
  case Op::Addmm: return addmm(out, in, t, s);
  case Op::Prod:
  case Op::Amax:
  case Op::Amin:
  case Op::Max:
  case Op::Min:
  case Op::Var:
  case Op::Std:
  case Op::VectorNorm: return per_row(out, in, kFirst, rows_all(a.shape), t, s);
  case Op::ProdDim:
  case Op::AmaxDim:
  case Op::AminDim:
  case Op::MaxDim:
  case Op::MinDim:
  case Op::VarDim:
  case Op::StdDim:
  case Op::Logsumexp:
  case Op::NormDim: return per_row(out, in, kFirst, rows_along(a.shape, at.dim), t, s);
  case Op::CosineSimilarity:
    return per_row(out, in, kFirstTwo, rows_along(*broadcast(a.shape, b->shape), at.dim), t, s);
  case Op::Det: return per_row(out, in, kFirst, square_rows(a.shape), t, s);
  case Op::Slogdet:
    per_row(out, in, kFirst, square_rows(a.shape), t, s);
    // logabsdet is -inf at a singular matrix and has no derivative there: raising, as LibTorch's
    // forward-mode formula does through linalg.solve, is as correct as an inf or a NaN (det, a
    // polynomial, has one everywhere: its raising stays a finding).
    for (std::int64_t r = 0; r < out.tan.size(); ++r)
      if (!std::isfinite(out.tan.at(r).v) || indeterminate(out.tan.at(r))) s.error_possible = true;
    return;
  case Op::Cumprod:
  case Op::Logcumsumexp:
  case Op::Softmax:
  case Op::LogSoftmax:
  case Op::Normalize: return per_position(out, in, kFirst, rows_along(a.shape, at.dim), t, s);
  case Op::Inv: return per_position(out, in, kFirst, square_rows(a.shape), t, s);
  case Op::ScatterReduce: return dense(out, in, kFirstAndThird, t, s);
  }
}

} // namespace burnmark::ref
