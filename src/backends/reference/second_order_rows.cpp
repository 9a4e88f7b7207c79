// Second order of the ops along a dim: prod, the scans cumprod and logcumsumexp, and the
// normalisers normalize and cosine_similarity, for second_order.cpp's switch
// (second_order_rows.h). Each
// differentiates the formula LibTorch's backward evaluates (derivatives.yaml, FunctionsManual).
// Besides the reference's own roundings, each result carries with_terms' roundings of that
// formula's terms.
#include "second_order_rows.h"

#include <cmath>

#include "approx_normalize.h"
#include "approx_scan.h"
#include "rows.h"
#include "second_order_zeros.h"

namespace burnmark::ref::second_order {
namespace {

constexpr Approx kTwo{2.0, 0.0};

// The interval reaches k, or x is k itself (a kink or a switch of formula there).
bool at(Approx x, double k) {
  return x.v == k || touches(x, k);
}

void fill_unjudged(RowOut d) {
  for (Approx& v : d)
    v = {0.0, kInf};
}

// The tangent of a row's norm, sum_k (dn/dx_k) ẋ_k, with dn/dx from vector_norm's own rule.
Approx norm_tangent(Row w, Row xt, std::vector<Approx>& terms) {
  terms.resize(w.size());
  for (std::size_t k = 0; k < w.size(); ++k)
    terms[k] = mul(w[k], xt[k]);
  return sum_of(Row(terms));
}

// Where the norm's rule dn/dx jumps: a zero element for p = 1, a tie or near-tie of the largest
// magnitudes (or a zero there) for p = inf. Elsewhere, for those orders, dn/dx is constant.
bool norm_rule_jumps(Row x, Approx n, double p) {
  if (p == 1) {
    for (const Approx& a : x)
      if (at(a, 0.0)) return true;
    return false;
  }
  if (!std::isinf(p)) return false;
  int at_norm = 0;
  for (const Approx& a : x) {
    at_norm += std::fabs(a.v) == n.v ? 1 : 0;
    if (std::fabs(a.v) != n.v && std::fabs(std::fabs(a.v) - n.v) <= a.e + n.e) return true;
  }
  return at_norm > 1 || at(n, 0.0);
}

struct Scratch {
  std::vector<Approx>& w;
  std::vector<Approx>& terms;
};

// Magnitudes of what a row's tangent adds: ẋ's own or ġa's (what ḃ's formula adds).
using Magnitudes = std::span<const double>;

// x / max(||x||_p, eps) with the gradient ga reaching it (normalize's upstream gradient, or
// cosine_similarity's g times the other side): the rule is dx = ga / d + c w, with d the clamped
// norm n, c = -sum(ga x / d^2) the gradient reaching the norm (0 where the clamp holds) and
// w = dn/dx. Its derivative along x's tangent and ga's (ġa) is
// ġa / d - ga ḋ / d^2 + ċ w + c ẇ, with ḋ = ṅ unclamped, ċ = -sum((ġa x + ga ẋ) / d^2) +
// 2 sum(ga x) ḋ / d^3, and ẇ = (p - 1) (|x|^(p-2) ẋ / n^(p-1) - sgn(x) |x|^(p-1) ṅ / n^p) (0 for
// p = 1 and inf away from their jumps). Not judged on the clamp's switch, nor where w jumps.
void divided_by_norm(Row x, Row xt, Row ga, Row gat, Magnitudes gat_terms, double p, double eps,
                     RowOut d, Scratch s) {
  const Approx n = vector_norm_forward(x, p);
  const Approx den = clamp_norm(n, eps);
  const double e32 = to_storage(eps);
  const bool active = n.v >= e32;
  s.w.resize(x.size());
  vector_norm_backward(x, n, {1.0, 0.0}, p, RowOut(s.w));
  const Row w(s.w);
  if (touches(n, e32) || (active && norm_rule_jumps(x, n, p))) return fill_unjudged(d);
  const Approx dn = norm_tangent(w, xt, s.terms);
  const Approx dd = active ? dn : Approx{};
  const Approx c = grad_through_denominator(x, ga, n, den, eps, s.terms);
  // The same formula on magnitudes (m_...): what each quantity adds up from.
  const double dv = den.v;
  double m_dn = 0, m_c = 0, m_dc = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    m_dn += std::fabs(w[k].v * xt[k].v);
    m_c += std::fabs(ga[k].v * x[k].v) / (dv * dv);
  }
  const double m_dd = active ? m_dn : 0.0;
  Approx dc{};
  if (active) {
    s.terms.resize(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
      const Approx along = div(div(add(mul(gat[k], x[k]), mul(ga[k], xt[k])), den), den);
      const Approx via_d = mul(mul(kTwo, div(div(div(mul(ga[k], x[k]), den), den), den)), dd);
      s.terms[k] = sub(via_d, along);
      m_dc += (gat_terms[k] * std::fabs(x[k].v) + std::fabs(ga[k].v * xt[k].v)) / (dv * dv) +
              2 * std::fabs(ga[k].v * x[k].v) * m_dd / (dv * dv * dv);
    }
    dc = sum_of(Row(s.terms));
  }
  const bool smooth = p != 1 && !std::isinf(p);
  for (std::size_t j = 0; j < x.size(); ++j) {
    Approx dw{};
    double m_dw = 0;
    if (active && smooth) {
      const Approx mag = abs(x[j]);
      const Approx along_x = div(mul(pow(mag, p - 2), xt[j]), pow(n, p - 1));
      const Approx along_n =
          div(mul(mul(Approx{sign_of(x[j].v), 0.0}, pow(mag, p - 1)), dn), pow(n, p));
      dw = mul(Approx{p - 1, 0.0}, sub(along_x, along_n));
      m_dw =
          std::fabs(p - 1) * (std::pow(mag.v, p - 2) * std::fabs(xt[j].v) / std::pow(n.v, p - 1) +
                              std::pow(mag.v, p - 1) * m_dn / std::pow(n.v, p));
    }
    const Approx direct = sub(div(gat[j], den), div(div(mul(ga[j], dd), den), den));
    const double m = gat_terms[j] / dv + std::fabs(ga[j].v) * m_dd / (dv * dv) +
                     m_dc * std::fabs(w[j].v) + (active ? m_c : 0.0) * m_dw;
    d[j] = with_terms(add(direct, add(mul(dc, w[j]), mul(c, dw))), m);
  }
}

// b = x / max(||x||, eps), its tangent ḃ = ẋ / d - x ḋ / d^2 and the magnitudes of ḃ's terms;
// false on the clamp's switch.
bool unit_with_tangent(Row x, Row xt, double eps, RowOut b, RowOut bt, std::vector<double>& m_bt,
                       Scratch s) {
  const Approx n = vector_norm_forward(x, 2);
  const Approx den = clamp_norm(n, eps);
  const double e32 = to_storage(eps);
  if (touches(n, e32)) return false;
  s.w.resize(x.size());
  vector_norm_backward(x, n, {1.0, 0.0}, 2, RowOut(s.w));
  const bool active = n.v >= e32;
  const Approx dd = active ? norm_tangent(Row(s.w), xt, s.terms) : Approx{};
  double m_dd = 0;
  for (std::size_t k = 0; active && k < x.size(); ++k)
    m_dd += std::fabs(s.w[k].v * xt[k].v);
  m_bt.resize(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    b[k] = div(x[k], den);
    bt[k] = sub(div(xt[k], den), div(div(mul(x[k], dd), den), den));
    m_bt[k] = std::fabs(xt[k].v) / den.v + std::fabs(x[k].v) * m_dd / (den.v * den.v);
  }
  return true;
}

} // namespace

