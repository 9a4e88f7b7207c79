// The matrix and vector ops of the reference (mm, mv, dot, outer, addmm, trace), forward and
// backward. Each is the matmul kernel of kernels.h on a view of its operands (a vector is a
// [k, 1] or [1, k] matrix; the layout is the same), so they share matmul's dot-product bounds;
// addmm and trace add their elementwise steps with approx.h's arithmetic. The backward follows
// derivatives.yaml: mm_mat1_backward / mm_mat2_backward, mv's grad.ger(vec) and self.t().mv(grad),
// dot's grad * other, addmm's maybe_multiply(grad, beta) and trace_backward.
#pragma once

#include "approx_reduce.h"
#include "tape.h"

namespace burnmark::ref {

inline Shape column(std::int64_t n) {
  return Shape{n, 1};
}
inline Shape row_of(std::int64_t n) {
  return Shape{1, n};
}

// The matmul views of each op's two matrix operands and its result.
struct MatmulView {
  Shape a, b, out;
};
inline MatmulView matmul_view(Op op, const Shape& a, const Shape& b) {
  if (op == Op::Mv) return {a, column(b[0]), column(a[0])};
  if (op == Op::Dot) return {row_of(a[0]), column(b[0]), Shape{1, 1}};
  if (op == Op::Outer) return {column(a[0]), row_of(b[0]), Shape{a[0], b[0]}};
  return {a, b, Shape{a[0], b[1]}}; // mm, and addmm's mat1 @ mat2
}

inline void linalg_product(Op op, const Node& a, const Node& b, Buf& out) {
  // torch.outer is self.reshape({-1, 1}) * vec2: a broadcast mul, so -1 * 0 is -0 (a one-term
  // matmul would add it to a +0 accumulator).
  if (op == Op::Outer) {
    const std::int64_t m = a.shape[0];
    const std::int64_t n = b.shape[0];
    out.resize(m * n);
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        out.set(i * n + j, mul(a.value.at(i), b.value.at(j)));
    return;
  }
  const MatmulView v = matmul_view(op, a.shape, b.shape);
  matmul(v.a, a.value, v.b, b.value, v.out, out);
}

// One element of beta * c + alpha * (row . col), as a BLAS gemm computes it: the products and c
// accumulated in unknown order, with no rounding of the product before c is added (gemm never
// rounds alpha * (A @ B) on its own, so it may not overflow where the whole does not).
inline Approx addmm_element(const Buf& m1, std::int64_t row0, const Buf& m2, std::int64_t col0,
                            std::int64_t k, std::int64_t n, Approx c, double alpha, double beta) {
  double sum = 0, abs_sum = 0, err = 0; // abs_sum over the finite products
  bool indet = false, non_finite = false, positive = false, negative = false;
  const auto sign_of = [&](double term) {
    positive = positive || term > 0;
    negative = negative || term < 0;
  };
  for (std::int64_t p = 0; p < k; ++p) {
    const Approx a = m1.at(row0 + p);
    const Approx b = m2.at(col0 + p * n);
    indet = indet || indeterminate(a) || indeterminate(b) ||
            (std::isinf(a.v) && straddles_zero(b)) || (std::isinf(b.v) && straddles_zero(a));
    const double prod = a.v * b.v;
    sign_of(alpha * prod);
    if (std::isfinite(prod))
      abs_sum += std::fabs(prod);
    else
      non_finite = true;
    sum += prod;
    err += scaled(std::fabs(b.v), a.e) + scaled(std::fabs(a.v), b.e) + a.e * b.e;
  }
  const bool use_c = beta != 0; // documented: beta = 0 ignores the input entirely
  const double cv = use_c ? beta * c.v : 0.0;
  const double value = alpha * sum + cv;
  if (indet || (use_c && indeterminate(c))) return unknown(value);
  sign_of(cv);
  non_finite = non_finite || !std::isfinite(cv);
  const double mag = std::fabs(alpha) * abs_sum + (std::isfinite(cv) ? std::fabs(cv) : 0.0);
  // A product or partial sum of finite terms that overflows f32 in some order may meet a term
  // of the other sign, or an infinity: inf - inf is possible, as for matmul
  // (partial_sums_may_overflow), whatever the exact value.
  if (mag >= storage.overflow && ((positive && negative) || non_finite)) return unknown(value);
  if (non_finite) return finish_exact(value, 0.0); // IEEE's infinities: the same in any order
  const double e = std::fabs(alpha) * err + (use_c ? std::fabs(beta) * c.e : 0.0) +
                   static_cast<double>(k + 2) * storage.acc_u * mag; // f32 accumulator, dot()
  return finish_exact(value, e);
}

// beta * input + alpha * (mat1 @ mat2), input broadcast to the result.
inline void addmm_forward(const Node& input, const Node& m1, const Node& m2, Node& out,
                          ReduceScratch& s) {
  gather(input.value, broadcast_walk(out.shape, input.shape, input.shape), s.wide_b);
  const std::int64_t rows = m1.shape[0], k = m1.shape[1], cols = m2.shape[1];
  out.value.resize(out.shape.numel());
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      out.value.set(i * cols + j,
                    addmm_element(m1.value, i * k, m2.value, j, k, cols, s.wide_b.at(i * cols + j),
                                  to_opmath(out.attrs.alpha), to_opmath(out.attrs.beta)));
}

inline Approx trace_forward(const Node& a, ReduceScratch& s) {
  const std::int64_t n = std::min(a.shape[0], a.shape[1]);
  s.x.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    s.x[static_cast<std::size_t>(i)] = a.value.at(i * a.shape[1] + i);
  return sum_of(Row(s.x));
}

// maybe_multiply(t, s): t itself when s is 1, else t * s.
inline void maybe_multiply(Buf& t, double scale) {
  if (to_opmath(scale) == 1.0) return;
  for (std::int64_t i = 0; i < t.size(); ++i)
    t.set(i, mul(t.at(i), Approx{to_opmath(scale), 0.0}));
}

// Gradients of the matrix operands of mm, mv, dot, outer and addmm, at the operands' shapes;
// `first` and `second` are the matrix operands, `k0`, `k1` the slots of dx they fill.
// outer's gradient is its broadcast mul's (native_functions.yaml: outer is
// CompositeImplicitAutograd, `self.reshape({-1, 1}) * vec2`): each product grad[i][j] * other[j]
// is a tensor of the dtype, rounded there before the sum over j adds them in f32. In f32 and f64
// the dot product's bound already counts a rounding per term; in bf16 and f16 the dtype's rounding
// of each product is added here: 0.99994 = 1.0078125 * 0.9921875 rounds to 1 in f16, so two
// products that cancel exactly in f32 leave 0, not 2^-14.
inline void add_product_roundings(const Buf& grad, const Buf& other, std::int64_t rows,
                                  std::int64_t cols, bool along_rows, Buf& d) {
  if (storage.u == storage.acc_u) return;
  for (std::int64_t i = 0; i < d.size(); ++i) {
    double abs_sum = 0;
    const std::int64_t terms = along_rows ? cols : rows;
    for (std::int64_t t = 0; t < terms; ++t) {
      const std::int64_t g = along_rows ? i * cols + t : t * cols + i;
      abs_sum += std::fabs(grad.at(g).v * other.at(t).v);
    }
    const Approx x = d.at(i);
    if (std::isfinite(abs_sum)) d.set(i, {x.v, x.e + storage.u * abs_sum});
  }
}

inline void linalg_product_backward(const Node& out, const Node& first, const Node& second,
                                    std::array<InputGrad, 3>& dx, std::size_t k0, std::size_t k1) {
  const MatmulView v = matmul_view(out.op, first.shape, second.shape);
  dx[k0].shape = first.shape;
  dx[k1].shape = second.shape;
  if (dx[k0].wanted) matmul_grad_a(v.b, second.value, v.out, out.grad, dx[k0].buf);
  if (dx[k1].wanted) matmul_grad_b(v.a, first.value, v.out, out.grad, dx[k1].buf);
  if (out.op != Op::Outer) return;
  const std::int64_t m = first.shape[0], n = second.shape[0];
  if (dx[k0].wanted) add_product_roundings(out.grad, second.value, m, n, true, dx[k0].buf);
  if (dx[k1].wanted) add_product_roundings(out.grad, first.value, m, n, false, dx[k1].buf);
}

inline void addmm_backward(const Node& out, const Node& m1, const Node& m2,
                           std::array<InputGrad, 3>& dx) {
  // The input's gradient at the result's shape (the tape sums broadcast dims away).
  dx[0].shape = out.shape;
  dx[0].buf.assign(out.grad);
  maybe_multiply(dx[0].buf, out.attrs.beta);
  linalg_product_backward(out, m1, m2, dx, 1, 2);
  if (dx[1].wanted) maybe_multiply(dx[1].buf, out.attrs.alpha);
  if (dx[2].wanted) maybe_multiply(dx[2].buf, out.attrs.alpha);
}

// trace_backward: grad on the diagonal, zeros elsewhere.
inline void trace_backward(const Node& out, const Node& a, std::array<InputGrad, 3>& dx) {
  dx[0].shape = a.shape;
  Buf& d = dx[0].buf;
  d.resize(a.shape.numel());
  for (std::int64_t i = 0; i < d.size(); ++i)
    d.set(i, {0.0, 0.0});
  const std::int64_t n = std::min(a.shape[0], a.shape[1]);
  for (std::int64_t i = 0; i < n; ++i)
    d.set(i * a.shape[1] + i, out.grad.at(0));
}

} // namespace burnmark::ref
