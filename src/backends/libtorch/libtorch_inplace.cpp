// Each op's in-place form for libtorch-inplace (libtorch_inplace.h), or the functional call.
#include "libtorch_inplace.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/inplace_form.h"
#include "burnmark/ir/shape_rules.h"

namespace burnmark {

std::vector<std::int64_t> inplace_destination_strides(c10::IntArrayRef sizes, int reg) {
  // Dense strides in the register's dim order (row-major, or the dims reversed in memory), each
  // doubled: every other element of the buffer.
  const auto rank = static_cast<std::int64_t>(sizes.size());
  std::vector<std::int64_t> strides(sizes.size());
  std::int64_t step = 2;
  for (std::int64_t k = 0; k < rank; ++k) {
    const std::int64_t d = reg % 2 == 0 ? rank - 1 - k : k;
    strides[static_cast<std::size_t>(d)] = step;
    step *= std::max<std::int64_t>(sizes[static_cast<std::size_t>(d)], 1);
  }
  return strides;
}

torch::Tensor inplace_destination(const torch::Tensor& x, int reg) {
  // A plain buffer that needs no gradient: copy_ makes the view (and the buffer) part of the
  // graph through CopySlices, and the in-place op after it rebases the view's grad_fn.
  const torch::Tensor buffer = torch::zeros({2 * x.numel() + 1}, x.options());
  torch::Tensor dest = buffer.as_strided(x.sizes(), inplace_destination_strides(x.sizes(), reg),
                                         kInplaceStorageOffset);
  dest.copy_(x);
  return dest;
}

torch::Tensor LibTorchInplaceFramework::apply(const Instr& instr,
                                              std::span<const Tensor* const> operands,
                                              const Shape& shape) {
  const int reg = next_register_++;
  const torch::Tensor& x = *operands[0];
  const Attrs& a = instr.attrs;
  const auto y = [&]() -> const torch::Tensor& { return *operands[1]; };
  const auto z = [&]() -> const torch::Tensor& { return *operands[2]; };
  const auto functional = [&] { return eager_.apply(instr, operands, shape); };
  // The destination is what the in-place form overwrites: a view of a fresh buffer holding x's
  // values, so autograd allows the write, the operand itself (perhaps a leaf, perhaps aliased)
  // is left as it was, and the kernel writes through strides and a storage offset.
  const auto in_place = [&](auto&& op) {
    torch::Tensor out = inplace_destination(x, reg);
    op(out);
    return out;
  };
  // A binary form writes into the first operand, so the result must have its shape; which ops
  // run in place is runs_in_place's decision (burnmark/ir/inplace_form.h), shared with the
  // Python reproducer's in-place path, so this switch only spells each form.
  const bool fits =
      x.sizes() == c10::IntArrayRef(shape.data(), static_cast<std::size_t>(shape.rank()));
  if (!runs_in_place(instr, fits)) return functional();
  switch (instr.op) {
  case Op::Neg: return in_place([](torch::Tensor& t) { t.neg_(); });
  case Op::Abs: return in_place([](torch::Tensor& t) { t.abs_(); });
  case Op::Exp: return in_place([](torch::Tensor& t) { t.exp_(); });
  case Op::Log: return in_place([](torch::Tensor& t) { t.log_(); });
  case Op::Sqrt: return in_place([](torch::Tensor& t) { t.sqrt_(); });
  case Op::Pow: return in_place([&](torch::Tensor& t) { t.pow_(a.exponent); });
  case Op::Relu: return in_place([](torch::Tensor& t) { t.relu_(); });
  case Op::Sigmoid: return in_place([](torch::Tensor& t) { t.sigmoid_(); });
  case Op::Tanh: return in_place([](torch::Tensor& t) { t.tanh_(); });
  case Op::Clamp: return in_place([&](torch::Tensor& t) { t.clamp_(a.lo, a.hi); });
  case Op::Sin: return in_place([](torch::Tensor& t) { t.sin_(); });
  case Op::Cos: return in_place([](torch::Tensor& t) { t.cos_(); });
  case Op::Tan: return in_place([](torch::Tensor& t) { t.tan_(); });
  case Op::Asin: return in_place([](torch::Tensor& t) { t.asin_(); });
  case Op::Acos: return in_place([](torch::Tensor& t) { t.acos_(); });
  case Op::Atan: return in_place([](torch::Tensor& t) { t.atan_(); });
  case Op::Sinh: return in_place([](torch::Tensor& t) { t.sinh_(); });
  case Op::Cosh: return in_place([](torch::Tensor& t) { t.cosh_(); });
  case Op::Erf: return in_place([](torch::Tensor& t) { t.erf_(); });
  case Op::Erfc: return in_place([](torch::Tensor& t) { t.erfc_(); });
  case Op::Erfinv: return in_place([](torch::Tensor& t) { t.erfinv_(); });
  case Op::Log1p: return in_place([](torch::Tensor& t) { t.log1p_(); });
  case Op::Expm1: return in_place([](torch::Tensor& t) { t.expm1_(); });
  case Op::Log2: return in_place([](torch::Tensor& t) { t.log2_(); });
  case Op::Log10: return in_place([](torch::Tensor& t) { t.log10_(); });
  case Op::Exp2: return in_place([](torch::Tensor& t) { t.exp2_(); });
  case Op::Rsqrt: return in_place([](torch::Tensor& t) { t.rsqrt_(); });
  case Op::Reciprocal: return in_place([](torch::Tensor& t) { t.reciprocal_(); });
  case Op::Square: return in_place([](torch::Tensor& t) { t.square_(); });
  case Op::Sign: return in_place([](torch::Tensor& t) { t.sign_(); });
  case Op::Sgn: return in_place([](torch::Tensor& t) { t.sgn_(); });
  case Op::Floor: return in_place([](torch::Tensor& t) { t.floor_(); });
  case Op::Ceil: return in_place([](torch::Tensor& t) { t.ceil_(); });
  case Op::Round: return in_place([](torch::Tensor& t) { t.round_(); });
  case Op::Trunc: return in_place([](torch::Tensor& t) { t.trunc_(); });
  case Op::Frac: return in_place([](torch::Tensor& t) { t.frac_(); });
  case Op::Lgamma: return in_place([](torch::Tensor& t) { t.lgamma_(); });
  case Op::Digamma: return in_place([](torch::Tensor& t) { t.digamma_(); });
  case Op::ClampMin: return in_place([&](torch::Tensor& t) { t.clamp_(a.lo, c10::nullopt); });
  case Op::ClampMax: return in_place([&](torch::Tensor& t) { t.clamp_(c10::nullopt, a.hi); });
  case Op::Silu: return in_place([](torch::Tensor& t) { torch::silu_(t); });
  case Op::Mish: return in_place([](torch::Tensor& t) { torch::mish_(t); });
  case Op::Elu: return in_place([&](torch::Tensor& t) { torch::elu_(t, a.alpha); });
  case Op::Selu: return in_place([](torch::Tensor& t) { torch::selu_(t); });
  case Op::Celu: return in_place([&](torch::Tensor& t) { torch::celu_(t, a.alpha); });
  case Op::LeakyRelu: return in_place([&](torch::Tensor& t) { torch::leaky_relu_(t, a.slope); });
  case Op::Hardtanh: return in_place([&](torch::Tensor& t) { torch::hardtanh_(t, a.lo, a.hi); });
  case Op::Relu6: return in_place([](torch::Tensor& t) { torch::relu6_(t); });
  case Op::Hardsigmoid: return in_place([](torch::Tensor& t) { torch::hardsigmoid_(t); });
  case Op::Hardswish: return in_place([](torch::Tensor& t) { torch::hardswish_(t); });
  case Op::Logit:
    return in_place([&](torch::Tensor& t) {
      t.logit_(a.variant == 1 ? c10::optional<double>(a.eps) : c10::nullopt);
    });
  case Op::Cumsum: return in_place([&](torch::Tensor& t) { t.cumsum_(a.dim); });
  case Op::Cumprod: return in_place([&](torch::Tensor& t) { t.cumprod_(a.dim); });
  case Op::Tril: return in_place([&](torch::Tensor& t) { t.tril_(a.times); });
  case Op::Triu: return in_place([&](torch::Tensor& t) { t.triu_(a.times); });
  case Op::Add: return in_place([&](torch::Tensor& t) { t.add_(y()); });
  case Op::Sub: return in_place([&](torch::Tensor& t) { t.sub_(y()); });
  case Op::Mul: return in_place([&](torch::Tensor& t) { t.mul_(y()); });
  case Op::Div: return in_place([&](torch::Tensor& t) { t.div_(y()); });
  case Op::PowTensor: return in_place([&](torch::Tensor& t) { t.pow_(y()); });
  case Op::Atan2: return in_place([&](torch::Tensor& t) { t.atan2_(y()); });
  case Op::Remainder: return in_place([&](torch::Tensor& t) { t.remainder_(y()); });
  case Op::Fmod: return in_place([&](torch::Tensor& t) { t.fmod_(y()); });
  case Op::DivRounded:
    return in_place([&](torch::Tensor& t) { t.div_(y(), a.variant == 1 ? "floor" : "trunc"); });
  case Op::Hypot: return in_place([&](torch::Tensor& t) { t.hypot_(y()); });
  case Op::Xlogy: return in_place([&](torch::Tensor& t) { t.xlogy_(y()); });
  case Op::Copysign: return in_place([&](torch::Tensor& t) { t.copysign_(y()); });
  case Op::Lerp: return in_place([&](torch::Tensor& t) { t.lerp_(y(), a.weight); });
  case Op::MaskedFill: return in_place([&](torch::Tensor& t) { t.masked_fill_(y(), a.fill); });
  case Op::ScatterAdd: return in_place([&](torch::Tensor& t) { t.scatter_add_(a.dim, y(), z()); });
  case Op::IndexAdd: return in_place([&](torch::Tensor& t) { t.index_add_(a.dim, y(), z()); });
  case Op::IndexCopy: return in_place([&](torch::Tensor& t) { t.index_copy_(a.dim, y(), z()); });
  case Op::IndexFill: return in_place([&](torch::Tensor& t) { t.index_fill_(a.dim, y(), a.fill); });
  case Op::IndexPut:
    return in_place([&](torch::Tensor& t) {
      t.index_put_(c10::List<c10::optional<torch::Tensor>>{y()}, z(), a.variant != 0);
    });
  case Op::MaskedScatter: return in_place([&](torch::Tensor& t) { t.masked_scatter_(y(), z()); });
  case Op::ScatterReduce:
    return in_place([&](torch::Tensor& t) {
      t.scatter_reduce_(a.dim, y(), z(),
                        std::string(kScatterReduceNames[static_cast<std::size_t>(a.variant)]),
                        a.include_self);
    });
  // runs_in_place has the exhaustive switch; an op it sends here without a form above is a
  // BurnMark bug, not a LibTorch finding.
  default: break;
  }
  throw std::logic_error(fmt::format("libtorch-inplace: runs_in_place chose the in-place form of "
                                     "{}, which this backend does not spell",
                                     op_name(instr.op)));
}

} // namespace burnmark
