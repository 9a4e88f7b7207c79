// The derivative table: one case per op giving the gradient of each input, in the order of
// operations of PyTorch 1.13.1's derivatives.yaml (which decides overflow, 0 * inf and the
// roundings). Gradients come out at the shape the op saw each input; the tape sums broadcast
// dimensions away once, centrally. docs/conventions.md lists every rule with its source.
#include <array>

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

constexpr Approx kOne{1.0, 0.0};
constexpr Approx kZero{0.0, 0.0};

// f(g, x, y, r) -> {d input 0, d input 1}, both at the output's (broadcast) shape; r is the
// result.
template <class F>
void binary(const Node& out, const Node& a, const Node& b, std::array<InputGrad, 3>& dx, F f) {
  for (std::size_t k = 0; k < 2; ++k) {
    dx[k].shape = out.shape;
    dx[k].buf.resize(out.shape.numel());
  }
  const double* gv = out.grad.v();
  const double* ge = out.grad.e();
  const double* av = a.value.v();
  const double* ae = a.value.e();
  const double* bv = b.value.v();
  const double* be = b.value.e();
  const double* rv = out.value.v();
  const double* re = out.value.e();
  double* d0v = dx[0].buf.v();
  double* d0e = dx[0].buf.e();
  double* d1v = dx[1].buf.v();
  double* d1e = dx[1].buf.e();
  const auto one = [&](std::int64_t i, std::int64_t ia, std::int64_t ib) {
    const std::array<Approx, 2> r = f(Approx{gv[i], ge[i]}, Approx{av[ia], ae[ia]},
                                      Approx{bv[ib], be[ib]}, Approx{rv[i], re[i]});
    d0v[i] = r[0].v;
    d0e[i] = r[0].e;
    d1v[i] = r[1].v;
    d1e[i] = r[1].e;
  };
  if (a.shape == out.shape && b.shape == out.shape) { // no broadcasting: skip the index arithmetic
    for (std::int64_t i = 0, n = out.shape.numel(); i < n; ++i)
      one(i, i, i);
    return;
  }
  walk(broadcast_walk(out.shape, a.shape, b.shape), one);
}

// f(g, x, y) -> d input, with x the input and y the result.
template <class F> void unary(const Node& out, const Node& a, std::array<InputGrad, 3>& dx, F f) {
  dx[0].shape = a.shape;
  const std::int64_t n = a.shape.numel();
  dx[0].buf.resize(n);
  const double* gv = out.grad.v();
  const double* ge = out.grad.e();
  const double* xv = a.value.v();
  const double* xe = a.value.e();
  const double* yv = out.value.v();
  const double* ye = out.value.e();
  double* dv = dx[0].buf.v();
  double* de = dx[0].buf.e();
  for (std::int64_t i = 0; i < n; ++i) {
    const Approx r = f(Approx{gv[i], ge[i]}, Approx{xv[i], xe[i]}, Approx{yv[i], ye[i]});
    dv[i] = r.v;
    de[i] = r.e;
  }
}

// sum and mean: the gradient expanded back over the reduced elements, divided by their count
// for a mean (expand, then div_).
void expand(const Node& out, const Node& a, const Walk& w, bool mean,
            std::array<InputGrad, 3>& dx) {
  dx[0].shape = a.shape;
  gather(out.grad, w, dx[0].buf);
  if (!mean) return;
  const Approx n{static_cast<double>(a.shape.numel() / out.shape.numel()), 0.0};
  for (std::int64_t i = 0; i < dx[0].buf.size(); ++i)
    dx[0].buf.set(i, div(dx[0].buf.at(i), n));
}

// The shape of a matmul operand broadcast to the result's batch: batch(out) + [rows, cols].
Shape batch_broadcast(const Shape& out, std::int64_t rows, std::int64_t cols) {
  Shape s;
  for (int i = 0; i + 2 < out.rank(); ++i)
    s.push_back(out[i]);
  s.push_back(rows);
  s.push_back(cols);
  return s;
}

