// Row formulas of normalize and cosine_similarity, forward and backward, as their
// documentation defines them: normalize is x / max(||x||_p, 1e-12) and cosine_similarity is
// sum((x1 / max(||x1||, 1e-8)) * (x2 / max(||x2||, 1e-8))). Both are composites in LibTorch,
// so their gradients are the chain rule through the norm (approx_norm.h), the clamp and the
// divisions, in the order LibTorch's autograd evaluates them.
#pragma once

#include <cmath>
#include <vector>

#include "approx_norm.h"

namespace burnmark::ref {

inline constexpr double kNormalizeEps = 1e-12;
inline constexpr double kCosineEps = 1e-8;

// max(r, eps): 1-Lipschitz, NaN passes through (clamp_min).
inline Approx clamp_norm(Approx r, double eps) {
  const double e32 = to_storage(eps); // clamp_min casts its scalar to the dtype
  if (std::isnan(r.v)) return r;
  if (r.v >= e32) return r;
  return r.v + r.e < e32 ? Approx{e32, 0.0} : Approx{e32, r.v + r.e - e32};
}

inline void normalize_forward(Row x, double p, RowOut y) {
  const Approx denom = clamp_norm(vector_norm_forward(x, p), kNormalizeEps);
  for (std::size_t j = 0; j < x.size(); ++j)
    y[j] = div(x[j], denom);
}

// The gradient that reaches the norm through `x / denom` for an upstream gradient g:
// div's other-gradient -g * ((x / denom) / denom), summed over the row (the denominator was
// expanded along it), then clamp_min's where(norm >= eps, grad, 0).
inline Approx grad_through_denominator(Row x, Row g, Approx r, Approx denom, double eps,
                                       std::vector<Approx>& terms) {
  terms.resize(x.size());
  for (std::size_t k = 0; k < x.size(); ++k)
    terms[k] = neg(mul(g[k], div(div(x[k], denom), denom)));
  const Approx c = sum_of(Row(terms));
  const double e32 = to_storage(eps); // clamp_min casts its scalar to the dtype
  return gate(c, r.v >= e32, touches(r, e32));
}

// d (x / denom): g / denom directly, plus the norm's backward of the gradient reaching it.
inline void normalize_backward(Row x, Row g, double p, RowOut dx, std::vector<Approx>& terms,
                               std::vector<Approx>& via_norm) {
  const Approx r = vector_norm_forward(x, p);
  const Approx denom = clamp_norm(r, kNormalizeEps);
  const Approx c = grad_through_denominator(x, g, r, denom, kNormalizeEps, terms);
  via_norm.resize(x.size());
  vector_norm_backward(x, r, c, p, RowOut(via_norm));
  for (std::size_t j = 0; j < x.size(); ++j)
    dx[j] = add(div(g[j], denom), via_norm[j]);
}

// ---- cosine similarity (rows of x1 and x2 at their broadcast shape) ----

inline Approx cosine_forward(Row x1, Row x2, std::vector<Approx>& terms) {
  const Approx d1 = clamp_norm(vector_norm_forward(x1, 2), kCosineEps);
  const Approx d2 = clamp_norm(vector_norm_forward(x2, 2), kCosineEps);
  terms.resize(x1.size());
  for (std::size_t k = 0; k < x1.size(); ++k)
    terms[k] = mul(div(x1[k], d1), div(x2[k], d2));
  return sum_of(Row(terms));
}

// The gradient of one side: with a = x1 / d1 and b = x2 / d2, the sum's gradient reaches a as
// g * b, then a's division as for normalize.
inline void cosine_side_backward(Row x, Row other, Approx g, RowOut dx, std::vector<Approx>& ga,
                                 std::vector<Approx>& terms, std::vector<Approx>& via_norm) {
  const Approx r = vector_norm_forward(x, 2);
  const Approx denom = clamp_norm(r, kCosineEps);
  const Approx other_denom = clamp_norm(vector_norm_forward(other, 2), kCosineEps);
  ga.resize(x.size());
  for (std::size_t k = 0; k < x.size(); ++k)
    ga[k] = mul(g, div(other[k], other_denom));
  const Approx c = grad_through_denominator(x, Row(ga), r, denom, kCosineEps, terms);
  via_norm.resize(x.size());
  vector_norm_backward(x, r, c, 2, RowOut(via_norm));
  for (std::size_t j = 0; j < x.size(); ++j)
    dx[j] = add(div(ga[j], denom), via_norm[j]);
}

} // namespace burnmark::ref
