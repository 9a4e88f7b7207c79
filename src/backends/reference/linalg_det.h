// det, slogdet (its logabsdet) and inv of [..., n, n] matrices, n <= 4, for the reference:
// forward and backward with their bounds (docs/conventions_linalg.md).
//
// The mathematics is exact here: det by its Leibniz expansion (the signed sum over the n!
// permutations), its gradient the cofactor matrix adj(A)^T, a polynomial and so defined at
// singular matrices too, inv = adj(A) / det(A). The bounds model a correct f32 implementation
// that factorises with partial pivoting, as LibTorch (LAPACK's getrf) does: the computed
// factors are those of A + dA with |dA| <= gamma_n |L||U| (Higham, Accuracy and Stability of
// Numerical Algorithms, Thm 9.3; gamma_3n for a solve, Thm 9.4), and a determinant moves by at
// most perm(|A| + |dA|) - perm(|A|) within that box (every Leibniz term by at most its
// permanent term), to every order. |L||U| comes from the same factorisation in double, with a
// factor 2 of margin for pivots that f32 may order differently on near-ties.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "burnmark/ir/shape_rules.h"
#include "tape.h"

namespace burnmark::ref {

inline constexpr int kOrder = static_cast<int>(kMaxSquareOrder);
using Square = std::array<double, kOrder * kOrder>; // row-major, n x n in the first n * n slots

// LibTorch's det backward takes its SVD formula where |det| < 100 eps (eps of f32), its LU
// solve elsewhere (FunctionsManual.cpp, linalg_det_backward); the bound covers whichever a
// computed det within its bound may select.
inline constexpr double kSingularThreshold = 100.0 * 0x1p-23;

struct Permutations {
  int count = 0;
  std::array<std::array<int, kOrder>, 24> p{};
  std::array<int, 24> sign{};
};
inline const Permutations& permutations(int n) {
  static const std::array<Permutations, kOrder + 1> all = [] {
    std::array<Permutations, kOrder + 1> t{};
    for (int m = 0; m <= kOrder; ++m) {
      std::array<int, kOrder> q{0, 1, 2, 3};
      do {
        int inversions = 0;
        for (int i = 0; i < m; ++i)
          for (int j = i + 1; j < m; ++j)
            inversions += q[static_cast<std::size_t>(i)] > q[static_cast<std::size_t>(j)] ? 1 : 0;
        const auto c = static_cast<std::size_t>(t[static_cast<std::size_t>(m)].count++);
        t[static_cast<std::size_t>(m)].p[c] = q;
        t[static_cast<std::size_t>(m)].sign[c] = inversions % 2 ? -1 : 1;
      } while (std::next_permutation(q.begin(), q.begin() + m));
    }
    return t;
  }();
  return all[static_cast<std::size_t>(n)];
}

// The Leibniz sum over an m x m matrix given by at(i, j): signed (the determinant) or of
// absolute values (the permanent of |.|). m = 0 gives 1.
template <class At> double leibniz(int m, At at, bool permanent) {
  const Permutations& ps = permutations(m);
  double sum = 0;
  for (int c = 0; c < ps.count; ++c) {
    double term = permanent ? 1.0 : ps.sign[static_cast<std::size_t>(c)];
    for (int i = 0; i < m; ++i) {
      const double x = at(i, ps.p[static_cast<std::size_t>(c)][static_cast<std::size_t>(i)]);
      term *= permanent ? std::fabs(x) : x;
    }
    sum += term;
  }
  return sum;
}

// Everything the three ops need to know about one matrix of the batch.
struct SquareFacts {
  int n = 0;
  Square a{}, e{}; // values and their bounds
  bool nan = false, inf = false, unknown = false;
  // An exact zero row or column with every entry finite: any LU meets an exact zero pivot (a
  // zero row or column stays zero through elimination), so det = 0, logabsdet = -inf and inv
  // raises whatever the rounding.
  bool zero_line = false;
  // Elimination with multipliers |l| <= 1 may overflow f32 (growth up to 2^(n-1)).
  bool growth_overflow = false;
  // Some product of the pivots in some order overflows, or underflows while det does not.
  bool product_overflow = false, product_underflow = false;
  double det = 0;
  double perturbation = 0; // |det(A + dA) - det(A)| within the factorisation's box
  double det_e = 0;        // det's bound: the perturbation and the product's roundings
  double log_pivots = 0;   // sum of |log |u_kk||: the magnitudes slogdet's sum of logs rounds
  Square solve_box{};      // per-entry backward error of an LU solve, input bounds included
  double at(int i, int j) const { return a[static_cast<std::size_t>(i * n + j)]; }
  bool finite_exactly_known() const { return !nan && !inf && !unknown; }
};

inline double gamma(int k) {
  return k * storage.u / (1 - k * storage.u);
}

inline SquareFacts square_facts(const Buf& x, std::int64_t offset, int n) {
  SquareFacts f;
  f.n = n;
  const int nn = n * n;
  for (int i = 0; i < nn; ++i) {
    const Approx v = x.at(offset + i);
    f.a[static_cast<std::size_t>(i)] = v.v;
    f.e[static_cast<std::size_t>(i)] = v.e;
    f.nan = f.nan || std::isnan(v.v);
    f.inf = f.inf || std::isinf(v.v);
    f.unknown = f.unknown || indeterminate(v);
  }
  if (!f.finite_exactly_known()) {
    f.det = leibniz(
        n, [&](int i, int j) { return f.at(i, j); }, false);
    return f;
  }
  const auto exact_zero = [&](int i, int j) {
    return f.at(i, j) == 0 && f.e[static_cast<std::size_t>(i * n + j)] == 0;
  };
  for (int i = 0; i < n; ++i) {
    bool row = true, col = true;
    for (int j = 0; j < n; ++j) {
      row = row && exact_zero(i, j);
      col = col && exact_zero(j, i);
    }
    f.zero_line = f.zero_line || row || col;
  }
  f.det = leibniz(
      n, [&](int i, int j) { return f.at(i, j); }, false);
  double big = 0;
  for (int i = 0; i < nn; ++i)
    big = std::max(big, std::fabs(f.a[static_cast<std::size_t>(i)]));
  f.growth_overflow = n > 1 && big * std::ldexp(1.0, n - 1) >= 0x1p126; // 1x1: no elimination

  // The factorisation in double: LU of P A with partial pivoting (first maximum, as isamax).
  Square u = f.a;
  std::array<int, kOrder> row_of{0, 1, 2, 3};
  const auto U = [&](int i, int j) -> double& { return u[static_cast<std::size_t>(i * n + j)]; };
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (std::fabs(U(i, k)) > std::fabs(U(p, k))) p = i;
    if (p != k) {
      for (int j = 0; j < n; ++j)
        std::swap(U(k, j), U(p, j));
      std::swap(row_of[static_cast<std::size_t>(k)], row_of[static_cast<std::size_t>(p)]);
    }
    if (U(k, k) == 0) continue;
    for (int i = k + 1; i < n; ++i) {
      U(i, k) /= U(k, k);
      for (int j = k + 1; j < n; ++j)
        U(i, j) -= U(i, k) * U(k, j);
    }
  }
  Square lu_abs{}; // (|L||U|) in A's row order
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k <= std::min(i, j); ++k)
        s += (k == i ? 1.0 : std::fabs(U(i, k))) * std::fabs(U(k, j));
      lu_abs[static_cast<std::size_t>(row_of[static_cast<std::size_t>(i)] * n + j)] = s;
    }
  // Subnormal results inside the elimination cost an absolute half-step each.
  const double tiny = 2.0 * n * (2 * storage.underflow_step);
  Square box{};
  for (int i = 0; i < nn; ++i) {
    const auto k = static_cast<std::size_t>(i);
    box[k] = std::fabs(f.a[k]) + 2 * gamma(n) * lu_abs[k] + f.e[k] + tiny;
    f.solve_box[k] = 2 * gamma(3 * n) * lu_abs[k] + f.e[k] + tiny;
  }
  const double perm = leibniz(
      n, [&](int i, int j) { return f.at(i, j); }, true);
  const double perm_box = leibniz(
      n, [&](int i, int j) { return box[static_cast<std::size_t>(i * n + j)]; }, true);
  // The double sums themselves carry relative errors of a few 2^-53.
  f.perturbation = (perm_box - perm) + 0x1p-48 * perm_box;
  f.det_e = f.perturbation + (n - 1) * storage.u * (std::fabs(f.det) + f.perturbation) +
            (2 * storage.underflow_step);

  double most = 0, least = kInf;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    double prod = 1;
    for (int k = 0; k < n; ++k)
      if (mask & (1u << k)) prod *= std::fabs(U(k, k));
    most = std::max(most, prod);
    least = std::min(least, prod);
  }
  f.product_overflow = most >= 0x1p126;
  f.product_underflow = f.det != 0 && least < 0x1p-120;
  for (int k = 0; k < n; ++k)
    if (U(k, k) != 0) f.log_pivots += std::fabs(std::log(std::fabs(U(k, k))));
  return f;
}

