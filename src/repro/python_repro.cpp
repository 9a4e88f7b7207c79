// The Python reproducer: one PyTorch call per SSA instruction, named like the registers, then
// the checks against the expected values.
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/layout.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "burnmark/repro/python_call.h"
#include "burnmark/repro/python_inplace.h"
#include "literals.h"
#include "python_snippets.h"

namespace burnmark {
namespace {

using repro_detail::literal;
using repro_detail::py_bool;
using repro_detail::reg;

using namespace python_snippets;

// In forward mode, the leaf a register's dual tensor is made from.
std::string leaf_name(Reg r) {
  return fmt::format("r{}_leaf", r);
}

// A long text as comment lines of at most 100 columns, continuing "# ".
std::string wrap_comment(const std::string& text) {
  std::string out, line;
  std::size_t column = 11; // after "# Why here: "
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (column + w.size() + 1 > 100) {
      out += "\n# ";
      column = 2;
    } else if (!out.empty()) {
      out += ' ';
      ++column;
    }
    out += w;
    column += w.size();
  }
  return out;
}

std::string int_list(const Shape& s) {
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string stride_list(const StridedView& view, int rank) {
  std::string out = "[";
  for (int i = 0; i < rank; ++i)
    out += (i ? ", " : "") + std::to_string(view.strides[static_cast<std::size_t>(i)]);
  return out + "]";
}

std::string expected_list(const std::vector<double>& values) {
  std::vector<std::string> items;
  for (double v : values)
    items.push_back(literal(v));
  return repro_detail::join_wrapped(items, 6, "        ");
}
// check()'s arguments after the tensor: the expected values, and their bounds when the
// reference gave any (all zeros included: an exact value is compared relatively).
std::string expected_args(const std::vector<double>& values, const std::vector<double>& bounds) {
  std::string out = "[" + expected_list(values) + "]";
  if (!bounds.empty()) out += ", [" + expected_list(bounds) + "]";
  return out;
}

// The program's float dtype as torch spells it.
std::string_view torch_dtype_name(FloatDType d) {
  switch (d) {
  case FloatDType::F32: return "float32";
  case FloatDType::BF16: return "bfloat16";
  case FloatDType::F16: return "float16";
  case FloatDType::F64: return "float64";
  }
  return "float32";
}

// The runs of a scripted reproducer, as many as the libtorch-jit backend makes.
constexpr int kScriptedRuns = 3;

// Only for the scripted paths (Jit, Nnc).
std::string scripted_path_setup(ReproPath path) {
  std::string out =
      "    # The executor profiles the first run and optimises from what it saw; the last of the\n"
      "    # runs is the one checked.\n";
  if (path == ReproPath::Nnc)
    out += "    torch._C._jit_override_can_fuse_on_cpu(True)\n"
           "    torch._C._jit_set_texpr_fuser_enabled(True)\n"
           "    torch._C._jit_set_te_must_use_llvm_cpu(False)\n"
           "    torch._C._jit_set_texpr_reductions_enabled(True)\n";
  return out + "    scripted = torch.jit.script(program)\n    for run in range(" +
         std::to_string(kScriptedRuns) + "):\n";
}

} // namespace

// The same overloads as the C++ reproducer and the BurnMark backend (a Python float exponent
// reaches pow's Scalar overload and its fast paths).
std::string torch_python_call(const Program& p, const Instr& in, bool scripted) {
  // TorchScript cannot read the module's `nan` and `inf` globals; it folds float("nan").
  const auto dbl = [scripted](double v) {
    return scripted ? double_literal(v, "float(\"nan\")", "float(\"inf\")") : literal(v);
  };
  const std::string x = reg(in.operands[0]);
  const std::string y = in.operands.size() > 1 ? reg(in.operands[1]) : "";
  const std::string z = in.operands.size() > 2 ? reg(in.operands[2]) : "";
  const Attrs& a = in.attrs;
  switch (in.op) {
  case Op::Add: return fmt::format("torch.add({}, {})", x, y);
  case Op::Sub: return fmt::format("torch.sub({}, {})", x, y);
  case Op::Mul: return fmt::format("torch.mul({}, {})", x, y);
  case Op::Div: return fmt::format("torch.div({}, {})", x, y);
  case Op::Neg: return fmt::format("torch.neg({})", x);
  case Op::Abs: return fmt::format("torch.abs({})", x);
  case Op::Exp: return fmt::format("torch.exp({})", x);
  case Op::Log: return fmt::format("torch.log({})", x);
  case Op::Sqrt: return fmt::format("torch.sqrt({})", x);
  case Op::Pow: return fmt::format("torch.pow({}, {})", x, dbl(a.exponent));
  case Op::Relu: return fmt::format("torch.relu({})", x);
  case Op::Sigmoid: return fmt::format("torch.sigmoid({})", x);
  case Op::Tanh: return fmt::format("torch.tanh({})", x);
  case Op::SumAll: return fmt::format("torch.sum({})", x);
  case Op::MeanAll: return fmt::format("torch.mean({})", x);
  case Op::SumDim:
    return fmt::format("torch.sum({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::MeanDim:
    return fmt::format("torch.mean({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::Transpose: return fmt::format("torch.transpose({}, {}, {})", x, a.dim, a.dim1);
  case Op::Concat: return fmt::format("torch.cat([{}, {}], dim={})", x, y, a.dim);
  case Op::Repeat: {
    std::string reps;
    for (int i = 0; i < p.shape_of(in.operands[0]).rank(); ++i)
      reps += fmt::format("{}{}", i ? ", " : "", i == a.dim ? a.times : 1);
    return fmt::format("{}.repeat({})", x, reps);
  }
  case Op::Matmul: return fmt::format("torch.matmul({}, {})", x, y);
  case Op::Clamp: return fmt::format("torch.clamp({}, min={}, max={})", x, dbl(a.lo), dbl(a.hi));
  case Op::Sin: return fmt::format("torch.sin({})", x);
  case Op::Cos: return fmt::format("torch.cos({})", x);
  case Op::Tan: return fmt::format("torch.tan({})", x);
  case Op::Asin: return fmt::format("torch.asin({})", x);
  case Op::Acos: return fmt::format("torch.acos({})", x);
  case Op::Atan: return fmt::format("torch.atan({})", x);
  case Op::Sinh: return fmt::format("torch.sinh({})", x);
  case Op::Cosh: return fmt::format("torch.cosh({})", x);
  case Op::Asinh: return fmt::format("torch.asinh({})", x);
  case Op::Acosh: return fmt::format("torch.acosh({})", x);
  case Op::Atanh: return fmt::format("torch.atanh({})", x);
  case Op::Erf: return fmt::format("torch.erf({})", x);
  case Op::Erfc: return fmt::format("torch.erfc({})", x);
  case Op::Erfinv: return fmt::format("torch.erfinv({})", x);
  case Op::Log1p: return fmt::format("torch.log1p({})", x);
  case Op::Expm1: return fmt::format("torch.expm1({})", x);
  case Op::Log2: return fmt::format("torch.log2({})", x);
  case Op::Log10: return fmt::format("torch.log10({})", x);
  case Op::Exp2: return fmt::format("torch.exp2({})", x);
  case Op::Rsqrt: return fmt::format("torch.rsqrt({})", x);
  case Op::Reciprocal: return fmt::format("torch.reciprocal({})", x);
  case Op::Square: return fmt::format("torch.square({})", x);
  case Op::Sign: return fmt::format("torch.sign({})", x);
  case Op::Sgn: return fmt::format("torch.sgn({})", x);
  case Op::Floor: return fmt::format("torch.floor({})", x);
  case Op::Ceil: return fmt::format("torch.ceil({})", x);
  case Op::Round: return fmt::format("torch.round({})", x);
  case Op::Trunc: return fmt::format("torch.trunc({})", x);
  case Op::Frac: return fmt::format("torch.frac({})", x);
  case Op::Lgamma: return fmt::format("torch.lgamma({})", x);
  case Op::Digamma: return fmt::format("torch.digamma({})", x);
  case Op::ClampMin: return fmt::format("torch.clamp({}, min={})", x, dbl(a.lo));
  case Op::ClampMax: return fmt::format("torch.clamp({}, max={})", x, dbl(a.hi));
  case Op::LogSigmoid: return fmt::format("F.logsigmoid({})", x);
  case Op::Softplus:
    return fmt::format("F.softplus({}, beta={}, threshold={})", x, dbl(a.beta), dbl(a.threshold));
  case Op::Gelu:
    return fmt::format("F.gelu({}, approximate={})", x, a.variant == 1 ? "'tanh'" : "'none'");
  case Op::Silu: return fmt::format("F.silu({})", x);
  case Op::Mish: return fmt::format("F.mish({})", x);
  case Op::Elu: return fmt::format("F.elu({}, alpha={})", x, dbl(a.alpha));
  case Op::Selu: return fmt::format("F.selu({})", x);
  case Op::Celu: return fmt::format("F.celu({}, alpha={})", x, dbl(a.alpha));
  case Op::LeakyRelu: return fmt::format("F.leaky_relu({}, negative_slope={})", x, dbl(a.slope));
  case Op::Hardtanh:
    return fmt::format("F.hardtanh({}, min_val={}, max_val={})", x, dbl(a.lo), dbl(a.hi));
  case Op::Relu6: return fmt::format("F.relu6({})", x);
  case Op::Hardsigmoid: return fmt::format("F.hardsigmoid({})", x);
  case Op::Hardswish: return fmt::format("F.hardswish({})", x);
  case Op::Softsign: return fmt::format("F.softsign({})", x);
  case Op::Hardshrink: return fmt::format("F.hardshrink({}, lambd={})", x, dbl(a.lambd));
  case Op::Softshrink: return fmt::format("F.softshrink({}, lambd={})", x, dbl(a.lambd));
  case Op::Tanhshrink: return fmt::format("F.tanhshrink({})", x);
  case Op::Logit:
    return fmt::format("torch.logit({}, eps={})", x, a.variant == 1 ? dbl(a.eps) : "None");
  case Op::Maximum: return fmt::format("torch.maximum({}, {})", x, y);
  case Op::Minimum: return fmt::format("torch.minimum({}, {})", x, y);
  case Op::Fmax: return fmt::format("torch.fmax({}, {})", x, y);
  case Op::Fmin: return fmt::format("torch.fmin({}, {})", x, y);
  case Op::Atan2: return fmt::format("torch.atan2({}, {})", x, y);
  case Op::PowTensor: return fmt::format("torch.pow({}, {})", x, y);
  case Op::Remainder: return fmt::format("torch.remainder({}, {})", x, y);
  case Op::Fmod: return fmt::format("torch.fmod({}, {})", x, y);
  case Op::DivRounded:
    return fmt::format("torch.div({}, {}, rounding_mode={})", x, y,
                       a.variant == 1 ? "'floor'" : "'trunc'");
  case Op::Hypot: return fmt::format("torch.hypot({}, {})", x, y);
  case Op::Xlogy: return fmt::format("torch.xlogy({}, {})", x, y);
  case Op::Copysign: return fmt::format("torch.copysign({}, {})", x, y);
  case Op::Lerp: return fmt::format("torch.lerp({}, {}, {})", x, y, dbl(a.weight));
  case Op::Lt: return fmt::format("torch.lt({}, {})", x, y);
  case Op::Le: return fmt::format("torch.le({}, {})", x, y);
  case Op::Gt: return fmt::format("torch.gt({}, {})", x, y);
  case Op::Ge: return fmt::format("torch.ge({}, {})", x, y);
  case Op::Eq: return fmt::format("torch.eq({}, {})", x, y);
  case Op::Ne: return fmt::format("torch.ne({}, {})", x, y);
  case Op::Where: return fmt::format("torch.where({}, {}, {})", x, y, z);
  case Op::Prod: return fmt::format("torch.prod({})", x);
  case Op::Amax: return fmt::format("torch.amax({})", x);
  case Op::Amin: return fmt::format("torch.amin({})", x);
  case Op::Max: return fmt::format("torch.max({})", x);
  case Op::Min: return fmt::format("torch.min({})", x);
  // PyTorch 1.13 takes correction only with a dim; unbiased is the same correction 1 / 0.
  case Op::Var: return fmt::format("torch.var({}, unbiased={})", x, py_bool(a.variant == 1));
  case Op::Std: return fmt::format("torch.std({}, unbiased={})", x, py_bool(a.variant == 1));
  case Op::VectorNorm:
    return fmt::format("torch.linalg.vector_norm({}, ord={})", x, dbl(a.exponent));
  case Op::ProdDim:
    return fmt::format("torch.prod({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::AmaxDim:
    return fmt::format("torch.amax({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::AminDim:
    return fmt::format("torch.amin({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::MaxDim:
    return fmt::format("torch.max({}, dim={}, keepdim={}).values", x, a.dim, py_bool(a.keepdim));
  case Op::MinDim:
    return fmt::format("torch.min({}, dim={}, keepdim={}).values", x, a.dim, py_bool(a.keepdim));
  case Op::VarDim:
    return fmt::format("torch.var({}, dim={}, correction={}, keepdim={})", x, a.dim, a.variant,
                       py_bool(a.keepdim));
  case Op::StdDim:
    return fmt::format("torch.std({}, dim={}, correction={}, keepdim={})", x, a.dim, a.variant,
                       py_bool(a.keepdim));
  case Op::Logsumexp:
    return fmt::format("torch.logsumexp({}, dim={}, keepdim={})", x, a.dim, py_bool(a.keepdim));
  case Op::NormDim:
    return fmt::format("torch.linalg.vector_norm({}, ord={}, dim={}, keepdim={})", x,
                       dbl(a.exponent), a.dim, py_bool(a.keepdim));
  case Op::Cumsum: return fmt::format("torch.cumsum({}, dim={})", x, a.dim);
  case Op::Cumprod: return fmt::format("torch.cumprod({}, dim={})", x, a.dim);
  case Op::Logcumsumexp: return fmt::format("torch.logcumsumexp({}, dim={})", x, a.dim);
  case Op::Softmax: return fmt::format("torch.softmax({}, dim={})", x, a.dim);
  case Op::LogSoftmax: return fmt::format("torch.log_softmax({}, dim={})", x, a.dim);
  case Op::Normalize:
    return fmt::format("F.normalize({}, p={}, dim={})", x, dbl(a.exponent), a.dim);
  case Op::CosineSimilarity: return fmt::format("F.cosine_similarity({}, {}, dim={})", x, y, a.dim);
  case Op::Mm: return fmt::format("torch.mm({}, {})", x, y);
  case Op::Mv: return fmt::format("torch.mv({}, {})", x, y);
  case Op::Dot: return fmt::format("torch.dot({}, {})", x, y);
  case Op::Outer: return fmt::format("torch.outer({}, {})", x, y);
  case Op::Addmm:
    return fmt::format("torch.addmm({}, {}, {}, beta={}, alpha={})", x, y, z, dbl(a.beta),
                       dbl(a.alpha));
  case Op::Trace: return fmt::format("torch.trace({})", x);
  case Op::Det: return fmt::format("torch.linalg.det({})", x);
  case Op::Slogdet: return fmt::format("torch.linalg.slogdet({}).logabsdet", x);
  case Op::Inv: return fmt::format("torch.linalg.inv({})", x);
  case Op::Flip: return fmt::format("torch.flip({}, dims=[{}])", x, a.dim);
  case Op::Roll: return fmt::format("torch.roll({}, shifts={}, dims={})", x, a.times, a.dim);
  case Op::Unsqueeze: return fmt::format("torch.unsqueeze({}, {})", x, a.dim);
  case Op::Squeeze: return fmt::format("torch.squeeze({}, {})", x, a.dim);
  case Op::Tril: return fmt::format("torch.tril({}, diagonal={})", x, a.times);
  case Op::Triu: return fmt::format("torch.triu({}, diagonal={})", x, a.times);
  case Op::Movedim: return fmt::format("torch.movedim({}, {}, {})", x, a.dim, a.dim1);
  case Op::Narrow: return fmt::format("torch.narrow({}, {}, {}, {})", x, a.dim, a.dim1, a.times);
  case Op::Select: return fmt::format("torch.select({}, {}, {})", x, a.dim, a.dim1);
  case Op::Expand: {
    Shape sizes = p.shape_of(in.operands[0]);
    sizes[a.dim] = a.times;
    return fmt::format("{}.expand({})", x, int_list(sizes));
  }
  case Op::Diagonal:
    return fmt::format("torch.diagonal({}, offset={}, dim1={}, dim2={})", x, a.times, a.dim,
                       a.dim1);
  case Op::Gather: return fmt::format("torch.gather({}, {}, {})", x, a.dim, y);
  case Op::IndexSelect: return fmt::format("torch.index_select({}, {}, {})", x, a.dim, y);
  case Op::TakeAlongDim: return fmt::format("torch.take_along_dim({}, {}, dim={})", x, y, a.dim);
  case Op::ScatterAdd: return fmt::format("torch.scatter_add({}, {}, {}, {})", x, a.dim, y, z);
  case Op::ScatterReduce:
    return fmt::format("torch.scatter_reduce({}, {}, {}, {}, \"{}\", include_self={})", x, a.dim, y,
                       z, kScatterReduceNames[static_cast<std::size_t>(a.variant)],
                       py_bool(a.include_self));
  case Op::MaskedFill: return fmt::format("torch.masked_fill({}, {}, {})", x, y, dbl(a.fill));
  case Op::IndexAdd: return fmt::format("torch.index_add({}, {}, {}, {})", x, a.dim, y, z);
  case Op::IndexCopy: return fmt::format("torch.index_copy({}, {}, {}, {})", x, a.dim, y, z);
  case Op::IndexFill:
    return fmt::format("torch.index_fill({}, {}, {}, {})", x, a.dim, y, dbl(a.fill));
  case Op::IndexPut:
    return fmt::format("torch.index_put({}, ({},), {}, accumulate={})", x, y, z,
                       py_bool(a.variant != 0));
  case Op::MaskedScatter: return fmt::format("torch.masked_scatter({}, {}, {})", x, y, z);
  case Op::Reshape:
    return fmt::format("torch.reshape({}, {})", x, int_list(repro_detail::result_shape(p, in)));
  case Op::Permute:
    return fmt::format("torch.permute({}, {})", x,
                       "[" + repro_detail::permutation_items(p, in) + "]");
  case Op::Slice: {
    // Python's x[a:b:k] on dim d, the same slice as LibTorch's x.slice(d, a, b, k).
    std::string lead;
    for (int d = 0; d < a.dim; ++d)
      lead += ":, ";
    return fmt::format("{}[{}{}:{}:{}]", x, lead, a.dim1, a.times, a.variant);
  }
  case Op::Stack: return fmt::format("torch.stack([{}, {}], dim={})", x, y, a.dim);
  case Op::Chunk: return fmt::format("torch.chunk({}, {}, dim={})[{}]", x, a.times, a.dim, a.dim1);
  case Op::DiagEmbed:
    return fmt::format("torch.diag_embed({}, offset={}, dim1=-2, dim2=-1)", x, a.times);
  case Op::Bmm: return fmt::format("torch.bmm({}, {})", x, y);
  // relayout, as BurnMark's LibTorch backends make it: the values scattered through the
  // layout's view into a NaN-filled buffer, then that view of it (differentiable throughout).
  case Op::Relayout: {
    const Shape& s = p.shape_of(in.operands[0]);
    const StridedView v = strided_view(attrs_layout(a), s);
    const std::string view =
        fmt::format("{}, {}, {}", int_list(s), stride_list(v, s.rank()), v.storage_offset);
    return fmt::format("torch.as_strided(torch.as_strided_scatter(torch.full([{}], {}, "
                       "dtype={}.dtype), {}, {}), {})",
                       v.storage_size, dbl(std::numeric_limits<double>::quiet_NaN()), x, x, view,
                       view);
  }
  }
  return "";
}

std::string emit_python_repro(const ReproCase& repro) {
  if (repro.path == ReproPath::Compile) return emit_compile_repro(repro);
  repro_detail::check_case(repro);
  const Program& p = repro.program;
  const bool scripted = repro.path == ReproPath::Jit || repro.path == ReproPath::Nnc;
  const bool strided = repro.path == ReproPath::Strided;
  const bool inplace = repro.path == ReproPath::Inplace;
  const bool hessian = repro.check_hvp;
  const bool by_dual = hessian && repro.hvp_forward_over_reverse;
  const bool dual = repro.check_tangent || by_dual;
  if (dual && repro.path != ReproPath::Eager && repro.path != ReproPath::Scalar && !inplace)
    throw std::invalid_argument("forward mode has no scripted or strided reproducer");
  if (hessian && scripted) throw std::invalid_argument("second order has no scripted reproducer");
  // libtorch-strided's layouts (src/backends/libtorch/libtorch_strided.h), register by register.
  const auto laid_out = [&](const std::string& expr, Reg r) {
    return strided ? fmt::format("layout({}, {})", expr, r) : expr;
  };
  std::string out = "#!/usr/bin/env python3\n";
  out += "# " + repro.title + "\n#\n";
  out += scripted
             ? fmt::format(
                   "# Reproducer generated by BurnMark. It runs this program as one TorchScript "
                   "function\n"
                   "# (torch.jit.script{}, CPU, {}, {}) {} times and compares\n"
                   "# the last run's root",
                   repro.path == ReproPath::Nnc ? ", NNC fuser forced on for CPU" : "",
                   torch_dtype_name(p.float_dtype),
                   repro_detail::threads_phrase(repro.intra_op_threads), kScriptedRuns)
             : fmt::format("# Reproducer generated by BurnMark. It runs this program with PyTorch "
                           "eager (CPU, {},\n"
                           "# {}{}) and compares the root",
                           torch_dtype_name(p.float_dtype),
                           repro_detail::threads_phrase(repro.intra_op_threads),
                           strided   ? ", every tensor re-laid out by layout()"
                           : inplace ? ", in-place forms on libtorch-inplace's views"
                                     : "");
  out += repro.check_gradients ? " and every leaf's gradient (backward seeded with ones)" : "";
  out += dual ? ",\n# and, in forward mode (dual tensors), the root's derivative along each leaf's "
                "tangent()"
              : "";
  out +=
      hessian
          ? (by_dual ? ",\n# and each leaf's H·v by forward over reverse (the gradients' tangents "
                       "in the dual level)"
                     : ",\n# and each leaf's H·v by double backward along the leaves' tangent()")
          : "";
  out +=
      "\n# with the expected values. Exit status 0: PyTorch agrees; 1: some element diverges.\n#\n"
      "# The expected values are BurnMark's reference: each op as IEEE 754 / C99 Annex F and its\n"
      "# documented formula define it, evaluated in double precision and rounded to the dtype, "
      "with\n"
      "# a bound on that rounding (a LibTorch behaviour is followed only where PyTorch documents "
      "it).\n";
  if (!repro.why.empty()) out += "# Why here: " + wrap_comment(repro.why) + "\n";
  out += "#\n";
  std::istringstream lines(to_text(p));
  for (std::string line; std::getline(lines, line);)
    out += "#   " + line + "\n";
  // The imports depend on what the statements below use: assembled after them.
  const std::string head = std::move(out);
  out.clear();
  bool uses_bits = false;
  bool uses_layouts = false; // some leaf is not contiguous
  bool uses_inplace = false; // some op runs in place
  // Eager: one line per statement in order. Scripted: the leaves are made fresh for every run,
  // the other statements are the scripted function's body.
  std::string leaves;
  std::string body;
  std::vector<std::string> params;
  // Scripted: leaves inside the runs' loop; forward mode: everything inside the dual level.
  const std::string indent = scripted || dual ? "        " : "    ";
  for (std::size_t i = 0; i < p.stmts.size(); ++i) {
    const Stmt& s = p.stmts[i];
    const Reg r = static_cast<Reg>(i);
    std::string& to = s.kind == StmtKind::Leaf && scripted ? leaves : body;
    const std::string& ind = s.kind == StmtKind::Leaf || !scripted ? indent : std::string("    ");
    switch (s.kind) {
    case StmtKind::Leaf: {
      params.push_back(reg(r));
      const Leaf& leaf = p.leaves[static_cast<std::size_t>(s.leaf)];
      if (leaf.dtype == DType::I64) {
        std::vector<std::string> values;
        for (std::int64_t v : leaf.indices)
          values.push_back(std::to_string(v));
        to += fmt::format("{}# %{} = leaf i64{}\n", ind, r, s.shape.to_string());
        to += fmt::format("{}{} = {}\n", ind, reg(r),
                          laid_out(fmt::format("torch.tensor([{}], dtype=torch.int64).reshape({})",
                                               repro_detail::join_wrapped(values, 16, ind + "    "),
                                               int_list(s.shape)),
                                   r));
        break;
      }
      // Decimal literals where every value has an exact one; bit patterns otherwise.
      std::vector<std::string> decimals, bits;
      for (double v : leaf.data) {
        if (const auto d = repro_detail::exact_decimal(v, p.float_dtype)) decimals.push_back(*d);
        bits.push_back(repro_detail::value_bits(v, p.float_dtype));
      }
      const bool decimal = decimals.size() == leaf.data.size();
      uses_bits = uses_bits || !decimal;
      to += fmt::format("{}# {}\n", ind, stmt_to_text(p, r));
      // A leaf the program lays out is that layout in every backend (libtorch-strided's too);
      // libtorch-strided re-lays out the others by register.
      const bool laid_out_leaf = !leaf.layout.contiguous();
      const bool relaid = strided && !laid_out_leaf;
      const bool grad_now = repro.check_gradients && !relaid && !laid_out_leaf;
      std::string made =
          decimal ? fmt::format("torch.tensor([{}], dtype=DTYPE){}.requires_grad_({})",
                                repro_detail::join_wrapped(decimals, 8, ind + "    "),
                                s.shape.rank() == 1 ? "" : ".reshape(" + int_list(s.shape) + ")",
                                py_bool(grad_now))
                  : fmt::format("leaf({}, {}, [{}])", int_list(s.shape), py_bool(grad_now),
                                repro_detail::join_wrapped(bits, 8, ind + "    "));
      if (laid_out_leaf) {
        uses_layouts = true;
        const StridedView view = strided_view(leaf.layout, s.shape);
        made = fmt::format("as_laid_out({}, {}, {}, {}).requires_grad_({})", made,
                           stride_list(view, s.shape.rank()), view.storage_offset,
                           view.storage_size, py_bool(repro.check_gradients));
      }
      // Forward mode: the program sees the dual tensor, the gradient is read from the leaf.
      to += fmt::format("{}{} = {}\n", ind, dual ? leaf_name(r) : reg(r),
                        relaid ? fmt::format("layout({}, {}).detach().requires_grad_({})", made, r,
                                             py_bool(repro.check_gradients))
                               : made);
      if (dual)
        to += fmt::format("{}{} = fwAD.make_dual({}, tangent({}, {}))\n", ind, reg(r), leaf_name(r),
                          int_list(s.shape), s.leaf);
      break;
    }
    case StmtKind::Alias:
      to += fmt::format("{}{} = {}  # alias: the same tensor, not a copy\n", ind, reg(r),
                        reg(s.source));
      break;
    case StmtKind::Op:
      // libtorch-inplace: the in-place form where that backend runs it, else the functional call.
      if (const auto in_place = inplace ? python_inplace_statement(p, r, ind) : std::nullopt) {
        to += *in_place;
        uses_inplace = true;
        break;
      }
      to += fmt::format("{}{} = {}  # {}\n", ind, reg(r),
                        laid_out(torch_python_call(p, s.instr, scripted), r), stmt_to_text(p, r));
      break;
    }
  }
  const std::string args = fmt::format("{}", fmt::join(params, ", "));
  const std::string main_header =
      fmt::format("\ndef main():\n    print(versions())\n    torch.set_num_threads({})\n",
                  repro.intra_op_threads);
  // The float leaves (index leaves are never differentiated), each named by `name`, and the
  // double-backward call over them along their tangent() directions.
  using Namer = std::string (*)(Reg);
  const auto float_leaves = [&](Namer name) {
    std::vector<std::string> names;
    const std::vector<Reg> leaf_regs = p.leaf_registers();
    for (std::size_t i = 0; i < leaf_regs.size(); ++i)
      if (p.leaves[i].dtype == DType::F32) names.push_back(name(leaf_regs[i]));
    return names;
  };
  const auto hessian_vector_call = [&](Namer name) {
    std::vector<std::string> directions;
    for (std::size_t i = 0; i < p.leaves.size(); ++i)
      if (p.leaves[i].dtype == DType::F32)
        directions.push_back(fmt::format("tangent({}, {})", int_list(p.leaves[i].shape), i));
    return fmt::format("    hvp = hessian_vector(root, [{}], [{}])\n",
                       fmt::join(float_leaves(name), ", "), fmt::join(directions, ", "));
  };
  if (scripted) {
    // As libtorch-jit's function (torchscript_source.cpp): the results nothing uses are returned
    // after the root, so TorchScript keeps them (and their backward) as eager runs them.
    std::vector<bool> used(p.stmts.size(), false);
    for (const Stmt& s : p.stmts) {
      if (s.kind == StmtKind::Alias) used[static_cast<std::size_t>(s.source)] = true;
      if (s.kind == StmtKind::Op)
        for (Reg r : s.instr.operands)
          used[static_cast<std::size_t>(r)] = true;
    }
    std::vector<std::string> unused;
    for (std::size_t i = 0; i < p.stmts.size(); ++i)
      if (p.stmts[i].kind == StmtKind::Op && !used[i] && static_cast<Reg>(i) != p.root)
        unused.push_back(reg(static_cast<Reg>(i)));
    if (unused.empty())
      out += fmt::format("\ndef program({}):\n{}    return {}\n\n", args, body, reg(p.root));
    else
      out += fmt::format("\ndef program({}):\n{}    # The unused results too, or TorchScript drops "
                         "them as dead code (eager runs them).\n    return {}, {}\n\n",
                         args, body, reg(p.root), fmt::join(unused, ", "));
    out += main_header + scripted_path_setup(repro.path);
    out += leaves;
    out += fmt::format("{}root = scripted({}){}\n", indent, args, unused.empty() ? "" : "[0]");
    if (repro.check_gradients) out += indent + "root.backward(torch.ones_like(root))\n";
  } else if (dual) {
    // Reverse mode after the level is left, as BurnMark's libtorch backend runs it: inside,
    // backward's own formulas would run forward mode on the dual tensors they saved.
    out += main_header + "    with fwAD.dual_level():\n" + body;
    out += fmt::format("{}root = {}\n", indent, reg(p.root));
    if (repro.check_tangent) out += indent + "root_tangent = tangent_of(root)\n";
    // Forward over reverse inside the level; double backward after it, as libtorch runs it.
    if (by_dual)
      out += fmt::format("{}hvp = hessian_by_dual(root, [{}])\n", indent,
                         fmt::join(float_leaves(leaf_name), ", "));
    else if (hessian)
      out += hessian_vector_call(leaf_name);
    if (repro.check_gradients) out += "    root.backward(torch.ones_like(root))\n";
  } else {
    out += main_header + body;
    out += fmt::format("    root = {}\n", reg(p.root));
    if (hessian) out += hessian_vector_call(reg); // before backward(), which frees the graph
    if (repro.check_gradients) out += "    root.backward(torch.ones_like(root))\n";
  }
  out += "\n    bad = 0\n";
  out += fmt::format("    bad += check(\"root %{}\", root, {})\n", p.root,
                     expected_args(repro.expected_root, repro.root_bound));
  if (repro.check_tangent)
    out += fmt::format("    bad += check(\"tangent %{}\", root_tangent, {})\n", p.root,
                       expected_args(repro.expected_tangent, repro.tangent_bound));
  if (repro.check_gradients) {
    const std::vector<Reg> leaf_regs = p.leaf_registers();
    for (std::size_t i = 0; i < leaf_regs.size(); ++i)
      if (p.leaves[i].dtype == DType::F32) // index leaves are never differentiated
        out +=
            fmt::format("    bad += check(\"grad %{}\", grad_of({}), {})\n", leaf_regs[i],
                        dual ? leaf_name(leaf_regs[i]) : reg(leaf_regs[i]),
                        expected_args(repro.expected_grads[i], repro_detail::bounds_of(repro, i)));
  }
  if (hessian) {
    const std::vector<Reg> leaf_regs = p.leaf_registers();
    std::size_t at = 0;
    for (std::size_t i = 0; i < leaf_regs.size(); ++i)
      if (p.leaves[i].dtype == DType::F32)
        out += fmt::format("    bad += check(\"hvp %{}\", hvp[{}], {})\n", leaf_regs[i], at++,
                           expected_args(repro.expected_hvps[i], repro.hvp_bounds.empty()
                                                                     ? std::vector<double>{}
                                                                     : repro.hvp_bounds[i]));
  }
  out += "    print(\"DIVERGES: %d element(s)\" % bad if bad else \"AGREES (0 diverging "
         "elements)\")\n";
  out += "    return 1 if bad else 0\n\n";
  // Reproducing first (main), then the helpers it calls, which Python finds at run time.
  std::string script = head;
  // LibTorch picks its kernel set at its first dispatch, from this variable.
  if (repro.path == ReproPath::Scalar)
    script += "\nimport os\nos.environ[\"ATEN_CPU_CAPABILITY\"] = \"default\"  # LibTorch's scalar "
              "kernels\n";
  script += imports(uses_bits, out.find("F.") != std::string::npos, dual || hessian);
  script += kConstants;
  script += "TOLERANCE = " + literal(repro.tolerance) + "\n";
  script += fmt::format("DTYPE = torch.{}\n\n", torch_dtype_name(p.float_dtype));
  script += out;
  if (uses_bits) script += kBitsHelper;
  if (uses_layouts) script += kLeafLayoutHelper;
  if (strided) script += kLayoutHelper;
  if (uses_inplace) script += kInplaceDestinationHelper;
  if (dual || hessian) script += kTangentHelpers;
  if (hessian) script += kHessianHelper;
  script += kHelpers;
  script += "\nif __name__ == \"__main__\":\n    sys.exit(main())\n";
  return script;
}

} // namespace burnmark
