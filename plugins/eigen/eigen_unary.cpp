// The unary ops past the first vocabulary that Eigen 3.4 computes itself: a TensorBase method
// where the Tensor module has one (erf, log1p, rsqrt, rint, lgamma, ...), else the Core functor
// that Eigen's own Array methods wrap (sin, asinh, log10, ...), applied with unaryExpr, which is
// how the Tensor module applies any functor. Ops Eigen has no functor for (exp2, trunc, frac, the
// activations other than the clamps) are not in kOps: composing them here would test this file
// rather than Eigen. Nor is erfinv: Eigen has ndtri, but ndtri((x + 1) / 2) / sqrt(2) loses
// small x's digits in x + 1 (erfinv(1e-8) would come out 0), an error of the composition. Forward
// values are Eigen's, unpatched; the backward follows PyTorch 1.13's derivatives.yaml, evaluated
// with Eigen expressions in float32 in the formula's order (which decides 0 * inf and overflow),
// like eigen_backward.cpp.
#include <cmath>
#include <numbers>

#include "eigen_tensor.h"

namespace burnmark::eigen {
namespace {

namespace ei = Eigen::internal;

// Expressions hold TensorMaps by value, so the returned expression outlives flat()'s temporary.
template <template <class> class Functor> auto apply(const Dense& x) {
  return flat(x).unaryExpr(Functor<float>());
}

// Constants written in double in derivatives.yaml meet the float tensor as wrapped scalars, so
// they are rounded to f32 first.
const float kTwoOverSqrtPi = static_cast<float>(2.0 / std::sqrt(std::numbers::pi));
constexpr float kLn2 = static_cast<float>(std::numbers::ln2);
constexpr float kLn10 = static_cast<float>(std::numbers::ln10);

} // namespace

bool forward_unary(const BurnmarkStmt& s, const Dense& x, Dense& out) {
  using plugin::OpId;
  auto o = flat(out);
  switch (static_cast<OpId>(s.op)) {
  case OpId::Sin: o = apply<ei::scalar_sin_op>(x); return true;
  case OpId::Cos: o = apply<ei::scalar_cos_op>(x); return true;
  case OpId::Tan: o = apply<ei::scalar_tan_op>(x); return true;
  case OpId::Asin: o = apply<ei::scalar_asin_op>(x); return true;
  case OpId::Acos: o = apply<ei::scalar_acos_op>(x); return true;
  case OpId::Atan: o = apply<ei::scalar_atan_op>(x); return true;
  case OpId::Sinh: o = apply<ei::scalar_sinh_op>(x); return true;
  case OpId::Cosh: o = apply<ei::scalar_cosh_op>(x); return true;
  case OpId::Asinh: o = apply<ei::scalar_asinh_op>(x); return true;
  case OpId::Acosh: o = apply<ei::scalar_acosh_op>(x); return true;
  case OpId::Atanh: o = apply<ei::scalar_atanh_op>(x); return true;
  case OpId::Erf: o = flat(x).erf(); return true;
  case OpId::Erfc: o = flat(x).erfc(); return true;
  case OpId::Log1p: o = flat(x).log1p(); return true;
  case OpId::Expm1: o = flat(x).expm1(); return true;
  case OpId::Log2: o = flat(x).log2(); return true;
  case OpId::Log10: o = apply<ei::scalar_log10_op>(x); return true;
  case OpId::Rsqrt: o = flat(x).rsqrt(); return true;
  case OpId::Reciprocal: o = flat(x).inverse(); return true;
  case OpId::Square: o = flat(x).square(); return true;
  // Eigen has one signum; for real tensors torch.sgn is the same function.
  case OpId::Sign:
  case OpId::Sgn: o = flat(x).sign(); return true;
  case OpId::Floor: o = flat(x).floor(); return true;
  case OpId::Ceil: o = flat(x).ceil(); return true;
  // torch.round rounds half to even, which is rint; Eigen's round() rounds half away from zero.
  case OpId::Round: o = flat(x).rint(); return true;
  case OpId::Lgamma: o = flat(x).lgamma(); return true;
  case OpId::Digamma: o = flat(x).digamma(); return true;
  // One-sided clamps with the NaN-propagating max / min, as clamp in eigen_forward.cpp: a NaN
  // bound then gives NaN everywhere, LibTorch's documented min(max(x, min), max).
  case OpId::ClampMin:
    o = flat(x).cwiseMax<Eigen::PropagateNaN>(static_cast<float>(s.attrs.lo));
    return true;
  case OpId::ClampMax:
    o = flat(x).cwiseMin<Eigen::PropagateNaN>(static_cast<float>(s.attrs.hi));
    return true;
  // hardtanh and relu6 are a clamp to a range, which is TensorBase::clip (its own functor, with
  // the library's default NaN handling; the bounds are never NaN here).
  case OpId::Hardtanh:
    o = flat(x).clip(static_cast<float>(s.attrs.lo), static_cast<float>(s.attrs.hi));
    return true;
  case OpId::Relu6: o = flat(x).clip(0.0f, 6.0f); return true;
  default: return false;
  }
}

bool backward_unary(const BurnmarkStmt& s, const Dense& x, const Dense& out, const Dense& g,
                    Dense& dx) {
  using plugin::OpId;
  const auto gx = flat(g);
  const auto xx = flat(x);
  const auto y = flat(out);
  const auto zero = gx.constant(0.0f);
  auto d = flat(dx);
  switch (static_cast<OpId>(s.op)) {
  // grad * self.cos()
  case OpId::Sin: d = gx * apply<ei::scalar_cos_op>(x); return true;
  // grad * -self.sin()
  case OpId::Cos: d = gx * -apply<ei::scalar_sin_op>(x); return true;
  // grad * (1 + result.pow(2)); pow(2) is LibTorch's x * x fast path
  case OpId::Tan: d = gx * (y * y + 1.0f); return true;
  // grad * (-self * self + 1).rsqrt()
  case OpId::Asin: d = gx * (-xx * xx + 1.0f).rsqrt(); return true;
  // grad * -((-self * self + 1).rsqrt())
  case OpId::Acos: d = gx * -((-xx * xx + 1.0f).rsqrt()); return true;
  // grad / (self * self + 1)
  case OpId::Atan: d = gx / (xx * xx + 1.0f); return true;
  // grad * self.cosh(); grad * self.sinh()
  case OpId::Sinh: d = gx * apply<ei::scalar_cosh_op>(x); return true;
  case OpId::Cosh: d = gx * apply<ei::scalar_sinh_op>(x); return true;
  // grad * (self.pow(2) + 1).rsqrt()
  case OpId::Asinh: d = gx * (xx * xx + 1.0f).rsqrt(); return true;
  // grad * (self * self - 1).rsqrt()
  case OpId::Acosh: d = gx * (xx * xx - 1.0f).rsqrt(); return true;
  // grad * 1 / (1 - self.pow(2)); grad * 1 is grad exactly
  case OpId::Atanh: d = gx / (1.0f - xx * xx); return true;
  // 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
  case OpId::Erf: d = (kTwoOverSqrtPi * (-(xx * xx)).exp()) * gx; return true;
  // -2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
  case OpId::Erfc: d = (-kTwoOverSqrtPi * (-(xx * xx)).exp()) * gx; return true;
  // log1p_backward: grad / (self + 1)
  case OpId::Log1p: d = gx / (xx + 1.0f); return true;
  // grad * (result + 1)
  case OpId::Expm1: d = gx * (y + 1.0f); return true;
  // grad / (self * 0.6931471805599453); grad / (self * 2.3025850929940456)
  case OpId::Log2: d = gx / (xx * kLn2); return true;
  case OpId::Log10: d = gx / (xx * kLn10); return true;
  // -0.5 * grad * result.pow(3); pow(3) is the x * x * x fast path
  case OpId::Rsqrt: d = (gx * -0.5f) * (y * y * y); return true;
  // -grad * (result * result)
  case OpId::Reciprocal: d = -gx * (y * y); return true;
  // pow_backward(grad, self, 2): grad * (2 * self)
  case OpId::Square: d = gx * (xx * 2.0f); return true;
  // zeros_like(grad) (sgn_backward is a zero tensor for real self): dx arrives zeroed.
  case OpId::Sign:
  case OpId::Sgn:
  case OpId::Floor:
  case OpId::Ceil:
  case OpId::Round: return true;
  // grad * digamma(self)
  case OpId::Lgamma: d = gx * xx.digamma(); return true;
  // grad * polygamma(1, self), Eigen's polygamma(n, x) with n a tensor of ones
  case OpId::Digamma: d = gx * xx.constant(1.0f).polygamma(xx); return true;
  // where(self >= min, grad, 0); where(self <= max, grad, 0): no product, so an infinite grad
  // below the bound stays 0
  case OpId::ClampMin: d = (xx >= static_cast<float>(s.attrs.lo)).select(gx, zero); return true;
  case OpId::ClampMax: d = (xx <= static_cast<float>(s.attrs.hi)).select(gx, zero); return true;
  // hardtanh_backward: 0 where self <= min or self >= max, else grad (so NaN passes grad)
  case OpId::Hardtanh: {
    const auto lo = static_cast<float>(s.attrs.lo), hi = static_cast<float>(s.attrs.hi);
    d = ((xx <= lo) || (xx >= hi)).select(zero, gx);
    return true;
  }
  case OpId::Relu6: d = ((xx <= 0.0f) || (xx >= 6.0f)).select(zero, gx); return true;
  default: return false;
  }
}

} // namespace burnmark::eigen
