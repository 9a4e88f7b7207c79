// Row formulas of the reductions: sums, products, extrema (max, min, amax, amin) and the
// variance and standard deviation, forward and backward. Each works on one row (rows.h) in
// double and returns f32 values with bounds (approx.h). The forward follows the mathematics;
// the backward follows derivatives.yaml where it makes a choice (ties, the kink of std at 0)
// and the mathematics where its formula is only a shortcut (prod's result / input).
// docs/conventions_reductions.md gives every rule and the derivation of each bound.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "rows.h"

namespace burnmark::ref {

// A float sum accumulated element by element, with the bound of an accumulation in unknown
// order: sum(e_i) + (n - 1) u_acc sum|x_i|, indeterminate when partial sums may overflow and
// cancel. u_acc is the accumulator's unit roundoff (f32 for bf16 and f16 programs: LibTorch's
// CPU sum, cumsum and trace accumulate in at::acc_type and round to the dtype once, which
// finish_exact's two ulps of the dtype cover), so a kernel that accumulates in bf16 and stalls
// at 256 is flagged (docs/conventions_reductions.md, "Accumulation").
struct SumAccumulator {
  double sum = 0, abs_sum = 0, err = 0;
  bool pos = false, negative = false, non_finite = false, indet = false;
  void add(Approx a) {
    indet = indet || indeterminate(a);
    sum += a.v;
    err += a.e;
    if (std::isfinite(a.v))
      abs_sum += std::fabs(a.v);
    else
      non_finite = true;
    pos = pos || a.v > 0;
    negative = negative || a.v < 0;
  }
  // The sum of the n terms so far, with `extra` more roundings in the dtype (a caller's own
  // steps on the terms or the result).
  Approx value(double n, double extra_roundings = 0) const {
    if (order_decides_overflow()) return unknown(sum);
    return finish_exact(sum,
                        err + ((n - 1) * storage.acc_u + extra_roundings * storage.u) * abs_sum);
  }
  // The sum of the n terms as n - 1 in-place additions into a tensor of the dtype, each rounded
  // to the dtype, in some order: what index_add_ and scatter_add_ document
  // (`self[index[i]] += src[i]`), and so the gradients of index_select, gather and
  // take_along_dim (derivatives.yaml: index_add_ / scatter_add_ of the gradient into zeros).
  // Not a reduction: no f32 accumulator for bf16 and f16 (docs/conventions_reductions.md).
  Approx value_added_in_place(double n) const {
    if (order_decides_overflow(storage.overflow)) return unknown(sum); // partial sums in the dtype
    return finish_exact(sum, err + (n - 1) * storage.u * abs_sum);
  }
  // The mean of the n terms as PyTorch's mean op computes it (mean_of_sum).
  Approx mean(double n) const {
    if (order_decides_overflow()) return unknown(sum / n);
    return mean_of_sum(sum, abs_sum, err, n);
  }
  // Terms of both signs (or an infinite one) whose partial sums may pass `limit` (the
  // accumulator's range unless the sum is kept in the dtype) in one order and not in another.
  bool order_decides_overflow(double limit = storage.acc_overflow) const {
    return indet || (abs_sum >= limit && ((pos && negative) || non_finite));
  }
};

inline Approx sum_of(Row x, double extra_roundings = 0) {
  SumAccumulator acc;
  for (const Approx& a : x)
    acc.add(a);
  return acc.value(static_cast<double>(x.size()), extra_roundings);
}

// SumAccumulator::mean over a row: PyTorch's mean op.
inline Approx mean_of(Row x) {
  SumAccumulator acc;
  for (const Approx& a : x)
    acc.add(a);
  return acc.mean(static_cast<double>(x.size()));
}

// SumAccumulator::value_added_in_place over a row.
inline Approx sum_added_in_place(Row x) {
  SumAccumulator acc;
  for (const Approx& a : x)
    acc.add(a);
  return acc.value_added_in_place(static_cast<double>(x.size()));
}

// ---- products ----

// A float product's factors, summarised so that two disjoint sets of factors combine: what
// product_of needs to decide the product's value, its bound and whether it is indeterminate.
// prod's gradient (the product of all others, per element) is then a prefix and a suffix
// combined, O(n), where recomputing each product of the others is O(n²): seconds at 65,536
// elements.
struct ProductFactors {
  int zeros = 0, infs = 0, nans = 0;
  bool unknown_factor = false, uncertain_zero = false, sign = false;
  double big_log = 0, small_log = 0; // log2 bounds of the largest and smallest partial products
  double mant = 1;                   // the exact product, as mantissa and exponent
  long long exp2 = 0;
  double ratio = 1;   // prod(1 + e_i / |x_i|), while no factor may be zero
  double hi_mant = 1; // prod(|x_i| + e_i), as mantissa and exponent
  long long hi_exp2 = 0;

