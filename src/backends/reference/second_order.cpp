// Second order, forward over reverse: the reverse pass run again along the leaves' tangents v,
// so that each leaf's gradient gets a tangent, H·v. An op's backward rule is a function of its
// operands, its result and the output's gradient g; its tangent has two parts:
//
// - along g's tangent: the rule itself seeded with that tangent (it is linear in g; the tape
//   runs backward_rule for this part);
// - along the operands' tangents with g held: this file, one case per op with no default.
//   - Linear ops and piecewise-linear ones (kinks, selections, roundings): zero, away from the
//     kinks, and their rules hold the same mask on both sides of a kink, as LibTorch's do.
//   - Products (mul, matmul, mm, ...): the rule for one operand is linear in the other, so its
//     derivative is the same rule with the other operand replaced by its tangent.
//   - Elementwise ops: g f''(x) ẋ, with f'' written out per op below (approx_second.h for the
//     transcendentals and activations), and g H v with the 2x2 Hessian for binary ones.
//   - A rule linear in its operand (var's): the rule applied to the operand's tangent.
//   - prod, and the scans and normalisers along a dim (cumprod, logcumsumexp, normalize,
//     cosine_similarity): second_order_rows.cpp; det: second_order_matrix.cpp; scatter_reduce:
//     second_order_index.cpp. Each differentiates LibTorch's own formula.
//   - An op without a rule would make second_order_rule return false and the run unsupported,
//     and the generator would leave it out (op_generated_in_second_order); none is left.
#include <array>
#include <numbers>

#include "approx_reduce.h"
#include "approx_second.h"
#include "approx_transcendental.h"
#include "linalg_det.h"
#include "rows.h"
#include "second_order_rows.h"
#include "tape.h"

