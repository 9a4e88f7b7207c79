// Row formulas of the scans (cumsum, cumprod, logcumsumexp) and of softmax and log_softmax,
// forward and backward. Scans follow the mathematics of each prefix; backward passes follow
// derivatives.yaml's formulas except where they are only shortcuts (cumprod's division by the
// input), where the reference keeps the mathematics. docs/conventions_reductions.md derives the
// bounds.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "approx_norm.h"

namespace burnmark::ref {

// ---- cumsum ----

// Each prefix is a sum of its elements (sum_of's bound, prefix by prefix).
inline void cumsum_forward(Row x, RowOut y) {
  SumAccumulator acc;
  for (std::size_t k = 0; k < x.size(); ++k) {
    acc.add(x[k]);
    y[k] = acc.value(static_cast<double>(k + 1));
  }
}

// cumsum_backward: grad flipped, cumsummed, flipped: dx_j = sum of g_k for k >= j.
inline void cumsum_backward(Row g, RowOut dx, std::vector<Approx>& reversed,
                            std::vector<Approx>& out) {
  reversed.assign(g.rbegin(), g.rend());
  out.resize(g.size());
  cumsum_forward(Row(reversed), RowOut(out));
  for (std::size_t j = 0; j < g.size(); ++j)
    dx[j] = out[g.size() - 1 - j];
}

// ---- cumprod ----

// Prefix k is the product of x_0..x_k; the bound is product_of's (k roundings).
inline void cumprod_forward(Row x, RowOut y) {
  for (std::size_t k = 0; k < x.size(); ++k)
    y[k] = product_of(x.first(k + 1), -1, static_cast<double>(k));
}

// dx_j in Horner's form, prod_{i<j} x_i (g_j + x_(j+1) (g_(j+1) + x_(j+2) (... + x_(n-1)
// g_(n-1)))): the same polynomial as the sum of products, each x_i (i > j) multiplied in once.
inline Approx cumprod_horner(Row x, Row g, std::size_t j) {
  Approx h = g[x.size() - 1];
  for (std::size_t k = x.size() - 1; k > j; --k)
    h = add(g[k - 1], mul(x[k], h));
  return mul(product_of(x.first(j), -1, static_cast<double>(j)), h);
}

// d y_k / d x_j = prod_{i <= k, i != j} x_i, so dx_j = sum_{k >= j} g_k prod_{i <= k, i != j} x_i.
// LibTorch divides (grad * output) by the input where it has no zeros, which loses the gradient
// when a prefix underflows although the products of the others do not. Each term is a
// product_of with room for that division and the sum's roundings.
//
// At an infinite element the sum of products can meet inf * 0 where the polynomial has a
// limit: at x = (inf, 0, 0), d(y_1 + y_2)/dx_1 = x_0 + x_0 x_2 = inf + inf * 0 = NaN, while
// x_0 (1 + x_2) tends to +inf however (x_0, x_2) approaches (inf, 0), since 1 + x_2 tends to
// 1. A value at an infinite input is a limit in the extended reals, and an expression built of
// + and * has that limit wherever each of its steps is defined (both are continuous there), so
// Horner's form, which multiplies the common factors out, has it wherever the sum of products
// has it and also where only a term of the sum meets inf * 0. Where Horner's form meets inf * 0
// or inf - inf itself (a zero multiplying a sum that holds an infinity, an infinite prefix
// times a sum that is exactly 0), its operands are distinct variables whose product has no
// limit: NaN is the honest answer there (cumprod's own forward is NaN at inf * 0 too). The sum
// of products stays the rule wherever it is not NaN: it is the same value, exactly rounded,
// without Horner's intermediate overflows.
inline void cumprod_backward(Row x, Row g, RowOut dx, std::vector<Approx>& terms) {
  const std::size_t n = x.size();
  for (std::size_t j = 0; j < n; ++j) {
    terms.clear();
    for (std::size_t k = j; k < n; ++k)
      terms.push_back(mul(g[k], product_of(x.first(k + 1), static_cast<std::int64_t>(j),
                                           static_cast<double>(k) + 3)));
    dx[j] = sum_of(Row(terms), 1);
    if (std::isnan(dx[j].v) && !indeterminate(dx[j])) {
      // Horner's form in the dtype can only turn an overflow into NaN (inf * 0), never into a
      // wrong infinity, so a non-NaN answer from it is the limit.
      const Approx h = cumprod_horner(x, g, j);
      if (!std::isnan(h.v) || indeterminate(h)) dx[j] = h;
    }
  }
}

// ---- logcumsumexp ----

// log(exp(a) + exp(b)) in double with IEEE's infinities: -inf is the identity, +inf absorbs,
// NaN propagates.
inline double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double m = std::max(a, b);
  if (std::isinf(m)) return m;
  return m + std::log1p(std::exp(std::min(a, b) - m));
}