// where: the gradient goes to a where the condition holds and to b elsewhere, each at the
// result's shape; the condition gets none.
void select_backward(const Node& out, const Node& cond, const Node& a, const Node& b,
                     std::array<InputGrad, 3>& dx) {
  for (std::size_t k = 1; k < 3; ++k) {
    dx[k].shape = out.shape;
    dx[k].buf.resize(out.shape.numel());
  }
  const std::array<const Node*, 3> in = {&cond, &a, &b};
  ternary_walk(out.shape, in, [&](std::int64_t i, const std::array<std::int64_t, 3>& at) {
    const std::array<Approx, 2> r = where_backward(out.grad.at(i), cond.value.at(at[0]), {});
    dx[1].buf.set(i, r[0]);
    dx[2].buf.set(i, r[1]);
  });
}

// A reduction's gradient, row by row: f(x row, result, grad, dx row).
template <class F>
void reduce_backward(const Node& out, const Node& a, const Rows& r, std::array<InputGrad, 3>& dx,
                     ReduceScratch& s, F f) {
  dx[0].shape = a.shape;
  reduce_rows_backward(a.value, out.value, out.grad, r, dx[0].buf, s, f);
}

// A row-to-row op's gradient: f(x row, result row, grad row, dx row).
template <class F>
void along_backward(const Node& out, const Node& a, int dim, std::array<InputGrad, 3>& dx,
                    ReduceScratch& s, F f) {
  dx[0].shape = a.shape;
  map_rows_backward(a.value, out.value, out.grad, rows_along(a.shape, dim), dx[0].buf, s, f);
}

// cosine_similarity: both gradients at the broadcast shape (the tape sums them down).
void cosine_backward(const Node& out, const Node& a, const Node& b, int dim,
                     std::array<InputGrad, 3>& dx, ReduceScratch& s) {
  const Shape over = *broadcast(a.shape, b.shape);
  gather(a.value, broadcast_walk(over, a.shape, a.shape), s.wide_a);
  gather(b.value, broadcast_walk(over, b.shape, b.shape), s.wide_b);
  const Rows r = rows_along(over, dim);
  for (std::size_t k = 0; k < 2; ++k) {
    dx[k].shape = over;
    dx[k].buf.resize(over.numel());
  }
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(s.wide_a, r, row, s.x);
    gather_row(s.wide_b, r, row, s.y);
    const Approx g = out.grad.at(row);
    s.dx.resize(s.x.size());
    s.g.resize(s.x.size());
    cosine_side_backward(Row(s.x), Row(s.y), g, RowOut(s.dx), s.partial, s.terms, s.via_norm);
    cosine_side_backward(Row(s.y), Row(s.x), g, RowOut(s.g), s.partial, s.terms, s.via_norm);
    scatter_row(s.dx, r, row, dx[0].buf);
    scatter_row(s.g, r, row, dx[1].buf);
  }
}

} // namespace