namespace burnmark::ref {
namespace {

constexpr Approx kTwo{2.0, 0.0};

using second_order::none_wanted;

// Starts operand 0's term at its own shape when it is wanted and its tangents reached the op;
// false (and nothing wanted) otherwise.
bool start_first(const Node& a, bool reached, std::array<InputGrad, kMaxArity>& dx) {
  return second_order::start_operand(0, a.shape, reached, dx);
}

// y = f(x): g f''(x, y) ẋ for the one operand.
template <class F>
void unary(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx, F second) {
  const bool wanted = dx[0].wanted && a.has_tan;
  none_wanted(dx);
  if (!wanted) return;
  dx[0].wanted = true;
  dx[0].shape = a.shape;
  const std::int64_t n = a.shape.numel();
  dx[0].buf.resize(n);
  for (std::int64_t i = 0; i < n; ++i)
    dx[0].buf.set(i, mul(mul(out.grad.at(i), second(a.value.at(i), out.value.at(i))), a.tan.at(i)));
}

// Operand k's backward rule with operand `other`'s value replaced by its tangent, into dx[k].
void rule_along(const Node& out, const std::array<const Node*, kMaxArity>& in, std::size_t k,
                std::size_t other, std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t,
                ReduceScratch& s) {
  t.stand_in.shape = in[other]->shape;
  t.stand_in.value.assign(in[other]->tan);
  std::array<const Node*, kMaxArity> use = in;
  use[other] = &t.stand_in;
  for (std::size_t j = 0; j < kMaxArity; ++j)
    t.dx[j].wanted = j == k;
  backward_rule(out, *use[0], use[1], use[2], t.dx, s);
  dx[k].wanted = true;
  dx[k].shape = t.dx[k].shape;
  std::swap(dx[k].buf, t.dx[k].buf);
}

// A product linear in operands p and q: operand p's rule is linear in q, so its derivative
// along q's tangent is the rule with q's value replaced by that tangent (and the same for q).
void bilinear(const Node& out, const std::array<const Node*, kMaxArity>& in, std::size_t p,
              std::size_t q, std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t,
              ReduceScratch& s) {
  const std::array<std::pair<std::size_t, std::size_t>, 2> parts = {{{p, q}, {q, p}}};
  std::array<bool, kMaxArity> wanted{};
  for (const auto& [k, other] : parts)
    wanted[k] = dx[k].wanted && in[other]->has_tan;
  none_wanted(dx);
  for (const auto& [k, other] : parts)
    if (wanted[k]) rule_along(out, in, k, other, dx, t, s);
}

// A rule linear in its one operand (var's g 2 (x - mean) / (n - c)): the rule on the tangent.
void linear_rule(const Node& out, const std::array<const Node*, kMaxArity>& in,
                 std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t, ReduceScratch& s) {
  const bool wanted = dx[0].wanted && in[0]->has_tan;
  none_wanted(dx);
  if (wanted) rule_along(out, in, 0, 0, dx, t, s);
}

// A binary elementwise op with Hessian h(x, y): g (H_aa ȧ + H_ab ḃ) and g (H_ab ȧ + H_bb ḃ),
// both at the broadcast shape.
template <class F>
void binary(const Node& out, const Node& a, const Node& b, std::array<InputGrad, kMaxArity>& dx,
            F hessian) {
  const std::array<bool, 2> wanted = {dx[0].wanted && (a.has_tan || b.has_tan),
                                      dx[1].wanted && (a.has_tan || b.has_tan)};
  none_wanted(dx);
  for (std::size_t k = 0; k < 2; ++k) {
    dx[k].wanted = wanted[k];
    dx[k].shape = out.shape;
    dx[k].buf.resize(out.shape.numel());
  }
  const std::array<const Node*, 3> in = {&a, &b, &out};
  ternary_walk(out.shape, in, [&](std::int64_t i, const std::array<std::int64_t, 3>& at) {
    const Approx g = out.grad.at(i);
    const Approx da = a.has_tan ? a.tan.at(at[0]) : Approx{};
    const Approx db = b.has_tan ? b.tan.at(at[1]) : Approx{};
    const second::Hessian2 h = hessian(a.value.at(at[0]), b.value.at(at[1]));
    if (wanted[0]) dx[0].buf.set(i, mul(g, add(mul(h.aa, da), mul(h.ab, db))));
    if (wanted[1]) dx[1].buf.set(i, mul(g, add(mul(h.ab, da), mul(h.bb, db))));
  });
}

// div(a, b): d/da (g / b) = 0, d/db (g / b) = -g / b^2; d/da (-g a / b^2) = -g / b^2,
// d/db (-g a / b^2) = 2 g a / b^3. Both at the broadcast shape.
void divide(const Node& out, const Node& a, const Node& b, std::array<InputGrad, kMaxArity>& dx) {
  const std::array<bool, 2> wanted = {dx[0].wanted && b.has_tan,
                                      dx[1].wanted && (a.has_tan || b.has_tan)};
  none_wanted(dx);
  for (std::size_t k = 0; k < 2; ++k) {
    dx[k].wanted = wanted[k];
    dx[k].shape = out.shape;
    dx[k].buf.resize(out.shape.numel());
  }
  const std::array<const Node*, 3> in = {&a, &b, &out};
  ternary_walk(out.shape, in, [&](std::int64_t i, const std::array<std::int64_t, 3>& at) {
    const Approx g = out.grad.at(i);
    const Approx x = a.value.at(at[0]);
    const Approx y = b.value.at(at[1]);
    const Approx dxa = a.has_tan ? a.tan.at(at[0]) : Approx{};
    const Approx dyb = b.has_tan ? b.tan.at(at[1]) : Approx{};
    const Approx g_over_y2 = div(div(g, y), y);
    if (wanted[0]) dx[0].buf.set(i, neg(mul(g_over_y2, dyb)));
    if (wanted[1]) {
      const Approx cross = neg(mul(g_over_y2, dxa));
      const Approx self = mul(mul(kTwo, div(mul(g_over_y2, x), y)), dyb);
      dx[1].buf.set(i, add(cross, self));
    }
  });
}

// softmax and log_softmax: their rules read only the result y, so the term is the rule's
// derivative along y's tangent: softmax y (g - <g, y>) gives ẏ (g - <g, y>) - y <g, ẏ>,
// log_softmax g - exp(y) sum(g) gives -exp(y) ẏ sum(g).
void normaliser(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx, bool log,
                SecondOrderScratch& t) {
  if (!start_first(a, out.has_tan, dx)) return;
  const Rows r = rows_along(out.shape, out.attrs.dim);
  for (std::int64_t row = 0; row < r.count(); ++row) {
    const auto at = [&](std::int64_t j) { return r.offset(row, j); };
    t.terms.resize(static_cast<std::size_t>(r.n));
    t.more.resize(static_cast<std::size_t>(r.n));
    for (std::int64_t j = 0; j < r.n; ++j) {
      const auto k = static_cast<std::size_t>(j);
      t.terms[k] = log ? out.grad.at(at(j)) : mul(out.grad.at(at(j)), out.value.at(at(j)));
      t.more[k] = mul(out.grad.at(at(j)), out.tan.at(at(j)));
    }
    const Approx first = sum_of(Row(t.terms)); // sum(g), or <g, y>
    const Approx second = sum_of(Row(t.more)); // <g, ẏ>
    for (std::int64_t j = 0; j < r.n; ++j) {
      const Approx y = out.value.at(at(j));
      const Approx dy = out.tan.at(at(j));
      dx[0].buf.set(at(j), log ? neg(mul(mul(exp(y), dy), first))
                               : sub(mul(dy, sub(out.grad.at(at(j)), first)), mul(y, second)));
    }
  }
}

// logsumexp's rule g exp(x - y): its derivative along x's and y's tangents, g exp(x - y)
// (ẋ - ẏ), the row's result y and its tangent ẏ broadcast over the row.
void logsumexp(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx) {
  if (!start_first(a, a.has_tan && out.has_tan, dx)) return;
  const Rows r = rows_along(a.shape, out.attrs.dim);
  for (std::int64_t row = 0; row < r.count(); ++row)
    for (std::int64_t j = 0; j < r.n; ++j) {
      const std::int64_t i = r.offset(row, j);
      const Approx w = mul(out.grad.at(row), exp(sub(a.value.at(i), out.value.at(row))));
      dx[0].buf.set(i, mul(w, sub(a.tan.at(i), out.tan.at(row))));
    }
}

// std's rule g (x - mean) / ((n - c) y) is linear in x for y held, and y enters as g / y: the
// rule on x's tangent, plus the rule seeded with -g ẏ / y. Not judged where y may be 0 (the
// rule's own convention there has no derivative).
void standard_deviation(const Node& out, const std::array<const Node*, kMaxArity>& in,
                        std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t,
                        ReduceScratch& s) {
  const bool wanted = dx[0].wanted && in[0]->has_tan && out.has_tan;
  none_wanted(dx);
  if (!wanted) return;
  rule_along(out, in, 0, 0, dx, t, s);
  Node& n = t.seeded;
  n.shape = out.shape;
  n.op = out.op;
  n.attrs = out.attrs;
  n.in = out.in;
  n.value.assign(out.value);
  n.grad.resize(out.grad.size());
  bool zero_result = false;
  for (std::int64_t i = 0; i < out.grad.size(); ++i) {
    const Approx y = out.value.at(i);
    zero_result = zero_result || y.v == 0 || touches(y, 0.0);
    n.grad.set(i, neg(div(mul(out.grad.at(i), out.tan.at(i)), y)));
  }
  for (std::size_t j = 0; j < kMaxArity; ++j)
    t.dx[j].wanted = j == 0;
  backward_rule(n, *in[0], in[1], in[2], t.dx, s);
  for (std::int64_t i = 0; i < dx[0].buf.size(); ++i) {
    Approx v = add(dx[0].buf.at(i), t.dx[0].buf.at(i));
    if (zero_result) v.e = kInf;
    dx[0].buf.set(i, v);
  }
}

// vector_norm's rule g sgn(x) |x|^(p-1) / n^(p-1): along x's tangent and the norm's, g (p - 1)
// (|x|^(p-2) ẋ / n^(p-1) - sgn(x) |x|^(p-1) ṅ / n^p). Orders 0, 1 and ±inf select or count, a
// zero term away from their kinks (a zero element for 1, a tie or near-tie for ±inf).
void vector_norm(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx) {
  if (!start_first(a, a.has_tan && out.has_tan, dx)) return;
  const double p = out.attrs.exponent;
  const Rows r = out.op == Op::VectorNorm ? rows_all(a.shape) : rows_along(a.shape, out.attrs.dim);
  for (std::int64_t row = 0; row < r.count(); ++row) {
    const Approx n = out.value.at(row);
    const Approx dn = out.tan.at(row);
    const Approx g = out.grad.at(row);
    bool near_tie = false; // ±inf: another element within reach of the selected magnitude
    if (std::isinf(p)) {
      int at_norm = 0;
      for (std::int64_t j = 0; j < r.n; ++j) {
        const Approx x = a.value.at(r.offset(row, j));
        at_norm += std::fabs(x.v) == n.v ? 1 : 0;
        near_tie =
            near_tie || (std::fabs(x.v) != n.v && std::fabs(std::fabs(x.v) - n.v) <= x.e + n.e);
      }
      near_tie = near_tie || at_norm > 1;
    }
    for (std::int64_t j = 0; j < r.n; ++j) {
      const std::int64_t i = r.offset(row, j);
      const Approx x = a.value.at(i);
      Approx term{};
      if (p == 0 || p == 1 || std::isinf(p)) {
        if ((p == 1 && second::at_jump(x, 0.0)) || near_tie) term.e = kInf;
      } else if (n.v == 0 || touches(n, 0.0) || (p < 2 && second::at_jump(x, 0.0))) {
        term = {0.0, kInf};
      } else {
        const Approx mag = abs(x);
        const Approx along_x = div(mul(pow(mag, p - 2), a.tan.at(i)), pow(n, p - 1));
        const Approx along_n =
            div(mul(mul(Approx{sign_of(x.v), 0.0}, pow(mag, p - 1)), dn), pow(n, p));
        term = mul(mul(g, Approx{p - 1, 0.0}), sub(along_x, along_n));
      }
      dx[0].buf.set(i, term);
    }
  }
}

// slogdet's rule g A^-T: along A's tangent, -g (A^-1 Ȧ A^-1)^T, from the reference's inverse
// and its bound. Not judged where that inverse is not certain (a determinant near 0), and there
// a library may raise, as LibTorch's double backward does ("linalg.solve: ... singular"): the
// second derivative does not exist at a singular matrix.
void log_abs_determinant(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
                         ReduceScratch& s) {
  if (!start_first(a, a.has_tan, dx)) return;
  const int n = square_order(a.shape);
  const std::int64_t count = square_count(a.shape);
  for (std::int64_t m = 0; m < count; ++m) {
    const std::int64_t base = m * n * n;
    const InverseFacts inv = inverse_facts(square_facts(a.value, base, n));
    const Approx g = out.grad.at(m);
    const auto x = [&](int i, int j) {
      const auto k = static_cast<std::size_t>(i * n + j);
      return Approx{inv.x[k], inv.bound[k]};
    };
    const auto da = [&](int i, int j) { return a.tan.at(base + i * n + j); };
    // (A^-1 Ȧ A^-1)[j][i] for the element (i, j) of the transpose.
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        Approx sum{};
        for (int k = 0; k < n; ++k)
          for (int l = 0; l < n; ++l)
            sum = add(sum, mul(mul(x(j, k), da(k, l)), x(l, i)));
        Approx term = neg(mul(g, sum));
        if (!inv.ok || indeterminate(g)) term.e = kInf;
        if (!inv.ok) s.error_possible = true;
        dx[0].buf.set(base + i * n + j, term);
      }
  }
}

// inv's rule -X^T g X^T (X the result) is quadratic in X: along X's tangent,
// -(Ẋ^T g X^T + X^T g Ẋ^T), each product with the matmul kernel's bounds.
void inverse(const Node& out, std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t) {
  const bool wanted = dx[0].wanted && out.has_tan;
  none_wanted(dx);
  if (!wanted) return;
  const Shape& shape = out.shape;
  const int r = shape.rank();
  Buf& xt = t.stand_in.value;
  Buf& dxt = t.stand_in.grad;
  Buf& g_xt = t.seeded.value;
  Buf& g_dxt = t.seeded.grad;
  gather(out.value, transpose_walk(shape, r - 2, r - 1), xt); // X^T
  gather(out.tan, transpose_walk(shape, r - 2, r - 1), dxt);  // Ẋ^T
  matmul(shape, out.grad, shape, xt, shape, g_xt);            // g X^T
  matmul(shape, out.grad, shape, dxt, shape, g_dxt);          // g Ẋ^T
  dx[0].wanted = true;
  dx[0].shape = shape;
  matmul(shape, dxt, shape, g_xt, shape, dx[0].buf); // Ẋ^T g X^T
  matmul(shape, xt, shape, g_dxt, shape, t.sum);     // X^T g Ẋ^T
  for (std::int64_t i = 0; i < dx[0].buf.size(); ++i)
    dx[0].buf.set(i, neg(add(dx[0].buf.at(i), t.sum.at(i))));
}

} // namespace

