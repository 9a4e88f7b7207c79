// Tensor kernels of the reference backend: value-and-bound buffers, strided walks (broadcast,
// transpose, tiling, slices), reductions that accumulate in double and round once, and matmul.
// Elementwise formulas come from approx.h; these only decide which elements meet.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "approx.h"
#include "burnmark/ir/shape.h"

namespace burnmark::ref {

// A tensor's rounded values and their error bounds, row-major. Reused across programs, so
// resize() keeps capacity.
struct Buf {
  std::vector<double> v;
  std::vector<double> e;
  void resize(std::int64_t n) {
    v.resize(static_cast<std::size_t>(n));
    e.resize(static_cast<std::size_t>(n));
  }
  std::int64_t size() const { return static_cast<std::int64_t>(v.size()); }
  Approx at(std::int64_t i) const {
    return {v[static_cast<std::size_t>(i)], e[static_cast<std::size_t>(i)]};
  }
  void set(std::int64_t i, Approx a) {
    v[static_cast<std::size_t>(i)] = a.v;
    e[static_cast<std::size_t>(i)] = a.e;
  }
};

// Row-major iteration over `dims` carrying two operand offsets, each advanced by its own
// per-axis step (0 for an axis the operand is broadcast along). Six axes: repeat's backward
// splits one axis of a rank-4 tensor into two.
inline constexpr int kWalkRank = 6;
struct Walk {
  int rank = 0;
  std::array<std::int64_t, kWalkRank> dims{};
  std::array<std::int64_t, kWalkRank> a{};
  std::array<std::int64_t, kWalkRank> b{};
  std::int64_t a0 = 0; // offset of the first element in operand a
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= dims[static_cast<std::size_t>(i)];
    return n;
  }
};

// f(i, offset_a, offset_b) for each row-major index i of w.dims.
template <class F> void walk(const Walk& w, F&& f) {
  const std::int64_t n = w.numel();
  std::array<std::int64_t, kWalkRank> idx{};
  std::int64_t oa = w.a0;
  std::int64_t ob = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, oa, ob);
    for (int ax = w.rank - 1; ax >= 0; --ax) {
      const auto k = static_cast<std::size_t>(ax);
      oa += w.a[k];
      ob += w.b[k];
      if (++idx[k] < w.dims[k]) break;
      oa -= w.a[k] * w.dims[k];
      ob -= w.b[k] * w.dims[k];
      idx[k] = 0;
    }
  }
}

// A walk over `s` with no operand steps (every offset 0): a full reduction or expansion.
Walk plain_walk(const Shape& s);
// A walk over `over` whose operand steps are those of `a` and `b` broadcast to it (NumPy rules).
Walk broadcast_walk(const Shape& over, const Shape& a, const Shape& b);
// The per-axis steps of `src` (contiguous) aligned to the axes of `over` it broadcasts to.
std::array<std::int64_t, kWalkRank> broadcast_steps(const Shape& src, const Shape& over);

template <class F> void map_unary(const Buf& x, Buf& out, F f) {
  out.resize(x.size());
  for (std::int64_t i = 0; i < x.size(); ++i)
    out.set(i, f(x.at(i)));
}

template <class F>
void map_binary(const Shape& out_shape, const Shape& sa, const Buf& a, const Shape& sb,
                const Buf& b, Buf& out, F f) {
  const std::int64_t n = out_shape.numel();
  out.resize(n);
  if (sa == out_shape && sb == out_shape) { // no broadcasting: skip the index arithmetic
    for (std::int64_t i = 0; i < n; ++i)
      out.set(i, f(a.at(i), b.at(i)));
    return;
  }
  walk(broadcast_walk(out_shape, sa, sb), [&](std::int64_t i, std::int64_t ia, std::int64_t ib) {
    out.set(i, f(a.at(ia), b.at(ib)));
  });
}

// Scratch of the reductions, kept across calls.
struct ReduceScratch {
  std::vector<double> sum, abs_sum, err;
  std::vector<unsigned char> flags;
};

// dst[j] = sum of the src elements whose walk offset `a` is j, accumulated in double and rounded
// once, with the bound sum(E_i) + (n-1) u sum|x_i| of a float accumulation in unknown order.
// src is walked contiguously (linear index i).
void reduce(const Buf& src, const Walk& w, std::int64_t dst_numel, Buf& dst, ReduceScratch& s);
// dst[i] = src[offset a] for each i of the walk.
void gather(const Buf& src, const Walk& w, Buf& dst);
// dst[offset a] = src[i] for each i of the walk (dst already sized).
void scatter(const Buf& src, const Walk& w, Buf& dst);

// Sums a gradient at shape `from` down to the shape `to` that broadcasts to it.
void sum_to(const Buf& src, const Shape& from, const Shape& to, Buf& dst, ReduceScratch& s);

// Walks for the layout ops, shared by their forward and backward.
// Over the result of swapping axes d0 and d1 of `in`, reading `in`.
Walk transpose_walk(const Shape& in, int d0, int d1);
// Over [outer, times, n, inner] = the repeated tensor, reading the original (tiled).
Walk repeat_walk(const Shape& in, int dim, int times);
// Over operand `part` (0 or 1) of a concat along dim, with offsets into the concatenation.
Walk concat_part_walk(const Shape& a, const Shape& b, int dim, int part);
// Over `in`, with offsets into its reduction along dim (keepdim layout).
Walk reduce_dim_walk(const Shape& in, int dim);

// torch.matmul for rank >= 2 operands with broadcast batch dimensions.
void matmul(const Shape& sa, const Buf& a, const Shape& sb, const Buf& b, const Shape& so,
            Buf& out);
// grad @ b^T at the batch-broadcast shape of a (batch(out) + [m, k]), and a^T @ grad at that of b;
// the caller sums them down to the operands' shapes.
void matmul_grad_a(const Shape& sb, const Buf& b, const Shape& so, const Buf& g, Buf& out);
void matmul_grad_b(const Shape& sa, const Buf& a, const Shape& so, const Buf& g, Buf& out);

} // namespace burnmark::ref
