// The matrix and vector products (mm, mv, dot, outer, bmm, addmm) and trace through Eigen 3.4's
// Tensor contract(): mm contracts axis 1 with axis 0, mv and dot the same with a vector, outer is
// the contraction over no axes (the tensor product), bmm one mm per batch; addmm is alpha times
// the contraction plus beta times the broadcast input, with beta = 0 ignoring the input (NaN and
// inf in it included), as documented; trace is the Tensor module's trace() of the leading square
// block (torch.trace of a rectangular matrix sums its min(n, m) diagonal elements).
//
// Backward passes follow derivatives.yaml: mm_mat1_backward / mm_mat2_backward (grad @ mat2^T
// and mat1^T @ grad as transposed contractions), mv's grad.ger(vec) and self.t().mv(grad), dot's
// grad * other and grad * self, addmm's maybe_multiply(grad, beta) for the input (summed to its
// shape) and maybe_multiply(mm grads, alpha), trace_backward's grad on the diagonal.
#include <algorithm>

#include "eigen_tensor.h"

namespace burnmark::eigen {
namespace {

using Pairs1 = Eigen::array<Eigen::IndexPair<Index>, 1>;
using Pairs0 = Eigen::array<Eigen::IndexPair<Index>, 0>;
const Pairs1 kInner{Eigen::IndexPair<Index>(1, 0)};  // a @ b
const Pairs1 kGradBt{Eigen::IndexPair<Index>(1, 1)}; // g @ b^T
const Pairs1 kAtGrad{Eigen::IndexPair<Index>(0, 0)}; // a^T @ g
const Pairs0 kNone{};                                // the tensor product

CMap<2> matrix(const Dense& t, Index offset, Index rows, Index cols) {
  return CMap<2>(t.data.data() + offset, rows, cols);
}
Map<2> matrix(Dense& t, Index offset, Index rows, Index cols) {
  return Map<2>(t.data.data() + offset, rows, cols);
}
CMap<2> matrix(const Dense& t) {
  return matrix(t, 0, t.shape.dims[0], t.shape.dims[1]);
}
Map<2> matrix(Dense& t) {
  return matrix(t, 0, t.shape.dims[0], t.shape.dims[1]);
}

// maybe_multiply(t, s): t itself when s is 1, else t * s, with s a float32 scalar.
template <class M> void maybe_multiply(M m, double scale) {
  const auto s = static_cast<float>(scale);
  if (s != 1.0f) m = m * s;
}

} // namespace

bool forward_linalg(const BurnmarkStmt& s, In in, Dense& out) {
  using plugin::OpId;
  const Dense& a = *in[0];
  switch (static_cast<OpId>(s.op)) {
  case OpId::Mm: matrix(out) = matrix(a).contract(matrix(*in[1]), kInner); return true;
  case OpId::Mv: flat(out) = matrix(a).contract(flat(*in[1]), kInner); return true;
  case OpId::Dot: Map<0>(out.data.data()) = flat(a).contract(flat(*in[1]), kAtGrad); return true;
  case OpId::Outer: matrix(out) = flat(a).contract(flat(*in[1]), kNone); return true;
  case OpId::Bmm: {
    const Dense& b = *in[1];
    const Index n = a.shape.dims[1], k = a.shape.dims[2], m = b.shape.dims[2];
    for (Index i = 0; i < a.shape.dims[0]; ++i)
      matrix(out, i * n * m, n, m) =
          matrix(a, i * n * k, n, k).contract(matrix(b, i * k * m, k, m), kInner);
    return true;
  }
  // gemm's alpha * (mat1 @ mat2) + beta * input, the scalars in float32.
  case OpId::Addmm: {
    const auto alpha = static_cast<float>(s.attrs.alpha), beta = static_cast<float>(s.attrs.beta);
    const Dense& input = *in[0];
    const auto product = matrix(*in[1]).contract(matrix(*in[2]), kInner);
    if (beta == 0.0f) {
      matrix(out) = product * alpha;
      return true;
    }
    Tensor4 c = expand_to(input, dims4(out.shape));
    matrix(out) = product * alpha + CMap<2>(c.data(), out.shape.dims[0], out.shape.dims[1]) * beta;
    return true;
  }
  case OpId::Trace: {
    const Index n = std::min(a.shape.dims[0], a.shape.dims[1]);
    const Eigen::array<Index, 2> start{0, 0}, extent{n, n};
    Map<0>(out.data.data()) = matrix(a).slice(start, extent).trace();
    return true;
  }
  default: return false;
  }
}

bool backward_linalg(const BurnmarkStmt& s, In in, const Dense& /*out*/, const Dense& g,
                     GradIn grad_in) {
  using plugin::OpId;
  const Dense& a = *in[0];
  switch (static_cast<OpId>(s.op)) {
  case OpId::Mm:
    matrix(*grad_in[0]) = matrix(g).contract(matrix(*in[1]), kGradBt);
    matrix(*grad_in[1]) = matrix(a).contract(matrix(g), kAtGrad);
    return true;
  // self: grad.ger(vec); vec: self.t().mv(grad)
  case OpId::Mv:
    matrix(*grad_in[0]) = flat(g).contract(flat(*in[1]), kNone);
    flat(*grad_in[1]) = matrix(a).contract(flat(g), kAtGrad);
    return true;
  // self: grad * other; other: grad * self (grad a 0-dim tensor)
  case OpId::Dot: {
    const float gg = g.data[0];
    flat(*grad_in[0]) = flat(*in[1]) * gg;
    flat(*grad_in[1]) = flat(a) * gg;
    return true;
  }
  // outer(a, b) = a[:, None] * b: grad @ b for a, grad^T @ a for b.
  case OpId::Outer:
    flat(*grad_in[0]) = matrix(g).contract(flat(*in[1]), kInner);
    flat(*grad_in[1]) = matrix(g).contract(flat(a), kAtGrad);
    return true;
  case OpId::Bmm: {
    const Dense& b = *in[1];
    const Index n = a.shape.dims[1], k = a.shape.dims[2], m = b.shape.dims[2];
    for (Index i = 0; i < a.shape.dims[0]; ++i) {
      const auto gm = matrix(g, i * n * m, n, m);
      matrix(*grad_in[0], i * n * k, n, k) = gm.contract(matrix(b, i * k * m, k, m), kGradBt);
      matrix(*grad_in[1], i * k * m, k, m) = matrix(a, i * n * k, n, k).contract(gm, kAtGrad);
    }
    return true;
  }
  case OpId::Addmm: {
    Tensor4 gi = map4(g);
    maybe_multiply(Map<4>(gi.data(), gi.dimensions()), s.attrs.beta);
    sum_to(std::move(gi), *grad_in[0]);
    matrix(*grad_in[1]) = matrix(g).contract(matrix(*in[2]), kGradBt);
    matrix(*grad_in[2]) = matrix(*in[1]).contract(matrix(g), kAtGrad);
    maybe_multiply(matrix(*grad_in[1]), s.attrs.alpha);
    maybe_multiply(matrix(*grad_in[2]), s.attrs.alpha);
    return true;
  }
  // trace_backward: grad on the diagonal of zeros.
  case OpId::Trace: {
    const Index n = std::min(a.shape.dims[0], a.shape.dims[1]);
    Map<2> d = matrix(*grad_in[0]);
    for (Index i = 0; i < n; ++i)
      d(i, i) = g.data[0];
    return true;
  }
  default: return false;
  }
}

} // namespace burnmark::eigen
