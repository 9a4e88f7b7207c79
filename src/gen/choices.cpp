// Which alternatives are legal at each choice point of the generator, for decoder and encoder.
#include "choices.h"

#include <algorithm>
#include <cmath>

#include "burnmark/ir/shape_rules.h"

namespace burnmark::gen_detail {

Knobs normalize(const GeneratorOptions& o) {
  Knobs k{};
  k.max_leaves = std::clamp(o.max_leaves, 1, 8);
  k.min_dim = std::clamp(o.min_dim, 1, static_cast<int>(kMaxDim));
  k.max_dim = std::clamp(o.max_dim, k.min_dim, static_cast<int>(kMaxDim));
  k.max_elements = std::clamp<std::int64_t>(o.max_elements, kDefaultMaxElements, kMaxElements);
  k.max_steps = std::clamp(o.max_steps, 0, kMaxStepsLimit);
  k.min_ops = std::clamp(o.min_ops, 0, k.max_steps);
  const double rate = o.special_rate;
  if (!(rate > 0.0))
    k.special_tags = 0; // also catches NaN
  else if (rate >= 1.0)
    k.special_tags = 256;
  // Any positive rate keeps at least one tag value, so the raw-bits escape stays encodable.
  else
    k.special_tags = std::clamp(static_cast<int>(std::lround(rate * 256.0)), 1, 256);
  if (!(o.edge_rate > 0.0))
    k.edge_tags = 0;
  else
    k.edge_tags = std::clamp(static_cast<int>(std::lround(o.edge_rate * 256.0)), 1, 255);
  if (!(o.layout_rate > 0.0))
    k.layout_tags = 0;
  else
    k.layout_tags = std::clamp(static_cast<int>(std::lround(o.layout_rate * 256.0)), 1, 255);
  k.dtype_count = 0;
  for (FloatDType d : o.dtypes)
    if (std::find(k.dtypes.begin(), k.dtypes.begin() + k.dtype_count, d) ==
        k.dtypes.begin() + k.dtype_count)
      k.dtypes[k.dtype_count++] = d;
  if (k.dtype_count == 0) k.dtypes[k.dtype_count++] = FloatDType::F32;
  k.forward_mode = o.forward_mode;
  k.second_order = o.second_order;
  k.restricted = !o.ops.empty();
  if (!k.restricted) k.permitted.set();
  for (Op op : o.ops)
    k.permitted.set(static_cast<std::size_t>(op));
  return k;
}

bool family_drawable(const Knobs& k, OpFamily family, FloatDType dtype) {
  const auto any = [&](OpFamily f) {
    return std::any_of(kOpTable.begin(), kOpTable.end(), [&](const OpInfo& info) {
      return info.family == f && drawn(k, info.op, dtype);
    });
  };
  if (family == OpFamily::Select || family == OpFamily::Masked)
    if (!any(OpFamily::Compare)) return false;
  return any(family);
}

void op_wheel(const Knobs& k, FloatDType dtype, std::vector<OpFamily>& out) {
  out.clear();
  for (OpFamily f : kCategoryWheel)
    if (!k.restricted || family_drawable(k, f, dtype)) out.push_back(f);
}

namespace {

// "'prod_cpu' not implemented for 'BFloat16'", "lu_cpu", "linalg.inv: Low precision dtypes not
// supported"; hardtanh's backward dispatches as hardshrink_backward, which has no bf16 kernel.
constexpr Op kNotInBf16[] = {Op::Det,     Op::Slogdet, Op::Inv,      Op::Trace, Op::Prod,
                             Op::ProdDim, Op::Mish,    Op::Hardtanh, Op::Relu6};
// f16 on the CPU in 1.13.1 has arithmetic, reductions, views and indexing, but none of the
// transcendental, clamp-based or matrix-product kernels.
constexpr Op kNotInF16[] = {Op::Det,         Op::Slogdet,
                            Op::Inv,         Op::Trace,
                            Op::Prod,        Op::ProdDim,
                            Op::Mish,        Op::Hardtanh,
                            Op::Relu6,       Op::Acos,
                            Op::Acosh,       Op::Addmm,
                            Op::Asin,        Op::Asinh,
                            Op::Atan,        Op::Atan2,
                            Op::Atanh,       Op::Bmm,
                            Op::Ceil,        Op::Celu,
                            Op::ClampMax,    Op::ClampMin,
                            Op::Clamp,       Op::Cos,
                            Op::Cosh,        Op::CosineSimilarity,
                            Op::Cumprod,     Op::Cumsum,
                            Op::Digamma,     Op::Elu,
                            Op::Erf,         Op::Erfc,
                            Op::Erfinv,      Op::Exp,
                            Op::Expm1,       Op::Floor,
                            Op::Gelu,        Op::Hardshrink,
                            Op::Hardsigmoid, Op::Hardswish,
                            Op::Hypot,       Op::LeakyRelu,
                            Op::Lerp,        Op::Lgamma,
                            Op::Log,         Op::Log10,
                            Op::Log1p,       Op::Log2,
                            Op::LogSoftmax,  Op::Logcumsumexp,
                            Op::Logit,       Op::LogSigmoid,
                            Op::Logsumexp,   Op::Matmul,
                            Op::Mm,          Op::Mv,
                            Op::Dot,         Op::Normalize,
                            Op::PowTensor,   Op::Relu,
                            Op::Round,       Op::Rsqrt,
                            Op::Selu,        Op::Sigmoid,
                            Op::Silu,        Op::Sin,
                            Op::Sinh,        Op::Softmax,
                            Op::Softplus,    Op::Softshrink,
                            Op::Sqrt,        Op::Tan,
                            Op::Tanh,        Op::Tanhshrink,
                            Op::Trunc};

// The lists as per-op flags, so that the generator's per-step check is one lookup.
struct LeftOut {
  std::array<bool, kOpCount> bf16{};
  std::array<bool, kOpCount> f16{};
};
constexpr LeftOut make_left_out() {
  LeftOut out;
  for (Op op : kNotInBf16)
    out.bf16[static_cast<std::size_t>(op)] = true;
  for (Op op : kNotInF16)
    out.f16[static_cast<std::size_t>(op)] = true;
  return out;
}
constexpr LeftOut kLeftOut = make_left_out();

} // namespace

} // namespace burnmark::gen_detail