void backward_rule(const Node& out, const Node& a, const Node* b, const Node* c,
                   std::array<InputGrad, 3>& dx, ReduceScratch& s) {
  using Pair = std::array<Approx, 2>;
  const Attrs& at = out.attrs;
  switch (out.op) {
  // self: grad; other: grad (alpha 1)
  case Op::Add:
    return binary(out, a, *b, dx, [](Approx g, Approx, Approx, Approx) { return Pair{g, g}; });
  // self: grad; other: -grad
  case Op::Sub:
    return binary(out, a, *b, dx, [](Approx g, Approx, Approx, Approx) { return Pair{g, neg(g)}; });
  // self: grad * other; other: grad * self
  case Op::Mul:
    return binary(out, a, *b, dx, [](Approx g, Approx x, Approx y, Approx) {
      return Pair{mul(g, y), mul(g, x)};
    });
  // self: grad / other; other: -grad * ((self / other) / other)
  case Op::Div:
    return binary(out, a, *b, dx, [](Approx g, Approx x, Approx y, Approx) {
      return Pair{div(g, y), mul(neg(g), div(div(x, y), y))};
    });
  // -grad
  case Op::Neg: return unary(out, a, dx, [](Approx g, Approx, Approx) { return neg(g); });
  // grad * sgn(self) with sgn(±0) = 0 (the subgradient at the kink) and sgn(NaN) = NaN, as
  // sign is NaN there (LibTorch's sgn(NaN) = 0 is a bug: bugs.md, libtorch-sign-nan); uncertain
  // where x ± E reaches 0.
  case Op::Abs:
    return unary(out, a, dx, [](Approx g, Approx x, Approx) {
      const Approx r = mul(g, Approx{std::isnan(x.v) ? x.v : sign_of(x.v), 0.0});
      return touches(x, 0.0) && !(g.v == 0 && g.e == 0) ? Approx{r.v, kInf} : r;
    });
  // grad * result
  case Op::Exp: return unary(out, a, dx, [](Approx g, Approx, Approx y) { return mul(g, y); });
  // grad / self
  case Op::Log: return unary(out, a, dx, [](Approx g, Approx x, Approx) { return div(g, x); });
  // grad / (2 * result): +inf at +0, -inf at -0, NaN when grad is 0 there
  case Op::Sqrt:
    return unary(out, a, dx, [](Approx g, Approx, Approx y) { return div(g, mul({2.0, 0.0}, y)); });
  // c == 0: zeros; else grad * (c * self.pow(c - 1)), the pow with LibTorch's fast paths. In
  // bf16 and f16 LibTorch rounds each of its three kernels to the dtype, a fused kernel (oneDNN's
  // eltwise_pow backward) rounds once: one_kernel spans both and the exact value rounded once.
  case Op::Pow:
    return unary(out, a, dx, [c = at.exponent](Approx g, Approx x, Approx) {
      if (c == 0) return other_side(Convention::Pow0GradByProduct) ? mul(g, kZero) : kZero;
      return one_kernel([&] { return mul(g, mul({c, 0.0}, pow(x, c - 1))); });
    });
  // threshold_backward(grad, result, 0): result <= 0 ? 0 : grad, so NaN passes with gradient 1
  case Op::Relu:
    return unary(
        out, a, dx,
        [by_product = other_side(Convention::ReluGradByProduct)](Approx g, Approx x, Approx y) {
          // The product's mask is (result > 0), false at NaN (oneDNN, TorchScript).
          if (by_product) return gate_as(true, g, y.v > 0, touches(x, 0.0));
          return gate(g, !(y.v <= 0), touches(x, 0.0));
        });
  // sigmoid_backward: grad * (1 - y) * y
  case Op::Sigmoid:
    return unary(out, a, dx,
                 [](Approx g, Approx, Approx y) { return mul(mul(g, sub(kOne, y)), y); });
  // tanh_backward: grad * (1 - y * y)
  case Op::Tanh:
    return unary(out, a, dx,
                 [](Approx g, Approx, Approx y) { return mul(g, sub(kOne, mul(y, y))); });
  // where(min <= self <= max, grad, 0): passes at the bounds, 0 at NaN, 0 everywhere if min > max
  // (the other sides: clamp-grad-open-below blocks at lo, clamp-grad-min-norm at lo and hi).
  case Op::Clamp:
    return unary(
        out, a, dx,
        [lo = to_opmath(at.lo), hi = to_opmath(at.hi),
         min_norm = other_side(Convention::ClampGradMinNorm),
         open_below = other_side(Convention::ClampGradOpenBelow) ||
                      other_side(Convention::ClampGradMinNorm)](Approx g, Approx x, Approx) {
          const bool uncertain = lo <= hi && (touches(x, lo) || touches(x, hi));
          const bool above_lo = open_below ? lo < x.v : lo <= x.v;
          const bool below_hi = min_norm ? x.v < hi : x.v <= hi;
          return gate(g, above_lo && below_hi, uncertain);
        });
  // grad.expand(self.sizes())
  case Op::SumAll: return expand(out, a, plain_walk(a.shape), false, dx);
  // grad.expand(self.sizes()) / self.numel()
  case Op::MeanAll: return expand(out, a, plain_walk(a.shape), true, dx);
  // sum_backward: the reduced dim reinserted, expanded
  case Op::SumDim: return expand(out, a, reduce_dim_walk(a.shape, at.dim), false, dx);
  // mean_backward: sum_backward(...).div_(size of the reduced dim)
  case Op::MeanDim: return expand(out, a, reduce_dim_walk(a.shape, at.dim), true, dx);
  // grad.transpose(dim0, dim1)
  case Op::Transpose:
    dx[0].shape = a.shape;
    return gather(out.grad, transpose_walk(out.shape, at.dim, at.dim1), dx[0].buf);
  // cat_tensors_backward: the slice of grad each input filled
  case Op::Concat:
    dx[0].shape = a.shape;
    dx[1].shape = b->shape;
    gather(out.grad, concat_part_walk(a.shape, b->shape, at.dim, 0), dx[0].buf);
    return gather(out.grad, concat_part_walk(a.shape, b->shape, at.dim, 1), dx[1].buf);
  // repeat_backward: grad viewed as [outer, times, n, inner], summed over the tiles
  case Op::Repeat:
    dx[0].shape = a.shape;
    return reduce(out.grad, repeat_walk(a.shape, at.dim, at.times), a.shape.numel(), dx[0].buf, s);
  // mm: grad.mm(other.t()), self.t().mm(grad), batched over the broadcast batch dims; bmm's
  // grad.bmm(mat2.transpose(1, 2)), self.transpose(1, 2).bmm(grad) are the same with equal batches
  case Op::Matmul:
  case Op::Bmm:
    dx[0].shape =
        batch_broadcast(out.shape, a.shape[a.shape.rank() - 2], a.shape[a.shape.rank() - 1]);
    dx[1].shape =
        batch_broadcast(out.shape, b->shape[b->shape.rank() - 2], b->shape[b->shape.rank() - 1]);
    if (dx[0].wanted) matmul_grad_a(b->shape, b->value, out.shape, out.grad, dx[0].buf);
    if (dx[1].wanted) matmul_grad_b(a.shape, a.value, out.shape, out.grad, dx[1].buf);
    return;
  case Op::Sin:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return sin_backward(g, x, y, at); });
  case Op::Cos:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return cos_backward(g, x, y, at); });
  case Op::Tan:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return tan_backward(g, x, y, at); });
  case Op::Asin:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return asin_backward(g, x, y, at); });
  case Op::Acos:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return acos_backward(g, x, y, at); });
  case Op::Atan:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return atan_backward(g, x, y, at); });
  case Op::Sinh:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return sinh_backward(g, x, y, at); });
  case Op::Cosh:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return cosh_backward(g, x, y, at); });
  case Op::Asinh:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return asinh_backward(g, x, y, at); });
  case Op::Acosh:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return acosh_backward(g, x, y, at); });
  case Op::Atanh:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return atanh_backward(g, x, y, at); });
  case Op::Erf:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return erf_backward(g, x, y, at); });
  case Op::Erfc:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return erfc_backward(g, x, y, at); });
  case Op::Erfinv:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return erfinv_backward(g, x, y, at); });
  case Op::Log1p:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return log1p_backward(g, x, y, at); });
  case Op::Expm1:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return expm1_backward(g, x, y, at); });
  case Op::Log2:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return log2_backward(g, x, y, at); });
  case Op::Log10:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return log10_backward(g, x, y, at); });
  case Op::Exp2:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return exp2_backward(g, x, y, at); });
  case Op::Rsqrt:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return rsqrt_backward(g, x, y, at); });
  case Op::Reciprocal:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return reciprocal_backward(g, x, y, at); });
  case Op::Square:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return square_backward(g, x, y, at); });
  case Op::Sign:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return sign_backward(g, x, y, at); });
  case Op::Sgn:
    // The other side: a symbolic zero (LibTorch's efficient zero tensor, JAX's symbolic zeros)
    // that contributes nothing upstream, so no 0 * inf there ever becomes NaN.
    if (other_side(Convention::SgnGradSymbolicZero)) {
      dx[0].wanted = false;
      return;
    }
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return sgn_backward(g, x, y, at); });
  case Op::Floor:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return floor_backward(g, x, y, at); });
  case Op::Ceil:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return ceil_backward(g, x, y, at); });
  case Op::Round:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return round_backward(g, x, y, at); });
  case Op::Trunc:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return trunc_backward(g, x, y, at); });
  case Op::Frac:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return frac_backward(g, x, y, at); });
  case Op::Lgamma:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return lgamma_backward(g, x, y, at); });
  case Op::Digamma:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return digamma_backward(g, x, y, at); });
  case Op::ClampMin:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return clamp_min_backward(g, x, y, at); });
  case Op::ClampMax:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return clamp_max_backward(g, x, y, at); });
  case Op::LogSigmoid:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return logsigmoid_backward(g, x, y, at); });
  case Op::Softplus:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return softplus_backward(g, x, y, at); });
  case Op::Gelu:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return gelu_backward(g, x, y, at); });
  case Op::Silu:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return silu_backward(g, x, y, at); });
  case Op::Mish:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return mish_backward(g, x, y, at); });
  case Op::Elu:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return elu_backward(g, x, y, at); });
  case Op::Selu:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return selu_backward(g, x, y, at); });
  case Op::Celu:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return celu_backward(g, x, y, at); });
  case Op::LeakyRelu:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return leaky_relu_backward(g, x, y, at); });
  case Op::Hardtanh:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return hardtanh_backward(g, x, y, at); });
  case Op::Relu6:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return relu6_backward(g, x, y, at); });
  case Op::Hardsigmoid:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return hardsigmoid_backward(g, x, y, at); });
  case Op::Hardswish:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return hardswish_backward(g, x, y, at); });
  case Op::Softsign:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return softsign_backward(g, x, y, at); });
  case Op::Hardshrink:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return hardshrink_backward(g, x, y, at); });
  case Op::Softshrink:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return softshrink_backward(g, x, y, at); });
  case Op::Tanhshrink:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return tanhshrink_backward(g, x, y, at); });
  case Op::Logit:
    return unary(out, a, dx,
                 [&at](Approx g, Approx x, Approx y) { return logit_backward(g, x, y, at); });
  case Op::Maximum:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return maximum_backward(g, x, y, r, at);
    });
  case Op::Minimum:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return minimum_backward(g, x, y, r, at);
    });
  case Op::Fmax:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return fmax_backward(g, x, y, r, at);
    });
  case Op::Fmin:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return fmin_backward(g, x, y, r, at);
    });
  case Op::Atan2:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return atan2_backward(g, x, y, r, at);
    });
  case Op::PowTensor:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return pow_tensor_backward(g, x, y, r, at);
    });
  case Op::Remainder:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return remainder_backward(g, x, y, r, at);
    });
  case Op::Fmod:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return fmod_backward(g, x, y, r, at);
    });
  case Op::DivRounded:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return div_rounded_backward(g, x, y, r, at);
    });
  case Op::Hypot:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return hypot_backward(g, x, y, r, at);
    });
  case Op::Xlogy:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return xlogy_backward(g, x, y, r, at);
    });
  case Op::Copysign:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return copysign_backward(g, x, y, r, at);
    });
  case Op::Lerp:
    return binary(out, a, *b, dx, [&at](Approx g, Approx x, Approx y, Approx r) {
      return lerp_backward(g, x, y, r, at);
    });
  case Op::Where: return select_backward(out, a, *b, *c, dx);
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne: return; // masks are never differentiated: where sends nothing to its condition
  case Op::Prod:
  case Op::ProdDim: {
    const Rows r = out.op == Op::Prod ? rows_all(a.shape) : rows_along(a.shape, at.dim);
    return reduce_backward(out, a, r, dx, s, prod_backward);
  }
  // amax, amin: scale_grad_by_count over the elements equal to the result
  case Op::Amax:
  case Op::Amin:
  case Op::AmaxDim:
  case Op::AminDim: {
    const bool all = out.op == Op::Amax || out.op == Op::Amin;
    const bool want_max = out.op == Op::Amax || out.op == Op::AmaxDim;
    return reduce_backward(
        out, a, all ? rows_all(a.shape) : rows_along(a.shape, at.dim), dx, s,
        [want_max](Row x, Approx, Approx g, RowOut d) { amax_backward(x, g, want_max, d); });
  }
  // max, min over every element: evenly_distribute_backward
  case Op::Max:
  case Op::Min:
    return reduce_backward(out, a, rows_all(a.shape), dx, s,
                           [want_max = out.op == Op::Max](Row x, Approx, Approx g, RowOut d) {
                             max_all_backward(x, g, want_max, d);
                           });
  // max, min along a dim: value_selecting_reduction_backward at the returned index
  case Op::MaxDim:
  case Op::MinDim:
    return reduce_backward(out, a, rows_along(a.shape, at.dim), dx, s,
                           [want_max = out.op == Op::MaxDim](Row x, Approx, Approx g, RowOut d) {
                             max_dim_backward(x, g, want_max, d);
                           });
  case Op::Var:
  case Op::VarDim:
    return reduce_backward(
        out, a, out.op == Op::Var ? rows_all(a.shape) : rows_along(a.shape, at.dim), dx, s,
        [c = at.variant](Row x, Approx, Approx g, RowOut d) { var_backward(x, g, c, d); });
  case Op::Std:
  case Op::StdDim:
    return reduce_backward(
        out, a, out.op == Op::Std ? rows_all(a.shape) : rows_along(a.shape, at.dim), dx, s,
        [c = at.variant](Row x, Approx y, Approx g, RowOut d) { std_backward(x, y, g, c, d); });
  case Op::VectorNorm:
  case Op::NormDim:
    // ord 0 counts nonzeros: its gradient is 0 wherever it exists, numeric zeros here, on the
    // other side a symbolic zero as for sgn (LibTorch's).
    if (at.exponent == 0 && other_side(Convention::Norm0GradSymbolicZero)) {
      dx[0].wanted = false;
      return;
    }
    return reduce_backward(
        out, a, out.op == Op::VectorNorm ? rows_all(a.shape) : rows_along(a.shape, at.dim), dx, s,
        [p = at.exponent](Row x, Approx y, Approx g, RowOut d) {
          vector_norm_backward(x, y, g, p, d);
        });
  case Op::Logsumexp:
    return reduce_backward(out, a, rows_along(a.shape, at.dim), dx, s, logsumexp_backward);
  case Op::Cumsum:
    return along_backward(out, a, at.dim, dx, s, [&s](Row, Row, Row g, RowOut d) {
      cumsum_backward(g, d, s.terms, s.partial);
    });
  case Op::Cumprod:
    return along_backward(out, a, at.dim, dx, s, [&s](Row x, Row, Row g, RowOut d) {
      cumprod_backward(x, g, d, s.terms);
    });
  case Op::Logcumsumexp:
    return along_backward(out, a, at.dim, dx, s, [&s](Row x, Row y, Row g, RowOut d) {
      logcumsumexp_backward(x, y, g, d, s.terms);
    });
  case Op::Softmax:
    return along_backward(out, a, at.dim, dx, s, [&s](Row, Row y, Row g, RowOut d) {
      softmax_backward(y, g, d, s.terms);
    });
  case Op::LogSoftmax:
    return along_backward(out, a, at.dim, dx, s,
                          [](Row, Row y, Row g, RowOut d) { log_softmax_backward(y, g, d); });
  case Op::Normalize:
    return along_backward(out, a, at.dim, dx, s,
                          [&s, p = at.exponent](Row x, Row, Row g, RowOut d) {
                            normalize_backward(x, g, p, d, s.terms, s.via_norm);
                          });
  case Op::CosineSimilarity: return cosine_backward(out, a, *b, at.dim, dx, s);
  case Op::Mm:
  case Op::Mv:
  case Op::Dot:
  case Op::Outer: return linalg_product_backward(out, a, *b, dx, 0, 1);
  case Op::Addmm: return addmm_backward(out, *b, *c, dx);
  case Op::Trace: return trace_backward(out, a, dx);
  case Op::Det: return det_backward(out, a, dx);
  case Op::Slogdet: return slogdet_backward(out, a, dx);
  case Op::Inv: return inv_backward(out, dx, s);
  case Op::Flip:
  case Op::Roll:
  case Op::Unsqueeze:
  case Op::Squeeze:
  case Op::Tril:
  case Op::Triu:
  case Op::Movedim:
  case Op::Select:
  case Op::Diagonal:
  case Op::Reshape:
  case Op::Relayout:
  case Op::Permute:
  case Op::Slice:
  case Op::Chunk:
  case Op::DiagEmbed:
  case Op::Narrow: return view_backward(out, a, dx, s.index);
  // expand broadcasts a size-1 dim, so its gradient is the un-broadcasting sum every broadcast
  // operand gets (sum_to: accumulated in f32 for bf16 and f16, rounded once), not a copy.
  case Op::Expand: dx[0].shape = a.shape; return sum_to(out.grad, out.shape, a.shape, dx[0].buf, s);
  case Op::Gather:
  case Op::IndexSelect:
  case Op::TakeAlongDim: return take_backward(out, a, *b, dx, s.index);
  case Op::ScatterAdd:
  case Op::ScatterReduce: return scatter_backward(out, a, *b, *c, dx, s);
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill:
  case Op::IndexPut: return index_update_backward(out, a, *b, c, dx, s);
  case Op::MaskedScatter: return masked_scatter_backward(out, a, *b, *c, dx);
  case Op::MaskedFill:
    return binary(out, a, *b, dx, [](Approx g, Approx, Approx m, Approx) {
      return std::array<Approx, 2>{masked_fill_backward(g, m), Approx{0.0, 0.0}};
    });
  case Op::Stack: return stack_backward(out, a, *b, dx);
  }
}

} // namespace burnmark::ref
