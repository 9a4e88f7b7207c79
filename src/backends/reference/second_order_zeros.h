// Second order of the products (prod, cumprod, scatter_reduce prod) at rows that hold an exact
// zero, for second_order.cpp and its per-family files. A product is a polynomial: a zero factor
// is no singularity, and the derivative of "the product of the others" (the first-order rule
// there) along the tangents is the sum over the other factors k of ẋ_k times the product of the
// rest. Dual numbers (value, derivative along the tangents) multiplied along the row give it
// exactly, without dividing by any element.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "approx.h"

namespace burnmark::ref::second_order {

// A product of factors x + ε ẋ: its value, its derivative along the tangents, and the
// magnitudes of both (the same products on |x| and |ẋ|: what a library's formula adds up from).
struct Dual {
  Approx v{1.0, 0.0};
  Approx d{};
  double mv = 1;
  double md = 0;
};

inline Dual times(const Dual& a, const Dual& b) {
  return {mul(a.v, b.v), add(mul(a.v, b.d), mul(a.d, b.v)), a.mv * b.mv, a.mv * b.md + a.md * b.mv};
}
inline Dual factor(Approx x, Approx xt) {
  return {x, xt, std::fabs(x.v), std::fabs(xt.v)};
}

// others[j] = the product of every factor but j, from prefix and suffix products (no division).
template <class At, class Tangent>
void products_of_others(std::size_t count, At x, Tangent xt, std::vector<Dual>& prefix,
                        std::vector<Dual>& others) {
  prefix.assign(count + 1, Dual{});
  for (std::size_t k = 0; k < count; ++k)
    prefix[k + 1] = times(prefix[k], factor(x(k), xt(k)));
  others.resize(count);
  Dual suffix{};
  for (std::size_t k = count; k-- > 0;) {
    others[k] = times(prefix[k], suffix);
    suffix = times(factor(x(k), xt(k)), suffix);
  }
}

// How a row's zeros stand. Exact: some elements are exactly 0 with no error (every f32
// implementation sees them), and no other element's interval reaches 0. Uncertain: an inexact
// element's interval reaches 0, so a library may hold a tiny value there, and its formulas
// without zeros divide by it (their roundings then grow without bound).
enum class RowZeros { None, Exact, Uncertain };

template <class At> RowZeros row_zeros(std::size_t n, At at) {
  RowZeros z = RowZeros::None;
  for (std::size_t k = 0; k < n; ++k) {
    const Approx x = at(k);
    if (x.v == 0 && x.e == 0) {
      z = RowZeros::Exact;
    } else if (x.v == 0 || touches(x, 0.0)) {
      return RowZeros::Uncertain;
    }
  }
  return z;
}

// The element's term with the roundings of a library's formula whose terms add up to `terms`
// (as with_terms), and indeterminate where the product went beyond double (its value has
// none to judge by).
inline Approx judged_term(Approx r, double terms, double ulps) {
  if (!std::isfinite(r.v) || !std::isfinite(terms)) return unknown(r.v);
  const double e = r.e + ulps * storage.u * terms;
  return {r.v, std::isfinite(e) ? e : kInf};
}

} // namespace burnmark::ref::second_order
