// Walk construction, reductions, layout moves and matmul of the reference backend.
#include "kernels.h"

#include <cassert>
#include <cstdlib>

namespace burnmark::ref {
namespace {

enum ReduceFlag : unsigned char {
  kIndeterminate = 1,
  kNonFinite = 2,
  kPositive = 4,
  kNegative = 8,
};

// A float accumulation in unknown order may overflow in a partial sum that the exact sum avoids
// (and then meet an opposite infinity): indeterminate once the magnitudes can reach overflow and
// there is something to cancel against.
bool partial_sums_may_overflow(double abs_sum, unsigned flags) {
  const bool mixed = (flags & kPositive) && (flags & kNegative);
  return abs_sum >= storage.acc_overflow && (mixed || (flags & kNonFinite));
}

unsigned sign_flags(double x) {
  if (!std::isfinite(x)) return kNonFinite;
  return x > 0 ? kPositive : (x < 0 ? kNegative : 0);
}

Walk over_shape(const Shape& s) {
  Walk w;
  w.rank = s.rank();
  for (int i = 0; i < s.rank(); ++i)
    w.dims[static_cast<std::size_t>(i)] = s[i];
  return w;
}

Shape batch_of(const Shape& s) {
  Shape b;
  for (int i = 0; i + 2 < s.rank(); ++i)
    b.push_back(s[i]);
  return b;
}

// What a float dot product may add to the exact sum: len * u_acc * sum|x_p y_p| for its roundings
// in unknown order (with or without FMA), u_acc the accumulator's (f32 for bf16 and f16: a product
// of two bf16 or f16 values is exact in f32, and LibTorch's CPU gemm, gemv and dot accumulate in
// at::opmath_type, pytorch/pytorch#65839 and #96074, as oneDNN's bf16 gemm does; the one rounding
// to the dtype is finish_exact's). A single term is rounded once, like ours, except for the
// sign of a product that underflows to zero: a BLAS adds it to a +0 accumulator (+0 + -0 = +0),
// an FMA keeps -0. The sign of such a zero is the library's choice, so it is left uncertain.
double dot_rounding(double sum, double abs_sum, std::int64_t len) {
  if (len > 1) return static_cast<double>(len) * storage.acc_u * abs_sum;
  return sum != 0 && to_storage(sum) == 0 ? storage.underflow_step : 0.0;
}

// True when every product x_p y_p is -0. Their sum is then -0 where a library adds them up
// without a +0 accumulator (a single multiply, as torch.compile makes of a 1x1x1 matmul; a
// pairwise tree) and +0 where it starts from one (a BLAS): the sign is the library's choice, as
// for a product that underflows. Any +0 product makes the sum +0 in every order.
bool every_product_is_negative_zero(const Buf& x, std::int64_t x0, std::int64_t xs, const Buf& y,
                                    std::int64_t y0, std::int64_t ys, std::int64_t len) {
  for (std::int64_t p = 0; p < len; ++p) {
    const double prod = x.at(x0 + p * xs).v * y.at(y0 + p * ys).v;
    if (prod != 0 || !std::signbit(prod)) return false;
  }
  return len > 0;
}

// dot_rounding, and the uncertain sign of an all-(-0) sum (checked only when the sum is 0).
double dot_rounding_at(const Buf& x, std::int64_t x0, std::int64_t xs, const Buf& y,
                       std::int64_t y0, std::int64_t ys, std::int64_t len, double sum,
                       double abs_sum) {
  if (abs_sum == 0 && sum == 0 && every_product_is_negative_zero(x, x0, xs, y, y0, ys, len))
    return storage.underflow_step;
  return dot_rounding(sum, abs_sum, len);
}

// One dot product of f32 vectors: products summed in double, rounded once; the bound of a float
// dot product in unknown order (with or without FMA) is len * u * sum|x_p y_p|.
Approx dot_checked(const Buf& x, std::int64_t x0, std::int64_t xs, const Buf& y, std::int64_t y0,
                   std::int64_t ys, std::int64_t len) {
  double sum = 0;
  double abs_sum = 0;
  double err = 0;
  unsigned flags = 0;
  for (std::int64_t p = 0; p < len; ++p) {
    const Approx a = x.at(x0 + p * xs);
    const Approx b = y.at(y0 + p * ys);
    if (indeterminate(a) || indeterminate(b) || (std::isinf(a.v) && straddles_zero(b)) ||
        (std::isinf(b.v) && straddles_zero(a)))
      flags |= kIndeterminate;
    const double prod = a.v * b.v;
    sum += prod;
    flags |= sign_flags(prod);
    if (std::isfinite(prod)) abs_sum += std::fabs(prod);
    err += scaled(std::fabs(b.v), a.e) + scaled(std::fabs(a.v), b.e) + a.e * b.e;
  }
  if ((flags & kIndeterminate) || partial_sums_may_overflow(abs_sum, flags)) return unknown(sum);
  const double rounding = dot_rounding_at(x, x0, xs, y, y0, ys, len, sum, abs_sum);
  return finish_exact(sum, err + rounding);
}

// The same without per-term branches, for the common case where every product, bound and
// partial sum is finite and far from overflow; anything else takes the checked loop.
Approx dot(const Buf& x, std::int64_t x0, std::int64_t xs, const Buf& y, std::int64_t y0,
           std::int64_t ys, std::int64_t len) {
  const double* xv = x.v() + x0;
  const double* xe = x.e() + x0;
  const double* yv = y.v() + y0;
  const double* ye = y.e() + y0;
  double sum = 0;
  double abs_sum = 0;
  double err = 0;
  for (std::int64_t p = 0; p < len; ++p) {
    const double a = xv[p * xs];
    const double b = yv[p * ys];
    const double ea = xe[p * xs];
    const double eb = ye[p * ys];
    sum += a * b;
    abs_sum += std::fabs(a * b);
    err += std::fabs(b) * ea + std::fabs(a) * eb + ea * eb;
  }
  if (!(abs_sum < storage.overflow * 0x1p-8) || !(err < storage.overflow * 0x1p-8))
    return dot_checked(x, x0, xs, y, y0, ys, len);
  const double rounding = dot_rounding_at(x, x0, xs, y, y0, ys, len, sum, abs_sum);
  return finish_exact(sum, err + rounding);
}

struct MatmulGeometry {
  Walk batch; // over the result's batch dims; a/b steps in elements of the operands
  std::int64_t m, k, n;
};

MatmulGeometry geometry(const Shape& sa, const Shape& sb, const Shape& so) {
  MatmulGeometry g;
  g.m = so[so.rank() - 2];
  g.n = so[so.rank() - 1];
  g.k = sa[sa.rank() - 1];
  assert(sb[sb.rank() - 2] == g.k);
  g.batch = broadcast_walk(batch_of(so), batch_of(sa), batch_of(sb));
  for (int i = 0; i < g.batch.rank; ++i) {
    g.batch.a[static_cast<std::size_t>(i)] *= g.m * g.k;
    g.batch.b[static_cast<std::size_t>(i)] *= g.k * g.n;
  }
  return g;
}

} // namespace

Walk plain_walk(const Shape& s) {
  return over_shape(s);
}

std::array<std::int64_t, kWalkRank> broadcast_steps(const Shape& src, const Shape& over) {
  std::array<std::int64_t, kWalkRank> steps{};
  const auto strides = src.strides();
  for (int i = 0; i < over.rank(); ++i) {
    const int j = i - (over.rank() - src.rank());
    if (j >= 0 && src[j] != 1)
      steps[static_cast<std::size_t>(i)] = strides[static_cast<std::size_t>(j)];
  }
  return steps;
}

Walk broadcast_walk(const Shape& over, const Shape& a, const Shape& b) {
  Walk w = over_shape(over);
  w.a = broadcast_steps(a, over);
  w.b = broadcast_steps(b, over);
  return w;
}

void reduce(const Buf& src, const Walk& w, std::int64_t dst_numel, Buf& dst, ReduceScratch& s,
            bool mean) {
  const auto n = static_cast<std::size_t>(dst_numel);
  s.sum.assign(n, 0.0);
  s.abs_sum.assign(n, 0.0);
  s.err.assign(n, 0.0);
  s.flags.assign(n, 0);
  const double* sv = src.v();
  const double* se = src.e();
  double* sum = s.sum.data();
  double* abs_sum = s.abs_sum.data();
  double* err = s.err.data();
  unsigned char* flags = s.flags.data();
  walk(w, [&](std::int64_t i, std::int64_t j, std::int64_t) {
    const Approx x{sv[i], se[i]};
    sum[j] += x.v;
    if (std::isfinite(x.v)) abs_sum[j] += std::fabs(x.v);
    err[j] += x.e;
    flags[j] |=
        static_cast<unsigned char>(sign_flags(x.v) | (indeterminate(x) ? kIndeterminate : 0));
  });
  const std::int64_t terms = dst_numel > 0 ? w.numel() / dst_numel : 0;
  dst.resize(dst_numel);
  for (std::size_t j = 0; j < n; ++j) {
    const auto jj = static_cast<std::int64_t>(j);
    const double divisor = mean && terms > 0 ? static_cast<double>(terms) : 1.0;
    if ((s.flags[j] & kIndeterminate) || partial_sums_may_overflow(s.abs_sum[j], s.flags[j])) {
      dst.set(jj, unknown(s.sum[j] / divisor));
    } else if (mean && terms > 0) { // mean_of_sum (which copies a one-term mean)
      dst.set(jj, mean_of_sum(s.sum[j], s.abs_sum[j], s.err[j], divisor));
    } else if (terms == 1) {
      dst.set(jj, {s.sum[j], s.err[j]}); // a one-term sum is a copy in every library
    } else {
      // Accumulated in f32 for bf16 and f16 (SumAccumulator): sum, mean and the backward's
      // sum-to-shape.
      dst.set(jj, finish_exact(s.sum[j], s.err[j] + static_cast<double>(terms - 1) * storage.acc_u *
                                                        s.abs_sum[j]));
    }
  }
}

void gather(const Buf& src, const Walk& w, Buf& dst) {
  dst.resize(w.numel());
  const double* sv = src.v();
  const double* se = src.e();
  double* dv = dst.v();
  double* de = dst.e();
  walk(w, [&](std::int64_t i, std::int64_t os, std::int64_t) {
    dv[i] = sv[os];
    de[i] = se[os];
  });
}

void scatter(const Buf& src, const Walk& w, Buf& dst) {
  const double* sv = src.v();
  const double* se = src.e();
  double* dv = dst.v();
  double* de = dst.e();
  walk(w, [&](std::int64_t i, std::int64_t od, std::int64_t) {
    dv[od] = sv[i];
    de[od] = se[i];
  });
}

void sum_to(const Buf& src, const Shape& from, const Shape& to, Buf& dst, ReduceScratch& s) {
  const auto common = broadcast(to, from);
  if (!common || !(*common == from) || to.rank() > from.rank() || src.size() != from.numel())
    std::abort();
  if (to == from) {
    dst.assign(src);
    return;
  }
  Walk w = over_shape(from);
  w.a = broadcast_steps(to, from);
  reduce(src, w, to.numel(), dst, s);
}

Walk transpose_walk(const Shape& in, int d0, int d1) {
  Shape out = in;
  out[d0] = in[d1];
  out[d1] = in[d0];
  Walk w = over_shape(out);
  const auto strides = in.strides();
  for (int i = 0; i < in.rank(); ++i)
    w.a[static_cast<std::size_t>(i)] = strides[static_cast<std::size_t>(i)];
  std::swap(w.a[static_cast<std::size_t>(d0)], w.a[static_cast<std::size_t>(d1)]);
  return w;
}

namespace {
// The elements before and after axis dim, as counts.
std::int64_t outer_of(const Shape& s, int dim) {
  std::int64_t n = 1;
  for (int i = 0; i < dim; ++i)
    n *= s[i];
  return n;
}
std::int64_t inner_of(const Shape& s, int dim) {
  std::int64_t n = 1;
  for (int i = dim + 1; i < s.rank(); ++i)
    n *= s[i];
  return n;
}
} // namespace

Walk repeat_walk(const Shape& in, int dim, int times) {
  const std::int64_t n = in[dim];
  const std::int64_t inner = inner_of(in, dim);
  Walk w;
  w.rank = 4;
  w.dims = {outer_of(in, dim), times, n, inner, 1, 1};
  w.a = {n * inner, 0, inner, 1, 0, 0};
  return w;
}

Walk concat_part_walk(const Shape& a, const Shape& b, int dim, int part) {
  const std::int64_t inner = inner_of(a, dim);
  const std::int64_t total = a[dim] + b[dim];
  Walk w;
  w.rank = 3;
  w.dims = {outer_of(a, dim), part == 0 ? a[dim] : b[dim], inner, 1, 1, 1};
  w.a = {total * inner, inner, 1, 0, 0, 0};
  w.a0 = part == 0 ? 0 : a[dim] * inner;
  return w;
}

Walk reduce_dim_walk(const Shape& in, int dim) {
  Shape kept = in;
  kept[dim] = 1;
  Walk w = over_shape(in);
  w.a = broadcast_steps(kept, in);
  return w;
}

void matmul(const Shape& sa, const Buf& a, const Shape& sb, const Buf& b, const Shape& so,
            Buf& out) {
  const MatmulGeometry g = geometry(sa, sb, so);
  out.resize(so.numel());
  walk(g.batch, [&](std::int64_t bi, std::int64_t oa, std::int64_t ob) {
    const std::int64_t base = bi * g.m * g.n;
    for (std::int64_t i = 0; i < g.m; ++i)
      for (std::int64_t j = 0; j < g.n; ++j)
        out.set(base + i * g.n + j, dot(a, oa + i * g.k, 1, b, ob + j, g.n, g.k));
  });
}

void matmul_grad_a(const Shape& sb, const Buf& b, const Shape& so, const Buf& g, Buf& out) {
  Shape sa = batch_of(so); // only the batch dims and m matter for the geometry
  sa.push_back(so[so.rank() - 2]);
  sa.push_back(sb[sb.rank() - 2]);
  const MatmulGeometry geo = geometry(sa, sb, so);
  out.resize(geo.batch.numel() * geo.m * geo.k);
  walk(geo.batch, [&](std::int64_t bi, std::int64_t, std::int64_t ob) {
    for (std::int64_t i = 0; i < geo.m; ++i)
      for (std::int64_t p = 0; p < geo.k; ++p)
        out.set((bi * geo.m + i) * geo.k + p,
                dot(g, (bi * geo.m + i) * geo.n, 1, b, ob + p * geo.n, 1, geo.n));
  });
}

void matmul_grad_b(const Shape& sa, const Buf& a, const Shape& so, const Buf& g, Buf& out) {
  Shape sb = batch_of(so);
  sb.push_back(sa[sa.rank() - 1]);
  sb.push_back(so[so.rank() - 1]);
  const MatmulGeometry geo = geometry(sa, sb, so);
  out.resize(geo.batch.numel() * geo.k * geo.n);
  walk(geo.batch, [&](std::int64_t bi, std::int64_t oa, std::int64_t) {
    for (std::int64_t p = 0; p < geo.k; ++p)
      for (std::int64_t j = 0; j < geo.n; ++j)
        out.set((bi * geo.k + p) * geo.n + j,
                dot(a, oa + p, geo.k, g, bi * geo.m * geo.n + j, geo.n, geo.m));
  });
}

} // namespace burnmark::ref