// The determinant an f32 LU computes: the product of its pivots.
inline Approx det_value(const SquareFacts& f) {
  if (f.unknown) return unknown(f.det);
  if (f.nan) return {f.det, 0.0}; // NaN reaches a pivot whatever the order (0 * NaN is NaN)
  if (f.inf || f.growth_overflow) return unknown(f.det);
  // Exactly 0, but its sign is the product of the other pivots' and the permutation's: the
  // half-step bound makes it uncertain, as for a product that underflows in matmul.
  if (f.zero_line) return {0.0, storage.underflow_step};
  double e = f.det_e;
  if (f.product_underflow) e = std::max(e, std::fabs(f.det));
  const Approx r = finish(f.det, e, 0.0);
  if (f.product_overflow && !(std::fabs(f.det) - f.det_e >= storage.overflow))
    return unknown(f.det);
  return r;
}

// log|det|, as slogdet's sum of the pivots' log-magnitudes (no product, so no overflow there).
// A zero determinant gives -inf (documented: "(0, -inf)"); a determinant within its bound of 0
// may come out as -inf or finite.
inline Approx logabsdet_value(const SquareFacts& f) {
  if (f.unknown) return unknown(std::log(std::fabs(f.det)));
  if (f.nan) return {f.det, 0.0};
  if (f.inf || f.growth_overflow) return unknown(std::log(std::fabs(f.det)));
  if (f.zero_line) return {-kInf, 0.0};
  const double d = std::fabs(f.det);
  if (d <= f.perturbation) return unknown(std::log(d));
  const double e = neg_log1p_neg_bound(f.perturbation / d) + 2.0 * f.n * storage.u * f.log_pivots +
                   f.n * (2 * storage.underflow_step);
  return finish(std::log(d), e, 0.0);
}