// Prefix k is log-sum-exp of x_0..x_k: 1-Lipschitz in the largest input error so far, plus the
// roundings of a sequential float evaluation (each step a few ulps of the running value).
inline void logcumsumexp_forward(Row x, RowOut y) {
  double r = -kInf, max_e = 0, rounding = 0;
  bool indet = false;
  for (std::size_t k = 0; k < x.size(); ++k) {
    indet = indet || indeterminate(x[k]);
    r = log_add_exp(r, x[k].v);
    if (std::isfinite(x[k].v)) max_e = std::max(max_e, x[k].e);
    // A prefix of -inf (exp of it is 0) is exact, and rounds nothing into later prefixes.
    if (std::isfinite(r)) rounding += 6 * storage.u * (std::fabs(r) + 1);
    if (indet) {
      y[k] = unknown(r);
      continue;
    }
    y[k] = std::isfinite(r) ? finish_transcendental(r, max_e + rounding) : Approx{r, 0.0};
  }
}

// One term g_k exp(x_j - y_k) of logcumsumexp's gradient. LibTorch evaluates it in log space
// with the gradient split by sign (log|g_k| - y_k + x_j), so it also carries the rounding of
// those log-space magnitudes.
inline Approx logcumsumexp_term(Approx xj, Approx yk, Approx gk) {
  const double arg = xj.v - yk.v;
  const double t = std::exp(arg);
  const bool indet = indeterminate(xj) || indeterminate(yk) || indeterminate(gk);
  if (indet || !std::isfinite(arg)) // IEEE's value of an infinite argument is exact
    return {gk.v * t, indet ? kInf : 0.0};
  const double log_g = gk.v == 0 ? 0.0 : std::log(std::fabs(gk.v));
  const double log_space =
      4 * storage.u * (std::fabs(xj.v) + std::fabs(yk.v) + std::fabs(log_g) + 1);
  return mul(gk, finish_transcendental(t, t * expm1_bound(xj.e + yk.e + log_space)));
}

// The weight exp(x_j - y_k) where x_j = y_k = ±inf, which the formula evaluates as
// exp(inf - inf) = NaN. The weights of a prefix are softmax weights, exp(x_j) / sum_{i<=k}
// exp(x_i): in [0, 1], summing to 1. Their value there is their limit, where one exists:
// - y_k = +inf with x_j the prefix's only +inf: exp(x_j) dominates every other term, the weight
//   tends to 1 (and the finite elements' weights to 0, which exp(x - inf) = 0 already gives);
// - y_k = -inf: every x_i of the prefix is -inf. A prefix of one element is the identity,
//   y_0 = x_0, whose derivative is 1 whatever x_0;
// - otherwise (two or more +inf, or two or more -inf): the weights depend on how the infinite
//   elements approach their limit (x_a - x_b may tend to anything), so any point of the simplex
//   is a limit and none is the value: NaN, as the formula says. 1/m (the limit along equal
//   values) would be a choice the mathematics does not make; JAX's 1 each is no limit at all.
// `infs` counts the +inf elements of x_0 .. x_k. Returns NaN where the weight has no value.
inline double logcumsumexp_limit_weight(double yk, std::size_t k, std::size_t infs) {
  if (yk == kInf) return infs == 1 ? 1.0 : std::numeric_limits<double>::quiet_NaN();
  return k == 0 ? 1.0 : std::numeric_limits<double>::quiet_NaN();
}

