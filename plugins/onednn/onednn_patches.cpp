// The oneDNN plugin's patches (onednn_patches.h), one case per op: each workaround rewrites only
// the elements its bug affects (a NaN input, an infinity, a subnormal, the cancelling range), with
// the value IEEE 754 and the mathematics give there: NaN propagated, the limit at ±inf, or the
// function through a formula that does not cancel (log1p, expm1, erfc), in double, rounded once.
#include "onednn_patches.h"

#include <cmath>
#include <limits>

#include "row_grads.h"

namespace burnmark::onednn {
namespace {

using plugin::Dense;
using plugin::OpId;

bool is_subnormal(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL;
}
bool is_neg_zero(float v) {
  return v == 0.0f && std::signbit(v);
}

// out[i] = f(x[i]) wherever affected(x[i]), for an elementwise unary op.
template <class Affected, class F>
void rewrite(const Dense<float>& x, Dense<float>& out, Affected affected, F f) {
  for (std::size_t i = 0; i < out.data.size(); ++i)
    if (affected(x.data[i])) out.data[i] = static_cast<float>(f(static_cast<double>(x.data[i])));
}

// dx[i] = g[i] * d(x[i]) wherever affected(x[i]), d the derivative in double, rounded to f32.
template <class Affected, class D>
void rewrite_grad(const Dense<float>& x, const Dense<float>& g, Dense<float>& dx, Affected affected,
                  D d) {
  for (std::size_t i = 0; i < dx.data.size(); ++i)
    if (affected(x.data[i]))
      // The derivative rounded to f32 first, then times the upstream gradient in f32, as
      // derivatives.yaml's `grad * (...)` is evaluated: a derivative that overflows f32 is inf,
      // and a zero upstream gradient makes that NaN (0 · inf), as in LibTorch and the reference.
      // A product in double would give 0 there (found by the four-backend patches campaign:
      // minimum(-pow(x, 3), x) at x = -3e38).
      dx.data[i] = g.data[i] * static_cast<float>(d(static_cast<double>(x.data[i])));
}

// Calls f(row) for every reduced row of x, with row(j) x's flat index of the j-th element and
// out the flat index of the row's result (row_grads.h's Rows layout).
template <class F> void for_rows(const Rows& r, F&& f) {
  for (std::int64_t o = 0; o < r.outer; ++o)
    for (std::int64_t i = 0; i < r.inner; ++i) {
      const std::int64_t base = o * r.n * r.inner + i;
      f([&](std::int64_t j) { return static_cast<std::size_t>(base + j * r.inner); },
        static_cast<std::size_t>(o * r.inner + i));
    }
}

bool along_dim(OpId op) {
  return op == OpId::AmaxDim || op == OpId::AminDim || op == OpId::MaxDim || op == OpId::MinDim ||
         op == OpId::NormDim;
}

// The reductions: a NaN anywhere in a row makes the row's max / min NaN
// (onednn-amax-drops-nan); a row all -inf has max -inf, all +inf min +inf
// (onednn-reduction-max-init).
void patch_extreme(const Patches& p, const BurnmarkStmt& s, const Dense<float>& x,
                   Dense<float>& out) {
  const auto op = static_cast<OpId>(s.op);
  const bool max = op == OpId::Amax || op == OpId::Max || op == OpId::AmaxDim || op == OpId::MaxDim;
  const float start =
      max ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  const Rows r = rows_of(x.shape, along_dim(op) ? s.attrs.dim : -1);
  for_rows(r, [&](auto at, std::size_t o) {
    bool all_start = true;
    for (std::int64_t j = 0; j < r.n; ++j) {
      const float v = x.data[at(j)];
      if (std::isnan(v) && p.on(PatchId::AmaxDropsNan)) {
        out.data[o] = v;
        return;
      }
      all_start = all_start && v == start;
    }
    if (all_start && p.on(PatchId::ReductionMaxInit)) out.data[o] = start;
  });
}

// onednn-norm-powers-overflow: reduction_norm_lp_sum sums unscaled powers |x|^p, which overflow
// (or underflow) f32 where the norm does not. The rows whose sum of powers leaves f32's normal
// range are recomputed scaled by their largest |x|, in double: m (sum (|x| / m)^p)^(1 / p).
void patch_norm(const BurnmarkStmt& s, const Dense<float>& x, Dense<float>& out) {
  const double p = s.attrs.exponent;
  const Rows r = rows_of(x.shape, along_dim(static_cast<OpId>(s.op)) ? s.attrs.dim : -1);
  for_rows(r, [&](auto at, std::size_t o) {
    double m = 0.0;
    for (std::int64_t j = 0; j < r.n; ++j)
      m = std::fmax(m, std::fabs(static_cast<double>(x.data[at(j)])));
    if (!(m > 0.0) || !std::isfinite(m)) return; // 0, inf, NaN: no powers to overflow
    for (std::int64_t j = 0; j < r.n; ++j)
      if (std::isnan(x.data[at(j)])) return;
    double t = 0.0;
    for (std::int64_t j = 0; j < r.n; ++j)
      t += std::pow(std::fabs(static_cast<double>(x.data[at(j)])) / m, p);
    const double log2_sum = p * std::log2(m) + std::log2(t);
    if (log2_sum >= 128.0 || log2_sum < -126.0)
      out.data[o] = static_cast<float>(m * std::pow(t, 1.0 / p));
  });
}

// A softmax row holding a NaN or +inf is NaN throughout (its max is, so every x - max is NaN or
// -inf and the sum NaN); oneDNN's softmax_v2 leaves the other elements finite.
void patch_softmax_row(const BurnmarkStmt& s, const Dense<float>& x, Dense<float>& out) {
  const Rows r = rows_of(x.shape, s.attrs.dim);
  for_rows(r, [&](auto at, std::size_t) {
    bool nan_row = false;
    for (std::int64_t j = 0; j < r.n; ++j) {
      const float v = x.data[at(j)];
      nan_row = nan_row || std::isnan(v) || v == std::numeric_limits<float>::infinity();
    }
    if (!nan_row) return;
    for (std::int64_t j = 0; j < r.n; ++j)
      out.data[at(j)] = std::numeric_limits<float>::quiet_NaN();
  });
}

// pow's derivative as LibTorch's pow_backward writes it, g (p x^(p - 1)), with C's pow, in double.
double pow_derivative(double x, double p) {
  return p * std::pow(x, p - 1.0);
}

// gelu (erf and tanh forms) and silu: their derivatives in double, the limits 1 at +inf and 0 at
// -inf where the formula would be inf / inf or inf · 0.
double activation_derivative(const BurnmarkStmt& s, double x) {
  if (std::isinf(x)) return x > 0 ? 1.0 : 0.0;
  if (static_cast<OpId>(s.op) == OpId::Silu) {
    const double sig = 1.0 / (1.0 + std::exp(-x));
    return sig * (1.0 + x * (1.0 - sig));
  }
  if (s.attrs.variant == 0) // Φ(x) + x φ(x)
    return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  const double t = std::tanh(k * (x + c * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * c * x * x);
}

// onednn-log-one: oneDNN's log is about 1.4e-6 off in absolute terms near 1 (log(1) = -1.43e-6
// on avx2 and AVX-512), a relative error that grows without bound as log x goes to 0. On [0.5, 2]
// (|log x| <= ln 2, so that error is at least 2e-6 relative) log is recomputed in double and
// rounded once to the program's dtype; log(1) is then exactly 0.
void patch_log_near_one(const BurnmarkStmt& s, const Dense<float>& x, Dense<float>& out) {
  for (std::size_t i = 0; i < out.data.size(); ++i) {
    const float v = x.data[i];
    if (v >= 0.5f && v <= 2.0f)
      out.data[i] =
          static_cast<float>(plugin::round_to_dtype(std::log(static_cast<double>(v)), s.dtype));
  }
}

// onednn-addmm-alpha-zero-overflow: beta C + alpha (A @ B) with alpha = 0 is beta C + 0 · p,
// p = (A @ B)_ij, exactly beta C for a finite p (the sign of a zero from 0 · p kept), but
// oneDNN's f32 accumulator of p overflows to inf first and 0 · inf = NaN. Rewritten: the NaN
// elements whose row of A and column of B are finite (p exact in double never overflows), and
// beta C is not NaN itself. beta = 0 ignores C (documented), as the forward does.
void patch_addmm_alpha_zero(const BurnmarkStmt& s, PatchIn in, Dense<float>& out) {
  const Dense<float>&c = *in[0], &a = *in[1], &b = *in[2];
  const std::int64_t m = a.shape.dims[0], k = a.shape.dims[1], n = b.shape.dims[1];
  const double beta = s.attrs.beta;
  plugin::for_each_broadcast(
      out.shape, c.shape, c.shape, [&](std::int64_t o, std::int64_t ci, std::int64_t) {
        const auto at = static_cast<std::size_t>(o);
        if (!std::isnan(out.data[at])) return;
        const std::int64_t i = o / n, j = o % n;
        if (i >= m) return;
        double p = 0.0;
        for (std::int64_t l = 0; l < k; ++l) {
          const double x = a.data[static_cast<std::size_t>(i * k + l)],
                       y = b.data[static_cast<std::size_t>(l * n + j)];
          if (!std::isfinite(x) || !std::isfinite(y)) return; // 0 · inf or NaN: NaN is right
          p += x * y;
        }
        const double bc = beta == 0.0 ? 0.0 : beta * c.data[static_cast<std::size_t>(ci)];
        if (std::isnan(bc)) return;
        out.data[at] = static_cast<float>(plugin::round_to_dtype(bc + 0.0 * p, s.dtype));
      });
}

// onednn-log-softmax-grad-cancellation: the backward g - exp(y) sum(g) reads oneDNN's y, about
// 2e-6 off, and cancels that error into the gradient (5.7e-4 relative under sse41). Each row of
// finite x and g is recomputed from x in double: g_j - softmax(x)_j sum(g), rounded once. Rows
// holding a NaN or an infinity are onednn-log-softmax-inf-row's.
void patch_log_softmax_grad(const BurnmarkStmt& s, const Dense<float>& x, const Dense<float>& g,
                            Dense<float>& dx) {
  const Rows r = rows_of(x.shape, s.attrs.dim);
  for_rows(r, [&](auto at, std::size_t) {
    double top = -std::numeric_limits<double>::infinity(), sum_g = 0.0;
    for (std::int64_t j = 0; j < r.n; ++j) {
      const float v = x.data[at(j)], w = g.data[at(j)];
      if (!std::isfinite(v) || !std::isfinite(w)) return;
      top = std::fmax(top, v);
      sum_g += w;
    }
    double sum_e = 0.0;
    for (std::int64_t j = 0; j < r.n; ++j)
      sum_e += std::exp(static_cast<double>(x.data[at(j)]) - top);
    for (std::int64_t j = 0; j < r.n; ++j) {
      const double softmax = std::exp(static_cast<double>(x.data[at(j)]) - top) / sum_e;
      dx.data[at(j)] = static_cast<float>(
          plugin::round_to_dtype(static_cast<double>(g.data[at(j)]) - softmax * sum_g, s.dtype));
    }
  });
}

} // namespace

// The inputs below which oneDNN 2.6's exp gives 0 (measured: exp(-86.9) is right, exp(-87) is 0),
// with a margin: every finite x below -86.5.
namespace {
bool below_exp_cutoff(float x) {
  return x < -86.5f && std::isfinite(x);
}
} // namespace

void patch_forward(const Patches& p, const BurnmarkStmt& s, PatchIn in, Dense<float>& out) {
  if (!p.any()) return;
  const auto nan_in = [](float v) { return std::isnan(v); };
  const auto same = [](double v) { return v; };
  const auto finite_negative = [](float v) { return v < 0.0f && std::isfinite(v); };
  const auto op = static_cast<OpId>(s.op);
  switch (op) {
  case OpId::Exp:
    // onednn-exp-nan: exp(NaN) = +inf; NaN must propagate.
    if (p.on(PatchId::ExpNan)) rewrite(*in[0], out, nan_in, same);
    // onednn-exp-underflow-early: exp gives 0 from x = -87 down, where exp(x) is still a normal
    // float down to -87.34 (and a subnormal below): through std::exp in double, rounded once.
    // The backward reads this result (eltwise_exp_use_dst_for_bwd), so it needs no patch.
    if (p.on(PatchId::ExpUnderflowEarly))
      rewrite(*in[0], out, below_exp_cutoff, [](double x) { return std::exp(x); });
    return;
  case OpId::Sigmoid:
    // onednn-exp-underflow-early: sigmoid is exp-based and gives 0 there likewise; exp(x) / (1 +
    // exp(x)) in double (the backward reads the result: eltwise_logistic_use_dst_for_bwd).
    if (p.on(PatchId::ExpUnderflowEarly))
      rewrite(*in[0], out, below_exp_cutoff, [](double x) {
        const double e = std::exp(x);
        return e / (1.0 + e);
      });
    return;
  case OpId::Relu:
    // onednn-relu-nan: relu(NaN) = 0.
    if (p.on(PatchId::ReluNan)) rewrite(*in[0], out, nan_in, same);
    return;
  case OpId::Clamp:
    // onednn-clamp-nan: clip(NaN) is the lower bound.
    if (p.on(PatchId::ClampNan)) rewrite(*in[0], out, nan_in, same);
    return;
  case OpId::ClampMin:
  case OpId::ClampMax:
    // onednn-clamp-min-nan: clip behaves like C's fmax, dropping the NaN.
    if (p.on(PatchId::ClampMinNan)) rewrite(*in[0], out, nan_in, same);
    return;
  case OpId::Hardtanh:
  case OpId::Relu6:
    // onednn-hardtanh-nan: clip_v2(NaN) is the lower bound.
    if (p.on(PatchId::HardtanhNan)) rewrite(*in[0], out, nan_in, same);
    return;
  case OpId::Maximum:
  case OpId::Minimum:
    // onednn-maximum-nan-first: binary_max / binary_min drop a NaN first operand.
    if (p.on(PatchId::MaximumNanFirst))
      plugin::for_each_broadcast(out.shape, in[0]->shape, in[1]->shape,
                                 [&](std::int64_t o, std::int64_t a, std::int64_t) {
                                   const float v = in[0]->data[static_cast<std::size_t>(a)];
                                   if (std::isnan(v)) out.data[static_cast<std::size_t>(o)] = v;
                                 });
    return;
  case OpId::Amax:
  case OpId::Amin:
  case OpId::Max:
  case OpId::Min:
  case OpId::AmaxDim:
  case OpId::AminDim:
  case OpId::MaxDim:
  case OpId::MinDim:
    // onednn-amax-drops-nan, onednn-reduction-max-init (patch_extreme).
    if (p.on(PatchId::AmaxDropsNan) || p.on(PatchId::ReductionMaxInit))
      patch_extreme(p, s, *in[0], out);
    return;
  case OpId::VectorNorm:
  case OpId::NormDim:
    // onednn-norm-powers-overflow (patch_norm).
    if (p.on(PatchId::NormPowersOverflow)) patch_norm(s, *in[0], out);
    return;
  case OpId::Softmax:
    // onednn-softmax-nan-row (patch_softmax_row).
    if (p.on(PatchId::SoftmaxNanRow)) patch_softmax_row(s, *in[0], out);
    return;
  case OpId::LogSoftmax:
    // onednn-log-softmax-inf-row: the same rows as softmax's.
    if (p.on(PatchId::LogSoftmaxInfRow)) patch_softmax_row(s, *in[0], out);
    return;
  case OpId::Log:
    // onednn-log-subnormal: log(1e-40) = -88.02 (true -92.10). In double, rounded once.
    if (p.on(PatchId::LogSubnormal))
      rewrite(*in[0], out, is_subnormal, [](double v) { return std::log(v); });
    // onednn-log-one (patch_log_near_one).
    if (p.on(PatchId::LogOne)) patch_log_near_one(s, *in[0], out);
    return;
  case OpId::Addmm:
    // onednn-addmm-alpha-zero-overflow (patch_addmm_alpha_zero).
    if (p.on(PatchId::AddmmAlphaZeroOverflow) && s.attrs.alpha == 0.0)
      patch_addmm_alpha_zero(s, in, out);
    return;
  case OpId::Pow:
    // onednn-pow-half-negzero: eltwise_pow with beta = 0.5 takes sqrt's answers at -0 and -inf
    // (-0, NaN); C's pow(-0, 0.5) = +0, pow(-inf, 0.5) = +inf.
    if (p.on(PatchId::PowHalfNegzero) && s.attrs.exponent == 0.5)
      rewrite(
          *in[0], out, [](float v) { return is_neg_zero(v) || v == -HUGE_VALF; },
          [](double v) { return std::pow(v, 0.5); });
    return;
  case OpId::Gelu:
  case OpId::Silu:
  case OpId::Hardswish:
    // onednn-activation-infinities: -inf · 0 inside the formula gives NaN at -inf, where the
    // limit is -0.
    if (p.on(PatchId::ActivationInfinities))
      rewrite(
          *in[0], out, [](float v) { return v == -HUGE_VALF; }, [](double) { return -0.0; });
    if (op == OpId::Gelu && s.attrs.variant == 0 && p.on(PatchId::GeluErfCancellation))
      // onednn-gelu-erf-cancellation: 0.5 x (1 + erf(x / √2)) cancels for x < 0; the erfc form
      // does not.
      rewrite(*in[0], out, finite_negative,
              [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); });
    if (op == OpId::Gelu && s.attrs.variant != 0 && p.on(PatchId::GeluTanhCancellation))
      // onednn-gelu-tanh-cancellation: 0.5 x (1 + tanh(u)) cancels for x < 0; x sigmoid(2u) is
      // the same function without cancellation.
      rewrite(*in[0], out, finite_negative, [](double x) {
        const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        return x / (1.0 + std::exp(-2.0 * u));
      });
    return;
  case OpId::Softplus:
    // onednn-soft-relu-cancellation: soft_relu's log(1 + e^x) = n ln2 + log(2^-n + e^r) cancels
    // for x < 0; log1p(e^x) does not.
    if (p.on(PatchId::SoftReluCancellation))
      rewrite(
          *in[0], out, [](float v) { return v < 0.0f; },
          [](double x) { return std::log1p(std::exp(x)); });
    return;
  case OpId::LogSigmoid:
    // onednn-soft-relu-cancellation: logsigmoid(x) = -soft_relu(-x), cancelling for x > 0.
    if (p.on(PatchId::SoftReluCancellation))
      rewrite(
          *in[0], out, [](float v) { return v > 0.0f; },
          [](double x) { return -std::log1p(std::exp(-x)); });
    return;
  case OpId::Elu:
    // onednn-elu-expm1: alpha (exp(x) - 1) without expm1 cancels near 0-.
    if (p.on(PatchId::EluExpm1)) {
      const double alpha = s.attrs.alpha;
      rewrite(
          *in[0], out, [](float v) { return v < 0.0f; },
          [alpha](double x) { return alpha * std::expm1(x); });
    }
    return;
  case OpId::Mish:
    // onednn-mish-negative-tail: x ((e^x + 1)^2 - 1) / ((e^x + 1)^2 + 1) cancels for x < 0;
    // x tanh(log1p(e^x)) does not.
    if (p.on(PatchId::MishNegativeTail))
      rewrite(*in[0], out, finite_negative,
              [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
    return;
  default: return;
  }
}

void patch_backward(const Patches& p, const BurnmarkStmt& s, PatchIn in, const Dense<float>& out,
                    const Dense<float>& g, PatchGradIn gin) {
  if (!p.any()) return;
  const auto nan_in = [](float v) { return std::isnan(v); };
  const auto one = [](double) { return 1.0; };
  const auto op = static_cast<OpId>(s.op);
  switch (op) {
  case OpId::LogSoftmax:
    // onednn-log-softmax-inf-row: g - exp(y) sum(g) is NaN throughout a row whose y is (the
    // forward patch's rows, and an all -inf row); oneDNN's backward gives -inf there.
    if (p.on(PatchId::LogSoftmaxInfRow)) patch_softmax_row(s, out, *gin[0]);
    // onednn-log-softmax-grad-cancellation (patch_log_softmax_grad): the other rows.
    if (p.on(PatchId::LogSoftmaxGradCancellation)) patch_log_softmax_grad(s, *in[0], g, *gin[0]);
    return;
  case OpId::Relu:
    // onednn-relu-nan: relu_use_dst_for_bwd tests dst > 0, false at NaN; LibTorch's
    // threshold_backward zeroes only where the result is <= 0, so NaN passes the gradient.
    if (p.on(PatchId::ReluNan)) rewrite_grad(*in[0], g, *gin[0], nan_in, one);
    return;
  case OpId::Hardtanh:
  case OpId::Relu6:
    // onednn-hardtanh-nan: clip_v2's backward passes lo < x < hi, false at NaN; hardtanh_backward
    // blocks only x <= lo or x >= hi, so NaN passes the gradient.
    if (p.on(PatchId::HardtanhNan)) rewrite_grad(*in[0], g, *gin[0], nan_in, one);
    return;
  case OpId::ClampMax:
    // onednn-clamp-max-grad-neg-inf: clip's lo < x fails at x = lo = -inf, no kink of clamp_max.
    if (p.on(PatchId::ClampMaxGradNegInf))
      rewrite_grad(
          *in[0], g, *gin[0], [](float v) { return v == -HUGE_VALF; }, one);
    return;
  case OpId::Elu:
    // onednn-elu-grad-subnormal: the backward takes the negative branch for a tiny positive x;
    // the derivative is 1 for every x > 0 (which oneDNN gives above 5e-8 as well).
    if (p.on(PatchId::EluGradSubnormal))
      rewrite_grad(
          *in[0], g, *gin[0], [](float v) { return v > 0.0f; }, one);
    return;
  case OpId::Gelu:
  case OpId::Silu:
    // onednn-activation-infinities: inf / inf or inf · 0 in the derivative at ±inf (and in gelu
    // tanh's x^3 from about 1e13): the elements whose gradient came out NaN from a non-NaN input.
    if (p.on(PatchId::ActivationInfinities))
      for (std::size_t i = 0; i < gin[0]->data.size(); ++i) {
        const float x = in[0]->data[i];
        if (std::isnan(x) || std::isnan(g.data[i]) || !std::isnan(gin[0]->data[i])) continue;
        gin[0]->data[i] =
            g.data[i] * static_cast<float>(activation_derivative(s, x)); // rewrite_grad
      }
    return;
  case OpId::Pow: {
    const double e = s.attrs.exponent;
    if (e == 0.0) return; // pow0-grad-inf is a convention: LibTorch's zeros
    const auto d = [e](double x) { return pow_derivative(x, e); };
    // onednn-pow-grad-inf: the backward gives NaN at ±inf, where p x^(p - 1) is ±inf (or 0).
    if (p.on(PatchId::PowGradInf))
      rewrite_grad(
          *in[0], g, *gin[0], [](float v) { return std::isinf(v); }, d);
    // onednn-pow-half-negzero: sqrt's gradient at -0 and -inf (-inf, NaN) where C's pow gives
    // 0.5 pow(-0, -0.5) = +inf and 0.5 pow(-inf, -0.5) = +0.
    if (p.on(PatchId::PowHalfNegzero) && e == 0.5)
      rewrite_grad(
          *in[0], g, *gin[0], [](float v) { return is_neg_zero(v) || v == -HUGE_VALF; }, d);
    // onednn-pow-negzero: at -0 with a negative exponent the backward's sign is wrong
    // (-0.5 pow(-0, -1.5) = -inf, not +inf).
    if (p.on(PatchId::PowNegzero) && e < 0.0) rewrite_grad(*in[0], g, *gin[0], is_neg_zero, d);
    // onednn-pow2-grad-overflow: the backward goes through x^p, which overflows (or underflows)
    // f32 where p x^(p - 1) does not: the finite nonzero x whose |x|^p leaves the normal range.
    if (p.on(PatchId::Pow2GradOverflow))
      rewrite_grad(
          *in[0], g, *gin[0],
          [e](float v) {
            if (v == 0.0f || !std::isfinite(v)) return false;
            const double l = e * std::log2(std::fabs(static_cast<double>(v)));
            return l >= 128.0 || l < -126.0;
          },
          d);
    return;
  }
  default: return;
  }
}

} // namespace burnmark::onednn