// inv(A) = adj(A) / det(A) in double, with the first-order-plus-remainder bound of an LU solve:
// |X(A + dA) - X| <= |X| |dA| |X| / (1 - r), r = || |X| |dA| ||_inf < 1 (Neumann series).
struct InverseFacts {
  bool ok = false; // det certainly nonzero and r <= 1/2
  Square x{}, bound{};
};

inline double cofactor(const SquareFacts& f, int i, int j) {
  const int m = f.n - 1;
  const double minor = leibniz(
      m, [&](int r, int c) { return f.at(r < i ? r : r + 1, c < j ? c : c + 1); }, false);
  return (i + j) % 2 ? -minor : minor;
}

inline InverseFacts inverse_facts(const SquareFacts& f) {
  InverseFacts out;
  const int n = f.n;
  if (!f.finite_exactly_known() || f.zero_line || f.growth_overflow) return out;
  if (!(std::fabs(f.det) > f.det_e)) return out;
  Square w{};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const double xij = cofactor(f, j, i) / f.det;
      out.x[static_cast<std::size_t>(i * n + j)] = xij;
      w[static_cast<std::size_t>(i * n + j)] = std::fabs(xij);
    }
  Square wd{}; // |X| |dA|
  double r = 0;
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k)
        s += w[static_cast<std::size_t>(i * n + k)] *
             f.solve_box[static_cast<std::size_t>(k * n + j)];
      wd[static_cast<std::size_t>(i * n + j)] = s;
      row += s;
    }
    r = std::max(r, row);
  }
  if (!(r <= 0.5)) return out;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k < n; ++k)
        s += wd[static_cast<std::size_t>(i * n + k)] * w[static_cast<std::size_t>(k * n + j)];
      // The solve's own roundings of each result: a few ulps of |X| per substitution step.
      out.bound[static_cast<std::size_t>(i * n + j)] =
          s / (1 - r) + 2.0 * n * storage.u * w[static_cast<std::size_t>(i * n + j)];
    }
  out.ok = true;
  return out;
}

