// What second_order.cpp shares with its per-family files (second_order_rows.cpp: prod, the
// scans and the normalisers along a dim; second_order_matrix.cpp: det; second_order_index.cpp:
// scatter_reduce): the start of an operand's term, the roundings of a library's formula, and
// those families' rules.
// Each rule is the derivative of the op's backward rule along the operands' tangents with the
// output's gradient held, as second_order.cpp's header describes.
#pragma once

#include <array>
#include <cmath>

#include "approx_second.h"
#include "tape.h"

namespace burnmark::ref::second_order {

inline void none_wanted(std::array<InputGrad, kMaxArity>& dx) {
  for (InputGrad& d : dx)
    d.wanted = false;
}

// Starts operand k's term at `shape` when it is wanted and the tangents it needs reached the op;
// false otherwise. Clears every other operand's wanted.
inline bool start_operand(std::size_t k, const Shape& shape, bool reached,
                          std::array<InputGrad, kMaxArity>& dx) {
  const bool wanted = dx[k].wanted && reached;
  none_wanted(dx);
  if (!wanted) return false;
  dx[k].wanted = true;
  dx[k].shape = shape;
  dx[k].buf.resize(shape.numel());
  return true;
}

// r with approx_second.h's kUlps roundings of a library's formula whose terms add up to
// `terms`: the formula evaluated on the magnitudes of everything it adds, which bounds every
// order of evaluation where those terms cancel.
inline Approx with_terms(Approx r, double terms) {
  if (indeterminate(r)) return r;
  const double e = r.e + second::kUlps * storage.u * terms;
  return {r.v, std::isfinite(e) ? e : kInf};
}

void product(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx);
void cumulative_product(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
                        SecondOrderScratch& t);
void log_cumulative_sum_exp(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
                            SecondOrderScratch& t);
void normalize(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx,
               SecondOrderScratch& t);
void cosine_similarity(const Node& out, const Node& a, const Node& b,
                       std::array<InputGrad, kMaxArity>& dx, SecondOrderScratch& t);
void determinant(const Node& out, const Node& a, std::array<InputGrad, kMaxArity>& dx);
void scatter_reduce(const Node& out, const Node& self, const Node& index, const Node& src,
                    std::array<InputGrad, kMaxArity>& dx, ReduceScratch& s);

} // namespace burnmark::ref::second_order
