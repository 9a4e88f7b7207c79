// Tensor kernels of the reference backend: value-and-bound buffers, strided walks (broadcast,
// transpose, tiling, slices), reductions that accumulate in double and round once, and matmul.
// Elementwise formulas come from approx.h; these only decide which elements meet.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "approx.h"
#include "burnmark/ir/shape.h"

namespace burnmark::ref {

// A tensor's rounded values and their error bounds, row-major, in one allocation. Buffers live
// in the tape's arena and are reused across programs, so resize() only ever grows the storage
// and never fills it: every kernel writes all n elements of its output before anything reads
// them, and a std::vector's zero-fill on growth cost more than some kernels themselves.
class Buf {
public:
  Buf() = default;
  Buf(Buf&&) noexcept = default;
  Buf& operator=(Buf&&) noexcept = default;
  Buf(const Buf&) = delete; // copies are explicit (assign), so none happens by accident
  Buf& operator=(const Buf&) = delete;

  // Contents are unspecified after a resize that grows past the capacity.
  void resize(std::int64_t n) {
    if (n > cap_) {
      cap_ = std::max(n, cap_ + cap_ / 2);
      mem_ = std::make_unique_for_overwrite<double[]>(static_cast<std::size_t>(2 * cap_));
    }
    n_ = n;
  }
  void assign(const Buf& src) {
    resize(src.n_);
    std::copy_n(src.v(), n_, v());
    std::copy_n(src.e(), n_, e());
  }
  std::int64_t size() const { return n_; }
  std::int64_t capacity() const { return cap_; }
  // Gives the storage back when it holds more than `keep` elements, so one unusually large
  // program does not set the arena's size for the rest of a run.
  void release_above(std::int64_t keep) {
    if (cap_ <= keep) return;
    mem_.reset();
    n_ = cap_ = 0;
  }
  // Values at [0, n), bounds at [cap, cap + n).
  double* v() { return mem_.get(); }
  double* e() { return mem_.get() + cap_; }
  const double* v() const { return mem_.get(); }
  const double* e() const { return mem_.get() + cap_; }
  std::vector<double> values() const { return {v(), v() + n_}; }
  std::vector<double> bounds() const { return {e(), e() + n_}; }
  Approx at(std::int64_t i) const { return {mem_[i], mem_[cap_ + i]}; }
  void set(std::int64_t i, Approx a) {
    mem_[i] = a.v;
    mem_[cap_ + i] = a.e;
  }

private:
  std::unique_ptr<double[]> mem_;
  std::int64_t n_ = 0;
  std::int64_t cap_ = 0;
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

// f(i, offset_a, offset_b) for each row-major index i of w.dims, in order. Axes that step like
// one longer axis are merged first and the last axis runs as a plain loop, so the odometer only
// turns once per row.
template <class F> void walk(const Walk& w, F&& f) {
  const std::int64_t n = w.numel();
  if (n == 0) return;
  // Merge axis k into the next kept one when it advances both offsets by exactly one full pass
  // of that axis; size-1 axes vanish. The visiting order and offsets are unchanged.
  std::array<std::int64_t, kWalkRank> dims{}, sa{}, sb{};
  int rank = 0;
  for (int ax = w.rank - 1; ax >= 0; --ax) {
    const auto k = static_cast<std::size_t>(ax);
    if (w.dims[k] == 1) continue;
    const auto r = static_cast<std::size_t>(rank - 1);
    if (rank > 0 && w.a[k] == sa[r] * dims[r] && w.b[k] == sb[r] * dims[r]) {
      dims[r] *= w.dims[k];
      continue;
    }
    dims[static_cast<std::size_t>(rank)] = w.dims[k];
    sa[static_cast<std::size_t>(rank)] = w.a[k];
    sb[static_cast<std::size_t>(rank)] = w.b[k];
    ++rank;
  }
  // Axis 0 is now the innermost.
  if (rank == 0) dims[0] = 1;
  const std::int64_t len = dims[0];
  const std::int64_t step_a = sa[0];
  const std::int64_t step_b = sb[0];
  std::array<std::int64_t, kWalkRank> idx{};
  std::int64_t oa = w.a0;
  std::int64_t ob = 0;
  for (std::int64_t i = 0; i < n; i += len) {
    for (std::int64_t j = 0; j < len; ++j)
      f(i + j, oa + j * step_a, ob + j * step_b);
    for (int ax = 1; ax < rank; ++ax) {
      const auto k = static_cast<std::size_t>(ax);
      oa += sa[k];
      ob += sb[k];
      if (++idx[k] < dims[k]) break;
      oa -= sa[k] * dims[k];
      ob -= sb[k] * dims[k];
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
  const std::int64_t n = x.size();
  out.resize(n);
  // Local pointers: the compiler cannot keep a member's data pointer in a register across the
  // libm calls inside f.
  const double* xv = x.v();
  const double* xe = x.e();
  double* ov = out.v();
  double* oe = out.e();
  for (std::int64_t i = 0; i < n; ++i) {
    const Approx r = f(Approx{xv[i], xe[i]});
    ov[i] = r.v;
    oe[i] = r.e;
  }
}

template <class F>
void map_binary(const Shape& out_shape, const Shape& sa, const Buf& a, const Shape& sb,
                const Buf& b, Buf& out, F f) {
  const std::int64_t n = out_shape.numel();
  out.resize(n);
  const double* av = a.v();
  const double* ae = a.e();
  const double* bv = b.v();
  const double* be = b.e();
  double* ov = out.v();
  double* oe = out.e();
  const auto one = [&](std::int64_t i, std::int64_t ia, std::int64_t ib) {
    const Approx r = f(Approx{av[ia], ae[ia]}, Approx{bv[ib], be[ib]});
    ov[i] = r.v;
    oe[i] = r.e;
  };
  if (sa == out_shape && sb == out_shape) { // no broadcasting: skip the index arithmetic
    for (std::int64_t i = 0; i < n; ++i)
      one(i, i, i);
    return;
  }
  walk(broadcast_walk(out_shape, sa, sb), one);
}

// Scratch of the reductions, kept across calls.
struct ReduceScratch {
  std::vector<double> sum, abs_sum, err;
  std::vector<unsigned char> flags;
  // Rows of the ops along a dim (rows.h) and their formulas' temporaries.
  std::vector<Approx> x, y, g, dx, terms, partial, via_norm;
  Buf wide_a, wide_b;              // broadcast operands of cosine_similarity, addmm
  std::vector<std::int64_t> index; // the view ops' and takes' index maps
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs; // scatter (target, source) pairs
  // Set by an op whose outcome may be an error in a correct f32 implementation (inv of a
  // matrix whose determinant's bound reaches 0); cleared per program.
  bool error_possible = false;
};

// dst[j] = sum of the src elements whose walk offset `a` is j, accumulated in double and rounded
// once, with the bound sum(E_i) + (n-1) u sum|x_i| of a float accumulation in unknown order.
// src is walked contiguously (linear index i). With `mean`, dst[j] is that sum divided by the
// number of terms before the one rounding (SumAccumulator::mean's rule).
void reduce(const Buf& src, const Walk& w, std::int64_t dst_numel, Buf& dst, ReduceScratch& s,
            bool mean = false);
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
