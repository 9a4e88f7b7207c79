// Second order of scatter_reduce, for second_order.cpp's switch (second_order_rows.h), group by
// group as indexing.h's backward walks them.
#include <cmath>
#include <utility>
#include <vector>

#include "indexing.h"
#include "second_order_rows.h"
#include "second_order_zeros.h"

namespace burnmark::ref::second_order {
namespace {

// A group's terms (self's first when included) may hold a zero, or tie for its extreme.
bool may_be_zero(Approx t) {
  return t.v == 0 || touches(t, 0.0);
}

bool extreme_tied(Row terms, bool want_max) {
  const Extreme ex = extreme_of(terms, want_max);
  if (ex.nan || ex.count > 1 || ex.ties_uncertain || indeterminate(ex.value)) return true;
  for (const Approx& t : terms)
    if (t.v != ex.value.v && std::fabs(t.v - ex.value.v) <= t.e + ex.value.e) return true;
  return false;
}

} // namespace

// sum and mean are linear in self and src: 0. amax and amin route the gradient by masks the
// values fix: 0, but not judged in a group whose extreme is tied or nearly (the split there is
// a convention, and the function has a kink). prod's rule is g f / t for each term t of the
// group (LibTorch's grad * result / term away from zeros): along the terms' tangents and the
// result's, g (ḟ t - f ṫ) / t^2, as for prod. A group with exact zeros takes LibTorch's masked
// formulas (self's zero masked to 1, a single zero of src masked to 1), which give the products
// of the others: along the tangents, g times their dual products, as for prod
// (second_order_zeros.h). With two zeros in src LibTorch's double backward raises ("Double
// backward is unsupported for src when >1 zeros in src are scattered to the same position in
// self"); a group where an inexact term may be 0 is not judged. self's term is 0 where it is not
// included or not reached (the identity).
void scatter_reduce(const Node& out, const Node& self, const Node& index, const Node& src,
                    std::array<InputGrad, kMaxArity>& dx, ReduceScratch& s) {
  const bool reached = self.has_tan || src.has_tan;
  const std::array<bool, 2> wanted = {dx[0].wanted && reached, dx[2].wanted && reached};
  none_wanted(dx);
  const std::array<std::size_t, 2> operand = {0, 2};
  const std::array<const Node*, 2> node = {&self, &src};
  for (std::size_t k = 0; k < 2; ++k) {
    InputGrad& d = dx[operand[k]];
    d.wanted = wanted[k];
    d.shape = node[k]->shape;
    d.buf.resize(node[k]->shape.numel());
    for (std::int64_t i = 0; i < d.buf.size(); ++i)
      d.buf.set(i, {});
  }
  if (!wanted[0] && !wanted[1]) return;
  const ScatterReduction r = scatter_reduction(out);
  const bool with_self = scatter_includes_self(out);
  scatter_pairs(out.attrs.dim, self.shape, index, src.shape, s.pairs);
  const auto tangent = [](const Node& n, std::int64_t i) {
    return n.has_tan ? n.tan.at(i) : Approx{};
  };
  std::pair<std::vector<Dual>, std::vector<Dual>> zero_scratch;
  for_each_group(s.pairs, [&](std::int64_t target, std::size_t first, std::size_t last) {
    group_terms(self, src, with_self, target, s, first, last, s.terms);
    const std::size_t skip = with_self ? 1 : 0;
    // Each term's place: self's element, or a src element.
    const auto set = [&](std::size_t j, Approx v) {
      if (j < skip) {
        if (wanted[0]) dx[0].buf.set(target, v);
      } else if (wanted[1]) {
        dx[2].buf.set(s.pairs[first + j - skip].second, v);
      }
    };
    const auto term_tangent = [&](std::size_t j) {
      return j < skip ? tangent(self, target) : tangent(src, s.pairs[first + j - skip].second);
    };
    const Row terms(s.terms);
    switch (r) {
    case ScatterReduction::Sum:
    case ScatterReduction::Mean: return;
    case ScatterReduction::Amax:
    case ScatterReduction::Amin:
      if (extreme_tied(terms, r == ScatterReduction::Amax))
        for (std::size_t j = 0; j < terms.size(); ++j)
          set(j, {0.0, kInf});
      return;
    case ScatterReduction::Prod: {
      int zeros_in_src = 0;
      bool zero = false;
      double m_df = 0; // the magnitude of ḟ's terms, f sum(ṫ / t)
      for (std::size_t j = 0; j < terms.size(); ++j) {
        zero = zero || may_be_zero(terms[j]);
        zeros_in_src += j >= skip && may_be_zero(terms[j]) ? 1 : 0;
        m_df += std::fabs(term_tangent(j).v / terms[j].v);
      }
      if (zeros_in_src > 1) s.error_possible = true;
      const Approx g = out.grad.at(target);
      if (zeros_in_src <= 1 &&
          row_zeros(terms.size(), [&](std::size_t j) { return terms[j]; }) == RowZeros::Exact) {
        std::vector<Dual>& prefix = zero_scratch.first;
        std::vector<Dual>& others = zero_scratch.second;
        products_of_others(
            terms.size(), [&](std::size_t j) { return terms[j]; }, term_tangent, prefix, others);
        for (std::size_t j = 0; j < terms.size(); ++j)
          set(j, judged_term(mul(g, others[j].d), std::fabs(g.v) * others[j].md, second::kUlps));
        return;
      }
      const Approx f = out.value.at(target);
      const Approx df = out.has_tan ? out.tan.at(target) : Approx{};
      m_df *= std::fabs(f.v);
      for (std::size_t j = 0; j < terms.size(); ++j) {
        const Approx t = terms[j];
        const Approx dt = term_tangent(j);
        Approx v = div(mul(g, sub(mul(df, t), mul(f, dt))), mul(t, t));
        const double at = std::fabs(t.v);
        v = with_terms(v, std::fabs(g.v) * (m_df / at + std::fabs(f.v * dt.v) / (at * at)));
        if (zero || !out.has_tan) v.e = kInf;
        set(j, v);
      }
      return;
    }
    }
  });
}

} // namespace burnmark::ref::second_order
