// The view and layout ops (flip, movedim, permute, narrow, select, slice, chunk, squeeze,
// unsqueeze, reshape, expand, stack, relayout) and the scans (cumsum, cumprod), each one Eigen 3.4
// Tensor expression on the rank-4 padded operands of eigen_tensor.h: reverse, shuffle, slice, chip,
// stridedSlice, reshape, broadcast, concatenate, cumsum, cumprod. LibTorch returns views for the
// layout ops; Eigen evaluates each into a dense buffer, so the ops after them meet contiguous
// inputs here, and what the fuzzer compares is Eigen's indexing of the expression.
//
// Backward passes follow derivatives.yaml with the same expressions: a slice's gradient is grad
// written through the very slice expression into zeros, a permutation's is the inverse
// permutation, expand's is sum_to, cumsum's is a reversed cumsum. cumprod's forms the products of
// the others directly (no division by the input, which would fail at zeros and overflows for a
// reason of the plugin's, not Eigen's). roll, tril, triu, diagonal, diag_embed and
// logcumsumexp have no Tensor-module counterpart and are not in kOps.
#include <utility>

#include "eigen_tensor.h"

namespace burnmark::eigen {
namespace {

using Perm = Eigen::array<Index, kRank>;

std::size_t axis_of(const BurnmarkShape& s, int dim) {
  return static_cast<std::size_t>(dim + pad(s));
}
Index axis_index(const BurnmarkShape& s, int dim) {
  return static_cast<Index>(dim + pad(s));
}

// A permutation of the operand's axes (result axis i is operand axis dims[i]) lifted to the
// padded rank: the padding axes stay in front.
Perm padded_perm(const BurnmarkShape& operand, const int* dims) {
  Perm p{0, 1, 2, 3};
  const int k = pad(operand);
  for (int i = 0; i < operand.rank; ++i)
    p[static_cast<std::size_t>(i + k)] = dims[i] + k;
  return p;
}

Perm inverse(const Perm& p) {
  Perm q{};
  for (std::size_t i = 0; i < p.size(); ++i)
    q[static_cast<std::size_t>(p[i])] = static_cast<Index>(i);
  return q;
}

// movedim(source, destination): result axis j is operand axis axes[j] (shape_rules' moved_axes).
Perm movedim_perm(const BurnmarkShape& s, int source, int destination) {
  int axes[BURNMARK_MAX_RANK] = {};
  for (int j = 0, k = 0; j < s.rank; ++j) {
    if (j == destination) {
      axes[j] = source;
      continue;
    }
    if (k == source) ++k;
    axes[j] = k++;
  }
  return padded_perm(s, axes);
}

// permute's dims, one decimal digit dim + 1 per result axis with the first axis leading (ops.def;
// the host has validated the code against the operand's rank).
Perm permute_perm(const BurnmarkShape& s, int code) {
  int dims[BURNMARK_MAX_RANK] = {};
  for (int i = s.rank - 1; i >= 0; --i, code /= 10)
    dims[i] = code % 10 - 1;
  return padded_perm(s, dims);
}

// The block narrow, chunk and (with a step) slice take from the operand: offsets, extents,
// strides and the exclusive stop, at the padded rank.
struct Block {
  Dims start{0, 0, 0, 0}, extent, stop, stride{1, 1, 1, 1};
};
Block block_of(const BurnmarkStmt& s, const Dense& x) {
  Block b;
  b.extent = dims4(s.shape);
  b.stop = dims4(x.shape);
  const std::size_t a = axis_of(x.shape, s.attrs.dim);
  switch (static_cast<plugin::OpId>(s.op)) {
  case plugin::OpId::Narrow: b.start[a] = s.attrs.dim1; break;
  // Every chunk but the last has ceil(n / chunks) elements (LibTorch's split).
  case plugin::OpId::Chunk: {
    const Index n = b.stop[a];
    b.start[a] = s.attrs.dim1 * ((n + s.attrs.times - 1) / s.attrs.times);
    break;
  }
  case plugin::OpId::Slice:
    b.start[a] = s.attrs.dim1;
    b.stop[a] = s.attrs.times;
    b.stride[a] = s.attrs.variant;
    break;
  default: break;
  }
  return b;
}

// The operand's padded dims without axis `a`: the layout of a chip along it.
Eigen::array<Index, kRank - 1> without(const Dims& d, std::size_t a) {
  Eigen::array<Index, kRank - 1> kept;
  for (std::size_t i = 0, j = 0; i < d.size(); ++i)
    if (i != a) kept[j++] = d[i];
  return kept;
}

// stack's operands at the result's padded rank, with extent 1 on the new axis (DSizes: concatenate
// needs its operands' dimensions in Eigen's own type).
Eigen::DSizes<Index, kRank> stacked_piece(const BurnmarkStmt& s) {
  Eigen::DSizes<Index, kRank> d(dims4(s.shape));
  d[axis_of(s.shape, s.attrs.dim)] = 1;
  return d;
}

Eigen::array<bool, kRank> flip_axis(const BurnmarkShape& s, int dim) {
  Eigen::array<bool, kRank> r{false, false, false, false};
  r[axis_of(s, dim)] = true;
  return r;
}

} // namespace

bool forward_views(const BurnmarkStmt& s, In in, Dense& out) {
  using plugin::OpId;
  const Dense& x = *in[0];
  switch (static_cast<OpId>(s.op)) {
  case OpId::Flip: map4(out) = map4(x).reverse(flip_axis(x.shape, s.attrs.dim)); return true;
  case OpId::Movedim:
    map4(out) = map4(x).shuffle(movedim_perm(x.shape, s.attrs.dim, s.attrs.dim1));
    return true;
  case OpId::Permute:
    map4(out) = map4(x).shuffle(permute_perm(x.shape, s.attrs.times));
    return true;
  case OpId::Narrow:
  case OpId::Chunk: {
    const Block b = block_of(s, x);
    map4(out) = map4(x).slice(b.start, b.extent);
    return true;
  }
  case OpId::Slice: {
    const Block b = block_of(s, x);
    map4(out) = map4(x).stridedSlice(b.start, b.stop, b.stride);
    return true;
  }
  case OpId::Select: {
    const std::size_t a = axis_of(x.shape, s.attrs.dim);
    Map<kRank - 1>(out.data.data(), without(dims4(x.shape), a)) =
        map4(x).chip(s.attrs.dim1, axis_index(x.shape, s.attrs.dim));
    return true;
  }
  // Same elements in the same row-major order: a reshape of the buffer. relayout changes only
  // LibTorch's memory layout; the walk's buffers are dense, so it is the identity here.
  case OpId::Squeeze:
  case OpId::Unsqueeze:
  case OpId::Relayout:
  case OpId::Reshape: map4(out) = map4(x).reshape(dims4(out.shape)); return true;
  case OpId::Expand: map4(out) = expand_to(x, dims4(out.shape)); return true;
  case OpId::Stack: {
    const auto piece = stacked_piece(s);
    map4(out) = map4(x).reshape(piece).concatenate(map4(*in[1]).reshape(piece),
                                                   axis_index(s.shape, s.attrs.dim));
    return true;
  }
  case OpId::Cumsum: map4(out) = map4(x).cumsum(axis_index(x.shape, s.attrs.dim)); return true;
  case OpId::Cumprod: map4(out) = map4(x).cumprod(axis_index(x.shape, s.attrs.dim)); return true;
  default: return false;
  }
}

bool backward_views(const BurnmarkStmt& s, In in, const Dense& /*out*/, const Dense& g,
                    GradIn grad_in) {
  using plugin::OpId;
  const Dense& x = *in[0];
  Dense& dx = *grad_in[0];
  switch (static_cast<OpId>(s.op)) {
  // flip_backward: grad flipped back.
  case OpId::Flip: map4(dx) = map4(g).reverse(flip_axis(x.shape, s.attrs.dim)); return true;
  // A permutation's gradient is grad under the inverse permutation.
  case OpId::Movedim:
    map4(dx) = map4(g).shuffle(inverse(movedim_perm(x.shape, s.attrs.dim, s.attrs.dim1)));
    return true;
  case OpId::Permute:
    map4(dx) = map4(g).shuffle(inverse(permute_perm(x.shape, s.attrs.times)));
    return true;
  // slice_backward / select_backward: zeros (dx arrives zeroed) with grad written into the
  // block the forward read.
  case OpId::Narrow:
  case OpId::Chunk: {
    const Block b = block_of(s, x);
    map4(dx).slice(b.start, b.extent) = map4(g);
    return true;
  }
  case OpId::Slice: {
    const Block b = block_of(s, x);
    map4(dx).stridedSlice(b.start, b.stop, b.stride) = map4(g);
    return true;
  }
  case OpId::Select: {
    const std::size_t a = axis_of(x.shape, s.attrs.dim);
    map4(dx).chip(s.attrs.dim1, axis_index(x.shape, s.attrs.dim)) =
        CMap<kRank - 1>(g.data.data(), without(dims4(x.shape), a));
    return true;
  }
  case OpId::Squeeze:
  case OpId::Unsqueeze:
  case OpId::Relayout:
  case OpId::Reshape: map4(dx) = map4(g).reshape(dims4(x.shape)); return true;
  // expand's gradient is grad summed over the expanded axis (sum_to).
  case OpId::Expand: sum_to(Tensor4(map4(g)), dx); return true;
  // unbind of grad along the new axis.
  case OpId::Stack: {
    const auto piece = stacked_piece(s);
    Dims offset{0, 0, 0, 0};
    map4(dx) = map4(g).slice(offset, piece).reshape(dims4(x.shape));
    offset[axis_of(s.shape, s.attrs.dim)] = 1;
    map4(*grad_in[1]) = map4(g).slice(offset, piece).reshape(dims4(in[1]->shape));
    return true;
  }
  // cumsum_backward: grad.flip(dim).cumsum(dim).flip(dim).
  case OpId::Cumsum: {
    const Index a = axis_index(x.shape, s.attrs.dim);
    const auto r = flip_axis(x.shape, s.attrs.dim);
    map4(dx) = map4(g).reverse(r).cumsum(a).reverse(r);
    return true;
  }
  // cumprod's gradient, d/dx_j sum_k g_k y_k = sum_{k >= j} g_k prod_{i <= k, i != j} x_i, with
  // the products of the others formed directly: Eigen has no autograd, so this is the plugin's
  // own tape, and a formula that divides by x_j (LibTorch's without zeros) would make the plugin
  // diverge at zeros for a reason of ours, not Eigen's. In double, rounded once.
  case OpId::Cumprod: {
    const Index a = axis_index(x.shape, s.attrs.dim);
    const Dims d = dims4(x.shape);
    Index outer = 1, inner = 1;
    for (Index k = 0; k < kRank; ++k) {
      if (k < a) outer *= d[static_cast<std::size_t>(k)];
      if (k > a) inner *= d[static_cast<std::size_t>(k)];
    }
    const Index n = d[static_cast<std::size_t>(a)];
    const auto at = [&](Index o, Index j, Index i) {
      return static_cast<std::size_t>((o * n + j) * inner + i);
    };
    for (Index o = 0; o < outer; ++o)
      for (Index i = 0; i < inner; ++i)
        for (Index j = 0; j < n; ++j) {
          double sum = 0, others = 1; // others: prod_{i <= k, i != j} x_i for the current k
          for (Index k = 0; k < n; ++k) {
            if (k != j) others *= x.data[at(o, k, i)];
            if (k >= j) sum += static_cast<double>(g.data[at(o, k, i)]) * others;
          }
          dx.data[at(o, j, i)] = static_cast<float>(sum);
        }
    return true;
  }
  default: return false;
  }
}

} // namespace burnmark::eigen
