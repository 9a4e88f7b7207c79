// The derivative table: one case per op giving the gradient of each input, in the order of
// operations of PyTorch 1.13.1's derivatives.yaml (which decides overflow, 0 * inf and the
// roundings). Gradients come out at the shape the op saw each input; the tape sums broadcast
// dimensions away once, centrally. docs/conventions.md lists every rule with its source.
#include <array>

#include "tape.h"

namespace burnmark::ref {
namespace {

constexpr Approx kOne{1.0, 0.0};
constexpr Approx kZero{0.0, 0.0};

// f(g, x, y) -> {d input 0, d input 1}, both at the output's (broadcast) shape.
template <class F>
void binary(const Node& out, const Node& a, const Node& b, std::array<InputGrad, 2>& dx, F f) {
  for (InputGrad& d : dx) {
    d.shape = out.shape;
    d.buf.resize(out.shape.numel());
  }
  const double* gv = out.grad.v();
  const double* ge = out.grad.e();
  const double* av = a.value.v();
  const double* ae = a.value.e();
  const double* bv = b.value.v();
  const double* be = b.value.e();
  double* d0v = dx[0].buf.v();
  double* d0e = dx[0].buf.e();
  double* d1v = dx[1].buf.v();
  double* d1e = dx[1].buf.e();
  const auto one = [&](std::int64_t i, std::int64_t ia, std::int64_t ib) {
    const std::array<Approx, 2> r =
        f(Approx{gv[i], ge[i]}, Approx{av[ia], ae[ia]}, Approx{bv[ib], be[ib]});
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
template <class F> void unary(const Node& out, const Node& a, std::array<InputGrad, 2>& dx, F f) {
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
            std::array<InputGrad, 2>& dx) {
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

} // namespace

void backward_rule(const Node& out, const Node& a, const Node* b, std::array<InputGrad, 2>& dx,
                   ReduceScratch& s) {
  using Pair = std::array<Approx, 2>;
  const Attrs& at = out.attrs;
  switch (out.op) {
  // self: grad; other: grad (alpha 1)
  case Op::Add: return binary(out, a, *b, dx, [](Approx g, Approx, Approx) { return Pair{g, g}; });
  // self: grad; other: -grad
  case Op::Sub:
    return binary(out, a, *b, dx, [](Approx g, Approx, Approx) { return Pair{g, neg(g)}; });
  // self: grad * other; other: grad * self
  case Op::Mul:
    return binary(out, a, *b, dx, [](Approx g, Approx x, Approx y) {
      return Pair{mul(g, y), mul(g, x)};
    });
  // self: grad / other; other: -grad * ((self / other) / other)
  case Op::Div:
    return binary(out, a, *b, dx, [](Approx g, Approx x, Approx y) {
      return Pair{div(g, y), mul(neg(g), div(div(x, y), y))};
    });
  // -grad
  case Op::Neg: return unary(out, a, dx, [](Approx g, Approx, Approx) { return neg(g); });
  // grad * sgn(self), sgn(±0) = sgn(NaN) = 0; uncertain where x ± E reaches 0.
  case Op::Abs:
    return unary(out, a, dx, [](Approx g, Approx x, Approx) {
      const Approx r = mul(g, Approx{sign_of(x.v), 0.0});
      return touches(x, 0.0) && !(g.v == 0 && g.e == 0) ? Approx{r.v, kInf} : r;
    });
  // grad * result
  case Op::Exp: return unary(out, a, dx, [](Approx g, Approx, Approx y) { return mul(g, y); });
  // grad / self
  case Op::Log: return unary(out, a, dx, [](Approx g, Approx x, Approx) { return div(g, x); });
  // grad / (2 * result): +inf at +0, -inf at -0, NaN when grad is 0 there
  case Op::Sqrt:
    return unary(out, a, dx, [](Approx g, Approx, Approx y) { return div(g, mul({2.0, 0.0}, y)); });
  // c == 0: zeros; else grad * (c * self.pow(c - 1)), the pow with LibTorch's fast paths
  case Op::Pow:
    return unary(out, a, dx, [c = at.exponent](Approx g, Approx x, Approx) {
      return c == 0 ? kZero : mul(g, mul({c, 0.0}, pow(x, c - 1)));
    });
  // threshold_backward(grad, result, 0): result <= 0 ? 0 : grad, so NaN passes with gradient 1
  case Op::Relu:
    return unary(out, a, dx, [](Approx g, Approx x, Approx y) {
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
  case Op::Clamp:
    return unary(out, a, dx, [lo = to_f32(at.lo), hi = to_f32(at.hi)](Approx g, Approx x, Approx) {
      const bool uncertain = lo <= hi && (touches(x, lo) || touches(x, hi));
      return gate(g, lo <= x.v && x.v <= hi, uncertain);
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
  // mm: grad.mm(other.t()), self.t().mm(grad), batched over the broadcast batch dims
  case Op::Matmul:
    dx[0].shape =
        batch_broadcast(out.shape, a.shape[a.shape.rank() - 2], a.shape[a.shape.rank() - 1]);
    dx[1].shape =
        batch_broadcast(out.shape, b->shape[b->shape.rank() - 2], b->shape[b->shape.rank() - 1]);
    if (dx[0].wanted) matmul_grad_a(b->shape, b->value, out.shape, out.grad, dx[0].buf);
    if (dx[1].wanted) matmul_grad_b(a.shape, a.value, out.shape, out.grad, dx[1].buf);
    return;
  }
}

} // namespace burnmark::ref
