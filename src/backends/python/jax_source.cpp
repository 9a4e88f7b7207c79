// The JAX emitter: a Program as one Python function in jax.numpy / jax.lax / jax.nn, computing
// what PyTorch's call for each op (src/repro/python_repro.cpp's call()) computes. The runner
// (runner_jax.py) execs it with `jax`, `jnp`, `lax` and `jss` (jax.scipy.special) in scope and
// differentiates it; the function itself does no AD.
//
// Where JAX has the op, its own op is used, so JAX's kernels and JAX's derivative rules are what
// the oracle judges. Where JAX lacks it, the op is written from JAX ops by PyTorch's documented
// formula (frac, softplus's threshold, the shrinks, lerp, normalize, cosine_similarity, addmm,
// scatter_add, diag_embed, ...). Where JAX's op differs from PyTorch's at a kink, the JAX op whose
// choice is a registered convention's is preferred: lax.clamp blocks the gradient at both bounds
// (clamp-grad-min-norm, LibTorch 2.15's side; hardtanh's own), where jnp.clip's maximum/minimum
// would split a tie 0.5 / 0.5, which no convention names.
//
// Unsupported (the program is skipped, never judged):
// - scatter_reduce with reduce="prod": JAX's scatter_mul has no gradient for the updates when an
//   index repeats (it raises NotImplementedError), and the generator makes repeats on purpose.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "python_source.h"