bool burnmark::op_generated_in_forward_mode(Op op) {
  return op != Op::Logcumsumexp; // "logcumsumexp that does not support it"
}

bool burnmark::op_generated_in_second_order(Op op) {
  // The reference has a second-order rule for every op (second_order.cpp).
  return !libtorch_lacks_second_order(op);
}

bool burnmark::libtorch_lacks_second_order(Op op) {
  return op == Op::Hardsigmoid;
}

bool burnmark::op_generated_at(Op op, FloatDType dtype) {
  const auto i = static_cast<std::size_t>(op);
  switch (dtype) {
  case FloatDType::F32:
  case FloatDType::F64: return true;
  case FloatDType::BF16: return !gen_detail::kLeftOut.bf16[i];
  case FloatDType::F16: return !gen_detail::kLeftOut.f16[i];
  }
  return true;
}

namespace burnmark::gen_detail {

bool dims_in_range(const Knobs& k, const Shape& s) {
  for (int i = 0; i < s.rank(); ++i)
    if (s[i] < k.min_dim || s[i] > k.max_dim) return false;
  return true;
}

namespace {

std::int64_t min_dim_power(const Knobs& k, int count) {
  std::int64_t p = 1;
  for (int i = 0; i < count; ++i)
    p *= k.min_dim;
  return p;
}

} // namespace

int max_feasible_rank(const Knobs& k, std::int64_t known_product, int fixed) {
  int rank = fixed + 1;
  while (rank < kMaxLeafRank &&
         known_product * min_dim_power(k, rank + 1 - fixed) <= k.max_elements)
    ++rank;
  return rank;
}

std::int64_t dim_upper(const Knobs& k, std::int64_t known_product, int free_after) {
  return std::min<std::int64_t>(k.max_dim,
                                k.max_elements / (known_product * min_dim_power(k, free_after)));
}

void leaf_sources(const Knobs& k, std::span<const Stmt> regs, LeafMode mode,
                  std::vector<Reg>& out) {
  out.clear();
  for (std::size_t r = 0; r < regs.size(); ++r) {
    const Shape& s = regs[r].shape;
    if (s.rank() < 1) continue;
    bool ok = false;
    switch (mode) {
    case LeafMode::Fresh:
    case LeafMode::LaneLength: break;
    case LeafMode::ResampleOneDim:
    case LeafMode::BroadcastSuffix: ok = dims_in_range(k, s); break;
    case LeafMode::MatmulReady: {
      // Only the last dim is copied (into the new leaf's rows); batch dims are copied when in
      // range.
      const std::int64_t last = s[s.rank() - 1];
      ok = last >= k.min_dim && last <= k.max_dim;
      break;
    }
    }
    if (ok) out.push_back(static_cast<Reg>(r));
  }
}

void lane_shapes(const Knobs& k, std::vector<Shape>& out) {
  out.clear();
  const auto fits = [&](std::int64_t d) { return d >= k.min_dim && d <= k.max_dim; };
  for (std::int64_t width = 8; width <= 256; width *= 2)
    for (std::int64_t n = width - 1; n <= width + 1; ++n) {
      if (fits(n)) {
        out.push_back(Shape{n});
        continue;
      }
      for (std::int64_t a = 2; a <= k.max_dim; ++a)
        if (n % a == 0 && fits(a) && fits(n / a)) {
          out.push_back(Shape{a, n / a});
          break;
        }
    }
}

// The prefilters below are necessary conditions only, to skip infer_shape's error formatting on
// the common mismatch; infer_shape stays the authority on legality.

bool fits(const Knobs& k, Op op, const Attrs& attrs, std::span<const Shape> in) {
  const ShapeResult r = infer_shape(op, attrs, in);
  return r.ok() && r.shape().numel() <= k.max_elements;
}

int max_expand(const Knobs& k, const Shape& s) {
  int n = 1;
  while (n < kMaxExpand && s.numel() * (n + 1) <= k.max_elements && n + 1 <= kMaxDim)
    ++n;
  return n;
}

void reshape_choices(const Shape& s, std::vector<Attrs>& out) {
  out.clear();
  for (int d = 0; d < s.rank(); ++d) {
    std::int64_t merged = s[d];
    for (int e = d + 1; e < s.rank(); ++e) {
      merged *= s[e];
      if (merged > kMaxDim) break;
      Attrs a;
      a.dim = d;
      a.dim1 = e;
      out.push_back(a);
    }
  }
  if (s.rank() >= kMaxRank) return;
  for (int d = 0; d < s.rank(); ++d)
    for (int f = 1; f <= s[d]; ++f)
      if (s[d] % f == 0) {
        Attrs a;
        a.variant = 1;
        a.dim = d;
        a.times = f;
        out.push_back(a);
      }
}

int permutation_count(int rank) {
  int n = 1;
  for (int i = 2; i <= rank; ++i)
    n *= i;
  return n;
}

// Lehmer code: the index's factorial-base digits pick each dim among those not yet taken.
int nth_permutation_code(int rank, int index) {
  std::array<int, kMaxRank> left{};
  for (int i = 0; i < rank; ++i)
    left[static_cast<std::size_t>(i)] = i;
  std::array<int, kMaxRank> dims{};
  for (int i = 0; i < rank; ++i) {
    const int block = permutation_count(rank - 1 - i);
    const int k = index / block;
    index %= block;
    dims[static_cast<std::size_t>(i)] = left[static_cast<std::size_t>(k)];
    for (int j = k; j + 1 < rank - i; ++j)
      left[static_cast<std::size_t>(j)] = left[static_cast<std::size_t>(j + 1)];
  }
  return permutation_code(std::span<const int>(dims.data(), static_cast<std::size_t>(rank)));
}

int permutation_index(int code, int rank) {
  const auto dims = permutation_dims(code, rank);
  if (!dims) return -1;
  int index = 0;
  for (int i = 0; i < rank; ++i) {
    int smaller_later = 0;
    for (int j = i + 1; j < rank; ++j)
      smaller_later += (*dims)[static_cast<std::size_t>(j)] < (*dims)[static_cast<std::size_t>(i)];
    index += smaller_later * permutation_count(rank - 1 - i);
  }
  return index;
}

void diag_embed_offsets(const Knobs& k, const Shape& s, std::vector<int>& out) {
  out.clear();
  Attrs a;
  const std::array<Shape, 1> in = {s};
  for (int offset = -kMaxDiagEmbedOffset; offset <= kMaxDiagEmbedOffset; ++offset) {
    a.times = offset;
    if (fits(k, Op::DiagEmbed, a, in)) out.push_back(offset);
  }
}

void stack_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out) {
  out.clear();
  const Shape& sa = regs[static_cast<std::size_t>(a)].shape;
  if (sa.rank() >= kMaxRank || 2 * sa.numel() > k.max_elements) return;
  for (std::size_t r = 0; r < regs.size(); ++r)
    if (regs[r].dtype == DType::F32 && regs[r].shape == sa) out.push_back(static_cast<Reg>(r));
}

