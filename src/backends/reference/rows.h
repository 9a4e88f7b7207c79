// Row geometry of the ops that work along one dimension (reductions, scans, normalisers): a
// tensor seen as outer x n x inner, where each of the outer * inner rows is n elements apart by
// `inner`. A reduction over every element is one row of numel elements. The drivers gather a row
// into scratch, hand it to a row formula (approx_reduce.h, approx_norm.h, approx_scan.h) and
// scatter the result back, so the formulas only ever see contiguous spans.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels.h"

namespace burnmark::ref {

struct Rows {
  std::int64_t outer = 1;
  std::int64_t n = 1;
  std::int64_t inner = 1;
  std::int64_t count() const { return outer * inner; }
  // Element j of row r; rows are numbered in the row-major order of the reduced result.
  std::int64_t offset(std::int64_t row, std::int64_t j) const {
    return ((row / inner) * n + j) * inner + row % inner;
  }
};

inline Rows rows_along(const Shape& s, int dim) {
  Rows r;
  for (int i = 0; i < s.rank(); ++i) {
    if (i < dim)
      r.outer *= s[i];
    else if (i == dim)
      r.n = s[i];
    else
      r.inner *= s[i];
  }
  return r;
}
inline Rows rows_all(const Shape& s) {
  return Rows{1, s.numel(), 1};
}

using Row = std::span<const Approx>;
using RowOut = std::span<Approx>;

inline void gather_row(const Buf& src, const Rows& r, std::int64_t row, std::vector<Approx>& dst) {
  dst.resize(static_cast<std::size_t>(r.n));
  for (std::int64_t j = 0; j < r.n; ++j)
    dst[static_cast<std::size_t>(j)] = src.at(r.offset(row, j));
}
inline void scatter_row(std::span<const Approx> src, const Rows& r, std::int64_t row, Buf& dst) {
  for (std::int64_t j = 0; j < r.n; ++j)
    dst.set(r.offset(row, j), src[static_cast<std::size_t>(j)]);
}

// out[row] = f(x's row).
template <class F> void reduce_rows(const Buf& x, const Rows& r, Buf& out, ReduceScratch& s, F f) {
  out.resize(r.count());
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(x, r, row, s.x);
    out.set(row, f(Row(s.x)));
  }
}

// A row of the result per row of x: f(x row, out row).
template <class F> void map_rows(const Buf& x, const Rows& r, Buf& out, ReduceScratch& s, F f) {
  out.resize(x.size());
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(x, r, row, s.x);
    s.y.resize(s.x.size());
    f(Row(s.x), RowOut(s.y));
    scatter_row(s.y, r, row, out);
  }
}

// Backward of a reduction: f(x row, result, upstream gradient, dx row).
template <class F>
void reduce_rows_backward(const Buf& x, const Buf& result, const Buf& g, const Rows& r, Buf& dx,
                          ReduceScratch& s, F f) {
  dx.resize(x.size());
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(x, r, row, s.x);
    s.dx.resize(s.x.size());
    f(Row(s.x), result.at(row), g.at(row), RowOut(s.dx));
    scatter_row(s.dx, r, row, dx);
  }
}

// Backward of a row-to-row op: f(x row, result row, gradient row, dx row).
template <class F>
void map_rows_backward(const Buf& x, const Buf& result, const Buf& g, const Rows& r, Buf& dx,
                       ReduceScratch& s, F f) {
  dx.resize(x.size());
  for (std::int64_t row = 0; row < r.count(); ++row) {
    gather_row(x, r, row, s.x);
    gather_row(result, r, row, s.y);
    gather_row(g, r, row, s.g);
    s.dx.resize(s.x.size());
    f(Row(s.x), Row(s.y), Row(s.g), RowOut(s.dx));
    scatter_row(s.dx, r, row, dx);
  }
}

} // namespace burnmark::ref