// prod's rule is LibTorch's g f / x in a row without zeros: along the row's tangents,
// g (ḟ x - f ẋ) / x^2, with ḟ the product's own tangent. In a row with exact zeros it is the
// product of the others (LibTorch's prod_safe_zeros_backward, exclusive cumprods from both
// ends), whose derivative is g times the dual product of the others (second_order_zeros.h):
// with one zero at z, g ẋ_z prod_{i != j, z} x_i for j != z and g sum_k ẋ_k prod_{i != z, k}
// x_i at z; with two, only the zeros' own terms. Not judged where an inexact element may be 0.
void product(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx) {
  if (!start_operand(0, a.shape, a.has_tan && out.has_tan, dx)) return;
  const Rows r = out.op == Op::Prod ? rows_all(a.shape) : rows_along(a.shape, out.attrs.dim);
  const auto n = static_cast<std::size_t>(r.n);
  std::vector<Dual> prefix, others;
  for (std::int64_t row = 0; row < r.count(); ++row) {
    const auto off = [&](std::size_t j) { return r.offset(row, static_cast<std::int64_t>(j)); };
    const auto x = [&](std::size_t j) { return a.value.at(off(j)); };
    const auto xt = [&](std::size_t j) { return a.tan.at(off(j)); };
    const RowZeros zeros = row_zeros(n, x);
    const Approx g = out.grad.at(row);
    if (zeros == RowZeros::Exact) {
      products_of_others(n, x, xt, prefix, others);
      for (std::size_t j = 0; j < n; ++j)
        dx[0].buf.set(
            off(j), judged_term(mul(g, others[j].d), std::fabs(g.v) * others[j].md, second::kUlps));
      continue;
    }
    const Approx f = out.value.at(row);
    const Approx df = out.tan.at(row);
    for (std::size_t j = 0; j < n; ++j) {
      Approx term = div(mul(g, sub(mul(df, x(j)), mul(f, xt(j)))), mul(x(j), x(j)));
      if (zeros == RowZeros::Uncertain) term.e = kInf;
      dx[0].buf.set(off(j), term);
    }
  }
}

