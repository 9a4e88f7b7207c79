// Each BurnMark op mapped to the LibTorch call with the same semantics, plus leaf creation,
// backward and read-out. Nothing is caught here: the driver turns LibTorch's exceptions
// (c10::Error is a std::exception) into the backend's Error outcome.
// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include "libtorch_framework.h"

#include "burnmark/ir/shape_rules.h"
#include <ATen/MemoryOverlap.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/forward_grad.h>

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/normalization.h>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace burnmark {
namespace {

c10::IntArrayRef sizes_of(const Shape& shape) {
  return {shape.data(), static_cast<std::size_t>(shape.rank())};
}

Shape shape_of(const torch::Tensor& t) {
  if (t.dim() > kMaxRank)
    throw std::runtime_error(fmt::format("libtorch returned a tensor of rank {}", t.dim()));
  Shape s;
  for (std::int64_t d : t.sizes())
    s.push_back(d);
  return s;
}

} // namespace

void LibTorchFramework::leave_dual_level() {
  if (!dual_level_) return;
  torch::autograd::ForwardADLevel::release_idx(*dual_level_);
  dual_level_.reset();
}

void LibTorchFramework::reset(const Program& program) {
  leave_dual_level();
  switch (program.float_dtype) {
  case FloatDType::F32: float_type_ = torch::kFloat32; break;
  case FloatDType::BF16: float_type_ = torch::kBFloat16; break;
  case FloatDType::F16: float_type_ = torch::kFloat16; break;
  case FloatDType::F64: float_type_ = torch::kFloat64; break;
  }
}

torch::Tensor LibTorchFramework::leaf(const Leaf& leaf, bool track_gradient) {
  // A fresh buffer rather than from_blob: the program's data must not be aliased by a tensor
  // that outlives it, and memcpy keeps every bit (NaN payloads, -0, subnormals).
  if (leaf.dtype == DType::I64) {
    torch::Tensor t =
        torch::empty(sizes_of(leaf.shape), torch::TensorOptions().dtype(torch::kInt64));
    std::memcpy(t.data_ptr<std::int64_t>(), leaf.indices.data(),
                leaf.indices.size() * sizeof(std::int64_t));
    return t;
  }
  torch::Tensor t =
      torch::empty(sizes_of(leaf.shape), torch::TensorOptions().dtype(torch::kFloat64));
  std::memcpy(t.data_ptr<double>(), leaf.data.data(), leaf.data.size() * sizeof(double));
  // Exact: a program's leaf values are representable in its dtype (validate).
  if (float_type_ != torch::kFloat64) t = t.to(float_type_);
  if (!leaf.layout.contiguous()) t = with_leaf_layout(t, leaf.layout);
  if (track_gradient) t.set_requires_grad(true);
  return t;
}

torch::Tensor with_layout(const torch::Tensor& values, const LeafLayout& layout) {
  const Shape shape = shape_of(values);
  const StridedView view = strided_view(layout, shape);
  const c10::IntArrayRef strides(view.strides.data(), static_cast<std::size_t>(shape.rank()));
  // NaN where no element of the view lies, so that a kernel reading past its view shows.
  const torch::Tensor buffer =
      torch::full({view.storage_size}, std::numeric_limits<double>::quiet_NaN(),
                  values.options().requires_grad(false));
  // The buffer's own elements: index 0 along expanded dims (whose values are all equal).
  torch::Tensor compact = values;
  if (layout.kind == LayoutKind::Expanded)
    for (int d : layout.dims)
      compact = compact.narrow(d, 0, 1);
  // Out of place (as_strided_scatter, not copy_ into a view), so that reverse and forward mode
  // both flow from the view through the buffer back to `values`.
  return at::as_strided_scatter(buffer, compact, compact.sizes(), strides, view.storage_offset)
      .as_strided(sizes_of(shape), strides, view.storage_offset);
}

torch::Tensor with_leaf_layout(const torch::Tensor& values, const LeafLayout& layout) {
  // detach(): the view is a leaf of its own, with its strides and offset, not a view autograd
  // would route back to the buffer.
  return with_layout(values.detach(), layout).detach();
}

torch::Tensor LibTorchFramework::apply(const Instr& instr, std::span<const Tensor* const> operands,
                                       const Shape& shape) {
  const torch::Tensor& x = *operands[0];
  const Attrs& a = instr.attrs;
  // Only ops of arity 2 and 3 may read operands[1], only where operands[2].
  const auto y = [&]() -> const torch::Tensor& { return *operands[1]; };
  const auto z = [&]() -> const torch::Tensor& { return *operands[2]; };
  torch::Tensor out;
  switch (instr.op) {
  case Op::Add: out = torch::add(x, y()); break;
  case Op::Sub: out = torch::sub(x, y()); break;
  case Op::Mul: out = torch::mul(x, y()); break;
  case Op::Div: out = torch::div(x, y()); break;
  case Op::Neg: out = torch::neg(x); break;
  case Op::Abs: out = torch::abs(x); break;
  case Op::Exp: out = torch::exp(x); break;
  case Op::Log: out = torch::log(x); break;
  case Op::Sqrt: out = torch::sqrt(x); break;
  // A Scalar exponent, not a tensor: LibTorch's special cases (sqrt, rsqrt, x*x, ...) only
  // run on this overload, and they are part of what is under test.
  case Op::Pow: out = torch::pow(x, a.exponent); break;
  case Op::Relu: out = torch::relu(x); break;
  case Op::Sigmoid: out = torch::sigmoid(x); break;
  case Op::Tanh: out = torch::tanh(x); break;
  case Op::SumAll: out = torch::sum(x); break;
  case Op::MeanAll: out = torch::mean(x); break;
  case Op::SumDim: out = torch::sum(x, {a.dim}, a.keepdim); break;
  case Op::MeanDim: out = torch::mean(x, {a.dim}, a.keepdim); break;
  case Op::Transpose: out = torch::transpose(x, a.dim, a.dim1); break;
  case Op::Concat: out = torch::cat({x, y()}, a.dim); break;
  case Op::Repeat: {
    std::vector<std::int64_t> reps(static_cast<std::size_t>(x.dim()), 1);
    reps[static_cast<std::size_t>(a.dim)] = a.times;
    out = x.repeat(reps);
    break;
  }
  case Op::Matmul: out = torch::matmul(x, y()); break;
  case Op::Clamp: out = torch::clamp(x, a.lo, a.hi); break;
  case Op::Sin: out = torch::sin(x); break;
  case Op::Cos: out = torch::cos(x); break;
  case Op::Tan: out = torch::tan(x); break;
  case Op::Asin: out = torch::asin(x); break;
  case Op::Acos: out = torch::acos(x); break;
  case Op::Atan: out = torch::atan(x); break;
  case Op::Sinh: out = torch::sinh(x); break;
  case Op::Cosh: out = torch::cosh(x); break;
  case Op::Asinh: out = torch::asinh(x); break;
  case Op::Acosh: out = torch::acosh(x); break;
  case Op::Atanh: out = torch::atanh(x); break;
  case Op::Erf: out = torch::erf(x); break;
  case Op::Erfc: out = torch::erfc(x); break;
  case Op::Erfinv: out = torch::erfinv(x); break;
  case Op::Log1p: out = torch::log1p(x); break;
  case Op::Expm1: out = torch::expm1(x); break;
  case Op::Log2: out = torch::log2(x); break;
  case Op::Log10: out = torch::log10(x); break;
  case Op::Exp2: out = torch::exp2(x); break;
  case Op::Rsqrt: out = torch::rsqrt(x); break;
  case Op::Reciprocal: out = torch::reciprocal(x); break;
  case Op::Square: out = torch::square(x); break;
  case Op::Sign: out = torch::sign(x); break;
  case Op::Sgn: out = torch::sgn(x); break;
  case Op::Floor: out = torch::floor(x); break;
  case Op::Ceil: out = torch::ceil(x); break;
  case Op::Round: out = torch::round(x); break;
  case Op::Trunc: out = torch::trunc(x); break;
  case Op::Frac: out = torch::frac(x); break;
  case Op::Lgamma: out = torch::lgamma(x); break;
  case Op::Digamma: out = torch::digamma(x); break;
  case Op::ClampMin: out = torch::clamp(x, a.lo, c10::nullopt); break;
  case Op::ClampMax: out = torch::clamp(x, c10::nullopt, a.hi); break;
  case Op::LogSigmoid: out = torch::log_sigmoid(x); break;
  case Op::Softplus: out = torch::softplus(x, a.beta, a.threshold); break;
  case Op::Gelu: out = torch::gelu(x, a.variant == 1 ? "tanh" : "none"); break;
  case Op::Silu: out = torch::silu(x); break;
  case Op::Mish: out = torch::mish(x); break;
  case Op::Elu: out = torch::elu(x, a.alpha); break;
  case Op::Selu: out = torch::selu(x); break;
  case Op::Celu: out = torch::celu(x, a.alpha); break;
  case Op::LeakyRelu: out = torch::leaky_relu(x, a.slope); break;
  case Op::Hardtanh: out = torch::hardtanh(x, a.lo, a.hi); break;
  case Op::Relu6: out = torch::relu6(x); break;
  case Op::Hardsigmoid: out = torch::hardsigmoid(x); break;
  case Op::Hardswish: out = torch::hardswish(x); break;
  case Op::Softsign: out = torch::nn::functional::softsign(x); break;
  case Op::Hardshrink: out = torch::hardshrink(x, a.lambd); break;
  case Op::Softshrink: out = torch::softshrink(x, a.lambd); break;
  case Op::Tanhshrink: out = torch::nn::functional::tanhshrink(x); break;
  case Op::Logit:
    out = torch::logit(x, a.variant == 1 ? c10::optional<double>(a.eps) : c10::nullopt);
    break;
  case Op::Maximum: out = torch::maximum(x, y()); break;
  case Op::Minimum: out = torch::minimum(x, y()); break;
  case Op::Fmax: out = torch::fmax(x, y()); break;
  case Op::Fmin: out = torch::fmin(x, y()); break;
  case Op::Atan2: out = torch::atan2(x, y()); break;
  case Op::PowTensor: out = torch::pow(x, y()); break;
  case Op::Remainder: out = torch::remainder(x, y()); break;
  case Op::Fmod: out = torch::fmod(x, y()); break;
  case Op::DivRounded: out = torch::div(x, y(), a.variant == 1 ? "floor" : "trunc"); break;
  case Op::Hypot: out = torch::hypot(x, y()); break;
  case Op::Xlogy: out = torch::xlogy(x, y()); break;
  case Op::Copysign: out = torch::copysign(x, y()); break;
  case Op::Lerp: out = torch::lerp(x, y(), a.weight); break;
  case Op::Lt: out = torch::lt(x, y()); break;
  case Op::Le: out = torch::le(x, y()); break;
  case Op::Gt: out = torch::gt(x, y()); break;
  case Op::Ge: out = torch::ge(x, y()); break;
  case Op::Eq: out = torch::eq(x, y()); break;
  case Op::Ne: out = torch::ne(x, y()); break;
  case Op::Where: out = torch::where(x, y(), z()); break;
  case Op::Prod: out = torch::prod(x); break;
  case Op::Amax: out = torch::amax(x, c10::IntArrayRef{}); break;
  case Op::Amin: out = torch::amin(x, c10::IntArrayRef{}); break;
  case Op::Max: out = torch::max(x); break;
  case Op::Min: out = torch::min(x); break;
  case Op::Var: out = torch::var(x, c10::nullopt, c10::optional<std::int64_t>(a.variant)); break;
  case Op::Std: out = torch::std(x, c10::nullopt, c10::optional<std::int64_t>(a.variant)); break;
  case Op::VectorNorm: out = torch::linalg_vector_norm(x, a.exponent); break;
  case Op::ProdDim: out = torch::prod(x, a.dim, a.keepdim); break;
  case Op::AmaxDim: out = torch::amax(x, {a.dim}, a.keepdim); break;
  case Op::AminDim: out = torch::amin(x, {a.dim}, a.keepdim); break;
  case Op::MaxDim: out = std::get<0>(torch::max(x, a.dim, a.keepdim)); break;
  case Op::MinDim: out = std::get<0>(torch::min(x, a.dim, a.keepdim)); break;
  case Op::VarDim:
    out = torch::var(x, c10::IntArrayRef{a.dim}, c10::optional<std::int64_t>(a.variant), a.keepdim);
    break;
  case Op::StdDim:
    out = torch::std(x, c10::IntArrayRef{a.dim}, c10::optional<std::int64_t>(a.variant), a.keepdim);
    break;
  case Op::Logsumexp: out = torch::logsumexp(x, {a.dim}, a.keepdim); break;
  case Op::NormDim:
    out = torch::linalg_vector_norm(x, a.exponent, c10::IntArrayRef{a.dim}, a.keepdim);
    break;
  case Op::Cumsum: out = torch::cumsum(x, a.dim); break;
  case Op::Cumprod: out = torch::cumprod(x, a.dim); break;
  case Op::Logcumsumexp: out = torch::logcumsumexp(x, a.dim); break;
  case Op::Softmax: out = torch::softmax(x, a.dim); break;
  case Op::LogSoftmax: out = torch::log_softmax(x, a.dim); break;
  case Op::Normalize:
    out = torch::nn::functional::normalize(
        x, torch::nn::functional::NormalizeFuncOptions().p(a.exponent).dim(a.dim));
    break;
  case Op::CosineSimilarity: out = torch::cosine_similarity(x, y(), a.dim); break;
  case Op::Mm: out = torch::mm(x, y()); break;
  case Op::Mv: out = torch::mv(x, y()); break;
  case Op::Dot: out = torch::dot(x, y()); break;
  case Op::Outer: out = torch::outer(x, y()); break;
  case Op::Addmm: out = torch::addmm(x, y(), z(), a.beta, a.alpha); break;
  case Op::Trace: out = torch::trace(x); break;
  case Op::Det: out = torch::linalg_det(x); break;
  case Op::Slogdet: out = std::get<1>(torch::linalg_slogdet(x)); break;
  case Op::Inv: out = torch::linalg_inv(x); break;
  case Op::Flip: out = torch::flip(x, {a.dim}); break;
  case Op::Roll: out = torch::roll(x, {a.times}, {a.dim}); break;
  case Op::Unsqueeze: out = torch::unsqueeze(x, a.dim); break;
  case Op::Squeeze: out = torch::squeeze(x, a.dim); break;
  case Op::Tril: out = torch::tril(x, a.times); break;
  case Op::Triu: out = torch::triu(x, a.times); break;
  case Op::Movedim: out = torch::movedim(x, a.dim, a.dim1); break;
  case Op::Narrow: out = torch::narrow(x, a.dim, a.dim1, a.times); break;
  case Op::Select: out = torch::select(x, a.dim, a.dim1); break;
  case Op::Expand: {
    std::vector<std::int64_t> sizes(x.sizes().begin(), x.sizes().end());
    sizes[static_cast<std::size_t>(a.dim)] = a.times;
    out = x.expand(sizes);
    break;
  }
  case Op::Diagonal: out = torch::diagonal(x, a.times, a.dim, a.dim1); break;
  case Op::Gather: out = torch::gather(x, a.dim, y()); break;
  case Op::IndexSelect: out = torch::index_select(x, a.dim, y()); break;
  case Op::TakeAlongDim: out = torch::take_along_dim(x, y(), a.dim); break;
  case Op::ScatterAdd: out = torch::scatter_add(x, a.dim, y(), z()); break;
  case Op::ScatterReduce:
    out = torch::scatter_reduce(
        x, a.dim, y(), z(), std::string(kScatterReduceNames[static_cast<std::size_t>(a.variant)]),
        a.include_self);
    break;
  case Op::MaskedFill: out = torch::masked_fill(x, y(), a.fill); break;
  case Op::IndexAdd: out = torch::index_add(x, a.dim, y(), z()); break;
  case Op::IndexCopy: out = torch::index_copy(x, a.dim, y(), z()); break;
  case Op::IndexFill: out = torch::index_fill(x, a.dim, y(), a.fill); break;
  case Op::IndexPut:
    out = torch::index_put(x, c10::List<c10::optional<torch::Tensor>>{y()}, z(), a.variant != 0);
    break;
  case Op::MaskedScatter: out = torch::masked_scatter(x, y(), z()); break;
  case Op::Reshape: out = torch::reshape(x, sizes_of(shape)); break;
  case Op::Permute: {
    const auto dims = *permutation_dims(a.times, static_cast<int>(x.dim()));
    out = x.permute(std::vector<std::int64_t>(dims.begin(), dims.begin() + x.dim()));
    break;
  }
  case Op::Slice: out = x.slice(a.dim, a.dim1, a.times, a.variant); break;
  case Op::Stack: out = torch::stack({x, y()}, a.dim); break;
  case Op::Chunk: out = torch::chunk(x, a.times, a.dim).at(static_cast<std::size_t>(a.dim1)); break;
  case Op::DiagEmbed: out = torch::diag_embed(x, a.times, -2, -1); break;
  case Op::Bmm: out = torch::bmm(x, y()); break;
  case Op::Relayout: out = with_layout(x, attrs_layout(a)); break;
  }
  if (out.sizes() != sizes_of(shape)) {
    throw std::runtime_error(fmt::format("libtorch {} returned shape {} where {} was inferred",
                                         op_name(instr.op), shape_of(out).to_string(),
                                         shape.to_string()));
  }
  return out;
}

torch::Tensor LibTorchFramework::from_host(const HostTensor& host) const {
  // The doubles viewed, then copied in the program's dtype; exact in every one (leaf_tangent).
  return torch::from_blob(const_cast<double*>(host.values.data()), sizes_of(host.shape),
                          torch::kFloat64)
      .to(float_type_, /*non_blocking=*/false, /*copy=*/true); // f64 too: never a view
}

torch::Tensor LibTorchFramework::dual(const Tensor& primal, const HostTensor& tangent) {
  if (!dual_level_) dual_level_ = torch::autograd::ForwardADLevel::get_next_idx();
  // LibTorch gives a tangent its primal's layout, which an expanded leaf's stride 0 cannot hold
  // for a tangent that varies along the expanded dim (it refuses: "more than one element of the
  // written-to tensor refers to a single memory location"). The dual is then of a contiguous
  // copy, a differentiable one, so reverse mode still reaches the expanded leaf itself.
  const bool overlapping = at::has_internal_overlap(primal) == at::MemOverlap::Yes;
  return at::_make_dual(overlapping ? primal.clone(at::MemoryFormat::Contiguous) : primal,
                        from_host(tangent), static_cast<std::int64_t>(*dual_level_));
}

std::vector<std::optional<HostTensor>>
LibTorchFramework::hessian_vector(const Tensor& root, std::span<const Tensor> leaves,
                                  std::span<const HostTensor> directions) {
  leave_dual_level(); // reverse over reverse, as backward() is run
  std::vector<std::optional<HostTensor>> out(leaves.size());
  std::vector<torch::Tensor> inputs;
  std::vector<std::size_t> leaf_of;
  for (std::size_t k = 0; k < leaves.size(); ++k)
    if (leaves[k].requires_grad()) {
      inputs.push_back(leaves[k]);
      leaf_of.push_back(k);
    }
  if (inputs.empty() || !root.requires_grad()) return out;
  const std::vector<torch::Tensor> grads =
      torch::autograd::grad({root}, inputs, {torch::ones_like(root)}, /*retain_graph=*/true,
                            /*create_graph=*/true, /*allow_unused=*/true);
  torch::Tensor objective;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    // A gradient that does not depend on the leaves (a linear program's) has no second order.
    if (!grads[i].defined() || !grads[i].requires_grad()) continue;
    const torch::Tensor term = (grads[i] * from_host(directions[leaf_of[i]])).sum();
    objective = objective.defined() ? objective + term : term;
  }
  if (!objective.defined()) return out;
  const std::vector<torch::Tensor> hv =
      torch::autograd::grad({objective}, inputs, {}, /*retain_graph=*/true,
                            /*create_graph=*/false, /*allow_unused=*/true);
  for (std::size_t i = 0; i < hv.size(); ++i)
    if (hv[i].defined()) out[leaf_of[i]] = read(hv[i]);
  return out;
}

