// Shared vocabulary of the Eigen plugin: every register is viewed through Eigen's Tensor module
// at one fixed rank (4, BurnMark's largest), with leading axes of extent 1 padding smaller ranks.
// One rank means each Eigen expression is instantiated once, which keeps the plugin's compile
// time bounded, and NumPy-style right-aligned broadcasting falls out of the padding for free.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>

#include <unsupported/Eigen/CXX11/Tensor>

#include "burnmark/plugin/plugin_walk.h"

namespace burnmark::eigen {

// The kernels work on rank-4 tensors (shapes padded with leading 1s); programs with a rank-5
// register are reported unsupported (eigen_plugin.cpp).
inline constexpr int kRank = 4;
using Index = Eigen::Index;
using Dims = Eigen::array<Index, kRank>;
using Dense = plugin::Dense<float>;
using In = std::span<const Dense* const>;
using GradIn = std::span<Dense* const>;

// Row-major, so a TensorMap over a Dense buffer indexes it exactly as BurnMark lays it out.
template <int R> using Map = Eigen::TensorMap<Eigen::Tensor<float, R, Eigen::RowMajor>>;
template <int R> using CMap = Eigen::TensorMap<Eigen::Tensor<const float, R, Eigen::RowMajor>>;
using Tensor4 = Eigen::Tensor<float, kRank, Eigen::RowMajor>;

// Leading axes that padding adds to a tensor of this shape.
inline int pad(const BurnmarkShape& s) {
  return kRank - s.rank;
}

inline Dims dims4(const BurnmarkShape& s) {
  Dims d;
  for (int i = 0; i < kRank; ++i)
    d[static_cast<std::size_t>(i)] = i < pad(s) ? 1 : s.dims[i - pad(s)];
  return d;
}

inline Index size_of(const Dims& d) {
  Index n = 1;
  for (Index x : d)
    n *= x;
  return n;
}

inline Map<kRank> map4(Dense& t) {
  return Map<kRank>(t.data.data(), dims4(t.shape));
}
inline CMap<kRank> map4(const Dense& t) {
  return CMap<kRank>(t.data.data(), dims4(t.shape));
}
// Flat views: elementwise ops on equal shapes run as one 1-D loop, Eigen's packet body over the
// bulk and its scalar tail over the last numel % packet elements.
inline Map<1> flat(Dense& t) {
  return Map<1>(t.data.data(), t.numel());
}
inline CMap<1> flat(const Dense& t) {
  return CMap<1>(t.data.data(), t.numel());
}

// Per-axis factors that broadcast `from` (padded) to `to` (padded): to / from where from is 1.
inline Dims broadcast_factors(const Dims& from, const Dims& to) {
  Dims f;
  for (std::size_t i = 0; i < static_cast<std::size_t>(kRank); ++i)
    f[i] = from[i] == to[i] ? 1 : to[i];
  return f;
}

// `x` (padded) broadcast to the padded dims `to`, as an Eigen expression.
inline auto expand_to(const Dense& x, const Dims& to) {
  return map4(x).broadcast(broadcast_factors(dims4(x.shape), to));
}

// Sums `full` (a gradient at the broadcast result's padded dims) down to the padded dims of
// `dst` and stores it there: one single-axis reduction per broadcast axis (PyTorch's sum_to).
inline void sum_to(Tensor4 full, Dense& dst) {
  const Dims target = dims4(dst.shape);
  for (int ax = 0; ax < kRank; ++ax) {
    const auto a = static_cast<std::size_t>(ax);
    if (target[a] != 1 || full.dimension(ax) == 1) continue;
    Dims kept = full.dimensions();
    kept[a] = 1;
    Tensor4 reduced = full.sum(Eigen::array<Index, 1>{ax}).reshape(kept);
    full = std::move(reduced);
  }
  map4(dst) = full;
}

// out = f(a, b) with NumPy broadcasting: one flat loop when the shapes are equal (Eigen's packet
// body and scalar tail), else both operands broadcast to the result's padded dims.
template <class F> void binary(In in, Dense& out, F f) {
  const Dense& a = *in[0];
  const Dense& b = *in[1];
  if (plugin::same_shape(a.shape, b.shape)) {
    flat(out) = f(flat(a), flat(b));
    return;
  }
  const Dims to = dims4(out.shape);
  map4(out) = f(expand_to(a, to), expand_to(b, to));
}

// Gradient of one operand of a broadcasting binary op: `f(g, a, b, y)` at the result's shape,
// where a and b are the operands broadcast to it and y is the op's result, summed down to dst's
// shape (sum_to), as PyTorch's engine does.
template <class F> void binary_grad(In in, const Dense& out, const Dense& g, Dense& dst, F f) {
  const Dense& a = *in[0];
  const Dense& b = *in[1];
  if (plugin::same_shape(a.shape, b.shape)) {
    flat(dst) = f(flat(g), flat(a), flat(b), flat(out));
    return;
  }
  const Dims to = dims4(out.shape);
  Tensor4 full = f(map4(g), expand_to(a, to), expand_to(b, to), map4(out));
  sum_to(std::move(full), dst);
}

// Matmul geometry over padded operands: batch axes 0 and 1 broadcast, matrices in axes 2 and 3.
struct MatmulShape {
  Dims a, b, out;
  // Offset of batch (i0, i1)'s matrix inside a tensor of padded dims d, honouring broadcast.
  static Index offset(const Dims& d, Index i0, Index i1) {
    return ((d[0] == 1 ? 0 : i0) * d[1] + (d[1] == 1 ? 0 : i1)) * d[2] * d[3];
  }
};

void forward(const BurnmarkStmt& s, In in, Dense& out);
void backward(const BurnmarkStmt& s, In in, const Dense& out, const Dense& grad_out,
              GradIn grad_in);

// The ops past the first vocabulary, one file per family (eigen_unary.cpp, eigen_binary.cpp,
// eigen_views.cpp with the scans, eigen_linalg.cpp).
// Each returns false for an op outside its family, so forward() and backward() try them in turn.
bool forward_unary(const BurnmarkStmt& s, const Dense& x, Dense& out);
bool backward_unary(const BurnmarkStmt& s, const Dense& x, const Dense& out, const Dense& g,
                    Dense& dx);
bool forward_binary(const BurnmarkStmt& s, In in, Dense& out);
bool backward_binary(const BurnmarkStmt& s, In in, const Dense& out, const Dense& g,
                     GradIn grad_in);
bool forward_views(const BurnmarkStmt& s, In in, Dense& out);
bool backward_views(const BurnmarkStmt& s, In in, const Dense& out, const Dense& g, GradIn grad_in);
bool forward_linalg(const BurnmarkStmt& s, In in, Dense& out);
bool backward_linalg(const BurnmarkStmt& s, In in, const Dense& out, const Dense& g,
                     GradIn grad_in);

} // namespace burnmark::eigen
