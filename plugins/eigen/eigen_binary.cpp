// The binary ops, comparisons and where past the first vocabulary that Eigen 3.4 computes
// itself, with NumPy broadcasting as in eigen_forward.cpp: cwiseMax / cwiseMin in their two NaN
// propagation modes (PropagateNaN is torch.maximum / minimum, PropagateNumbers is C's fmax /
// fmin, so each op calls the mode Eigen documents for its semantics), pow of two tensors through
// scalar_pow_op (what Eigen's Array pow(a, b) wraps), the Tensor module's own scalar_fmod_op, and
// the comparison operators and select(). Eigen has no atan2, remainder, rounded division, hypot
// for signed inputs (scalar_hypot_op is for hypotNorm's non-negative inputs), xlogy, copysign or
// lerp functor, so those are not in kOps.
//
// A comparison's bool mask is stored as 0 / 1 floats: the walk (eigen_plugin.cpp) gives every
// register a float buffer, the mask is only ever read back by where (as mask != 0), and no
// gradient enters it.
#include "eigen_tensor.h"

namespace burnmark::eigen {
namespace {

namespace ei = Eigen::internal;

// a == b and a != b as the very functors Eigen's operators apply: in C++20, `a == b` on two
// Eigen expressions of one type is ambiguous with its rewritten reversed form.
template <class A, class B> auto equal(const A& a, const B& b) {
  return a.binaryExpr(b, ei::scalar_cmp_op<float, float, ei::cmp_EQ>());
}
template <class A, class B> auto not_equal(const A& a, const B& b) {
  return a.binaryExpr(b, ei::scalar_cmp_op<float, float, ei::cmp_NEQ>());
}

// The comparison's bool expression stored as 0 / 1.
template <class F> void compare(In in, Dense& out, F f) {
  binary(in, out, [&](auto a, auto b) { return f(a, b).template cast<float>(); });
}

// trunc(self / other) of the exact quotient, as div(self, other, rounding_mode="trunc") means
// it: Eigen 3.4 has no trunc, and truncating the rounded quotient a / b would be off by one
// where it rounds up to an integer (7 / 0.1f is 69.99999896, rounded 70). a - fmod(a, b) is the
// multiple of b below a (fmod is exact), so dividing it by b lands on an integer that rint
// recovers. Where fmod is NaN (b = 0, a infinite, NaN) the rounded quotient's ±inf or NaN is the
// answer, and its trunc is itself.
template <class A, class B> auto trunc_quotient(const A& a, const B& b) {
  const auto r = a.binaryExpr(b, ei::scalar_fmod_op<float>());
  return (r.isnan)().select(a / b, ((a - r) / b).rint());
}

// One operand's share of a maximum's or minimum's gradient, derivatives.yaml's
//   self: at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)
//   other: at::where(self == other, grad / 2, grad).masked_fill_(self > other, 0)
// for maximum (minimum swaps < and >), with `loses(a, b)` the masked_fill condition. A NaN
// operand fails every test, so both operands get the whole grad.
template <class Loses> auto minmax_share(Loses loses) {
  return [loses](auto gg, auto a, auto b, auto) {
    return loses(a, b).select(gg.constant(0.0f), equal(a, b).select(gg / 2.0f, gg));
  };
}

} // namespace

bool forward_binary(const BurnmarkStmt& s, In in, Dense& out) {
  using plugin::OpId;
  switch (static_cast<OpId>(s.op)) {
  case OpId::Maximum:
    binary(in, out, [](auto a, auto b) { return a.template cwiseMax<Eigen::PropagateNaN>(b); });
    return true;
  case OpId::Minimum:
    binary(in, out, [](auto a, auto b) { return a.template cwiseMin<Eigen::PropagateNaN>(b); });
    return true;
  case OpId::Fmax:
    binary(in, out, [](auto a, auto b) { return a.template cwiseMax<Eigen::PropagateNumbers>(b); });
    return true;
  case OpId::Fmin:
    binary(in, out, [](auto a, auto b) { return a.template cwiseMin<Eigen::PropagateNumbers>(b); });
    return true;
  case OpId::PowTensor:
    binary(in, out,
           [](auto a, auto b) { return a.binaryExpr(b, ei::scalar_pow_op<float, float>()); });
    return true;
  case OpId::Fmod:
    binary(in, out, [](auto a, auto b) { return a.binaryExpr(b, ei::scalar_fmod_op<float>()); });
    return true;
  case OpId::Lt: compare(in, out, [](auto a, auto b) { return a < b; }); return true;
  case OpId::Le: compare(in, out, [](auto a, auto b) { return a <= b; }); return true;
  case OpId::Gt: compare(in, out, [](auto a, auto b) { return a > b; }); return true;
  case OpId::Ge: compare(in, out, [](auto a, auto b) { return a >= b; }); return true;
  case OpId::Eq: compare(in, out, [](auto a, auto b) { return equal(a, b); }); return true;
  case OpId::Ne: compare(in, out, [](auto a, auto b) { return not_equal(a, b); }); return true;
  // where(mask, a, b), all three broadcast to the result.
  case OpId::Where: {
    const Dims to = dims4(out.shape);
    map4(out) =
        (expand_to(*in[0], to) != 0.0f).select(expand_to(*in[1], to), expand_to(*in[2], to));
    return true;
  }
  default: return false;
  }
}

bool backward_binary(const BurnmarkStmt& s, In in, const Dense& out, const Dense& g,
                     GradIn grad_in) {
  using plugin::OpId;
  Dense& da = *grad_in[0];
  switch (static_cast<OpId>(s.op)) {
  case OpId::Maximum:
    binary_grad(in, out, g, da, minmax_share([](auto a, auto b) { return a < b; }));
    binary_grad(in, out, g, *grad_in[1], minmax_share([](auto a, auto b) { return a > b; }));
    return true;
  case OpId::Minimum:
    binary_grad(in, out, g, da, minmax_share([](auto a, auto b) { return a > b; }));
    binary_grad(in, out, g, *grad_in[1], minmax_share([](auto a, auto b) { return a < b; }));
    return true;
  // self: grad.masked_fill((self >= other).logical_or_(other.isnan()).logical_not_(), 0)
  // other: grad.masked_fill((self >= other).logical_or_(other.isnan()), 0); fmin with <=
  case OpId::Fmax: {
    auto first = [](auto a, auto b) { return (a >= b) || (b.isnan)(); };
    binary_grad(in, out, g, da, [first](auto gg, auto a, auto b, auto) {
      return first(a, b).select(gg, gg.constant(0.0f));
    });
    binary_grad(in, out, g, *grad_in[1], [first](auto gg, auto a, auto b, auto) {
      return first(a, b).select(gg.constant(0.0f), gg);
    });
    return true;
  }
  case OpId::Fmin: {
    auto first = [](auto a, auto b) { return (a <= b) || (b.isnan)(); };
    binary_grad(in, out, g, da, [first](auto gg, auto a, auto b, auto) {
      return first(a, b).select(gg, gg.constant(0.0f));
    });
    binary_grad(in, out, g, *grad_in[1], [first](auto gg, auto a, auto b, auto) {
      return first(a, b).select(gg.constant(0.0f), gg);
    });
    return true;
  }
  // pow_backward_self: where(exponent == 0, 0, grad * (exponent * pow(self, exponent - 1)))
  // pow_backward_exponent: grad * where(self == 0 & exponent >= 0, 0, result * log(self))
  case OpId::PowTensor:
    binary_grad(in, out, g, da, [](auto gg, auto a, auto b, auto) {
      const auto pow = ei::scalar_pow_op<float, float>();
      return (b == 0.0f).select(gg.constant(0.0f), gg * (b * a.binaryExpr(b - 1.0f, pow)));
    });
    binary_grad(in, out, g, *grad_in[1], [](auto gg, auto a, auto b, auto y) {
      return gg * ((a == 0.0f) && (b >= 0.0f)).select(gg.constant(0.0f), y * a.log());
    });
    return true;
  // self: grad; other: -grad * self.div(other, rounding_mode="trunc")
  case OpId::Fmod:
    binary_grad(in, out, g, da, [](auto gg, auto, auto, auto) { return gg; });
    binary_grad(in, out, g, *grad_in[1],
                [](auto gg, auto a, auto b, auto) { return -gg * trunc_quotient(a, b); });
    return true;
  // Masks are never differentiated: the walk sends no gradient into one, so these never run.
  case OpId::Lt:
  case OpId::Le:
  case OpId::Gt:
  case OpId::Ge:
  case OpId::Eq:
  case OpId::Ne: return true;
  // condition: none; self: where(condition, grad, 0); other: where(condition, 0, grad). No
  // product, so an infinite or NaN grad is not multiplied by 0.
  case OpId::Where: {
    const Dims to = dims4(out.shape);
    const auto cond = expand_to(*in[0], to) != 0.0f;
    const auto gg = map4(g);
    sum_to(cond.select(gg, gg.constant(0.0f)), *grad_in[1]);
    sum_to(cond.select(gg.constant(0.0f), gg), *grad_in[2]);
    return true;
  }
  default: return false;
  }
}

} // namespace burnmark::eigen
