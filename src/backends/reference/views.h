// The view ops of the reference (flip, roll, unsqueeze, squeeze, tril, triu, movedim, narrow,
// select, expand, diagonal):
// each is an index map, for every result element the operand element it copies or -1 for a
// zero (tril and triu), so the forward is a gather and the backward the matching scatter of the
// gradient (derivatives.yaml: flip, roll with the negated shift, squeeze / unsqueeze, tril / triu
// of the gradient, movedim back, narrow's slice_backward). Copies are exact: no bound grows.
#pragma once

#include <cstdint>
#include <vector>

#include "burnmark/ir/shape_rules.h"
#include "tape.h"

namespace burnmark::ref {

// src[i] = the operand's flat index for result element i, or -1.
inline void view_map(Op op, const Attrs& at, const Shape& in, const Shape& out,
                     std::vector<std::int64_t>& src) {
  const std::int64_t n = out.numel();
  src.resize(static_cast<std::size_t>(n));
  const auto in_strides = in.strides();
  const auto moved = moved_axes(in.rank(), at.dim, at.dim1);
  std::array<std::int64_t, kMaxRank> idx{};
  for (std::int64_t i = 0; i < n; ++i) {
    std::array<std::int64_t, kMaxRank> from{};
    bool zero = false;
    for (int d = 0, k = 0; d < out.rank(); ++d) {
      const auto o = idx[static_cast<std::size_t>(d)];
      // The operand's axes in result order; the others are zero (from is zero-initialised),
      // which is squeeze's removed axis.
      if (op == Op::Unsqueeze) {
        if (d != at.dim) from[static_cast<std::size_t>(k++)] = o;
      } else if (op == Op::Diagonal) {
        // The kept axes in order, then the diagonal's index t as the last result axis.
        if (d == out.rank() - 1) {
          from[static_cast<std::size_t>(at.dim)] = o + (at.times < 0 ? -at.times : 0);
          from[static_cast<std::size_t>(at.dim1)] = o + (at.times > 0 ? at.times : 0);
        } else {
          while (k == at.dim || k == at.dim1)
            ++k;
          from[static_cast<std::size_t>(k++)] = o;
        }
      } else if (op == Op::Squeeze || op == Op::Select) {
        if (k == at.dim) ++k;
        from[static_cast<std::size_t>(k++)] = o;
      } else if (op == Op::Movedim) {
        from[static_cast<std::size_t>(moved[static_cast<std::size_t>(d)])] = o;
      } else {
        from[static_cast<std::size_t>(d)] = o;
      }
    }
    const auto dim = static_cast<std::size_t>(at.dim);
    if (op == Op::Flip) from[dim] = in[at.dim] - 1 - from[dim];
    if (op == Op::Roll) {
      const std::int64_t size = in[at.dim];
      from[dim] = ((from[dim] - at.times) % size + size) % size;
    }
    if (op == Op::Narrow) from[dim] += at.dim1;
    if (op == Op::Select) from[dim] = at.dim1;
    if (op == Op::Expand) from[dim] = 0;
    if (op == Op::Tril || op == Op::Triu) {
      const std::int64_t row = from[static_cast<std::size_t>(in.rank() - 2)];
      const std::int64_t col = from[static_cast<std::size_t>(in.rank() - 1)];
      zero = op == Op::Tril ? col - row > at.times : col - row < at.times;
    }
    std::int64_t flat = 0;
    for (int d = 0; d < in.rank(); ++d)
      flat += from[static_cast<std::size_t>(d)] * in_strides[static_cast<std::size_t>(d)];
    src[static_cast<std::size_t>(i)] = zero ? -1 : flat;
    for (int d = out.rank() - 1; d >= 0; --d) {
      if (++idx[static_cast<std::size_t>(d)] < out[d]) break;
      idx[static_cast<std::size_t>(d)] = 0;
    }
  }
}

inline void view_forward(const Node& a, Node& out, std::vector<std::int64_t>& src) {
  view_map(out.op, out.attrs, a.shape, out.shape, src);
  out.value.resize(out.shape.numel());
  for (std::size_t i = 0; i < src.size(); ++i)
    out.value.set(static_cast<std::int64_t>(i), src[i] < 0 ? Approx{0.0, 0.0} : a.value.at(src[i]));
}

inline void view_backward(const Node& out, const Node& a, std::array<InputGrad, 3>& dx,
                          std::vector<std::int64_t>& src) {
  view_map(out.op, out.attrs, a.shape, out.shape, src);
  dx[0].shape = a.shape;
  Buf& d = dx[0].buf;
  d.resize(a.shape.numel());
  for (std::int64_t i = 0; i < d.size(); ++i)
    d.set(i, {0.0, 0.0});
  // expand maps many result elements to one operand element: their gradients are summed
  // (sum_to_size), the others copy back exactly.
  for (std::size_t i = 0; i < src.size(); ++i)
    if (src[i] >= 0) {
      const Approx g = out.grad.at(static_cast<std::int64_t>(i));
      d.set(src[i], out.op == Op::Expand ? add(d.at(src[i]), g) : g);
    }
}

} // namespace burnmark::ref
