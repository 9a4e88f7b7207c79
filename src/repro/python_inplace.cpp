// The in-place statements of the Python reproducer's Inplace path (python_inplace.h): each call
// spelled as src/backends/libtorch/libtorch_inplace.cpp makes it, on the destination view that
// inplace_destination() builds as that file's inplace_destination does.
#include "burnmark/repro/python_inplace.h"

#include <stdexcept>

#include <fmt/format.h>

#include "burnmark/ir/inplace_form.h"
#include "burnmark/ir/text.h"
#include "literals.h"

namespace burnmark {
namespace {

using repro_detail::literal;
using repro_detail::py_bool;
using repro_detail::reg;

} // namespace

std::optional<std::string> torch_python_inplace_call(const Instr& in, Reg result, bool fits) {
  if (!runs_in_place(in, fits)) return std::nullopt;
  const std::string d = reg(result);
  const std::string y = in.operands.size() > 1 ? reg(in.operands[1]) : "";
  const std::string z = in.operands.size() > 2 ? reg(in.operands[2]) : "";
  const Attrs& a = in.attrs;
  // A Tensor method with no argument, as `t.sin_()` in the backend.
  const auto method = [&](std::string_view name) { return fmt::format("{}.{}()", d, name); };
  // The same with the other operand: `t.add_(y())`.
  const auto with_y = [&](std::string_view name) { return fmt::format("{}.{}({})", d, name, y); };
  // The backend's torch::silu_(t) and its like: the ATen op itself (Python has them only under
  // torch._C._nn or as F.x(inplace=True), which may take another route).
  const auto aten = [&](std::string_view name, std::string args = "") {
    return fmt::format("torch.ops.aten.{}({}{})", name, d, args.empty() ? "" : ", " + args);
  };
  switch (in.op) {
  case Op::Neg: return method("neg_");
  case Op::Abs: return method("abs_");
  case Op::Exp: return method("exp_");
  case Op::Log: return method("log_");
  case Op::Sqrt: return method("sqrt_");
  case Op::Pow: return fmt::format("{}.pow_({})", d, literal(a.exponent));
  case Op::Relu: return method("relu_");
  case Op::Sigmoid: return method("sigmoid_");
  case Op::Tanh: return method("tanh_");
  case Op::Clamp: return fmt::format("{}.clamp_({}, {})", d, literal(a.lo), literal(a.hi));
  case Op::Sin: return method("sin_");
  case Op::Cos: return method("cos_");
  case Op::Tan: return method("tan_");
  case Op::Asin: return method("asin_");
  case Op::Acos: return method("acos_");
  case Op::Atan: return method("atan_");
  case Op::Sinh: return method("sinh_");
  case Op::Cosh: return method("cosh_");
  case Op::Erf: return method("erf_");
  case Op::Erfc: return method("erfc_");
  case Op::Erfinv: return method("erfinv_");
  case Op::Log1p: return method("log1p_");
  case Op::Expm1: return method("expm1_");
  case Op::Log2: return method("log2_");
  case Op::Log10: return method("log10_");
  case Op::Exp2: return method("exp2_");
  case Op::Rsqrt: return method("rsqrt_");
  case Op::Reciprocal: return method("reciprocal_");
  case Op::Square: return method("square_");
  case Op::Sign: return method("sign_");
  case Op::Sgn: return method("sgn_");
  case Op::Floor: return method("floor_");
  case Op::Ceil: return method("ceil_");
  case Op::Round: return method("round_");
  case Op::Trunc: return method("trunc_");
  case Op::Frac: return method("frac_");
  case Op::Lgamma: return method("lgamma_");
  case Op::Digamma: return method("digamma_");
  case Op::ClampMin: return fmt::format("{}.clamp_(min={})", d, literal(a.lo));
  case Op::ClampMax: return fmt::format("{}.clamp_(max={})", d, literal(a.hi));
  case Op::Silu: return aten("silu_");
  case Op::Mish: return aten("mish_");
  case Op::Elu: return aten("elu_", literal(a.alpha));
  case Op::Selu: return aten("selu_");
  case Op::Celu: return aten("celu_", literal(a.alpha));
  case Op::LeakyRelu: return aten("leaky_relu_", literal(a.slope));
  case Op::Hardtanh: return aten("hardtanh_", literal(a.lo) + ", " + literal(a.hi));
  case Op::Relu6: return aten("relu6_");
  case Op::Hardsigmoid: return aten("hardsigmoid_");
  case Op::Hardswish: return aten("hardswish_");
  case Op::Logit: return fmt::format("{}.logit_({})", d, a.variant == 1 ? literal(a.eps) : "");
  case Op::Cumsum: return fmt::format("{}.cumsum_({})", d, a.dim);
  case Op::Cumprod: return fmt::format("{}.cumprod_({})", d, a.dim);
  case Op::Tril: return fmt::format("{}.tril_({})", d, a.times);
  case Op::Triu: return fmt::format("{}.triu_({})", d, a.times);
  case Op::Add: return with_y("add_");
  case Op::Sub: return with_y("sub_");
  case Op::Mul: return with_y("mul_");
  case Op::Div: return with_y("div_");
  case Op::PowTensor: return with_y("pow_");
  case Op::Atan2: return with_y("atan2_");
  case Op::Remainder: return with_y("remainder_");
  case Op::Fmod: return with_y("fmod_");
  case Op::DivRounded:
    return fmt::format("{}.div_({}, rounding_mode={})", d, y,
                       a.variant == 1 ? "'floor'" : "'trunc'");
  case Op::Hypot: return with_y("hypot_");
  case Op::Xlogy: return with_y("xlogy_");
  case Op::Copysign: return with_y("copysign_");
  case Op::Lerp: return fmt::format("{}.lerp_({}, {})", d, y, literal(a.weight));
  case Op::MaskedFill: return fmt::format("{}.masked_fill_({}, {})", d, y, literal(a.fill));
  case Op::ScatterAdd: return fmt::format("{}.scatter_add_({}, {}, {})", d, a.dim, y, z);
  case Op::IndexAdd: return fmt::format("{}.index_add_({}, {}, {})", d, a.dim, y, z);
  case Op::IndexCopy: return fmt::format("{}.index_copy_({}, {}, {})", d, a.dim, y, z);
  case Op::IndexFill:
    return fmt::format("{}.index_fill_({}, {}, {})", d, a.dim, y, literal(a.fill));
  case Op::IndexPut:
    return fmt::format("{}.index_put_(({},), {}, accumulate={})", d, y, z, py_bool(a.variant != 0));
  case Op::MaskedScatter: return fmt::format("{}.masked_scatter_({}, {})", d, y, z);
  case Op::ScatterReduce:
    return fmt::format("{}.scatter_reduce_({}, {}, {}, \"{}\", include_self={})", d, a.dim, y, z,
                       kScatterReduceNames[static_cast<std::size_t>(a.variant)],
                       py_bool(a.include_self));
  // runs_in_place has the exhaustive switch (and libtorch_inplace.cpp throws for the same gap).
  default: break;
  }
  throw std::logic_error(fmt::format("the in-place reproducer has no Python spelling for {}_, "
                                     "which runs_in_place runs in place",
                                     op_name(in.op)));
}

std::optional<std::string> python_inplace_statement(const Program& p, Reg r,
                                                    const std::string& indent) {
  const Stmt& s = p.stmts[static_cast<std::size_t>(r)];
  const Reg x = s.instr.operands[0];
  const std::optional<std::string> call =
      torch_python_inplace_call(s.instr, r, p.shape_of(x) == s.shape);
  if (!call) return std::nullopt;
  return fmt::format("{0}{1} = inplace_destination({2}, {3})  # {4}\n{0}{5}\n", indent, reg(r),
                     reg(x), r, stmt_to_text(p, r), *call);
}

const char* const kInplaceDestinationHelper = R"(
def inplace_destination(x, reg):
    """Where libtorch-inplace's in-place form for register reg writes: a view of a fresh zero
    buffer of 2*numel+1 elements (no gradient of its own) at storage offset 1, each dim's stride
    twice the dense one, the dims row-major in memory for an even reg and reversed (the first
    dim fastest) for an odd one; x's values copied in with copy_, so gradients (and tangents)
    flow back to x."""
    sizes = list(x.shape)
    order = reversed(range(len(sizes))) if reg % 2 == 0 else range(len(sizes))
    strides = [0] * len(sizes)
    step = 2
    for d in order:
        strides[d] = step
        step *= max(sizes[d], 1)
    buffer = torch.zeros(2 * x.numel() + 1, dtype=x.dtype)
    dest = buffer.as_strided(sizes, strides, 1)
    dest.copy_(x)
    return dest

)";

} // namespace burnmark