HostTensor LibTorchFramework::tangent(const Tensor& t) {
  torch::Tensor tangent;
  if (dual_level_)
    tangent = std::get<1>(at::_unpack_dual(t, static_cast<std::int64_t>(*dual_level_)));
  // No tangent reached the root: its derivative is zero, as a gradient that never arrives.
  if (!tangent.defined()) tangent = torch::zeros_like(t.detach());
  return read(tangent);
}

void LibTorchFramework::backward(const Tensor& root) {
  // The driver has read the tangent by now. Left open, the level would make backward's own
  // formulas run forward-mode on the dual inputs they saved (forward-over-reverse), which is
  // not what reverse mode is being tested for, and raises where those formulas have none.
  leave_dual_level();
  root.backward(torch::ones_like(root));
}

std::optional<HostTensor> LibTorchFramework::grad(const Tensor& t) {
  const torch::Tensor& g = t.grad();
  if (!g.defined()) return std::nullopt;
  return read(g);
}

HostTensor LibTorchFramework::read(const Tensor& t) {
  // A silent dtype promotion would be a LibTorch finding, not something to convert away.
  if (t.scalar_type() != float_type_)
    throw std::runtime_error(fmt::format("libtorch returned dtype {}, not {}",
                                         c10::toString(t.scalar_type()),
                                         c10::toString(float_type_)));
  torch::Tensor c = t.detach().contiguous();
  // sgn's backward hands autograd an "efficient zero tensor", which reaches a leaf's .grad
  // without storage; its values are zeros (read through a copy, as printing it would).
  if (c._is_zerotensor()) c = torch::zeros(c.sizes(), c.options().dtype(torch::kFloat32));
  HostTensor out;
  out.shape = shape_of(c);
  if (c.scalar_type() == torch::kFloat64) {
    const double* p = c.data_ptr<double>();
    out.values.assign(p, p + c.numel());
    return out;
  }
  // Widening to f32 is exact for bf16 and f16.
  if (c.scalar_type() != torch::kFloat32) c = c.to(torch::kFloat32);
  const float* p = c.data_ptr<float>();
  out.values.assign(p, p + c.numel());
  return out;
}

} // namespace burnmark
