// The view ops of the reference (flip, roll, unsqueeze, squeeze, tril, triu, movedim, narrow,
// select, expand, diagonal, reshape, permute, slice, chunk, diag_embed, relayout, and stack of
// two):
// each is an index map, for every result element the operand element it copies or -1 for a
// zero (tril, triu and diag_embed off its diagonal), so the forward is a gather and the backward
// the matching scatter of the gradient (derivatives.yaml: flip, roll with the negated shift,
// squeeze / unsqueeze, tril / triu of the gradient, movedim and permute back, narrow's, slice's
// and chunk's slice_backward, reshape's reshape back, diag_embed's grad.diagonal(offset, -2, -1),
// stack's unbind). Copies are exact: no bound grows.
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
  // Row-major order is kept (relayout changes only LibTorch's memory layout): element i is i.
  if (op == Op::Reshape || op == Op::Relayout) {
    for (std::int64_t i = 0; i < n; ++i)
      src[static_cast<std::size_t>(i)] = i;
    return;
  }
  const auto moved = moved_axes(in.rank(), at.dim, at.dim1);
  const auto permuted =
      op == Op::Permute ? *permutation_dims(at.times, in.rank()) : std::array<int, kMaxRank>{};
  const std::int64_t chunk = op == Op::Chunk ? chunk_size(in[at.dim], at.times) : 0;
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
      } else if (op == Op::Permute) {
        from[static_cast<std::size_t>(permuted[static_cast<std::size_t>(d)])] = o;
      } else if (op == Op::DiagEmbed) {
        // The batch axes copy; the last two (row, col) are read below.
        if (d + 2 < out.rank()) from[static_cast<std::size_t>(d)] = o;
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
    if (op == Op::Slice) from[dim] = at.dim1 + from[dim] * at.variant;
    if (op == Op::Chunk) from[dim] += at.dim1 * chunk;
    if (op == Op::DiagEmbed) {
      // Element t of the operand's last dim sits at (t, t + offset) for offset >= 0 and at
      // (t - offset, t) below the main diagonal.
      const std::int64_t row = idx[static_cast<std::size_t>(out.rank() - 2)];
      const std::int64_t col = idx[static_cast<std::size_t>(out.rank() - 1)];
      zero = col - row != at.times;
      from[static_cast<std::size_t>(in.rank() - 1)] = at.times >= 0 ? row : col;
    }
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
  // Every view but expand maps each operand element to at most one result element, so its
  // gradient copies back exactly (expand's is a sum: backward.cpp reduces it with sum_to).
  for (std::size_t i = 0; i < src.size(); ++i)
    if (src[i] >= 0) d.set(src[i], out.grad.at(static_cast<std::int64_t>(i)));
}

// stack(a, b) along dim: the result viewed as [outer, 2, inner], operand j at index j of the
// middle axis.
struct StackGeometry {
  std::int64_t outer = 1, inner = 1;
};
inline StackGeometry stack_geometry(const Shape& operand, int dim) {
  StackGeometry g;
  for (int d = 0; d < operand.rank(); ++d)
    (d < dim ? g.outer : g.inner) *= operand[d];
  return g;
}

inline void stack_forward(const Node& a, const Node& b, Node& out) {
  const StackGeometry g = stack_geometry(a.shape, out.attrs.dim);
  out.value.resize(out.shape.numel());
  for (std::int64_t o = 0; o < g.outer; ++o)
    for (std::int64_t i = 0; i < g.inner; ++i) {
      out.value.set((2 * o) * g.inner + i, a.value.at(o * g.inner + i));
      out.value.set((2 * o + 1) * g.inner + i, b.value.at(o * g.inner + i));
    }
}

// unbind: each operand gets its slice of the gradient.
inline void stack_backward(const Node& out, const Node& a, const Node& b,
                           std::array<InputGrad, 3>& dx) {
  const StackGeometry g = stack_geometry(a.shape, out.attrs.dim);
  for (std::size_t k = 0; k < 2; ++k) {
    dx[k].shape = k == 0 ? a.shape : b.shape;
    dx[k].buf.resize(a.shape.numel());
    for (std::int64_t o = 0; o < g.outer; ++o)
      for (std::int64_t i = 0; i < g.inner; ++i)
        dx[k].buf.set(o * g.inner + i,
                      out.grad.at((2 * o + static_cast<std::int64_t>(k)) * g.inner + i));
  }
}

} // namespace burnmark::ref