  void add(const Approx& a) {
    if (indeterminate(a)) {
      unknown_factor = true;
      return;
    }
    if (std::isnan(a.v)) {
      ++nans;
      return;
    }
    sign = sign != std::signbit(a.v);
    if (a.v == 0 && a.e == 0) {
      ++zeros;
      return;
    }
    if (std::isinf(a.v)) {
      ++infs;
      return;
    }
    const double mag = std::fabs(a.v);
    if (a.e >= mag) uncertain_zero = true;
    if (mag + a.e > 1) big_log += std::log2(mag + a.e);
    if (mag < 1) small_log += a.e >= mag ? -kInf : std::log2(mag - a.e);
    int e = 0;
    mant = std::frexp(mant * a.v, &e);
    exp2 += e;
    hi_mant = std::frexp(hi_mant * (mag + a.e), &e);
    hi_exp2 += e;
    if (!uncertain_zero) ratio *= 1 + a.e / mag;
  }

  ProductFactors with(const ProductFactors& o) const {
    ProductFactors r = *this;
    r.zeros += o.zeros;
    r.infs += o.infs;
    r.nans += o.nans;
    r.unknown_factor = unknown_factor || o.unknown_factor;
    r.uncertain_zero = uncertain_zero || o.uncertain_zero;
    r.sign = sign != o.sign;
    r.big_log += o.big_log;
    r.small_log += o.small_log;
    int e = 0;
    r.mant = std::frexp(mant * o.mant, &e);
    r.exp2 += o.exp2 + e;
    r.hi_mant = std::frexp(hi_mant * o.hi_mant, &e);
    r.hi_exp2 += o.hi_exp2 + e;
    r.ratio *= o.ratio;
    return r;
  }

