// Forward kernels of the Eigen plugin: one Eigen Tensor expression per op, evaluated in float32
// on Eigen's default (single-threaded, vectorised) device. Nothing here patches Eigen's results
// towards LibTorch's conventions; where Eigen's own functors differ at special values, the
// fuzzer is meant to see it.
#include <utility>

#include "eigen_tensor.h"

namespace burnmark::eigen {
namespace {

void reduce_dim(const BurnmarkStmt& s, const Dense& in, Dense& out, bool mean) {
  const Eigen::array<Index, 1> axis{s.attrs.dim + pad(in.shape)};
  // keepdim only changes the result's shape, not its row-major order: write it as rank 3.
  const Dims d = dims4(in.shape);
  Eigen::array<Index, kRank - 1> kept;
  for (int i = 0, j = 0; i < kRank; ++i)
    if (i != axis[0]) kept[static_cast<std::size_t>(j++)] = d[static_cast<std::size_t>(i)];
  Map<kRank - 1> o(out.data.data(), kept);
  if (mean)
    o = map4(in).mean(axis);
  else
    o = map4(in).sum(axis);
}

void matmul(const Dense& a, const Dense& b, Dense& out) {
  const MatmulShape g{dims4(a.shape), dims4(b.shape), dims4(out.shape)};
  const Eigen::array<Eigen::IndexPair<Index>, 1> inner{Eigen::IndexPair<Index>(1, 0)};
  for (Index i0 = 0; i0 < g.out[0]; ++i0)
    for (Index i1 = 0; i1 < g.out[1]; ++i1) {
      CMap<2> am(a.data.data() + MatmulShape::offset(g.a, i0, i1), g.a[2], g.a[3]);
      CMap<2> bm(b.data.data() + MatmulShape::offset(g.b, i0, i1), g.b[2], g.b[3]);
      Map<2> om(out.data.data() + MatmulShape::offset(g.out, i0, i1), g.out[2], g.out[3]);
      om = am.contract(bm, inner);
    }
}

} // namespace

void forward(const BurnmarkStmt& s, In in, Dense& out) {
  using plugin::OpId;
  const Dense& x = *in[0];
  switch (static_cast<OpId>(s.op)) {
  case OpId::Add: return binary(in, out, [](auto a, auto b) { return a + b; });
  case OpId::Sub: return binary(in, out, [](auto a, auto b) { return a - b; });
  case OpId::Mul: return binary(in, out, [](auto a, auto b) { return a * b; });
  case OpId::Div: return binary(in, out, [](auto a, auto b) { return a / b; });
  case OpId::Neg: flat(out) = -flat(x); return;
  case OpId::Abs: flat(out) = flat(x).abs(); return;
  case OpId::Exp: flat(out) = flat(x).exp(); return;
  case OpId::Log: flat(out) = flat(x).log(); return;
  case OpId::Sqrt: flat(out) = flat(x).sqrt(); return;
  case OpId::Pow: flat(out) = flat(x).pow(static_cast<float>(s.attrs.exponent)); return;
  // relu is clamp_min(x, 0) in LibTorch, which passes NaN; Eigen's PropagateNaN does the same.
  case OpId::Relu: flat(out) = flat(x).cwiseMax<Eigen::PropagateNaN>(0.0f); return;
  case OpId::Sigmoid: flat(out) = flat(x).sigmoid(); return;
  case OpId::Tanh: flat(out) = flat(x).tanh(); return;
  // min(max(x, lo), hi): lo > hi yields hi everywhere, as LibTorch's clamp does. The bounds are
  // f32 on the library side, like LibTorch's scalar bounds applied to a float tensor.
  case OpId::Clamp:
    flat(out) = flat(x)
                    .cwiseMax<Eigen::PropagateNaN>(static_cast<float>(s.attrs.lo))
                    .cwiseMin<Eigen::PropagateNaN>(static_cast<float>(s.attrs.hi));
    return;
  case OpId::SumAll: {
    Map<0> o(out.data.data());
    o = flat(x).sum();
    return;
  }
  case OpId::MeanAll: {
    Map<0> o(out.data.data());
    o = flat(x).mean();
    return;
  }
  case OpId::SumDim: return reduce_dim(s, x, out, false);
  case OpId::MeanDim: return reduce_dim(s, x, out, true);
  case OpId::Transpose: {
    Eigen::array<Index, kRank> perm{0, 1, 2, 3};
    std::swap(perm[static_cast<std::size_t>(s.attrs.dim + pad(x.shape))],
              perm[static_cast<std::size_t>(s.attrs.dim1 + pad(x.shape))]);
    map4(out) = map4(x).shuffle(perm);
    return;
  }
  case OpId::Concat:
    map4(out) = map4(x).concatenate(map4(*in[1]), s.attrs.dim + pad(x.shape));
    return;
  // Eigen's broadcast tiles the whole axis (x0 x1 .. x0 x1 ..), which is torch.repeat's layout.
  case OpId::Repeat: {
    Dims factors{1, 1, 1, 1};
    factors[static_cast<std::size_t>(s.attrs.dim + pad(x.shape))] = s.attrs.times;
    map4(out) = map4(x).broadcast(factors);
    return;
  }
  case OpId::Matmul: return matmul(x, *in[1], out);
  default: break;
  }
  if (forward_unary(s, x, out) || forward_binary(s, in, out) || forward_views(s, in, out) ||
      forward_linalg(s, in, out))
    return;
  // Not in kOps, so the host never sends it.
  throw plugin::Unsupported{s.op, {}};
}

} // namespace burnmark::eigen
