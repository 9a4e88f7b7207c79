// Backward kernels of the Eigen plugin: each op's gradient as Eigen Tensor expressions, in
// float32, following PyTorch 1.13's derivatives.yaml formulas and their order of operations
// (which decides 0 * inf, overflow and rounding). Binary ops build the gradient at the
// broadcast result's shape and sum it down to each operand's shape with sum_to, as PyTorch's
// engine does.
#include <utility>

#include "eigen_tensor.h"

namespace burnmark::eigen {
namespace {

// grad expanded back over the elements reduced into each output element; for a mean, divided
// by their count (expand, then div_), not multiplied by its reciprocal.
void expand(const Dense& in, const Dense& g, int axis, bool mean, Dense& dst) {
  // axis < 0: every element was reduced into one.
  const Dims d = dims4(in.shape);
  Dims kept{1, 1, 1, 1};
  Index count = size_of(d);
  if (axis >= 0) {
    kept = d;
    kept[static_cast<std::size_t>(axis)] = 1;
    count = d[static_cast<std::size_t>(axis)];
  }
  const auto grown = CMap<kRank>(g.data.data(), kept).broadcast(broadcast_factors(kept, d));
  if (mean)
    map4(dst) = grown / static_cast<float>(count);
  else
    map4(dst) = grown;
}

// grad @ b^T at batch(out) + [m, k], and a^T @ grad at batch(out) + [k, n], one contraction
// per batch; sum_to then folds broadcast batch axes back into each operand.
void matmul_grad(In in, const Dense& out, const Dense& g, GradIn grad_in) {
  const Dense& a = *in[0];
  const Dense& b = *in[1];
  const MatmulShape s{dims4(a.shape), dims4(b.shape), dims4(out.shape)};
  const Index m = s.out[2], n = s.out[3], k = s.a[3];
  Tensor4 ga(s.out[0], s.out[1], m, k);
  Tensor4 gb(s.out[0], s.out[1], k, n);
  const Eigen::array<Eigen::IndexPair<Index>, 1> g_bt{Eigen::IndexPair<Index>(1, 1)};
  const Eigen::array<Eigen::IndexPair<Index>, 1> at_g{Eigen::IndexPair<Index>(0, 0)};
  for (Index i0 = 0; i0 < s.out[0]; ++i0)
    for (Index i1 = 0; i1 < s.out[1]; ++i1) {
      const Index batch = i0 * s.out[1] + i1;
      CMap<2> gm(g.data.data() + batch * m * n, m, n);
      CMap<2> am(a.data.data() + MatmulShape::offset(s.a, i0, i1), m, k);
      CMap<2> bm(b.data.data() + MatmulShape::offset(s.b, i0, i1), k, n);
      Map<2>(ga.data() + batch * m * k, m, k) = gm.contract(bm, g_bt);
      Map<2>(gb.data() + batch * k * n, k, n) = am.contract(gm, at_g);
    }
  sum_to(std::move(ga), *grad_in[0]);
  sum_to(std::move(gb), *grad_in[1]);
}

} // namespace

void backward(const BurnmarkStmt& s, In in, const Dense& out, const Dense& g, GradIn grad_in) {
  using plugin::OpId;
  const Dense& x = *in[0];
  Dense& dx = *grad_in[0];
  switch (static_cast<OpId>(s.op)) {
  // self: grad; other: grad
  case OpId::Add:
    binary_grad(in, out, g, dx, [](auto gg, auto, auto, auto) { return gg; });
    binary_grad(in, out, g, *grad_in[1], [](auto gg, auto, auto, auto) { return gg; });
    return;
  // self: grad; other: -grad
  case OpId::Sub:
    binary_grad(in, out, g, dx, [](auto gg, auto, auto, auto) { return gg; });
    binary_grad(in, out, g, *grad_in[1], [](auto gg, auto, auto, auto) { return -gg; });
    return;
  // self: grad * other; other: grad * self
  case OpId::Mul:
    binary_grad(in, out, g, dx, [](auto gg, auto, auto b, auto) { return gg * b; });
    binary_grad(in, out, g, *grad_in[1], [](auto gg, auto a, auto, auto) { return gg * a; });
    return;
  // self: grad / other; other: -grad * ((self / other) / other)
  case OpId::Div:
    binary_grad(in, out, g, dx, [](auto gg, auto, auto b, auto) { return gg / b; });
    binary_grad(in, out, g, *grad_in[1],
                [](auto gg, auto a, auto b, auto) { return -gg * ((a / b) / b); });
    return;
  case OpId::Neg: flat(dx) = -flat(g); return;
  // grad * sgn(self), with Eigen's own sign (its convention at NaN, not LibTorch's).
  case OpId::Abs: flat(dx) = flat(g) * flat(x).sign(); return;
  // grad * result
  case OpId::Exp: flat(dx) = flat(g) * flat(out); return;
  // grad / self
  case OpId::Log: flat(dx) = flat(g) / flat(x); return;
  // grad / (2 * result)
  case OpId::Sqrt: flat(dx) = flat(g) / (flat(out) * 2.0f); return;
  // exponent 0: zeros (dx arrives zeroed); else grad * (c * self.pow(c - 1))
  case OpId::Pow: {
    const auto c = static_cast<float>(s.attrs.exponent);
    if (c != 0.0f) flat(dx) = flat(g) * (flat(x).pow(c - 1.0f) * c);
    return;
  }
  // threshold_backward(grad, result, 0): zero where result <= 0, so NaN passes the gradient.
  case OpId::Relu: flat(dx) = (flat(out) <= 0.0f).select(flat(g).constant(0.0f), flat(g)); return;
  // sigmoid_backward: grad * (1 - y) * y
  case OpId::Sigmoid: flat(dx) = flat(g) * (1.0f - flat(out)) * flat(out); return;
  // tanh_backward: grad * (1 - y * y)
  case OpId::Tanh: flat(dx) = flat(g) * (1.0f - flat(out) * flat(out)); return;
  // where(min <= self <= max, grad, 0): passes at the bounds, 0 at NaN and when min > max.
  case OpId::Clamp: {
    const auto lo = static_cast<float>(s.attrs.lo), hi = static_cast<float>(s.attrs.hi);
    flat(dx) = ((flat(x) >= lo) && (flat(x) <= hi)).select(flat(g), flat(g).constant(0.0f));
    return;
  }
  case OpId::SumAll: return expand(x, g, -1, false, dx);
  case OpId::MeanAll: return expand(x, g, -1, true, dx);
  case OpId::SumDim: return expand(x, g, s.attrs.dim + pad(x.shape), false, dx);
  case OpId::MeanDim: return expand(x, g, s.attrs.dim + pad(x.shape), true, dx);
  // Swapping two axes is its own inverse.
  case OpId::Transpose: {
    Eigen::array<Index, kRank> perm{0, 1, 2, 3};
    std::swap(perm[static_cast<std::size_t>(s.attrs.dim + pad(x.shape))],
              perm[static_cast<std::size_t>(s.attrs.dim1 + pad(x.shape))]);
    map4(dx) = map4(g).shuffle(perm);
    return;
  }
  // The slice of grad each operand filled.
  case OpId::Concat: {
    const auto axis = static_cast<std::size_t>(s.attrs.dim + pad(x.shape));
    Dims offset{0, 0, 0, 0};
    map4(dx) = map4(g).slice(offset, dims4(x.shape));
    offset[axis] = dims4(x.shape)[axis];
    map4(*grad_in[1]) = map4(g).slice(offset, dims4(in[1]->shape));
    return;
  }
  // repeat_backward: grad viewed as [outer, times, n, inner], summed over the tiles.
  case OpId::Repeat: {
    const Dims d = dims4(x.shape);
    const auto axis = static_cast<std::size_t>(s.attrs.dim + pad(x.shape));
    Index outer = 1, inner = 1;
    for (std::size_t i = 0; i < axis; ++i)
      outer *= d[i];
    for (std::size_t i = axis + 1; i < static_cast<std::size_t>(kRank); ++i)
      inner *= d[i];
    const CMap<kRank> tiles(g.data.data(), outer, s.attrs.times, d[axis], inner);
    Map<kRank - 1>(dx.data.data(), outer, d[axis], inner) = tiles.sum(Eigen::array<Index, 1>{1});
    return;
  }
  case OpId::Matmul: return matmul_grad(in, out, g, grad_in);
  default: break;
  }
  if (backward_unary(s, x, out, g, dx) || backward_binary(s, in, out, g, grad_in) ||
      backward_views(s, in, out, g, grad_in) || backward_linalg(s, in, out, g, grad_in))
    return;
  // Not in kOps, so the host never sends it.
  throw plugin::Unsupported{s.op, {}};
}

} // namespace burnmark::eigen