Attrs table_key(const Attrs& a) {
  Attrs key = a;
  key.dim = 0;
  key.dim1 = 0;
  key.keepdim = false;
  key.times = 1;
  return key;
}

void float_registers(std::span<const Stmt> regs, std::vector<Reg>& out) {
  out.clear();
  for (std::size_t r = 0; r < regs.size(); ++r)
    if (regs[r].dtype == DType::F32) out.push_back(static_cast<Reg>(r));
}

void where_partners(const Knobs& k, std::span<const Stmt> regs, const Shape& mask, const Shape* a,
                    std::vector<Reg>& out) {
  out.clear();
  for (std::size_t r = 0; r < regs.size(); ++r) {
    if (regs[r].dtype != DType::F32) continue;
    const std::array<Shape, 3> in = {mask, a ? *a : regs[r].shape, regs[r].shape};
    if (!broadcast_compatible(mask, regs[r].shape)) continue;
    if (fits(k, Op::Where, Attrs{}, in)) out.push_back(static_cast<Reg>(r));
  }
}

void binary_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out) {
  out.clear();
  const Shape& sa = regs[static_cast<std::size_t>(a)].shape;
  for (std::size_t r = 0; r < regs.size(); ++r) {
    if (regs[r].dtype != DType::F32) continue;
    const std::array<Shape, 2> in = {sa, regs[r].shape};
    if (!broadcast_compatible(in[0], in[1])) continue;
    if (fits(k, Op::Add, Attrs{}, in)) out.push_back(static_cast<Reg>(r));
  }
}