// cumprod's rule without zeros is LibTorch's reversed_cumsum(g y) / x: along x's tangent and
// the result's, (sum_{k>=j} g_k ẏ_k) / x_j - ẋ_j ((sum_{k>=j} g_k y_k) / x_j) / x_j, whose two
// parts cancel in their k = j terms (the bound counts them). A row of one element takes the
// gradient as it is (0). A row with exact zeros takes LibTorch's products of the other
// elements, sum_{k>=j} g_k prod_{i<=k, i != j} x_i, whose derivative is the same sum over the
// dual products (second_order_zeros.h). Not judged where an inexact element may be 0.
void cumulative_product(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
                        SecondOrderScratch& t) {
  if (!start_operand(0, a.shape, a.has_tan && out.has_tan, dx)) return;
  const Rows r = rows_along(a.shape, out.attrs.dim);
  const auto n = static_cast<std::size_t>(r.n);
  std::vector<Dual> prefix, others;
  for (std::int64_t row = 0; row < r.count(); ++row) {
    const auto off = [&](std::size_t j) { return r.offset(row, static_cast<std::int64_t>(j)); };
    const auto x_at = [&](std::size_t k) { return a.value.at(off(k)); };
    const RowZeros zeros = row_zeros(n, x_at);
    if (zeros == RowZeros::Exact && n > 1 && a.shape.numel() > 1) {
      // prefix[j] is the dual product of x_0 .. x_(j-1); x_j is left out and x_(j+1) .. x_k
      // multiplied in as k runs on.
      const auto xt_at = [&](std::size_t k) { return a.tan.at(off(k)); };
      products_of_others(n, x_at, xt_at, prefix, others);
      for (std::size_t j = 0; j < n; ++j) {
        Dual p = prefix[j];
        double m = 0;
        t.terms.clear();
        for (std::size_t k = j; k < n; ++k) {
          if (k > j) p = times(p, factor(x_at(k), xt_at(k)));
          const Approx g = out.grad.at(off(k));
          t.terms.push_back(mul(g, p.d));
          m += std::fabs(g.v) * p.md;
        }
        dx[0].buf.set(off(j), judged_term(sum_of(Row(t.terms)), m, second::kUlps));
      }
      continue;
    }
    t.terms.resize(n);
    t.more.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      t.terms[k] = mul(out.grad.at(off(k)), out.value.at(off(k)));
      t.more[k] = mul(out.grad.at(off(k)), out.tan.at(off(k)));
    }
    // Double backward differentiates y_k through every x_l, l <= k: g_k y_k ẋ_l / x_l.
    std::vector<double>& m_dy = t.mags[0];
    m_dy.resize(n);
    double along = 0;
    for (std::size_t k = 0; k < n; ++k) {
      along += std::fabs(a.tan.at(off(k)).v / a.value.at(off(k)).v);
      m_dy[k] = std::fabs(t.terms[k].v) * along;
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (n == 1 || a.shape.numel() <= 1) {
        dx[0].buf.set(off(j), {});
        continue;
      }
      const Approx x = a.value.at(off(j));
      const Approx sum_y = sum_of(Row(t.terms).subspan(j));
      const Approx sum_dy = sum_of(Row(t.more).subspan(j));
      double m_y = 0, m_dy_j = 0;
      for (std::size_t k = j; k < n; ++k) {
        m_y += std::fabs(t.terms[k].v);
        m_dy_j += m_dy[k];
      }
      const double ax = std::fabs(x.v);
      Approx term = with_terms(sub(div(sum_dy, x), mul(a.tan.at(off(j)), div(div(sum_y, x), x))),
                               m_dy_j / ax + std::fabs(a.tan.at(off(j)).v) * m_y / (ax * ax));
      if (zeros == RowZeros::Uncertain) term.e = kInf;
      dx[0].buf.set(off(j), term);
    }
  }
}