inline int square_order(const Shape& s) {
  return static_cast<int>(s[s.rank() - 1]);
}
inline std::int64_t square_count(const Shape& s) {
  const auto n = static_cast<std::int64_t>(square_order(s));
  return s.numel() / (n * n);
}

inline void det_forward(const Node& a, Buf& out, bool log_abs) {
  const int n = square_order(a.shape);
  const std::int64_t count = square_count(a.shape);
  out.resize(count);
  for (std::int64_t m = 0; m < count; ++m) {
    const SquareFacts f = square_facts(a.value, m * n * n, n);
    out.set(m, log_abs ? logabsdet_value(f) : det_value(f));
  }
}

// inv raises (LibTorch: "linalg.inv: The diagonal element k is zero ...") when a matrix of the
// batch certainly has a zero pivot; it may raise where a determinant's bound reaches 0, and
// then the reference cannot tell (error_possible) and its values there are indeterminate.
inline void inv_forward(const Node& a, Buf& out, bool& error_possible) {
  const int n = square_order(a.shape);
  const std::int64_t count = square_count(a.shape);
  out.resize(a.shape.numel());
  for (std::int64_t m = 0; m < count; ++m) {
    const SquareFacts f = square_facts(a.value, m * n * n, n);
    if (f.finite_exactly_known() && f.zero_line)
      throw std::runtime_error("linalg.inv: matrix " + std::to_string(m) +
                               " of the batch has a zero row or column, so is not invertible");
    const InverseFacts inv = inverse_facts(f);
    if (!inv.ok && (!f.finite_exactly_known() || !(std::fabs(f.det) > f.det_e)))
      error_possible = true; // a zero pivot is possible: LibTorch may raise
    for (int i = 0; i < n * n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      // Indeterminate entries show adj(A) / det(A) where that is a number.
      out.set(m * n * n + i, inv.ok ? finish(inv.x[k], inv.bound[k], kExactUlps)
                                    : Approx{to_storage(cofactor(f, i % n, i / n) / f.det), kInf});
    }
  }
}