  // The product, with a bound that holds for a float product in any order with `roundings`
  // roundings. These stay roundings of the dtype: LibTorch's CPU prod kernel
  // (prod_kernel_impl, binary_kernel_reduce_vec on scalar_t) multiplies in the dtype itself.
  // Partial products of a float product in unknown order may overflow or lose bits below the normal
  // range although the exact product does not: then the element is indeterminate. Exact zeros,
  // infinities and NaN give what every order gives (0 * inf = NaN is order-free).
  Approx value(double roundings) const {
    if (unknown_factor) return {0.0, kInf};
    const double signed_zero = sign ? -0.0 : 0.0;
    const double signed_inf = sign ? -kInf : kInf;
    if (nans > 0) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
    if (zeros > 0 && infs > 0) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
    // Partial products among the other factors reaching overflow (then inf * 0 = NaN) or below
    // the normal range (then 0 * inf = NaN, or lost bits multiplied back up).
    const bool may_overflow = big_log >= 127;
    const bool may_underflow = small_log < -125;
    if (zeros > 0) return may_overflow ? Approx{signed_zero, kInf} : Approx{signed_zero, 0.0};
    if (infs > 0)
      return may_underflow || uncertain_zero ? Approx{signed_inf, kInf} : Approx{signed_inf, 0.0};
    const double exact = std::ldexp(mant, static_cast<int>(std::clamp(exp2, -2000LL, 2000LL)));
    if (may_overflow || (may_underflow && big_log > 0)) return unknown(exact);
    const double growth = 1 + 1.01 * roundings * storage.u;
    double e = 0;
    if (uncertain_zero) {
      // The product may be anything of magnitude up to prod(|x_i| + e_i).
      e = std::ldexp(hi_mant, static_cast<int>(std::clamp(hi_exp2, -2000LL, 2000LL))) * growth +
          std::fabs(exact);
    } else {
      e = std::fabs(exact) * (ratio * growth - 1);
    }
    // Below the normal range every multiplication may lose up to half a subnormal step; the
    // factors are all at most 1 here, so later ones do not magnify it.
    if (may_underflow) e += (roundings + 1) * storage.underflow_step;
    return finish_exact(exact, e);
  }
};

// The product of a row without element `skip` (-1: none), bounded for `roundings` roundings.
inline Approx product_of(Row x, std::int64_t skip, double roundings) {
  ProductFactors f;
  for (std::int64_t j = 0; j < static_cast<std::int64_t>(x.size()); ++j)
    if (j != skip) f.add(x[static_cast<std::size_t>(j)]);
  return f.value(roundings);
}

inline Approx prod_forward(Row x) {
  return product_of(x, -1, static_cast<double>(x.size()) - 1);
}

// Each element's product of all the others, from a prefix and a suffix (`suffix` is scratch).
template <class Out>
void products_of_others(Row x, double roundings, std::vector<ProductFactors>& suffix, Out out) {
  const std::size_t n = x.size();
  suffix.assign(n + 1, ProductFactors{});
  for (std::size_t j = n; j-- > 0;) {
    suffix[j] = suffix[j + 1];
    suffix[j].add(x[j]);
  }
  ProductFactors prefix;
  for (std::size_t j = 0; j < n; ++j) {
    out(j, prefix.with(suffix[j + 1]).value(roundings));
    prefix.add(x[j]);
  }
}

// d prod / d x_j = the product of the others. LibTorch's formula without zeros is
// grad * (result / x_j), a shortcut that loses the gradient when the full product under- or
// overflows although the product of the others does not; the reference keeps the mathematics.
// The bound allows the shortcut's roundings (the result's n - 1, the division and the product
// with grad).
inline void prod_backward(Row x, Approx, Approx g, RowOut dx) {
  thread_local std::vector<ProductFactors> suffix;
  products_of_others(x, static_cast<double>(x.size()) + 1, suffix,
                     [&](std::size_t j, Approx others) { dx[j] = mul(g, others); });
}

// ---- extrema ----

struct Extreme {
  Approx value;
  std::int64_t first = 0; // index of the first extreme element (the first NaN in a NaN row)
  std::int64_t count = 0; // elements equal to the value (NaNs in a NaN row)
  bool nan = false;
  bool ties_uncertain = false; // the input bounds may change which elements are extreme
};

// max (want_max) or min of a row; NaN propagates. The result lies between the extreme lower
// and upper ends of the elements' intervals, which gives its bound exactly. values_at_index:
// the value is the element at the first extreme index (torch.max(x, dim) returns x[indices]).
inline Extreme extreme_of(Row x, bool want_max, bool values_at_index = false) {
  Extreme r;
  const auto better = [&](double a, double b) { return want_max ? a > b : a < b; };
  for (std::size_t j = 0; j < x.size(); ++j) {
    if (indeterminate(x[j])) {
      r.value = {x[j].v, kInf};
      r.ties_uncertain = true;
      return r;
    }
    if (std::isnan(x[j].v)) {
      if (!r.nan) r.first = static_cast<std::int64_t>(j);
      r.count = r.nan ? r.count + 1 : 1;
      r.nan = true;
    }
  }
  if (r.nan) {
    r.value = {std::numeric_limits<double>::quiet_NaN(), 0.0};
    return r;
  }
  double m = x[0].v;
  for (std::size_t j = 1; j < x.size(); ++j)
    if (better(x[j].v, m)) {
      m = x[j].v;
      r.first = static_cast<std::int64_t>(j);
    }
  // A zero extreme: max(-0, +0) is +0 and min is -0 (IEEE 754-2019 maximum and minimum); the
  // selecting forms (values_at_index) keep the element at the first index instead.
  if (m == 0 && !values_at_index)
    for (const Approx& a : x)
      if (a.v == 0 && std::signbit(a.v) != want_max) m = a.v;
  double lo_end = -kInf, hi_end = -kInf, tie_e = 0;
  for (const Approx& a : x) {
    const double s = want_max ? a.v : -a.v;
    lo_end = std::max(lo_end, s - a.e);
    hi_end = std::max(hi_end, s + a.e);
    if (a.v == m) {
      ++r.count;
      tie_e = std::max(tie_e, a.e);
    }
  }
  const double sm = want_max ? m : -m;
  for (const Approx& a : x) {
    const double s = want_max ? a.v : -a.v;
    if (a.v != m && s + a.e >= sm - tie_e) r.ties_uncertain = true;
  }
  if (r.count > 1 && tie_e > 0) r.ties_uncertain = true;
  const double e = std::isfinite(m) ? std::max(hi_end - sm, sm - lo_end) : 0.0;
  r.value = {m, e};
  return r;
}

// An indeterminate element leaves the extreme (and which elements share it) unknown: every
// gradient element is indeterminate, unless the upstream gradient is exactly 0, whose shares are
// 0 wherever they go. Returns whether dx was written.
inline bool undecided(const Extreme& ex, Approx g, RowOut dx) {
  if (!indeterminate(ex.value) || ex.nan) return false;
  const bool zero = g.v == 0 && g.e == 0;
  for (Approx& d : dx)
    d = zero ? Approx{0.0, 0.0} : Approx{0.0, kInf};
  return true;
}

// amax/amin backward (scale_grad_by_count): (grad / count) * (x == result). In a NaN row no
// element equals the result, so grad / 0 * 0 makes every element NaN, as the formula says.
inline void amax_backward(Row x, Approx g, bool want_max, RowOut dx) {
  const Extreme ex = extreme_of(x, want_max);
  if (undecided(ex, g, dx)) return;
  if (ex.nan) {
    for (Approx& d : dx)
      d = {std::numeric_limits<double>::quiet_NaN(), 0.0};
    return;
  }
  const Approx share = div(g, Approx{static_cast<double>(ex.count), 0.0});
  for (std::size_t j = 0; j < x.size(); ++j) {
    const Approx r = mul(share, Approx{x[j].v == ex.value.v ? 1.0 : 0.0, 0.0});
    dx[j] = ex.ties_uncertain && !(g.v == 0 && g.e == 0) ? Approx{r.v, kInf} : r;
  }
}

// max/min over every element (evenly_distribute_backward): grad / count on the elements equal
// to the result (on the NaNs when it is NaN), exactly 0 elsewhere (masked_fill).
inline void max_all_backward(Row x, Approx g, bool want_max, RowOut dx) {
  const Extreme ex = extreme_of(x, want_max);
  if (undecided(ex, g, dx)) return;
  const Approx share = div(g, Approx{static_cast<double>(ex.count), 0.0});
  for (std::size_t j = 0; j < x.size(); ++j) {
    const bool hit = ex.nan ? std::isnan(x[j].v) : x[j].v == ex.value.v;
    const Approx r = hit ? share : Approx{0.0, 0.0};
    dx[j] = ex.ties_uncertain && !(g.v == 0 && g.e == 0) ? Approx{r.v, kInf} : r;
  }
}

// max/min along a dim (value_selecting_reduction_backward): the whole gradient to the index
// LibTorch returns, documented as the first extreme one (the first NaN in a NaN row).
inline void max_dim_backward(Row x, Approx g, bool want_max, RowOut dx) {
  const Extreme ex = extreme_of(x, want_max, true);
  if (undecided(ex, g, dx)) return;
  for (std::size_t j = 0; j < x.size(); ++j) {
    const Approx r = static_cast<std::int64_t>(j) == ex.first ? g : Approx{0.0, 0.0};
    dx[j] = ex.ties_uncertain && !(g.v == 0 && g.e == 0) ? Approx{r.v, kInf} : r;
  }
}

// ---- variance and standard deviation ----

struct Spread {
  int scale = 0; // the row was divided by 2^scale first; mean, s and s_e are in those units
  double mean = 0;
  double s = 0;   // sum of squared deviations, exact (in double)
  double s_e = 0; // bound on a float algorithm's sum of squared deviations
  bool non_finite = false;
  bool indeterminate = false;
};

// Sum of squared deviations with the bound of a float algorithm (two-pass or Welford): input
// bounds sum(2 |d_i| e_i + e_i^2), the mean's rounding n dm^2, and the conditioning term of
// Chan, Golub and LeVeque, c n u sqrt(S sum x_i^2), which is what makes a huge common offset
// (1e20 + small spread) honestly inexact.
inline Spread spread_of(Row x) {
  Spread r;
  const double n = static_cast<double>(x.size());
  double largest = 0;
  for (const Approx& a : x) {
    if (indeterminate(a)) r.indeterminate = true;
    if (!std::isfinite(a.v)) r.non_finite = true;
    largest = std::max(largest, std::fabs(a.v));
  }
  if (r.non_finite || r.indeterminate) return r;
  // Double has no headroom over f64: near either end of its range the sum, the mean and the
  // squares would overflow or underflow although the variance need not (var([DBL_MAX] * 2) is
  // 0). A power of two brings the row to magnitude 1 exactly; f32, bf16 and f16 rows are never
  // scaled, so their results are unchanged.
  r.scale = largest > 0x1p400 || (largest > 0 && largest < 0x1p-400) ? std::ilogb(largest) : 0;
  const auto value = [&](const Approx& a) { return std::ldexp(a.v, -r.scale); };
  double sum = 0, abs_sum = 0;
  for (const Approx& a : x) {
    sum += value(a);
    abs_sum += std::fabs(value(a));
  }
  r.mean = sum / n;
  // Scaled rows are f64 ones at the ends of the range, where the mean's last-bit error times
  // 2^(2 scale) would overflow: var([DBL_MAX] * 5) must be 0. One correction pass makes the
  // mean of equal values exact.
  if (r.scale != 0) {
    double residual = 0;
    for (const Approx& a : x)
      residual += value(a) - r.mean;
    r.mean += residual / n;
  }
  // LibTorch's CPU var and std accumulate in at::opmath_type or wider (Welford in double, or
  // two passes in float) and round to the dtype once: u_acc, not the dtype's u.
  const double dm = (n + 1) * storage.acc_u * abs_sum / n;
  double q = 0, prop = 0;
  for (const Approx& a : x) {
    const double d = value(a) - r.mean;
    const double e = std::ldexp(a.e, -r.scale);
    r.s += d * d;
    q += value(a) * value(a);
    prop += 2 * std::fabs(d) * e + e * e;
  }
  r.s_e = prop + n * dm * dm + 4 * (n + 2) * storage.acc_u * (r.s + std::sqrt(r.s * q));
  return r;
}

// The exact variance and its bound in units of 2^(2 scale), or NaN (non-finite input,
// dof <= 0) / indeterminate.
inline Approx variance_of(Row x, int correction, int& scale) {
  const Spread sp = spread_of(x);
  scale = sp.scale;
  const double dof = static_cast<double>(x.size()) - correction;
  if (sp.indeterminate) return {0.0, kInf};
  if (sp.non_finite || dof <= 0) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
  return {sp.s / dof, sp.s_e / dof};
}

// A variance beyond f32 is inf; one within it is representable even where the squared
// deviations overflow a float accumulator (as for the norms).
inline Approx var_forward(Row x, int correction) {
  int scale = 0;
  const Approx v = variance_of(x, correction, scale);
  if (std::isnan(v.v) || indeterminate(v)) return v;
  return finish_exact(std::ldexp(v.v, 2 * scale), std::ldexp(v.e, 2 * scale));
}

// sqrt of the exact variance: representable whenever the deviation is, however large the
// variance. sqrt is monotone, so the ends of the variance's interval bound it.
inline Approx std_forward(Row x, int correction) {
  int scale = 0;
  const Approx v = variance_of(x, correction, scale);
  if (std::isnan(v.v) || indeterminate(v)) return v;
  const double r = std::sqrt(v.v);
  const double e = std::max(std::sqrt(v.v + v.e) - r, r - std::sqrt(std::max(v.v - v.e, 0.0)));
  return finish_exact(std::ldexp(r, scale), std::ldexp(e, scale));
}

// var_backward: (2 / dof) * grad * (x - x.mean()); dof = 0 gives inf * 0 = NaN. The mean is
// LibTorch's mean op (mean_of: accumulated in f32 for bf16 and f16, rounded once).
inline void var_backward(Row x, Approx g, int correction, RowOut dx) {
  const double n = static_cast<double>(x.size());
  const Approx scale = mul(scalar_operand(2.0 / (n - correction)), g);
  const Approx mean = mean_of(x);
  for (std::size_t j = 0; j < x.size(); ++j)
    dx[j] = mul(scale, sub(x[j], mean));
}

// std_backward: grad / (2 * result), 0 where result == 0 (derivatives.yaml's choice at the
// kink of sqrt), then var_backward. Uncertain where the result's interval reaches 0.
inline void std_backward(Row x, Approx result, Approx g, int correction, RowOut dx) {
  Approx gv = div(g, mul(Approx{2.0, 0.0}, result));
  if (result.v == 0) gv = {0.0, 0.0};
  if (touches(result, 0.0) && !(g.v == 0 && g.e == 0)) gv.e = kInf;
  var_backward(x, gv, correction, dx);
}

} // namespace burnmark::ref
