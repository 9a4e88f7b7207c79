// The C++ reproducer: one LibTorch call per SSA instruction, named like the registers, then the
// checks against the expected values; and the CMakeLists.txt that builds it.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/layout.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "literals.h"

namespace burnmark {
namespace {

using repro_detail::reg;

std::string dbl(double v) {
  return double_literal(v, "kNaN", "kInf");
}

std::string int_list(const Shape& s) {
  std::string out = "{";
  for (int i = 0; i < s.rank(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "}";
}

// The LibTorch call of one instruction: the same overloads the BurnMark backend uses, so that
// the same kernels (and fast paths such as pow's) run.
std::string call(const Program& p, const Instr& in) {
  const std::string x = reg(in.operands[0]);
  const std::string y = in.operands.size() > 1 ? reg(in.operands[1]) : "";
  const std::string z = in.operands.size() > 2 ? reg(in.operands[2]) : "";
  const Attrs& a = in.attrs;
  switch (in.op) {
  case Op::Add: return fmt::format("torch::add({}, {})", x, y);
  case Op::Sub: return fmt::format("torch::sub({}, {})", x, y);
  case Op::Mul: return fmt::format("torch::mul({}, {})", x, y);
  case Op::Div: return fmt::format("torch::div({}, {})", x, y);
  case Op::Neg: return fmt::format("torch::neg({})", x);
  case Op::Abs: return fmt::format("torch::abs({})", x);
  case Op::Exp: return fmt::format("torch::exp({})", x);
  case Op::Log: return fmt::format("torch::log({})", x);
  case Op::Sqrt: return fmt::format("torch::sqrt({})", x);
  case Op::Pow: return fmt::format("torch::pow({}, {})", x, dbl(a.exponent));
  case Op::Relu: return fmt::format("torch::relu({})", x);
  case Op::Sigmoid: return fmt::format("torch::sigmoid({})", x);
  case Op::Tanh: return fmt::format("torch::tanh({})", x);
  case Op::SumAll: return fmt::format("torch::sum({})", x);
  case Op::MeanAll: return fmt::format("torch::mean({})", x);
  case Op::SumDim:
    return fmt::format("torch::sum({}, {{{}}}, /*keepdim=*/{})", x, a.dim, a.keepdim);
  case Op::MeanDim:
    return fmt::format("torch::mean({}, {{{}}}, /*keepdim=*/{})", x, a.dim, a.keepdim);
  case Op::Transpose: return fmt::format("torch::transpose({}, {}, {})", x, a.dim, a.dim1);
  case Op::Concat: return fmt::format("torch::cat({{{}, {}}}, {})", x, y, a.dim);
  case Op::Repeat: {
    std::string reps;
    for (int i = 0; i < p.shape_of(in.operands[0]).rank(); ++i)
      reps += fmt::format("{}{}", i ? ", " : "", i == a.dim ? a.times : 1);
    return fmt::format("{}.repeat({{{}}})", x, reps);
  }
  case Op::Matmul: return fmt::format("torch::matmul({}, {})", x, y);
  case Op::Clamp: return fmt::format("torch::clamp({}, {}, {})", x, dbl(a.lo), dbl(a.hi));
  case Op::Sin: return fmt::format("torch::sin({})", x);
  case Op::Cos: return fmt::format("torch::cos({})", x);
  case Op::Tan: return fmt::format("torch::tan({})", x);
  case Op::Asin: return fmt::format("torch::asin({})", x);
  case Op::Acos: return fmt::format("torch::acos({})", x);
  case Op::Atan: return fmt::format("torch::atan({})", x);
  case Op::Sinh: return fmt::format("torch::sinh({})", x);
  case Op::Cosh: return fmt::format("torch::cosh({})", x);
  case Op::Asinh: return fmt::format("torch::asinh({})", x);
  case Op::Acosh: return fmt::format("torch::acosh({})", x);
  case Op::Atanh: return fmt::format("torch::atanh({})", x);
  case Op::Erf: return fmt::format("torch::erf({})", x);
  case Op::Erfc: return fmt::format("torch::erfc({})", x);
  case Op::Erfinv: return fmt::format("torch::erfinv({})", x);
  case Op::Log1p: return fmt::format("torch::log1p({})", x);
  case Op::Expm1: return fmt::format("torch::expm1({})", x);
  case Op::Log2: return fmt::format("torch::log2({})", x);
  case Op::Log10: return fmt::format("torch::log10({})", x);
  case Op::Exp2: return fmt::format("torch::exp2({})", x);
  case Op::Rsqrt: return fmt::format("torch::rsqrt({})", x);
  case Op::Reciprocal: return fmt::format("torch::reciprocal({})", x);
  case Op::Square: return fmt::format("torch::square({})", x);
  case Op::Sign: return fmt::format("torch::sign({})", x);
  case Op::Sgn: return fmt::format("torch::sgn({})", x);
  case Op::Floor: return fmt::format("torch::floor({})", x);
  case Op::Ceil: return fmt::format("torch::ceil({})", x);
  case Op::Round: return fmt::format("torch::round({})", x);
  case Op::Trunc: return fmt::format("torch::trunc({})", x);
  case Op::Frac: return fmt::format("torch::frac({})", x);
  case Op::Lgamma: return fmt::format("torch::lgamma({})", x);
  case Op::Digamma: return fmt::format("torch::digamma({})", x);
  case Op::ClampMin: return fmt::format("torch::clamp({}, {}, c10::nullopt)", x, dbl(a.lo));
  case Op::ClampMax: return fmt::format("torch::clamp({}, c10::nullopt, {})", x, dbl(a.hi));
  case Op::LogSigmoid: return fmt::format("torch::log_sigmoid({})", x);
  case Op::Softplus:
    return fmt::format("torch::softplus({}, {}, {})", x, dbl(a.beta), dbl(a.threshold));
  case Op::Gelu:
    return fmt::format("torch::gelu({}, {})", x, a.variant == 1 ? "\"tanh\"" : "\"none\"");
  case Op::Silu: return fmt::format("torch::silu({})", x);
  case Op::Mish: return fmt::format("torch::mish({})", x);
  case Op::Elu: return fmt::format("torch::elu({}, {})", x, dbl(a.alpha));
  case Op::Selu: return fmt::format("torch::selu({})", x);
  case Op::Celu: return fmt::format("torch::celu({}, {})", x, dbl(a.alpha));
  case Op::LeakyRelu: return fmt::format("torch::leaky_relu({}, {})", x, dbl(a.slope));
  case Op::Hardtanh: return fmt::format("torch::hardtanh({}, {}, {})", x, dbl(a.lo), dbl(a.hi));
  case Op::Relu6: return fmt::format("torch::relu6({})", x);
  case Op::Hardsigmoid: return fmt::format("torch::hardsigmoid({})", x);
  case Op::Hardswish: return fmt::format("torch::hardswish({})", x);
  case Op::Softsign: return fmt::format("torch::nn::functional::softsign({})", x);
  case Op::Hardshrink: return fmt::format("torch::hardshrink({}, {})", x, dbl(a.lambd));
  case Op::Softshrink: return fmt::format("torch::softshrink({}, {})", x, dbl(a.lambd));
  case Op::Tanhshrink: return fmt::format("torch::nn::functional::tanhshrink({})", x);
  case Op::Logit:
    return fmt::format("torch::logit({}, {})", x, a.variant == 1 ? dbl(a.eps) : "c10::nullopt");
  case Op::Maximum: return fmt::format("torch::maximum({}, {})", x, y);
  case Op::Minimum: return fmt::format("torch::minimum({}, {})", x, y);
  case Op::Fmax: return fmt::format("torch::fmax({}, {})", x, y);
  case Op::Fmin: return fmt::format("torch::fmin({}, {})", x, y);
  case Op::Atan2: return fmt::format("torch::atan2({}, {})", x, y);
  case Op::PowTensor: return fmt::format("torch::pow({}, {})", x, y);
  case Op::Remainder: return fmt::format("torch::remainder({}, {})", x, y);
  case Op::Fmod: return fmt::format("torch::fmod({}, {})", x, y);
  case Op::DivRounded:
    return fmt::format("torch::div({}, {}, {})", x, y, a.variant == 1 ? "\"floor\"" : "\"trunc\"");
  case Op::Hypot: return fmt::format("torch::hypot({}, {})", x, y);
  case Op::Xlogy: return fmt::format("torch::xlogy({}, {})", x, y);
  case Op::Copysign: return fmt::format("torch::copysign({}, {})", x, y);
  case Op::Lerp: return fmt::format("torch::lerp({}, {}, {})", x, y, dbl(a.weight));
  case Op::Lt: return fmt::format("torch::lt({}, {})", x, y);
  case Op::Le: return fmt::format("torch::le({}, {})", x, y);
  case Op::Gt: return fmt::format("torch::gt({}, {})", x, y);
  case Op::Ge: return fmt::format("torch::ge({}, {})", x, y);
  case Op::Eq: return fmt::format("torch::eq({}, {})", x, y);
  case Op::Ne: return fmt::format("torch::ne({}, {})", x, y);
  case Op::Where: return fmt::format("torch::where({}, {}, {})", x, y, z);
  case Op::Prod: return fmt::format("torch::prod({})", x);
  case Op::Amax: return fmt::format("torch::amax({}, c10::IntArrayRef{{}})", x);
  case Op::Amin: return fmt::format("torch::amin({}, c10::IntArrayRef{{}})", x);
  case Op::Max: return fmt::format("torch::max({})", x);
  case Op::Min: return fmt::format("torch::min({})", x);
  case Op::Var:
    return fmt::format("torch::var({}, c10::nullopt, /*correction=*/c10::optional<int64_t>({}))", x,
                       a.variant);
  case Op::Std:
    return fmt::format("torch::std({}, c10::nullopt, /*correction=*/c10::optional<int64_t>({}))", x,
                       a.variant);
  case Op::VectorNorm: return fmt::format("torch::linalg_vector_norm({}, {})", x, dbl(a.exponent));
  case Op::ProdDim: return fmt::format("torch::prod({}, {}, /*keepdim=*/{})", x, a.dim, a.keepdim);
  case Op::AmaxDim:
    return fmt::format("torch::amax({}, {{{}}}, /*keepdim=*/{})", x, a.dim, a.keepdim);
  case Op::AminDim:
    return fmt::format("torch::amin({}, {{{}}}, /*keepdim=*/{})", x, a.dim, a.keepdim);
  case Op::MaxDim:
    return fmt::format("std::get<0>(torch::max({}, {}, /*keepdim=*/{}))", x, a.dim, a.keepdim);
  case Op::MinDim:
    return fmt::format("std::get<0>(torch::min({}, {}, /*keepdim=*/{}))", x, a.dim, a.keepdim);
  case Op::VarDim:
    return fmt::format("torch::var({}, c10::IntArrayRef{{{}}}, /*correction=*/"
                       "c10::optional<int64_t>({}), /*keepdim=*/{})",
                       x, a.dim, a.variant, a.keepdim);
  case Op::StdDim:
    return fmt::format("torch::std({}, c10::IntArrayRef{{{}}}, /*correction=*/"
                       "c10::optional<int64_t>({}), /*keepdim=*/{})",
                       x, a.dim, a.variant, a.keepdim);
  case Op::Logsumexp:
    return fmt::format("torch::logsumexp({}, {{{}}}, /*keepdim=*/{})", x, a.dim, a.keepdim);
  case Op::NormDim:
    return fmt::format("torch::linalg_vector_norm({}, {}, c10::IntArrayRef{{{}}}, /*keepdim=*/{})",
                       x, dbl(a.exponent), a.dim, a.keepdim);
  case Op::Cumsum: return fmt::format("torch::cumsum({}, {})", x, a.dim);
  case Op::Cumprod: return fmt::format("torch::cumprod({}, {})", x, a.dim);
  case Op::Logcumsumexp: return fmt::format("torch::logcumsumexp({}, {})", x, a.dim);
  case Op::Softmax: return fmt::format("torch::softmax({}, {})", x, a.dim);
  case Op::LogSoftmax: return fmt::format("torch::log_softmax({}, {})", x, a.dim);
  case Op::Normalize:
    return fmt::format("torch::nn::functional::normalize({}, "
                       "torch::nn::functional::NormalizeFuncOptions().p({}).dim({}))",
                       x, dbl(a.exponent), a.dim);
  case Op::CosineSimilarity:
    return fmt::format("torch::cosine_similarity({}, {}, {})", x, y, a.dim);
  case Op::Mm: return fmt::format("torch::mm({}, {})", x, y);
  case Op::Mv: return fmt::format("torch::mv({}, {})", x, y);
  case Op::Dot: return fmt::format("torch::dot({}, {})", x, y);
  case Op::Outer: return fmt::format("torch::outer({}, {})", x, y);
  case Op::Addmm:
    return fmt::format("torch::addmm({}, {}, {}, /*beta=*/{}, /*alpha=*/{})", x, y, z, dbl(a.beta),
                       dbl(a.alpha));
  case Op::Trace: return fmt::format("torch::trace({})", x);
  // The ATen spellings: LibTorch 1.13 and 2.15 both have them (2.15 dropped torch/linalg.h).
  case Op::Det: return fmt::format("torch::linalg_det({})", x);
  case Op::Slogdet: return fmt::format("std::get<1>(torch::linalg_slogdet({}))", x);
  case Op::Inv: return fmt::format("torch::linalg_inv({})", x);
  case Op::Flip: return fmt::format("torch::flip({}, {{{}}})", x, a.dim);
  case Op::Roll: return fmt::format("torch::roll({}, {{{}}}, {{{}}})", x, a.times, a.dim);
  case Op::Unsqueeze: return fmt::format("torch::unsqueeze({}, {})", x, a.dim);
  case Op::Squeeze: return fmt::format("torch::squeeze({}, {})", x, a.dim);
  case Op::Tril: return fmt::format("torch::tril({}, {})", x, a.times);
  case Op::Triu: return fmt::format("torch::triu({}, {})", x, a.times);
  case Op::Movedim: return fmt::format("torch::movedim({}, {}, {})", x, a.dim, a.dim1);
  case Op::Narrow: return fmt::format("torch::narrow({}, {}, {}, {})", x, a.dim, a.dim1, a.times);
  case Op::Select: return fmt::format("torch::select({}, {}, {})", x, a.dim, a.dim1);
  case Op::Expand: {
    Shape sizes = p.shape_of(in.operands[0]);
    sizes[a.dim] = a.times;
    return fmt::format("{}.expand({})", x, int_list(sizes));
  }
  case Op::Diagonal:
    return fmt::format("torch::diagonal({}, {}, {}, {})", x, a.times, a.dim, a.dim1);
  case Op::Gather: return fmt::format("torch::gather({}, {}, {})", x, a.dim, y);
  case Op::IndexSelect: return fmt::format("torch::index_select({}, {}, {})", x, a.dim, y);
  case Op::TakeAlongDim: return fmt::format("torch::take_along_dim({}, {}, {})", x, y, a.dim);
  case Op::ScatterAdd: return fmt::format("torch::scatter_add({}, {}, {}, {})", x, a.dim, y, z);
  case Op::ScatterReduce:
    return fmt::format("torch::scatter_reduce({}, {}, {}, {}, \"{}\", /*include_self=*/{})", x,
                       a.dim, y, z, kScatterReduceNames[static_cast<std::size_t>(a.variant)],
                       a.include_self);
  case Op::MaskedFill: return fmt::format("torch::masked_fill({}, {}, {})", x, y, dbl(a.fill));
  case Op::IndexAdd: return fmt::format("torch::index_add({}, {}, {}, {})", x, a.dim, y, z);
  case Op::IndexCopy: return fmt::format("torch::index_copy({}, {}, {}, {})", x, a.dim, y, z);
  case Op::IndexFill:
    return fmt::format("torch::index_fill({}, {}, {}, {})", x, a.dim, y, dbl(a.fill));
  case Op::IndexPut:
    return fmt::format("torch::index_put({}, c10::List<c10::optional<torch::Tensor>>{{{}}}, {}, "
                       "/*accumulate=*/{})",
                       x, y, z, a.variant != 0);
  case Op::MaskedScatter: return fmt::format("torch::masked_scatter({}, {}, {})", x, y, z);
  case Op::Reshape:
    return fmt::format("torch::reshape({}, {})", x, int_list(repro_detail::result_shape(p, in)));
  case Op::Permute:
    return fmt::format("torch::permute({}, {})", x,
                       "{" + repro_detail::permutation_items(p, in) + "}");
  case Op::Slice:
    return fmt::format("{}.slice({}, {}, {}, {})", x, a.dim, a.dim1, a.times, a.variant);
  case Op::Stack: return fmt::format("torch::stack({{{}, {}}}, {})", x, y, a.dim);
  case Op::Chunk: return fmt::format("torch::chunk({}, {}, {})[{}]", x, a.times, a.dim, a.dim1);
  case Op::DiagEmbed: return fmt::format("torch::diag_embed({}, {}, -2, -1)", x, a.times);
  case Op::Bmm: return fmt::format("torch::bmm({}, {})", x, y);
  case Op::Relayout: {
    const Shape& s = p.shape_of(in.operands[0]);
    const StridedView v = strided_view(attrs_layout(a), s);
    Shape strides; // the strides as a list of the same spelling as a shape's
    for (int d = 0; d < s.rank(); ++d)
      strides.push_back(v.strides[static_cast<std::size_t>(d)]);
    return fmt::format("relaid_out({}, {}, {}, {})", x, int_list(strides), v.storage_offset,
                       v.storage_size);
  }
  }
  return "";
}

std::string comment_block(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  std::string out, line;
  while (std::getline(lines, line))
    out += prefix + line + "\n";
  return out;
}

std::string expected_list(const std::vector<double>& values) {
  std::vector<std::string> items;
  for (double v : values)
    items.push_back(dbl(v));
  return repro_detail::join_wrapped(items, 6, "      ");
}
// check()'s arguments after the tensor: the expected values, and their bounds when the
// reference gave any (all zeros included: an exact value is compared relatively).
std::string expected_args(const std::vector<double>& values, const std::vector<double>& bounds) {
  std::string out = "{" + expected_list(values) + "}";
  if (!bounds.empty()) out += ", {" + expected_list(bounds) + "}";
  return out;
}
// The program's float dtype as LibTorch spells it.
std::string_view torch_dtype(FloatDType d) {
  switch (d) {
  case FloatDType::F32: return "torch::kFloat32";
  case FloatDType::BF16: return "torch::kBFloat16";
  case FloatDType::F16: return "torch::kFloat16";
  case FloatDType::F64: return "torch::kFloat64";
  }
  return "torch::kFloat32";
}

constexpr const char* kIncludes = R"(
// ATen/core/ivalue.h first: clang 14 with libstdc++ 12 in C++20 mode otherwise fails on an
// incomplete IValue inside LibTorch's own headers.
#include <ATen/core/ivalue.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/normalization.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {
)";

constexpr const char* kHelpers = R"(

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A kDType leaf from exact float32 bit patterns, so that NaN payloads, -0 and subnormals
// survive (every value is exact in kDType).
torch::Tensor leaf(std::vector<std::int64_t> shape, bool requires_grad, const std::vector<std::uint32_t>& bits) {
  torch::Tensor t = torch::empty(shape, torch::kFloat32);
  std::memcpy(t.data_ptr<float>(), bits.data(), bits.size() * sizeof(float));
  return t.to(kDType).requires_grad_(requires_grad);
}

// The same from float64 bit patterns, for a float64 program's values that no float32 holds.
torch::Tensor leaf64(std::vector<std::int64_t> shape, bool requires_grad, const std::vector<std::uint64_t>& bits) {
  torch::Tensor t = torch::empty(shape, torch::kFloat64);
  std::memcpy(t.data_ptr<double>(), bits.data(), bits.size() * sizeof(double));
  return t.to(kDType).requires_grad_(requires_grad);
}

// `values` as a view, at these strides and storage offset, of a fresh buffer of `storage`
// elements (NaN where the view does not reach), differentiably: BurnMark's relayout. A stride-0
// dim is an expanded one: the buffer holds its index 0.
torch::Tensor relaid_out(const torch::Tensor& values, std::vector<std::int64_t> stride,
                         std::int64_t offset, std::int64_t storage) {
  torch::Tensor buffer = torch::full({storage}, kNaN, values.options().requires_grad(false));
  torch::Tensor compact = values;
  for (std::size_t d = 0; d < stride.size(); ++d)
    if (stride[d] == 0) compact = compact.narrow(static_cast<std::int64_t>(d), 0, 1);
  return at::as_strided_scatter(buffer, compact, compact.sizes(), stride, offset)
      .as_strided(values.sizes(), stride, offset);
}

// The same as a leaf of its own: a BurnMark leaf layout (an expanded dim's values all equal).
torch::Tensor as_laid_out(const torch::Tensor& values, std::vector<std::int64_t> stride,
                          std::int64_t offset, std::int64_t storage) {
  return relaid_out(values.detach(), stride, offset, storage).detach();
}

// NaN vs non-NaN diverges, two NaNs agree, infinities must match exactly (sign included).
// Finite values: with no bound, diverge when |got - expected| > tolerance * max(1, |got|,
// |expected|); with a bound E (the rounding a correct implementation may add), when
// |got - expected| > E + tolerance * max(|got|, |expected|), relative only, unless E reaches zero
// (0 < E >= |expected|: zero up to rounding), where the max takes 1 too. An infinite bound means
// either answer is right.
bool diverges(double got, double expected, bool bounded, double bound) {
  if (bounded && !(bound < INFINITY)) return false;
  if (std::isnan(got) || std::isnan(expected)) return !(std::isnan(got) && std::isnan(expected));
  if (std::isinf(got) || std::isinf(expected)) return got != expected;
  double larger = std::max(std::abs(got), std::abs(expected));
  if (!bounded) return std::abs(got - expected) > kTolerance * std::max(1.0, larger);
  if (0 < bound && std::abs(expected) <= bound) larger = std::max(1.0, larger);
  return std::abs(got - expected) > bound + kTolerance * larger;
}

// Prints LibTorch's values beside the expected ones (every element of small tensors, only the
// diverging ones of large tensors) and returns how many diverge.
int check(const std::string& name, const torch::Tensor& got, const std::vector<double>& expected,
          std::vector<double> bounds = {}) {
  const bool bounded = !bounds.empty();
  bounds.resize(expected.size(), 0.0);
  const torch::Tensor t = got.detach().to(torch::kDouble).contiguous();
  const auto n = static_cast<std::size_t>(t.numel());
  if (n != expected.size()) {
    std::printf("%s: libtorch has %zu elements, expected %zu  <-- DIVERGES\n", name.c_str(), n, expected.size());
    return 1;
  }
  const double* v = t.data_ptr<double>();
  int bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool d = diverges(v[i], expected[i], bounded, bounds[i]);
    bad += d;
    if (d || n <= 64)
      std::printf("%s[%zu]  libtorch % .9g  expected % .17g%s\n", name.c_str(), i, v[i], expected[i],
                  d ? "  <-- DIVERGES" : "");
  }
  std::printf("%s: %d of %zu elements diverge\n", name.c_str(), bad, n);
  return bad;
}

// A leaf the root does not depend on has no gradient; it is zero.
torch::Tensor grad_of(const torch::Tensor& leaf) { return leaf.grad().defined() ? leaf.grad() : torch::zeros_like(leaf); }

} // namespace
)";

} // namespace

