// Row formulas of log-sum-exp and the vector norms, forward and backward. The forward follows
// the mathematics: a norm whose value is representable is representable, however large its
// squares (pytorch/pytorch#193006 is LibTorch squaring before it sums). The backward follows
// derivatives.yaml's norm_backward and logsumexp_backward, written in a scaled form
// (sgn(x) (|x| / norm)^(p-1)) that computes the same quantity without overflowing where the
// mathematics does not. docs/conventions_reductions.md derives each bound.
#pragma once

#include <cmath>

#include "approx_reduce.h"

namespace burnmark::ref {

// ---- log-sum-exp ----

// What the rounding of x - m in the dtype does to a term exp(x - m): a relative error of at most
// expm1(u |x - m|). The sum of these over the row, weighted by the terms, is the sum's relative
// error from the shifts (at most about n u / e; the row's own value is far smaller where a few
// terms dominate).
inline double shift_error(double d) {
  return std::exp(d) * expm1_bound(storage.u * std::fabs(d));
}

// Rounding of a float log-sum-exp of n terms around its maximum: the terms' shifts
// (`shift_rel`, shift_error summed over the row and divided by the sum), each term's own few
// ulps, the sum (n - 1) u_acc (LibTorch's sum of the exp terms accumulates in f32 for bf16 and
// f16 programs, SumAccumulator), the log and the final addition of m.
inline double lse_rounding(double n, double shift_rel, double log_s, double r) {
  return shift_rel + 4 * storage.u + n * storage.acc_u + 4 * storage.u * std::fabs(log_s) +
         2 * storage.u * std::fabs(r);
}

inline Approx logsumexp_forward(Row x) {
  bool pos_inf = false, any_finite = false;
  double m = -kInf, max_e = 0;
  for (const Approx& a : x) {
    if (indeterminate(a)) return {0.0, kInf};
    if (std::isnan(a.v)) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
    if (a.v == kInf) pos_inf = true;
    if (std::isfinite(a.v)) {
      any_finite = true;
      m = std::max(m, a.v);
      max_e = std::max(max_e, a.e);
    }
  }
  if (pos_inf) return {kInf, 0.0};
  if (!any_finite) return {-kInf, 0.0};
  double s = 0, shift = 0;
  for (const Approx& a : x) {
    s += std::exp(a.v - m);
    if (std::isfinite(a.v)) shift += shift_error(a.v - m);
  }
  const double log_s = std::log(s);
  const double r = m + log_s;
  // log-sum-exp is 1-Lipschitz in the largest input error (its gradient is a softmax).
  return finish_transcendental(
      r, max_e + lse_rounding(static_cast<double>(x.size()), shift / s, log_s, r));
}

// logsumexp_backward: grad * exp(x - result).
// dx_j = g exp(x_j - result), the softmax weight of x_j. Where x_j = result = ±inf the formula
// is exp(inf - inf) = NaN; the weight's value there is its limit where one exists, as for
// logcumsumexp's (approx_scan.h, logcumsumexp_limit_weight): 1 for the row's only +inf (the finite
// elements' weights are 0 already), 1 for a row of one element (the identity), NaN otherwise (two
// infinities of the sign: any split of the weight is a limit, so none is the value).
inline void logsumexp_backward(Row x, Approx result, Approx g, RowOut dx) {
  std::size_t pos_infs = 0;
  for (const Approx& a : x)
    pos_infs += a.v == kInf && !indeterminate(a);
  for (std::size_t j = 0; j < x.size(); ++j) {
    const bool limit =
        std::isinf(x[j].v) && x[j].v == result.v && !indeterminate(x[j]) && !indeterminate(result);
    if (!limit) {
      dx[j] = mul(g, exp(sub(x[j], result)));
      continue;
    }
    const bool one = result.v == kInf ? pos_infs == 1 : x.size() == 1;
    dx[j] = mul(g, {one ? 1.0 : std::numeric_limits<double>::quiet_NaN(), 0.0});
  }
}

// ---- vector norms ----

// (sum |x_i|^p)^(1/p) of magnitudes, scaled by their maximum so that nothing overflows;
// p = inf and -inf are the max and min.
inline double norm_of_magnitudes(Row x, double p, double (*mag)(const Approx&)) {
  if (p == kInf || p == -kInf) {
    double r = p > 0 ? 0.0 : kInf;
    for (const Approx& a : x)
      r = p > 0 ? std::max(r, mag(a)) : std::min(r, mag(a));
    return r;
  }
  double big = 0;
  for (const Approx& a : x)
    big = std::max(big, mag(a));
  if (big == 0 || std::isinf(big)) return big;
  double s = 0;
  for (const Approx& a : x)
    s += std::pow(mag(a) / big, p);
  return big * std::pow(s, 1 / p);
}

inline Approx vector_norm_forward(Row x, double p) {
  for (const Approx& a : x)
    if (indeterminate(a)) return {0.0, kInf};
  if (p == 0) { // the number of nonzero elements (NaN is nonzero)
    double count = 0, uncertain = 0;
    for (const Approx& a : x) {
      count += a.v != 0 ? 1 : 0;
      uncertain += straddles_zero(a) ? 1 : 0;
    }
    // A count past 2^digits is not exact in the dtype: LibTorch counts in at::opmath_type (f32
    // for bf16 and f16, exact up to 2^24) and rounds once, as for sum; past 2^24 the float
    // count may stall (the n-term sum's bound).
    const double v = to_storage(count);
    const double stall = count < 1 / storage.acc_u ? 0.0 : (count - 1) * storage.acc_u * count;
    return {v, uncertain + stall};
  }
  for (const Approx& a : x)
    if (std::isnan(a.v)) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
  const double r = norm_of_magnitudes(x, p, [](const Approx& a) { return std::fabs(a.v); });
  if (std::isinf(r)) return {r, 0.0};
  // Norms are monotone in every |x_i|: the images of the intervals' ends bound the input error.
  const double hi = norm_of_magnitudes(x, p, [](const Approx& a) { return std::fabs(a.v) + a.e; });
  const double lo =
      norm_of_magnitudes(x, p, [](const Approx& a) { return std::max(std::fabs(a.v) - a.e, 0.0); });
  const double spread = std::max(hi - r, r - lo);
  const double n = static_cast<double>(x.size());
  // The terms' powers, the sum in unknown order and the root: (n + 3) u / p relative, plus
  // the root's own few ulps, all in the accumulator's type (LibTorch's CPU norm kernel computes
  // in at::opmath_type, f32 for bf16 and f16); finish_transcendental adds the one rounding to the
  // dtype. max and min of |x| are exact.
  const bool extremum = std::isinf(p);
  const double rounding = extremum ? 0.0 : r * ((n + 3) * storage.acc_u / p + 4 * storage.acc_u);
  return extremum ? finish_exact(r, spread) : finish_transcendental(r, spread + rounding);
}

// sgn(x) (|x| / r)^(p - 1): norm_backward's factor for finite p other than 0, 1 and inf.
inline double norm_grad_factor(double x, double r, double p) {
  const double s = x > 0 ? 1.0 : (x < 0 ? -1.0 : (std::isnan(x) ? x : 0.0));
  if (p == 2) return x / r;
  return s * std::pow(std::fabs(x) / r, p - 1);
}

// The factor with its bound: it is monotone in x (through 0 for p > 1, on either side of the
// pole for p < 1) and in r, so its spread over the corners of both intervals bounds the error.
inline Approx norm_grad_factor_bounded(Approx x, Approx r, double p) {
  const double h = norm_grad_factor(x.v, r.v, p);
  double e = 0;
  for (double dxs : {-x.e, x.e})
    for (double drs : {-r.e, r.e})
      e = std::max(e, std::fabs(norm_grad_factor(x.v + dxs, r.v + drs, p) - h));
  return finish_transcendental(h, e);
}

// norm_backward of LibTorch 1.13 for each ord: 0 gives zeros; 1 is sgn(x) grad; 2 is
// grad x / norm, 0 where norm == 0; +-inf spreads grad evenly over the elements with
// |x| == norm, with their signs; other p >= 1 are grad x |x|^(p-2) / norm^(p-1), 0 where
// norm == 0; p < 1 is sgn(x) |x|^(p-1) grad norm^(1-p), 0 where x == 0 (derivatives.yaml's
// choices at the kinks). sgn(NaN) is NaN here, as for abs.
inline void vector_norm_backward(Row x, Approx r, Approx g, double p, RowOut dx) {
  const bool g_zero = g.v == 0 && g.e == 0;
  const auto set = [&](std::size_t j, Approx v, bool uncertain) {
    dx[j] = uncertain && !g_zero ? Approx{v.v, kInf} : v;
  };
  if (p == 0) {
    for (Approx& d : dx)
      d = {0.0, 0.0};
    return;
  }
  if (p == 1) {
    for (std::size_t j = 0; j < x.size(); ++j) {
      const double s = std::isnan(x[j].v) ? x[j].v : sign_of(x[j].v);
      set(j, mul(g, Approx{s, 0.0}), touches(x[j], 0.0));
    }
    return;
  }
  if (std::isinf(p)) {
    double count = 0;
    bool uncertain = indeterminate(r);
    for (const Approx& a : x) {
      count += std::fabs(a.v) == r.v ? 1 : 0;
      if (std::fabs(a.v) != r.v && std::fabs(std::fabs(a.v) - r.v) <= a.e + r.e) uncertain = true;
    }
    if (count > 1 && r.e > 0) uncertain = true;
    const Approx share = div(g, Approx{count, 0.0});
    for (std::size_t j = 0; j < x.size(); ++j) {
      const double s = std::isnan(x[j].v) ? x[j].v : sign_of(x[j].v);
      const double mask = std::fabs(x[j].v) == r.v ? 1.0 : 0.0;
      set(j, mul(Approx{s * mask, 0.0}, share), uncertain || touches(x[j], 0.0));
    }
    return;
  }
  bool finite_input = true, any_indeterminate = indeterminate(r);
  for (const Approx& a : x) {
    finite_input = finite_input && std::isfinite(a.v);
    any_indeterminate = any_indeterminate || indeterminate(a);
  }
  if (any_indeterminate) {
    for (std::size_t j = 0; j < x.size(); ++j)
      set(j, {0.0, kInf}, true);
    return;
  }
  // A result that rounded to inf from finite inputs: the formulas divide by that inf.
  const bool result_overflowed = finite_input && std::isinf(r.v);
  for (std::size_t j = 0; j < x.size(); ++j) {
    const Approx xj = x[j];
    if (!finite_input || std::isnan(r.v)) {
      const double h = norm_grad_factor(xj.v, r.v, p);
      set(j, mul(g, Approx{p > 1 && r.v == 0 ? 0.0 : h, 0.0}), false);
      continue;
    }
    if (result_overflowed || indeterminate(r)) {
      set(j, {0.0, kInf}, true);
      continue;
    }
    if (p > 1) {
      if (r.v == 0) { // masked_fill(norm == 0, 0); uncertain when the norm may not be 0
        set(j, {0.0, 0.0}, touches(r, 0.0));
        continue;
      }
      if (touches(r, 0.0)) {
        set(j, {0.0, kInf}, true);
        continue;
      }
      set(j, mul(g, norm_grad_factor_bounded(xj, r, p)), false);
      continue;
    }
    // p < 1: a pole at x = 0, where derivatives.yaml puts 0 in sgn(x) |x|^(p-1) (masked_fill)
    // before multiplying by grad * norm^(1-p): a numeric zero, so an infinite or NaN upstream
    // gradient makes NaN there (IEEE 0 * inf), as for any other product.
    if (xj.v == 0 && xj.e == 0) {
      set(j, mul(Approx{0.0, 0.0}, mul(g, Approx{std::pow(r.v, 1 - p), 0.0})), false);
      continue;
    }
    if (touches(xj, 0.0) || touches(r, 0.0)) {
      set(j, {0.0, kInf}, true);
      continue;
    }
    set(j, mul(g, norm_grad_factor_bounded(xj, r, p)), false);
  }
}

} // namespace burnmark::ref