// d det / dA = g adj(A)^T, the cofactors: exact at singular matrices too. LibTorch takes an LU
// solve, det * A^-T with the det and the solve from the same factors, where its computed |det|
// is at least 100 eps, and an SVD's cofactors below (F, linalg_det_backward). Either is the
// cofactor matrix of a nearby matrix: the LU path's tiny pivot divides out of det * A^-T
// (the triangular solves perturb each factor entry relatively), so it does not blow up near
// singular matrices; the SVD path has a normwise backward error. The bound is the minors'
// permanent bound over the wider of the two boxes.
inline void det_backward(const Node& out, const Node& a, std::array<InputGrad, 3>& dx) {
  const int n = square_order(a.shape);
  const std::int64_t count = square_count(a.shape);
  dx[0].shape = a.shape;
  Buf& d = dx[0].buf;
  d.resize(a.shape.numel());
  for (std::int64_t m = 0; m < count; ++m) {
    const SquareFacts f = square_facts(a.value, m * n * n, n);
    const Approx g = out.grad.at(m);
    const std::int64_t base = m * n * n;
    double frob = 0, perm = 0;
    for (int k = 0; k < n * n; ++k)
      frob += f.a[static_cast<std::size_t>(k)] * f.a[static_cast<std::size_t>(k)];
    frob = std::sqrt(frob);
    if (f.finite_exactly_known())
      perm = leibniz(
          n, [&](int i, int j) { return f.at(i, j); }, true);
    // Beyond these magnitudes an f32 inverse, product or SVD may overflow on the way.
    const bool hopeless =
        !f.finite_exactly_known() || f.growth_overflow || indeterminate(g) || !std::isfinite(g.v) ||
        perm >= 0x1p100 ||
        (std::fabs(f.det) + f.det_e >= kSingularThreshold && perm / kSingularThreshold >= 0x1p100);
    const double svd_box = 4.0 * n * gamma(n) * frob;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const double c = cofactor(f, i, j);
        const double v = g.v * c;
        if (hopeless) {
          d.set(base + i * n + j, unknown(v));
          continue;
        }
        const int mm = n - 1;
        const auto row = [&](int r) { return r < i ? r : r + 1; };
        const auto col = [&](int q) { return q < j ? q : q + 1; };
        const auto box = [&](int r, int q) {
          const auto k = static_cast<std::size_t>(row(r) * n + col(q));
          return std::max(f.solve_box[k], svd_box + f.e[k]);
        };
        const double minor_perm = leibniz(
            mm, [&](int r, int q) { return f.at(row(r), col(q)); }, true);
        const double minor_box = leibniz(
            mm, [&](int r, int q) { return std::fabs(f.at(row(r), col(q))) + box(r, q); }, true);
        // The products and sums that assemble each entry: a few roundings of its terms.
        const double e = (minor_box - minor_perm) + (4.0 * n * storage.u + 0x1p-48) * minor_box;
        d.set(base + i * n + j,
              finish(v, std::fabs(g.v) * e + scaled(std::fabs(c), g.e), kExactUlps));
      }
  }
}

// d logabsdet / dA = g A^-T, through LibTorch's LU solve; undefined at a singular matrix (log|det|
// is -inf there and PyTorch documents no gradient), so indeterminate wherever det may be 0.
inline void slogdet_backward(const Node& out, const Node& a, std::array<InputGrad, 3>& dx) {
  const int n = square_order(a.shape);
  const std::int64_t count = square_count(a.shape);
  dx[0].shape = a.shape;
  Buf& d = dx[0].buf;
  d.resize(a.shape.numel());
  for (std::int64_t m = 0; m < count; ++m) {
    const SquareFacts f = square_facts(a.value, m * n * n, n);
    const Approx g = out.grad.at(m);
    const InverseFacts inv = inverse_facts(f);
    const bool ok = inv.ok && !indeterminate(g) && std::isfinite(g.v);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const auto ji = static_cast<std::size_t>(j * n + i);
        const double v = ok ? g.v * inv.x[ji] : std::numeric_limits<double>::quiet_NaN();
        d.set(m * n * n + i * n + j,
              ok ? finish(v, std::fabs(g.v) * inv.bound[ji] + scaled(std::fabs(inv.x[ji]), g.e),
                          kExactUlps)
                 : Approx{v, kInf});
      }
  }
}

// derivatives.yaml: -at::matmul(inverse.mH(), at::matmul(grad, inverse.mH())), step by step
// with the matmul kernel's bounds (the inverse's own bound included).
inline void inv_backward(const Node& out, std::array<InputGrad, 3>& dx, ReduceScratch& s) {
  const Shape& shape = out.shape;
  const int r = shape.rank();
  gather(out.value, transpose_walk(shape, r - 2, r - 1), s.wide_a); // X^T
  matmul(shape, out.grad, shape, s.wide_a, shape, s.wide_b);        // g X^T
  dx[0].shape = shape;
  matmul(shape, s.wide_a, shape, s.wide_b, shape, dx[0].buf); // X^T (g X^T)
  for (std::int64_t i = 0; i < dx[0].buf.size(); ++i)
    dx[0].buf.set(i, neg(dx[0].buf.at(i)));
}

} // namespace burnmark::ref
