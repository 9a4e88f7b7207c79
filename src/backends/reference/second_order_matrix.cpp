// Second order of det, for second_order.cpp's switch (second_order_rows.h): the derivative of
// its rule g adj(A)^T along A's tangent, from the reference's inverse and determinant and their
// bounds (linalg_det.h).
#include <cmath>

#include "linalg_det.h"
#include "second_order_rows.h"

namespace burnmark::ref::second_order {

// det's rule is g det(A) A^-T, LibTorch's linalg_solve(A^H, g det I) where its computed |det|
// is at least 100 eps: along A's tangent, g (ḋ A^-T - det (A^-1 Ȧ A^-1)^T), with ḋ the result's
// tangent. Below that LibTorch differentiates its SVD formula, whose roundings (and NaN at
// repeated singular values: the zero matrix) this does not model: not judged wherever a
// computed determinant within its bound may take it, or the inverse is not certain.
void determinant(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx) {
  if (!start_operand(0, a.shape, a.has_tan && out.has_tan, dx)) return;
  const int n = square_order(a.shape);
  const std::int64_t count = square_count(a.shape);
  const double singular_cutoff = 100 * 2 * storage.u; // 100 eps of the program's dtype
  for (std::int64_t m = 0; m < count; ++m) {
    const std::int64_t base = m * n * n;
    const SquareFacts f = square_facts(a.value, base, n);
    const InverseFacts inv = inverse_facts(f);
    const Approx det = det_value(f);
    const Approx g = out.grad.at(m);
    const Approx dd = out.tan.at(m);
    const bool judged = inv.ok && !indeterminate(g) && !indeterminate(det) &&
                        std::fabs(f.det) - f.det_e >= singular_cutoff;
    const auto x = [&](int i, int j) {
      const auto k = static_cast<std::size_t>(i * n + j);
      return Approx{inv.x[k], inv.bound[k]};
    };
    const auto da = [&](int i, int j) { return a.tan.at(base + i * n + j); };
    // The magnitude of ḋ's terms, det tr(A^-1 Ȧ), in double backward's differentiation of det.
    double m_dd = 0;
    for (int k = 0; k < n; ++k)
      for (int l = 0; l < n; ++l)
        m_dd += std::fabs(x(l, k).v * da(k, l).v);
    m_dd *= std::fabs(det.v);
    // (A^-1 Ȧ A^-1)[j][i] for the element (i, j) of the transpose.
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (!judged) {
          dx[0].buf.set(base + i * n + j, {0.0, kInf});
          continue;
        }
        Approx sum{};
        double m_sum = 0;
        for (int k = 0; k < n; ++k)
          for (int l = 0; l < n; ++l) {
            sum = add(sum, mul(mul(x(j, k), da(k, l)), x(l, i)));
            m_sum += std::fabs(x(j, k).v * da(k, l).v * x(l, i).v);
          }
        const Approx term = mul(g, sub(mul(dd, x(j, i)), mul(det, sum)));
        const double terms =
            std::fabs(g.v) *
            (std::max(m_dd, std::fabs(dd.v)) * std::fabs(x(j, i).v) + std::fabs(det.v) * m_sum);
        dx[0].buf.set(base + i * n + j, with_terms(term, terms));
      }
  }
}

} // namespace burnmark::ref::second_order