bool second_order_rule(const Node& out, const Node& a, const Node* b, const Node* c,
                       std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t,
                       ReduceScratch& s) {
  const std::array<const Node*, kMaxArity> in = {&a, b, c};
  switch (out.op) {
  // Linear in every operand that carries values.
  case Op::Add:
  case Op::Sub:
  case Op::Neg:
  case Op::SumAll:
  case Op::MeanAll:
  case Op::SumDim:
  case Op::MeanDim:
  case Op::Transpose:
  case Op::Concat:
  case Op::Repeat:
  case Op::Lerp:
  case Op::Where:
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
  case Op::Stack:
  case Op::Chunk:
  case Op::DiagEmbed:
  case Op::Gather:
  case Op::IndexSelect:
  case Op::TakeAlongDim:
  case Op::ScatterAdd:
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill:
  case Op::IndexPut:
  case Op::MaskedFill:
  case Op::MaskedScatter:
  // Comparisons carry no gradient at all.
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne:
  // Piecewise linear: a mask or a selection times g, the mask fixed by the values.
  case Op::Abs:
  case Op::Relu:
  case Op::Clamp:
  case Op::ClampMin:
  case Op::ClampMax:
  case Op::Sign:
  case Op::Sgn:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  case Op::Trunc:
  case Op::Frac:
  case Op::LeakyRelu:
  case Op::Hardtanh:
  case Op::Relu6:
  case Op::Hardsigmoid:
  case Op::Hardshrink:
  case Op::Softshrink:
  case Op::Maximum:
  case Op::Minimum:
  case Op::Fmax:
  case Op::Fmin:
  case Op::Remainder:
  case Op::Fmod:
  case Op::DivRounded:
  case Op::Amax:
  case Op::Amin:
  case Op::Max:
  case Op::Min:
  case Op::AmaxDim:
  case Op::AminDim:
  case Op::MaxDim:
  case Op::MinDim: none_wanted(dx); return true;

  case Op::Mul:
  case Op::Matmul:
  case Op::Mm:
  case Op::Mv:
  case Op::Dot:
  case Op::Outer:
  case Op::Bmm: bilinear(out, in, 0, 1, dx, t, s); return true;
  // beta self + alpha mat1 mat2: linear in self.
  case Op::Addmm:
    dx[0].wanted = false;
    bilinear(out, in, 1, 2, dx, t, s);
    return true;
  case Op::Div: divide(out, a, *b, dx); return true;

  // f'' from the result where f' is written with it (as derivatives.yaml writes f').
  case Op::Exp:
  case Op::Sinh:
  case Op::Cosh: unary(out, a, dx, [](Approx, Approx y) { return y; }); return true;
  case Op::Expm1:
    unary(out, a, dx, [](Approx, Approx y) { return add(y, {1.0, 0.0}); });
    return true;
  case Op::Exp2:
    unary(out, a, dx, [](Approx, Approx y) {
      const Approx ln2 = scalar_operand(std::numbers::ln2);
      return mul(mul(y, ln2), ln2);
    });
    return true;
  case Op::Sin:
  case Op::Cos: unary(out, a, dx, [](Approx, Approx y) { return neg(y); }); return true;
  case Op::Log:
    unary(out, a, dx, [](Approx x, Approx) { return neg(div(div({1.0, 0.0}, x), x)); });
    return true;
  case Op::Log2:
  case Op::Log10:
    unary(out, a, dx,
          [base = out.op == Op::Log2 ? std::numbers::ln2 : std::numbers::ln10](Approx x, Approx) {
            return neg(div(div({1.0, 0.0}, mul(x, scalar_operand(base))), x));
          });
    return true;
  case Op::Log1p:
    unary(out, a, dx, [](Approx x, Approx) {
      const Approx shifted = add(x, {1.0, 0.0});
      return neg(div(div({1.0, 0.0}, shifted), shifted));
    });
    return true;
  // f' = 1 / (2 y), f'' = -1 / (4 y^3)
  case Op::Sqrt:
    unary(out, a, dx, [](Approx, Approx y) { return neg(div({0.25, 0.0}, mul(mul(y, y), y))); });
    return true;
  // f' = -y^3 / 2, f'' = 3 y^5 / 4
  case Op::Rsqrt:
    unary(out, a, dx, [](Approx, Approx y) {
      const Approx y2 = mul(y, y);
      return mul({0.75, 0.0}, mul(mul(y2, y2), y));
    });
    return true;
  // f' = -y^2, f'' = 2 y^3
  case Op::Reciprocal:
    unary(out, a, dx, [](Approx, Approx y) { return mul(kTwo, mul(mul(y, y), y)); });
    return true;
  case Op::Square: unary(out, a, dx, [](Approx, Approx) { return kTwo; }); return true;
  case Op::Pow:
    unary(out, a, dx, [e = out.attrs.exponent](Approx x, Approx) {
      if (e == 0 || e == 1) return Approx{};
      return mul({e * (e - 1), 0.0}, pow(x, e - 2));
    });
    return true;
  // f' = y (1 - y), f'' = y (1 - y) (1 - 2 y)
  case Op::Sigmoid:
    unary(out, a, dx, [](Approx, Approx y) {
      const Approx one{1.0, 0.0};
      return mul(mul(y, sub(one, y)), sub(one, mul(kTwo, y)));
    });
    return true;
  // f' = 1 - y^2, f'' = -2 y (1 - y^2)
  case Op::Tanh:
    unary(out, a, dx, [](Approx, Approx y) {
      return mul(mul({-2.0, 0.0}, y), sub({1.0, 0.0}, mul(y, y)));
    });
    return true;
  // f' = 1 / (1 + x^2), f'' = -2 x / (1 + x^2)^2
  case Op::Atan:
    unary(out, a, dx, [](Approx x, Approx) {
      const Approx d = add({1.0, 0.0}, mul(x, x));
      return neg(div(div(mul(kTwo, x), d), d));
    });
    return true;

  case Op::Tan: unary(out, a, dx, [](Approx x, Approx) { return second::tan(x); }); return true;
  case Op::Asin: unary(out, a, dx, [](Approx x, Approx) { return second::asin(x); }); return true;
  case Op::Acos: unary(out, a, dx, [](Approx x, Approx) { return second::acos(x); }); return true;
  case Op::Asinh: unary(out, a, dx, [](Approx x, Approx) { return second::asinh(x); }); return true;
  case Op::Acosh: unary(out, a, dx, [](Approx x, Approx) { return second::acosh(x); }); return true;
  case Op::Atanh: unary(out, a, dx, [](Approx x, Approx) { return second::atanh(x); }); return true;
  case Op::Erf: unary(out, a, dx, [](Approx x, Approx) { return second::erf(x, 1); }); return true;
  case Op::Erfc:
    unary(out, a, dx, [](Approx x, Approx) { return second::erf(x, -1); });
    return true;
  case Op::Erfinv:
    unary(out, a, dx, [](Approx, Approx y) { return second::erfinv(y); });
    return true;
  case Op::LogSigmoid:
    unary(out, a, dx, [](Approx x, Approx) { return second::logsigmoid(x); });
    return true;
  case Op::Softplus:
    unary(out, a, dx, [&at = out.attrs](Approx x, Approx) { return second::softplus(x, at); });
    return true;
  case Op::Gelu:
    unary(out, a, dx, [&at = out.attrs](Approx x, Approx) { return second::gelu(x, at); });
    return true;
  case Op::Silu: unary(out, a, dx, [](Approx x, Approx) { return second::silu(x); }); return true;
  case Op::Mish: unary(out, a, dx, [](Approx x, Approx) { return second::mish(x); }); return true;
  case Op::Elu:
    unary(out, a, dx,
          [al = out.attrs.alpha](Approx x, Approx) { return second::elu(x, al, 1, 1); });
    return true;
  case Op::Selu:
    unary(out, a, dx,
          [](Approx x, Approx) { return second::elu(x, act::kSeluAlpha, act::kSeluScale, 1); });
    return true;
  case Op::Celu:
    unary(out, a, dx,
          [al = out.attrs.alpha](Approx x, Approx) { return second::elu(x, al, 1, 1 / al); });
    return true;
  case Op::Hardswish:
    unary(out, a, dx, [](Approx x, Approx) { return second::hardswish(x); });
    return true;
  case Op::Softsign:
    unary(out, a, dx, [](Approx x, Approx) { return second::softsign(x); });
    return true;
  case Op::Tanhshrink:
    unary(out, a, dx, [](Approx x, Approx) { return second::tanhshrink(x); });
    return true;
  case Op::Logit:
    unary(out, a, dx, [&at = out.attrs](Approx x, Approx) { return second::logit(x, at); });
    return true;
  case Op::Atan2: binary(out, a, *b, dx, second::atan2); return true;
  case Op::Hypot: binary(out, a, *b, dx, second::hypot); return true;
  case Op::PowTensor: binary(out, a, *b, dx, second::pow_tensor); return true;
  // lgamma'' = trigamma, as LibTorch's digamma backward computes it (polygamma(1, x)).
  case Op::Lgamma:
    unary(out, a, dx, [](Approx x, Approx) {
      return transcendental_detail::gamma_pole_within(x) ? unknown(0.0)
                                                         : transcendental_detail::trigamma(x);
    });
    return true;
  // digamma'' = tetragamma, LibTorch's polygamma(2, x) (the derivative of polygamma(1, x)).
  case Op::Digamma:
    unary(out, a, dx, [](Approx x, Approx) { return second::digamma(x); });
    return true;
  case Op::Xlogy: binary(out, a, *b, dx, second::xlogy); return true;
  case Op::Copysign: binary(out, a, *b, dx, second::copysign); return true;
  case Op::Var:
  case Op::VarDim: linear_rule(out, in, dx, t, s); return true;
  case Op::Std:
  case Op::StdDim: standard_deviation(out, in, dx, t, s); return true;
  case Op::Softmax: normaliser(out, a, dx, false, t); return true;
  case Op::LogSoftmax: normaliser(out, a, dx, true, t); return true;
  case Op::Logsumexp: logsumexp(out, a, dx); return true;
  case Op::VectorNorm:
  case Op::NormDim: vector_norm(out, a, dx); return true;
  case Op::Inv: inverse(out, dx, t); return true;
  case Op::Slogdet: log_abs_determinant(out, a, dx, s); return true;
  case Op::Prod:
  case Op::ProdDim: second_order::product(out, a, dx); return true;

  case Op::Cumprod: second_order::cumulative_product(out, a, dx, t); return true;
  case Op::Logcumsumexp: second_order::log_cumulative_sum_exp(out, a, dx, t); return true;
  case Op::Normalize: second_order::normalize(out, a, dx, t); return true;
  case Op::CosineSimilarity: second_order::cosine_similarity(out, a, *b, dx, t); return true;
  case Op::Det: second_order::determinant(out, a, dx); return true;
  case Op::ScatterReduce: second_order::scatter_reduce(out, a, *b, *c, dx, s); return true;
  }
  return false;
}

} // namespace burnmark::ref