namespace burnmark {
namespace {

std::string reg(Reg r) {
  return fmt::format("r{}", r);
}

std::string num(double v);

// A scalar bound for lax.clamp, which (unlike jnp) takes no weakly typed Python float: the
// literal as an array of x's dtype.
std::string clamp(const std::string& x, double lo, double hi) {
  return fmt::format("lax.clamp(jnp.asarray({1}, {0}.dtype), {0}, jnp.asarray({2}, {0}.dtype))", x,
                     num(lo), num(hi));
}

// Always a float literal ("2.0", never "2": an int exponent would take lax.integer_pow, another
// kernel than PyTorch's Scalar pow); weakly typed, so it takes the array's dtype.
std::string num(double v) {
  return double_literal(v, "jnp.nan", "jnp.inf");
}

std::string py_bool(bool b) {
  return b ? "True" : "False";
}

std::string tuple(const std::vector<std::int64_t>& items) {
  std::string out = "(";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += (i ? ", " : "") + std::to_string(items[i]);
  return out + (items.size() == 1 ? ",)" : ")");
}

std::vector<std::int64_t> dims_of(const Shape& s) {
  std::vector<std::int64_t> out;
  for (int i = 0; i < s.rank(); ++i)
    out.push_back(s[i]);
  return out;
}

// torch.gather and torch.scatter_add read only index.shape's leading block of src (and, off
// dim, of input): lax.slice of `x` to `sizes` with dim kept whole when `keep_dim` is set.
std::string leading_block(const std::string& x, const Shape& x_shape, const Shape& index_shape,
                          int dim, bool keep_dim) {
  std::vector<std::int64_t> limits = dims_of(index_shape);
  if (keep_dim) limits[static_cast<std::size_t>(dim)] = x_shape[dim];
  if (limits == dims_of(x_shape)) return x;
  return fmt::format("lax.slice({}, {}, {})", x, tuple(std::vector<std::int64_t>(limits.size(), 0)),
                     tuple(limits));
}

// The advanced index of torch's scatter along `dim`: the index tensor on dim, an iota broadcast
// along every other axis of the index's shape.
std::string scatter_index(const std::string& index, const Shape& index_shape, int dim) {
  std::string out = "(";
  for (int i = 0; i < index_shape.rank(); ++i) {
    if (i) out += ", ";
    if (i == dim) {
      out += index;
      continue;
    }
    std::vector<std::int64_t> shape(static_cast<std::size_t>(index_shape.rank()), 1);
    shape[static_cast<std::size_t>(i)] = index_shape[i];
    out += fmt::format("jnp.arange({}).reshape({})", index_shape[i], tuple(shape));
  }
  return out + (index_shape.rank() == 1 ? ",)" : ")");
}

// The statement(s) defining register `r`; `unsupported` set instead for an op JAX lacks.
std::string statement(const Program& p, Reg r, const Instr& in, std::string& unsupported) {
  const std::string out = reg(r);
  const std::string x = reg(in.operands[0]);
  const std::string y = in.operands.size() > 1 ? reg(in.operands[1]) : "";
  const std::string z = in.operands.size() > 2 ? reg(in.operands[2]) : "";
  const Attrs& a = in.attrs;
  const Shape& xs = p.shape_of(in.operands[0]);
  const auto assign = [&](const std::string& expr) { return fmt::format("{} = {}", out, expr); };
  const auto keep = py_bool(a.keepdim);
  switch (in.op) {
  case Op::Add: return assign(fmt::format("jnp.add({}, {})", x, y));
  case Op::Sub: return assign(fmt::format("jnp.subtract({}, {})", x, y));
  case Op::Mul: return assign(fmt::format("jnp.multiply({}, {})", x, y));
  case Op::Div: return assign(fmt::format("jnp.divide({}, {})", x, y));
  case Op::Neg: return assign(fmt::format("jnp.negative({})", x));
  case Op::Abs: return assign(fmt::format("jnp.abs({})", x));
  case Op::Exp: return assign(fmt::format("jnp.exp({})", x));
  case Op::Log: return assign(fmt::format("jnp.log({})", x));
  case Op::Sqrt: return assign(fmt::format("jnp.sqrt({})", x));
  case Op::Pow: return assign(fmt::format("jnp.power({}, {})", x, num(a.exponent)));
  case Op::Relu: return assign(fmt::format("jax.nn.relu({})", x));
  case Op::Sigmoid: return assign(fmt::format("jax.nn.sigmoid({})", x));
  case Op::Tanh: return assign(fmt::format("jnp.tanh({})", x));
  case Op::SumAll: return assign(fmt::format("jnp.sum({})", x));
  case Op::MeanAll: return assign(fmt::format("jnp.mean({})", x));
  case Op::SumDim: return assign(fmt::format("jnp.sum({}, axis={}, keepdims={})", x, a.dim, keep));
  case Op::MeanDim:
    return assign(fmt::format("jnp.mean({}, axis={}, keepdims={})", x, a.dim, keep));
  case Op::Transpose: return assign(fmt::format("jnp.swapaxes({}, {}, {})", x, a.dim, a.dim1));
  case Op::Concat: return assign(fmt::format("jnp.concatenate([{}, {}], axis={})", x, y, a.dim));
  case Op::Repeat: {
    std::vector<std::int64_t> reps(static_cast<std::size_t>(xs.rank()), 1);
    reps[static_cast<std::size_t>(a.dim)] = a.times;
    return assign(fmt::format("jnp.tile({}, {})", x, tuple(reps)));
  }
  case Op::Matmul: return assign(fmt::format("jnp.matmul({}, {})", x, y));
  // lax.clamp(lo, x, hi) is XLA's min(max(x, lo), hi) (hi when lo > hi, NaN passes).
  case Op::Clamp: return assign(clamp(x, a.lo, a.hi));
  case Op::Sin: return assign(fmt::format("jnp.sin({})", x));
  case Op::Cos: return assign(fmt::format("jnp.cos({})", x));
  case Op::Tan: return assign(fmt::format("jnp.tan({})", x));
  case Op::Asin: return assign(fmt::format("jnp.arcsin({})", x));
  case Op::Acos: return assign(fmt::format("jnp.arccos({})", x));
  case Op::Atan: return assign(fmt::format("jnp.arctan({})", x));
  case Op::Sinh: return assign(fmt::format("jnp.sinh({})", x));
  case Op::Cosh: return assign(fmt::format("jnp.cosh({})", x));
  case Op::Asinh: return assign(fmt::format("jnp.arcsinh({})", x));
  case Op::Acosh: return assign(fmt::format("jnp.arccosh({})", x));
  case Op::Atanh: return assign(fmt::format("jnp.arctanh({})", x));
  case Op::Erf: return assign(fmt::format("lax.erf({})", x));
  case Op::Erfc: return assign(fmt::format("lax.erfc({})", x));
  case Op::Erfinv: return assign(fmt::format("lax.erf_inv({})", x));
  case Op::Log1p: return assign(fmt::format("jnp.log1p({})", x));
  case Op::Expm1: return assign(fmt::format("jnp.expm1({})", x));
  case Op::Log2: return assign(fmt::format("jnp.log2({})", x));
  case Op::Log10: return assign(fmt::format("jnp.log10({})", x));
  case Op::Exp2: return assign(fmt::format("jnp.exp2({})", x));
  case Op::Rsqrt: return assign(fmt::format("lax.rsqrt({})", x));
  case Op::Reciprocal: return assign(fmt::format("jnp.reciprocal({})", x));
  case Op::Square: return assign(fmt::format("jnp.square({})", x));
  case Op::Sign: return assign(fmt::format("jnp.sign({})", x));
  case Op::Sgn: return assign(fmt::format("jnp.sign({})", x)); // sgn is sign on real tensors
  case Op::Floor: return assign(fmt::format("jnp.floor({})", x));
  case Op::Ceil: return assign(fmt::format("jnp.ceil({})", x));
  case Op::Round: return assign(fmt::format("jnp.round({})", x)); // both: half to even
  case Op::Trunc: return assign(fmt::format("jnp.trunc({})", x));
  case Op::Frac: return assign(fmt::format("jnp.subtract({0}, jnp.trunc({0}))", x)); // its doc
  case Op::Lgamma: return assign(fmt::format("lax.lgamma({})", x));
  case Op::Digamma: return assign(fmt::format("lax.digamma({})", x));
  case Op::ClampMin: return assign(clamp(x, a.lo, INFINITY));
  case Op::ClampMax: return assign(clamp(x, -INFINITY, a.hi));
  case Op::LogSigmoid: return assign(fmt::format("jax.nn.log_sigmoid({})", x));
  // F.softplus: linear where beta * x > threshold (documented), else log(1 + exp(beta x)) / beta.
  case Op::Softplus:
    return assign(fmt::format("jnp.where({0} * {1} > {2}, {0}, jax.nn.softplus({0} * {1}) / {1})",
                              x, num(a.beta), num(a.threshold)));
  case Op::Gelu:
    return assign(fmt::format("jax.nn.gelu({}, approximate={})", x, py_bool(a.variant == 1)));
  case Op::Silu: return assign(fmt::format("jax.nn.silu({})", x));
  case Op::Mish: return assign(fmt::format("jax.nn.mish({})", x));
  case Op::Elu: return assign(fmt::format("jax.nn.elu({}, alpha={})", x, num(a.alpha)));
  case Op::Selu: return assign(fmt::format("jax.nn.selu({})", x));
  case Op::Celu: return assign(fmt::format("jax.nn.celu({}, alpha={})", x, num(a.alpha)));
  case Op::LeakyRelu:
    return assign(fmt::format("jax.nn.leaky_relu({}, negative_slope={})", x, num(a.slope)));
  case Op::Hardtanh: return assign(clamp(x, a.lo, a.hi));
  case Op::Relu6: return assign(fmt::format("jax.nn.relu6({})", x));
  case Op::Hardsigmoid: return assign(fmt::format("jax.nn.hard_sigmoid({})", x));
  case Op::Hardswish: return assign(fmt::format("jax.nn.hard_swish({})", x));
  case Op::Softsign: return assign(fmt::format("jax.nn.soft_sign({})", x));
  // The shrinks as PyTorch's kernels write them: 0 inside [-lambd, lambd], so NaN passes.
  case Op::Hardshrink:
    return assign(fmt::format("jnp.where(({0} >= {1}) & ({0} <= {2}), 0.0, {0})", x, num(-a.lambd),
                              num(a.lambd)));
  case Op::Softshrink:
    return assign(fmt::format("jnp.where({0} > {1}, {0} - {1}, jnp.where({0} < {2}, {0} + {1}, "
                              "{0} * 0.0))",
                              x, num(a.lambd), num(-a.lambd)));
  case Op::Tanhshrink: return assign(fmt::format("jnp.subtract({0}, jnp.tanh({0}))", x));
  // torch.logit's eps clamps x to [eps, 1 - eps] first (1 - eps is exact in a double, and
  // rounds to the dtype once, as PyTorch's scalar_t arithmetic does), passing the gradient at
  // the bounds as logit_backward does: selects, not lax.clamp.
  case Op::Logit:
    if (a.variant == 1)
      return assign(
          fmt::format("jss.logit(jnp.where({0} < {1}, {1}, jnp.where({0} > {2}, {2}, {0})))", x,
                      num(a.eps), num(1 - a.eps)));
    return assign(fmt::format("jss.logit({})", x));
  case Op::Maximum: return assign(fmt::format("jnp.maximum({}, {})", x, y));
  case Op::Minimum: return assign(fmt::format("jnp.minimum({}, {})", x, y));
  case Op::Fmax: return assign(fmt::format("jnp.fmax({}, {})", x, y));
  case Op::Fmin: return assign(fmt::format("jnp.fmin({}, {})", x, y));
  case Op::Atan2: return assign(fmt::format("jnp.arctan2({}, {})", x, y));
  case Op::PowTensor: return assign(fmt::format("jnp.power({}, {})", x, y));
  case Op::Remainder: return assign(fmt::format("jnp.remainder({}, {})", x, y));
  case Op::Fmod: return assign(fmt::format("jnp.fmod({}, {})", x, y));
  case Op::DivRounded:
    if (a.variant == 1) return assign(fmt::format("jnp.floor_divide({}, {})", x, y));
    return assign(fmt::format("jnp.trunc(jnp.divide({}, {}))", x, y));
  case Op::Hypot: return assign(fmt::format("jnp.hypot({}, {})", x, y));
  // torch.xlogy is documented NaN where other is NaN, even at input 0; jss.xlogy says 0 there.
  case Op::Xlogy:
    return assign(fmt::format("jnp.where(jnp.isnan({1}), jnp.nan, jss.xlogy({0}, {1}))", x, y));
  case Op::Copysign: return assign(fmt::format("jnp.copysign({}, {})", x, y));
  // The documented a + w (b - a), as (1 - w) a + w b: no f32 overflow of b - a in between.
  case Op::Lerp:
    return assign(fmt::format("jnp.add({} * {}, {} * {})", num(1 - a.weight), x, num(a.weight), y));
  case Op::Lt: return assign(fmt::format("jnp.less({}, {})", x, y));
  case Op::Le: return assign(fmt::format("jnp.less_equal({}, {})", x, y));
  case Op::Gt: return assign(fmt::format("jnp.greater({}, {})", x, y));
  case Op::Ge: return assign(fmt::format("jnp.greater_equal({}, {})", x, y));
  case Op::Eq: return assign(fmt::format("jnp.equal({}, {})", x, y));
  case Op::Ne: return assign(fmt::format("jnp.not_equal({}, {})", x, y));
  case Op::Where: return assign(fmt::format("jnp.where({}, {}, {})", x, y, z));
  case Op::Prod: return assign(fmt::format("jnp.prod({})", x));
  case Op::Amax: return assign(fmt::format("jnp.max({})", x));
  case Op::Amin: return assign(fmt::format("jnp.min({})", x));
  // torch.max(x) splits its gradient between ties as amax does; jnp.max is the only JAX form.
  case Op::Max: return assign(fmt::format("jnp.max({})", x));
  case Op::Min: return assign(fmt::format("jnp.min({})", x));
  case Op::Var: return assign(fmt::format("jnp.var({}, ddof={})", x, a.variant));
  case Op::Std: return assign(fmt::format("jnp.std({}, ddof={})", x, a.variant));
  case Op::VectorNorm:
    return assign(fmt::format("jnp.linalg.vector_norm({}, ord={})", x, num(a.exponent)));
  case Op::ProdDim:
    return assign(fmt::format("jnp.prod({}, axis={}, keepdims={})", x, a.dim, keep));
  case Op::AmaxDim: return assign(fmt::format("jnp.max({}, axis={}, keepdims={})", x, a.dim, keep));
  case Op::AminDim: return assign(fmt::format("jnp.min({}, axis={}, keepdims={})", x, a.dim, keep));
  // torch.max(x, dim).values: the element at the first maximal index (a NaN is maximal), so the
  // whole gradient goes there; jnp.argmax picks the same index.
  case Op::MaxDim:
  case Op::MinDim: {
    const std::string pick = fmt::format(
        "jnp.take_along_axis({0}, jnp.expand_dims(jnp.{1}({0}, axis={2}), {2}), axis={2})", x,
        in.op == Op::MaxDim ? "argmax" : "argmin", a.dim);
    return assign(a.keepdim ? pick : fmt::format("jnp.squeeze({}, axis={})", pick, a.dim));
  }
  case Op::VarDim:
    return assign(
        fmt::format("jnp.var({}, axis={}, ddof={}, keepdims={})", x, a.dim, a.variant, keep));
  case Op::StdDim:
    return assign(
        fmt::format("jnp.std({}, axis={}, ddof={}, keepdims={})", x, a.dim, a.variant, keep));
  case Op::Logsumexp:
    return assign(fmt::format("jax.nn.logsumexp({}, axis={}, keepdims={})", x, a.dim, keep));
  case Op::NormDim:
    return assign(fmt::format("jnp.linalg.vector_norm({}, ord={}, axis={}, keepdims={})", x,
                              num(a.exponent), a.dim, keep));
  case Op::Cumsum: return assign(fmt::format("jnp.cumsum({}, axis={})", x, a.dim));
  case Op::Cumprod: return assign(fmt::format("jnp.cumprod({}, axis={})", x, a.dim));
  case Op::Logcumsumexp: return assign(fmt::format("lax.cumlogsumexp({}, axis={})", x, a.dim));
  case Op::Softmax: return assign(fmt::format("jax.nn.softmax({}, axis={})", x, a.dim));
  case Op::LogSoftmax: return assign(fmt::format("jax.nn.log_softmax({}, axis={})", x, a.dim));
  // F.normalize's documented x / max(||x||_p, 1e-12).
  case Op::Normalize:
    return assign(fmt::format("jnp.divide({0}, jnp.maximum(jnp.linalg.vector_norm({0}, "
                              "ord={1}, axis={2}, keepdims=True), 1e-12))",
                              x, num(a.exponent), a.dim));
  // F.cosine_similarity's documented sum((x1 / max(||x1||, eps)) * (x2 / max(||x2||, eps)))
  // over x1 and x2 broadcast, eps = 1e-8.
  case Op::CosineSimilarity: {
    const auto unit = [&](const std::string& v) {
      return fmt::format("jnp.divide({0}, jnp.maximum(jnp.linalg.vector_norm({0}, axis={1}, "
                         "keepdims=True), 1e-8))",
                         v, a.dim);
    };
    return fmt::format("{0}_a, {0}_b = jnp.broadcast_arrays({1}, {2})\n    ", out, x, y) +
           assign(fmt::format("jnp.sum(jnp.multiply({}, {}), axis={})", unit(out + "_a"),
                              unit(out + "_b"), a.dim));
  }
  case Op::Mm: return assign(fmt::format("jnp.matmul({}, {})", x, y));
  case Op::Mv: return assign(fmt::format("jnp.matmul({}, {})", x, y));
  case Op::Dot: return assign(fmt::format("jnp.dot({}, {})", x, y));
  case Op::Outer: return assign(fmt::format("jnp.outer({}, {})", x, y));
  // torch.addmm: beta input + alpha (mat1 @ mat2); with beta = 0 input is ignored, NaN and inf
  // included (documented). The result has mat1 @ mat2's shape, input broadcast to it.
  case Op::Addmm: {
    const std::string product = fmt::format("{} * jnp.matmul({}, {})", num(a.alpha), y, z);
    if (a.beta == 0) return assign(product);
    return assign(fmt::format("jnp.add({} * {}, {})", num(a.beta), x, product));
  }
  case Op::Trace: return assign(fmt::format("jnp.trace({})", x));
  case Op::Det: return assign(fmt::format("jnp.linalg.det({})", x));
  case Op::Slogdet: return assign(fmt::format("jnp.linalg.slogdet({})[1]", x));
  case Op::Inv: return assign(fmt::format("jnp.linalg.inv({})", x));
  case Op::Flip: return assign(fmt::format("jnp.flip({}, axis={})", x, a.dim));
  case Op::Roll: return assign(fmt::format("jnp.roll({}, {}, axis={})", x, a.times, a.dim));
  case Op::Unsqueeze: return assign(fmt::format("jnp.expand_dims({}, {})", x, a.dim));
  case Op::Squeeze: return assign(fmt::format("jnp.squeeze({}, axis={})", x, a.dim));
  case Op::Tril: return assign(fmt::format("jnp.tril({}, k={})", x, a.times));
  case Op::Triu: return assign(fmt::format("jnp.triu({}, k={})", x, a.times));
  case Op::Movedim: return assign(fmt::format("jnp.moveaxis({}, {}, {})", x, a.dim, a.dim1));
  case Op::Narrow:
    return assign(
        fmt::format("lax.slice_in_dim({}, {}, {}, axis={})", x, a.dim1, a.dim1 + a.times, a.dim));
  case Op::Select:
    return assign(
        fmt::format("lax.index_in_dim({}, {}, axis={}, keepdims=False)", x, a.dim1, a.dim));
  case Op::Expand: {
    std::vector<std::int64_t> sizes = dims_of(xs);
    sizes[static_cast<std::size_t>(a.dim)] = a.times;
    return assign(fmt::format("jnp.broadcast_to({}, {})", x, tuple(sizes)));
  }
  case Op::Diagonal:
    return assign(
        fmt::format("jnp.diagonal({}, offset={}, axis1={}, axis2={})", x, a.times, a.dim, a.dim1));
  case Op::Gather:
    return assign(fmt::format("jnp.take_along_axis({}, {}, axis={})",
                              leading_block(x, xs, p.shape_of(in.operands[1]), a.dim, true), y,
                              a.dim));
  case Op::IndexSelect: return assign(fmt::format("jnp.take({}, {}, axis={})", x, y, a.dim));
  case Op::TakeAlongDim:
    return assign(fmt::format("jnp.take_along_axis({}, {}, axis={})", x, y, a.dim));
  case Op::ScatterAdd: {
    const Shape& is = p.shape_of(in.operands[1]);
    return assign(fmt::format("{}.at[{}].add({})", x, scatter_index(y, is, a.dim),
                              leading_block(z, p.shape_of(in.operands[2]), is, a.dim, false)));
  }
  case Op::ScatterReduce: {
    const Shape& is = p.shape_of(in.operands[1]);
    const std::string at = scatter_index(y, is, a.dim);
    const std::string src = leading_block(z, p.shape_of(in.operands[2]), is, a.dim, false);
    switch (static_cast<ScatterReduction>(a.variant)) {
    case ScatterReduction::Prod: unsupported = "scatter_reduce prod"; return "";
    // Without include_self, self's reached elements are replaced by the reduction's identity
    // first, so they take no part in it and get no gradient.
    case ScatterReduction::Sum:
      return assign(fmt::format("{}.at[{}].add({})",
                                a.include_self ? x : fmt::format("{}.at[{}].set(0.0)", x, at), at,
                                src));
    case ScatterReduction::Amax:
    case ScatterReduction::Amin: {
      const bool max = static_cast<ScatterReduction>(a.variant) == ScatterReduction::Amax;
      const std::string base =
          a.include_self ? x
                         : fmt::format("{}.at[{}].set({})", x, at, max ? "-jnp.inf" : "jnp.inf");
      return assign(fmt::format("{}.at[{}].{}({})", base, at, max ? "max" : "min", src));
    }
    // The group's sum over its count (self counted when included); elements no index reaches
    // keep self's value.
    case ScatterReduction::Mean:
      return fmt::format("{0}_s = {1}.at[{2}].add({3})\n    "
                         "{0}_n = jnp.zeros_like({4}).at[{2}].add(1.0){5}\n    ",
                         out, a.include_self ? x : fmt::format("{}.at[{}].set(0.0)", x, at), at,
                         src, x, a.include_self ? " + 1.0" : "") +
             assign(fmt::format("jnp.where({0}_n == 0.0, {1}, {0}_s / jnp.maximum({0}_n, 1.0))",
                                out, x));
    }
    unsupported = "scatter_reduce";
    return "";
  }
  case Op::MaskedFill: return assign(fmt::format("jnp.where({}, {}, {})", y, num(a.fill), x));
  // The slices along dim the 1-D index names: x.at[:, ..., index] (one advanced index keeps its
  // place, so the updates have source's shape); .add accumulates repeated indices, .set of
  // index_copy's meets none (its indices are distinct).
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill: {
    std::string at;
    for (int d = 0; d < a.dim; ++d)
      at += ":, ";
    at += y;
    if (in.op == Op::IndexAdd) return assign(fmt::format("{}.at[{}].add({})", x, at, z));
    return assign(
        fmt::format("{}.at[{}].set({})", x, at, in.op == Op::IndexCopy ? z : num(a.fill)));
  }
  // index_put's one index is along dim 0; without accumulate its indices are distinct.
  case Op::IndexPut:
    return assign(fmt::format("{}.at[{}].{}({})", x, y, a.variant != 0 ? "add" : "set", z));
  // Row-major over self, the k-th set mask element takes source's flat element k: k is the
  // running count of set elements, minus one (clipped at 0 where none is set yet; where picks
  // self's value there, and routes no gradient to that source element).
  case Op::MaskedScatter: {
    const std::string dims = tuple(dims_of(xs));
    return fmt::format("{0}_m = jnp.reshape(jnp.broadcast_to({1}, {2}), (-1,))\n    "
                       "{0}_k = jnp.maximum(jnp.cumsum({0}_m) - 1, 0)\n    ",
                       out, y, dims) +
           assign(fmt::format(
               "jnp.reshape(jnp.where({0}_m, jnp.reshape({1}, (-1,))[{0}_k], jnp.reshape({2}, "
               "(-1,))), {3})",
               out, z, x, dims));
  }
  case Op::Reshape:
    return assign(fmt::format("jnp.reshape({}, {})", x, tuple(dims_of(p.shape_of(r)))));
  case Op::Permute: {
    const auto dims = *permutation_dims(a.times, xs.rank());
    return assign(
        fmt::format("jnp.transpose({}, {})", x,
                    tuple(std::vector<std::int64_t>(dims.begin(), dims.begin() + xs.rank()))));
  }
  case Op::Slice: {
    std::string lead;
    for (int d = 0; d < a.dim; ++d)
      lead += ":, ";
    return assign(fmt::format("{}[{}{}:{}:{}]", x, lead, a.dim1, a.times, a.variant));
  }
  case Op::Stack: return assign(fmt::format("jnp.stack([{}, {}], axis={})", x, y, a.dim));
  // torch.chunk: chunks of ceil(n / chunks) elements, the last shorter.
  case Op::Chunk: {
    const std::int64_t n = xs[a.dim];
    const std::int64_t size = (n + a.times - 1) / a.times;
    const std::int64_t start = size * a.dim1;
    return assign(fmt::format("lax.slice_in_dim({}, {}, {}, axis={})", x, start,
                              std::min(start + size, n), a.dim));
  }
  // torch.diag_embed(x, offset, -2, -1): the last dim on diagonal `offset` of a square matrix.
  case Op::DiagEmbed: {
    const std::int64_t n = xs[xs.rank() - 1];
    const std::int64_t off = a.times;
    return assign(fmt::format("jnp.zeros({}, {}.dtype).at[..., jnp.arange({}) + {}, jnp.arange({}) "
                              "+ {}].set({})",
                              tuple(dims_of(p.shape_of(r))), x, n, off < 0 ? -off : 0, n,
                              off > 0 ? off : 0, x));
  }
  case Op::Bmm: return assign(fmt::format("jnp.matmul({}, {})", x, y));
  // JAX arrays have no strides: a layout is the identity.
  case Op::Relayout: return assign(x);
  }
  unsupported = std::string(op_name(in.op));
  return "";
}

} // namespace

PythonFunction jax_function(const Program& program) {
  PythonFunction fn;
  std::string params;
  for (Reg r : program.leaf_registers())
    params += (params.empty() ? "" : ", ") + reg(r);
  std::string body;
  for (std::size_t i = 0; i < program.stmts.size(); ++i) {
    const Stmt& s = program.stmts[i];
    const Reg r = static_cast<Reg>(i);
    switch (s.kind) {
    case StmtKind::Leaf: break;
    case StmtKind::Alias: body += fmt::format("    {} = {}\n", reg(r), reg(s.source)); break;
    case StmtKind::Op: {
      const std::string line = statement(program, r, s.instr, fn.unsupported);
      if (!fn.unsupported.empty()) return PythonFunction{{}, fn.unsupported};
      body += "    " + line + "\n";
      break;
    }
    }
  }
  fn.source = fmt::format("def program({}):\n{}    return {}\n", params, body, reg(program.root));
  return fn;
}

} // namespace burnmark