// dx_j = sum_{k >= j} g_k exp(x_j - y_k), with the weights' limits where x_j = y_k = ±inf.
inline void logcumsumexp_backward(Row x, Row y, Row g, RowOut dx, std::vector<Approx>& terms) {
  const std::size_t n = x.size();
  thread_local std::vector<std::size_t> infs;
  infs.resize(n);
  for (std::size_t k = 0, c = 0; k < n; ++k)
    infs[k] = c += (x[k].v == kInf && !indeterminate(x[k])) ? 1 : 0;
  for (std::size_t j = 0; j < n; ++j) {
    terms.clear();
    for (std::size_t k = j; k < n; ++k) {
      const bool limit =
          std::isinf(x[j].v) && x[j].v == y[k].v && !indeterminate(x[j]) && !indeterminate(y[k]);
      terms.push_back(limit ? mul(g[k], {logcumsumexp_limit_weight(y[k].v, k, infs[k]), 0.0})
                            : logcumsumexp_term(x[j], y[k], g[k]));
    }
    dx[j] = sum_of(Row(terms), 2);
  }
}

// ---- softmax and log_softmax ----

struct Shifted {
  double m = 0;     // the row's max
  double s = 0;     // sum of exp(x - m)
  double shift = 0; // sum of shift_error(x - m)
  double max_e = 0; // largest input bound
  bool nan = false; // NaN in, or an infinite max (inf - inf)
  bool indet = false;
};

inline Shifted shifted_of(Row x) {
  Shifted r;
  r.m = -kInf;
  for (const Approx& a : x) {
    r.indet = r.indet || indeterminate(a);
    r.nan = r.nan || std::isnan(a.v);
    r.m = std::max(r.m, a.v);
    r.max_e = std::max(r.max_e, a.e);
  }
  if (std::isinf(r.m)) r.nan = true; // x - max is inf - inf somewhere (all -inf, or a +inf)
  if (r.nan || r.indet) return r;
  for (const Approx& a : x) {
    r.s += std::exp(a.v - r.m);
    if (std::isfinite(a.v)) r.shift += shift_error(a.v - r.m);
  }
  return r;
}

// A row that is indeterminate or NaN throughout: fills y and says so.
inline bool fill_unless_regular(const Shifted& sh, RowOut y) {
  if (!sh.indet && !sh.nan) return false;
  for (Approx& a : y)
    a = sh.indet ? Approx{0.0, kInf} : Approx{std::numeric_limits<double>::quiet_NaN(), 0.0};
  return true;
}

// softmax_j = exp(x_j - m) / sum. Its relative sensitivity to the inputs is at most
// e_j + sum_k y_k e_k <= 2 max e; its roundings are those of log-sum-exp plus the division.
inline void softmax_forward(Row x, RowOut y) {
  const Shifted sh = shifted_of(x);
  if (fill_unless_regular(sh, y)) return;
  const double n = static_cast<double>(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double d = x[j].v - sh.m;
    const double v = std::exp(d) / sh.s;
    const double rel =
        expm1_bound(2 * sh.max_e) + storage.u * (std::fabs(d) + n / 2.718281828459045 + n + 9);
    y[j] = finish_transcendental(v, v * rel);
  }
}

// log_softmax_j = x_j - m - log(sum): x_j's own bound plus log-sum-exp's.
inline void log_softmax_forward(Row x, RowOut y) {
  const Shifted sh = shifted_of(x);
  if (fill_unless_regular(sh, y)) return;
  const double n = static_cast<double>(x.size());
  const double log_s = std::log(sh.s);
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double d = x[j].v - sh.m;
    if (d == -kInf) {
      y[j] = {-kInf, 0.0};
      continue;
    }
    const double v = d - log_s;
    const double e = x[j].e + sh.max_e + storage.u * std::fabs(d) +
                     lse_rounding(n, sh.shift / sh.s, log_s, sh.m);
    y[j] = finish_transcendental(v, e);
  }
}

// softmax_backward_data: y * (g - sum(g * y)).
inline void softmax_backward(Row y, Row g, RowOut dx, std::vector<Approx>& terms) {
  terms.resize(y.size());
  for (std::size_t k = 0; k < y.size(); ++k)
    terms[k] = mul(g[k], y[k]);
  const Approx dot = sum_of(Row(terms));
  for (std::size_t j = 0; j < y.size(); ++j)
    dx[j] = mul(y[j], sub(g[j], dot));
}

// log_softmax_backward_data: g - exp(y) * sum(g).
inline void log_softmax_backward(Row y, Row g, RowOut dx) {
  const Approx total = sum_of(g);
  for (std::size_t j = 0; j < y.size(); ++j)
    dx[j] = sub(g[j], mul(exp(y[j]), total));
}

} // namespace burnmark::ref