void broadcast_into_partners(const Knobs& k, std::span<const Stmt> regs, Reg a,
                             std::vector<Reg>& out) {
  binary_partners(k, regs, a, out);
  const Shape& sa = regs[static_cast<std::size_t>(a)].shape;
  std::erase_if(out, [&](Reg r) {
    const auto both = broadcast(sa, regs[static_cast<std::size_t>(r)].shape);
    return !both || !(*both == sa);
  });
}

void masked_scatter_sources(std::span<const Stmt> regs, std::int64_t numel, std::vector<Reg>& out) {
  out.clear();
  for (std::size_t r = 0; r < regs.size(); ++r)
    if (regs[r].dtype == DType::F32 && regs[r].shape.numel() >= numel)
      out.push_back(static_cast<Reg>(r));
}

void matmul_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out) {
  out.clear();
  const Shape& sa = regs[static_cast<std::size_t>(a)].shape;
  if (sa.rank() < 2) return;
  for (std::size_t r = 0; r < regs.size(); ++r) {
    const Shape& sb = regs[r].shape;
    if (regs[r].dtype != DType::F32) continue;
    if (sb.rank() < 2 || sb[sb.rank() - 2] != sa[sa.rank() - 1]) continue;
    const std::array<Shape, 2> in = {sa, sb};
    if (fits(k, Op::Matmul, Attrs{}, in)) out.push_back(static_cast<Reg>(r));
  }
}

void shape_partners(const Knobs& k, std::span<const Stmt> regs, Op op, std::span<const Reg> fixed,
                    std::vector<Reg>& out) {
  out.clear();
  std::array<Shape, kMaxArity> in;
  for (std::size_t i = 0; i < fixed.size(); ++i)
    in[i] = regs[static_cast<std::size_t>(fixed[i])].shape;
  const std::span<const Shape> shapes(in.data(), fixed.size() + 1);
  for (std::size_t r = 0; r < regs.size(); ++r) {
    if (regs[r].dtype != DType::F32) continue;
    in[fixed.size()] = regs[r].shape;
    if (fits(k, op, Attrs{}, shapes)) out.push_back(static_cast<Reg>(r));
  }
}