// logcumsumexp's rule sum_{k>=j} g_k exp(x_j - y_k): along x's and y's tangents,
// sum_{k>=j} g_k exp(x_j - y_k) (ẋ_j - ẏ_k), each term with the first-order term's bound. Double
// backward differentiates y_k through every x_l, l <= k, whose terms exp(x_l - y_k) ẋ_l add up
// to ẏ_k in magnitude m_k = m_(k-1) exp(y_(k-1) - y_k) + exp(x_k - y_k) |ẋ_k|.
void log_cumulative_sum_exp(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
                            SecondOrderScratch& t) {
  if (!start_operand(0, a.shape, a.has_tan && out.has_tan, dx)) return;
  const Rows r = rows_along(a.shape, out.attrs.dim);
  std::vector<double>& m_dy = t.mags[0];
  m_dy.resize(static_cast<std::size_t>(r.n));
  for (std::int64_t row = 0; row < r.count(); ++row) {
    const auto x = [&](std::int64_t j) { return a.value.at(r.offset(row, j)).v; };
    const auto y = [&](std::int64_t j) { return out.value.at(r.offset(row, j)).v; };
    for (std::int64_t k = 0; k < r.n; ++k) {
      const double own = std::exp(x(k) - y(k)) * std::fabs(a.tan.at(r.offset(row, k)).v);
      const auto ku = static_cast<std::size_t>(k);
      m_dy[ku] = k == 0 ? own : m_dy[ku - 1] * std::exp(y(k - 1) - y(k)) + own;
    }
    for (std::int64_t j = 0; j < r.n; ++j) {
      const std::int64_t i = r.offset(row, j);
      t.terms.clear();
      double m = 0;
      for (std::int64_t k = j; k < r.n; ++k) {
        const std::int64_t o = r.offset(row, k);
        const Approx term = logcumsumexp_term(a.value.at(i), out.value.at(o), out.grad.at(o));
        t.terms.push_back(mul(term, sub(a.tan.at(i), out.tan.at(o))));
        m += std::fabs(term.v) * (std::fabs(a.tan.at(i).v) + m_dy[static_cast<std::size_t>(k)]);
      }
      dx[0].buf.set(i, with_terms(sum_of(Row(t.terms), 2), m));
    }
  }
}

void normalize(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
               SecondOrderScratch& t) {
  if (!start_operand(0, a.shape, a.has_tan, dx)) return;
  const Rows r = rows_along(a.shape, out.attrs.dim);
  std::vector<Approx>& x = t.rows[0];
  std::vector<Approx>& xt = t.rows[1];
  std::vector<Approx>& g = t.rows[2];
  std::vector<Approx>& held = t.rows[3];
  std::vector<Approx>& d = t.rows[4];
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(a.value, r, row, x);
    gather_row(a.tan, r, row, xt);
    gather_row(out.grad, r, row, g);
    held.assign(x.size(), Approx{});
    t.mags[0].assign(x.size(), 0.0);
    d.resize(x.size());
    divided_by_norm(x, xt, g, held, t.mags[0], out.attrs.exponent, kNormalizeEps, d,
                    {t.more, t.terms});
    scatter_row(d, r, row, dx[0].buf);
  }
}