std::string emit_cpp_repro(const ReproCase& repro) {
  if (repro.check_tangent)
    throw std::invalid_argument("forward mode has a Python reproducer only (--lang python)");
  if (repro.check_hvp)
    throw std::invalid_argument("second order has a Python reproducer only (--lang python)");
  repro_detail::check_case(repro);
  if (repro.path != ReproPath::Eager && repro.path != ReproPath::Scalar)
    throw std::invalid_argument(
        "the C++ reproducer runs LibTorch eager, contiguous, only; a strided, "
        "TorchScript or NNC finding's reproducer is Python (--lang python)");
  const Program& p = repro.program;
  std::string out;
  out += "// " + repro.title + "\n//\n";
  out += fmt::format("// Reproducer generated by BurnMark. It runs this program with LibTorch "
                     "eager (CPU, {},\n"
                     "// {}) and compares the root",
                     float_dtype_name(p.float_dtype),
                     repro_detail::threads_phrase(repro.intra_op_threads));
  out += repro.check_gradients ? " and every leaf's gradient (backward seeded with ones)" : "";
  out += "\n// with the expected values. Exit status 0: LibTorch agrees; 1: some element "
         "diverges.\n//\n";
  out += comment_block(to_text(p), "//   ");
  out += kIncludes;
  out += "\nconstexpr double kTolerance = " + dbl(repro.tolerance) + ";\n";
  out += fmt::format("const torch::ScalarType kDType = {};\n", torch_dtype(p.float_dtype));
  out += kHelpers;
  out += "\nint main() {\n";
  // LibTorch picks its kernel set at its first dispatch, from this variable.
  if (repro.path == ReproPath::Scalar)
    out += "  setenv(\"ATEN_CPU_CAPABILITY\", \"default\", 1);  // LibTorch's scalar kernels\n";
  out += fmt::format("  torch::set_num_threads({});\n\n", repro.intra_op_threads);
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    const Reg r = static_cast<Reg>(i);
    switch (s.kind) {
    case StmtKind::Leaf: {
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(s.leaf)];
      if (leaf.dtype == DType::I64) {
        std::vector<std::string> values;
        for (std::int64_t v : leaf.indices)
          values.push_back(std::to_string(v));
        out += fmt::format("  // %{} = leaf i64{}\n", r, s.shape.to_string());
        out += fmt::format(
            "  const torch::Tensor {} = torch::tensor(std::vector<std::int64_t>{{{}}}, "
            "torch::kInt64).reshape({});\n",
            reg(r), repro_detail::join_wrapped(values, 16, "      "), int_list(s.shape));
        break;
      }
      std::vector<std::string> bits;
      for (double v : leaf.data)
        bits.push_back(repro_detail::value_bits(v, p.float_dtype));
      out += fmt::format("  // {}\n", stmt_to_text(p, r));
      const bool laid_out = !leaf.layout.contiguous();
      std::string made =
          fmt::format("{}({}, {}, {{{}}})", p.float_dtype == FloatDType::F64 ? "leaf64" : "leaf",
                      int_list(s.shape), repro.check_gradients && !laid_out,
                      repro_detail::join_wrapped(bits, 8, "      "));
      if (laid_out) {
        const StridedView view = strided_view(leaf.layout, s.shape);
        Shape strides; // the strides as a list of the same spelling as a shape's
        for (int d = 0; d < s.shape.rank(); ++d)
          strides.push_back(view.strides[static_cast<std::size_t>(d)]);
        made =
            fmt::format("as_laid_out({}, {}, {}, {}).requires_grad_({})", made, int_list(strides),
                        view.storage_offset, view.storage_size, repro.check_gradients);
      }
      out += fmt::format("  const torch::Tensor {} = {};\n", reg(r), made);
      break;
    }
    case StmtKind::Alias:
      out += fmt::format("  const torch::Tensor {} = {}; // alias: the same tensor, not a copy\n",
                         reg(r), reg(s.source));
      break;
    case StmtKind::Op:
      out += fmt::format("  const torch::Tensor {} = {}; // {}\n", reg(r), call(p, s.instr),
                         stmt_to_text(p, r));
      break;
    }
  }
  out += fmt::format("  const torch::Tensor& root = {};\n", reg(p.root));
  if (repro.check_gradients) out += "  root.backward(torch::ones_like(root));\n";
  out += "\n  int bad = 0;\n";
  out += fmt::format("  bad += check(\"root %{}\", root, {});\n", p.root,
                     expected_args(repro.expected_root, repro.root_bound));
  if (repro.check_gradients) {
    const std::vector<Reg> leaf_regs = p.leaf_registers();
    for (std::size_t i = 0; i < leaf_regs.size(); ++i)
      if (p.leaves[i].dtype == DType::F32) // index leaves are never differentiated
        out += fmt::format(
            "  bad += check(\"grad %{}\", grad_of({}), {});\n", leaf_regs[i], reg(leaf_regs[i]),
            expected_args(repro.expected_grads[i], repro_detail::bounds_of(repro, i)));
  }
  out += "  std::printf(bad ? \"DIVERGES: %d element(s)\\n\" : \"AGREES (%d diverging "
         "elements)\\n\", bad);\n";
  out += "  return bad ? 1 : 0;\n}\n";
  return out;
}

std::string emit_cpp_cmake(const std::string& source_file_name) {
  const std::string stem = source_file_name.substr(0, source_file_name.find_last_of('.'));
  return fmt::format(R"(# Builds the BurnMark reproducer {0} against an installed LibTorch.
#   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release   (add -DCMAKE_PREFIX_PATH=/path/to/libtorch if
#                                                     it is not installed system-wide)
#   cmake --build build && ./build/{1}
cmake_minimum_required(VERSION 3.18)
project(burnmark_repro CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(Torch REQUIRED)
set(CMAKE_CXX_FLAGS "${{CMAKE_CXX_FLAGS}} ${{TORCH_CXX_FLAGS}}")
add_executable({1} {0})
target_link_libraries({1} PRIVATE ${{TORCH_LIBRARIES}})
)",
                     source_file_name, stem);
}

} // namespace burnmark