void addmm_first(const Knobs& k, std::span<const Stmt> regs, Reg a, std::vector<Reg>& out) {
  out.clear();
  const Shape& input = regs[static_cast<std::size_t>(a)].shape;
  // Direct shape checks: the generator runs this for every addmm step, over every pair of
  // registers, so no shape-rule call (and its error text) per failing pair.
  const auto matrix = [&](std::size_t r) {
    return regs[r].dtype == DType::F32 && regs[r].shape.rank() == 2;
  };
  for (std::size_t r = 0; r < regs.size(); ++r) {
    if (!matrix(r)) continue;
    const Shape& m1 = regs[r].shape;
    for (std::size_t q = 0; q < regs.size(); ++q) {
      if (!matrix(q) || regs[q].shape[0] != m1[1]) continue;
      const Shape product{m1[0], regs[q].shape[1]};
      const auto b = broadcast(input, product);
      if (b && *b == product && product.within_cap() && product.numel() <= k.max_elements) {
        out.push_back(static_cast<Reg>(r));
        break;
      }
    }
  }
}

void concat_partners(const Knobs& k, std::span<const Stmt> regs, Reg a, int dim,
                     std::vector<Reg>& out) {
  out.clear();
  const Shape& sa = regs[static_cast<std::size_t>(a)].shape;
  Attrs attrs;
  attrs.dim = dim;
  for (std::size_t r = 0; r < regs.size(); ++r) {
    const Shape& sb = regs[r].shape;
    if (regs[r].dtype != DType::F32 || sb.rank() != sa.rank()) continue;
    const std::array<Shape, 2> in = {sa, sb};
    if (fits(k, Op::Concat, attrs, in)) out.push_back(static_cast<Reg>(r));
  }
}

std::int64_t max_index_length(const Knobs& k, const Shape& s, int dim) {
  const std::int64_t others = s.numel() / s[dim];
  return std::min({kMaxDim, k.max_elements / others, 2 * s[dim] + 2});
}

void scatter_sources(std::span<const Stmt> regs, Reg a, std::vector<Reg>& out) {
  out.clear();
  const int rank = regs[static_cast<std::size_t>(a)].shape.rank();
  for (std::size_t r = 0; r < regs.size(); ++r)
    if (regs[r].dtype == DType::F32 && regs[r].shape.rank() == rank)
      out.push_back(static_cast<Reg>(r));
}

void index_update_sources(std::span<const Stmt> regs, Reg a, int dim, bool distinct,
                          std::vector<Reg>& out) {
  out.clear();
  const Shape& sa = regs[static_cast<std::size_t>(a)].shape;
  for (std::size_t r = 0; r < regs.size(); ++r) {
    const Shape& s = regs[r].shape;
    if (regs[r].dtype != DType::F32 || s.rank() != sa.rank()) continue;
    bool fits = !distinct || s[dim] <= sa[dim];
    for (int d = 0; d < sa.rank() && fits; ++d)
      fits = d == dim || s[d] == sa[d];
    if (fits) out.push_back(static_cast<Reg>(r));
  }
}

int max_repeat_times(const Knobs& k, const Shape& s, int dim) {
  Attrs attrs;
  attrs.dim = dim;
  const std::array<Shape, 1> in = {s};
  for (int times = kMaxRepeat; times > 1; --times) {
    attrs.times = times;
    if (fits(k, Op::Repeat, attrs, in)) return times;
  }
  return 1;
}

bool matrix_leaf_feasible(const Knobs& k) {
  return k.min_dim <= kMaxSquareOrder;
}
std::int64_t matrix_order_max(const Knobs& k) {
  return std::min<std::int64_t>(k.max_dim, kMaxSquareOrder);
}
std::int64_t matrix_batch_max(const Knobs& k) {
  return std::min<std::int64_t>(k.max_dim, kMaxMatrixBatch);
}

bool matrix_leaf_shape(const Knobs& k, const Shape& s) {
  if (!matrix_leaf_feasible(k) || !small_square(s) || s.rank() > 4) return false;
  if (s[s.rank() - 1] < k.min_dim || s[s.rank() - 1] > matrix_order_max(k)) return false;
  for (int i = 0; i + 2 < s.rank(); ++i)
    if (s[i] < k.min_dim || s[i] > matrix_batch_max(k)) return false;
  return true;
}

void square_registers(std::span<const Stmt> regs, std::vector<Reg>& out) {
  out.clear();
  for (std::size_t r = 0; r < regs.size(); ++r)
    if (regs[r].dtype == DType::F32 && small_square(regs[r].shape))
      out.push_back(static_cast<Reg>(r));
}

} // namespace burnmark::gen_detail