// cosine_similarity = sum(a b), a = x1 / d1, b = x2 / d2: side 1's rule is normalize's with the
// gradient g b reaching a, whose tangent along x2's is g ḃ (and the same for side 2). Both at
// the broadcast shape, as the backward rule gives them.
void cosine_similarity(const Node& out, const Node& a, const Node& b,
                       std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t) {
  const Shape over = *broadcast(a.shape, b.shape);
  const bool reached = a.has_tan || b.has_tan;
  const std::array<bool, 2> wanted = {dx[0].wanted && reached, dx[1].wanted && reached};
  none_wanted(dx);
  const std::array<const Node*, 2> in = {&a, &b};
  for (std::size_t k = 0; k < 2; ++k) {
    dx[k].wanted = wanted[k];
    dx[k].shape = over;
    dx[k].buf.resize(over.numel());
    if (!wanted[0] && !wanted[1]) continue;
    const Walk w = broadcast_walk(over, in[k]->shape, in[k]->shape);
    gather(in[k]->value, w, t.wide[2 * k]);
    if (in[k]->has_tan) {
      gather(in[k]->tan, w, t.wide[2 * k + 1]);
    } else {
      t.wide[2 * k + 1].resize(over.numel());
      for (std::int64_t i = 0; i < over.numel(); ++i)
        t.wide[2 * k + 1].set(i, {});
    }
  }
  if (!wanted[0] && !wanted[1]) return;
  const Rows r = rows_along(over, out.attrs.dim);
  std::array<std::vector<Approx>*, 2> x = {&t.rows[0], &t.rows[1]};
  std::array<std::vector<Approx>*, 2> xt = {&t.rows[2], &t.rows[3]};
  std::array<std::vector<Approx>*, 2> unit = {&t.rows[4], &t.rows[5]};
  std::array<std::vector<Approx>*, 2> unit_t = {&t.rows[6], &t.rows[7]};
  std::vector<Approx>& ga = t.rows[8];
  std::vector<Approx>& gat = t.rows[9];
  std::vector<Approx>& d = t.rows[10];
  for (std::int64_t row = 0; row < r.count(); ++row) {
    const Approx g = out.grad.at(row);
    std::array<bool, 2> regular{};
    for (std::size_t k = 0; k < 2; ++k) {
      gather_row(t.wide[2 * k], r, row, *x[k]);
      gather_row(t.wide[2 * k + 1], r, row, *xt[k]);
      unit[k]->resize(x[k]->size());
      unit_t[k]->resize(x[k]->size());
      regular[k] = unit_with_tangent(*x[k], *xt[k], kCosineEps, *unit[k], *unit_t[k], t.mags[k],
                                     {t.more, t.terms});
    }
    for (std::size_t k = 0; k < 2; ++k) {
      if (!wanted[k]) continue;
      const std::size_t other = 1 - k;
      d.resize(x[k]->size());
      if (!regular[other]) {
        fill_unjudged(d);
      } else {
        ga.resize(d.size());
        gat.resize(d.size());
        std::vector<double>& m_gat = t.mags[2];
        m_gat.resize(d.size());
        for (std::size_t j = 0; j < d.size(); ++j) {
          ga[j] = mul(g, (*unit[other])[j]);
          gat[j] = mul(g, (*unit_t[other])[j]);
          m_gat[j] = std::fabs(g.v) * t.mags[other][j];
        }
        divided_by_norm(*x[k], *xt[k], ga, gat, m_gat, 2, kCosineEps, d, {t.more, t.terms});
      }
      scatter_row(d, r, row, dx[k].buf);
    }
  }
}

} // namespace burnmark::ref::second_order
