// Each op as the TorchScript expression of the ATen call the eager backend makes
// (libtorch_framework.cpp): same overload, same attributes, and the same composite for the three
// ops LibTorch's C++ API builds from others (softsign, tanhshrink, normalize).
#include "torchscript_source.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/layout.h"
#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"

namespace burnmark {
namespace {

std::string reg(Reg r) {
  return fmt::format("r{}", r);
}

// Always a float literal, never an int: `2` would select an integral Scalar, which is not the
// call the eager backend makes.
std::string real(double v) {
  return double_literal(v, "float('nan')", "float('inf')");
}

std::string boolean(bool b) {
  return b ? "True" : "False";
}

// "[2,3]" is also a TorchScript int list.
std::string int_list(const Shape& s) {
  return s.to_string();
}

// relayout as the eager backend's with_layout builds it: the values scattered into a NaN-filled
// buffer through the layout's view, then that view of the result. The operand is the buffer's
// content as it is: relayout's expanded dims have size 1.
std::string relayout(const std::string& x, const Attrs& a, const Shape& s) {
  const StridedView v = strided_view(attrs_layout(a), s);
  std::string strides;
  for (int d = 0; d < s.rank(); ++d)
    strides += fmt::format("{}{}", d == 0 ? "" : ",", v.strides[static_cast<std::size_t>(d)]);
  const std::string view = fmt::format("{}, [{}], {}", int_list(s), strides, v.storage_offset);
  return fmt::format("torch.as_strided(torch.as_strided_scatter(torch.full([{}], float('nan'), "
                     "dtype={}.dtype), {}, {}), {})",
                     v.storage_size, x, x, view, view);
}

// `result` is the statement's inferred shape (reshape names it).
std::string expression(const Program& p, const Instr& in, const Shape& result) {
  const std::string x = reg(in.operands[0]);
  const std::string y = in.operands.size() > 1 ? reg(in.operands[1]) : "";
  const std::string z = in.operands.size() > 2 ? reg(in.operands[2]) : "";
  const Attrs& a = in.attrs;
  const std::string name(op_name(in.op));
  const std::string keep = boolean(a.keepdim);
  switch (in.op) {
  // Ops whose text name is their ATen name and which take no attribute.
  case Op::Neg:
  case Op::Abs:
  case Op::Exp:
  case Op::Log:
  case Op::Sqrt:
  case Op::Relu:
  case Op::Sigmoid:
  case Op::Tanh:
  case Op::SumAll:
  case Op::MeanAll:
  case Op::Sin:
  case Op::Cos:
  case Op::Tan:
  case Op::Asin:
  case Op::Acos:
  case Op::Atan:
  case Op::Sinh:
  case Op::Cosh:
  case Op::Asinh:
  case Op::Acosh:
  case Op::Atanh:
  case Op::Erf:
  case Op::Erfc:
  case Op::Erfinv:
  case Op::Log1p:
  case Op::Expm1:
  case Op::Log2:
  case Op::Log10:
  case Op::Exp2:
  case Op::Rsqrt:
  case Op::Reciprocal:
  case Op::Square:
  case Op::Sign:
  case Op::Sgn:
  case Op::Floor:
  case Op::Ceil:
  case Op::Round:
  case Op::Trunc:
  case Op::Frac:
  case Op::Lgamma:
  case Op::Digamma:
  case Op::Silu:
  case Op::Mish:
  case Op::Selu:
  case Op::Relu6:
  case Op::Hardsigmoid:
  case Op::Hardswish:
  case Op::Prod:
  case Op::Amax:
  case Op::Amin:
  case Op::Max:
  case Op::Min:
  case Op::Trace: return fmt::format("torch.{}({})", name, x);
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Matmul:
  case Op::Maximum:
  case Op::Minimum:
  case Op::Fmax:
  case Op::Fmin:
  case Op::Atan2:
  case Op::Remainder:
  case Op::Fmod:
  case Op::Hypot:
  case Op::Xlogy:
  case Op::Copysign:
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne:
  case Op::Mm:
  case Op::Mv:
  case Op::Dot:
  case Op::Outer:
  case Op::Bmm: return fmt::format("torch.{}({}, {})", name, x, y);
  case Op::Where: return fmt::format("torch.where({}, {}, {})", x, y, z);
  case Op::Pow: return fmt::format("torch.pow({}, {})", x, real(a.exponent));
  case Op::PowTensor: return fmt::format("torch.pow({}, {})", x, y);
  case Op::SumDim: return fmt::format("torch.sum({}, [{}], {})", x, a.dim, keep);
  case Op::MeanDim: return fmt::format("torch.mean({}, [{}], {})", x, a.dim, keep);
  case Op::Transpose: return fmt::format("torch.transpose({}, {}, {})", x, a.dim, a.dim1);
  case Op::Concat: return fmt::format("torch.cat([{}, {}], {})", x, y, a.dim);
  case Op::Repeat: {
    Shape reps = p.shape_of(in.operands[0]);
    for (int i = 0; i < reps.rank(); ++i)
      reps[i] = i == a.dim ? a.times : 1;
    return fmt::format("{}.repeat({})", x, int_list(reps));
  }
  case Op::Clamp: return fmt::format("torch.clamp({}, {}, {})", x, real(a.lo), real(a.hi));
  case Op::ClampMin: return fmt::format("torch.clamp({}, {}, None)", x, real(a.lo));
  case Op::ClampMax: return fmt::format("torch.clamp({}, None, {})", x, real(a.hi));
  case Op::LogSigmoid: return fmt::format("torch.log_sigmoid({})", x);
  case Op::Softplus:
    return fmt::format("torch.softplus({}, {}, {})", x, real(a.beta), real(a.threshold));
  case Op::Gelu:
    return fmt::format("torch.gelu({}, approximate='{}')", x, a.variant == 1 ? "tanh" : "none");
  case Op::Elu:
  case Op::Celu: return fmt::format("torch.{}({}, {})", name, x, real(a.alpha));
  case Op::LeakyRelu: return fmt::format("torch.leaky_relu({}, {})", x, real(a.slope));
  case Op::Hardtanh: return fmt::format("torch.hardtanh({}, {}, {})", x, real(a.lo), real(a.hi));
  case Op::Softsign: return fmt::format("{} / (torch.abs({}) + 1)", x, x);
  case Op::Hardshrink:
  case Op::Softshrink: return fmt::format("torch.{}({}, {})", name, x, real(a.lambd));
  case Op::Tanhshrink: return fmt::format("{} - torch.tanh({})", x, x);
  case Op::Logit:
    return a.variant == 1 ? fmt::format("torch.logit({}, {})", x, real(a.eps))
                          : fmt::format("torch.logit({})", x);
  case Op::DivRounded:
    return fmt::format("torch.div({}, {}, rounding_mode='{}')", x, y,
                       a.variant == 1 ? "floor" : "trunc");
  case Op::Lerp: return fmt::format("torch.lerp({}, {}, {})", x, y, real(a.weight));
  case Op::Var:
  case Op::Std: return fmt::format("torch.{}({}, None, correction={})", name, x, a.variant);
  case Op::VectorNorm: return fmt::format("torch.linalg_vector_norm({}, {})", x, real(a.exponent));
  case Op::ProdDim: return fmt::format("torch.prod({}, {}, {})", x, a.dim, keep);
  case Op::AmaxDim: return fmt::format("torch.amax({}, [{}], {})", x, a.dim, keep);
  case Op::AminDim: return fmt::format("torch.amin({}, [{}], {})", x, a.dim, keep);
  case Op::MaxDim: return fmt::format("torch.max({}, {}, {})[0]", x, a.dim, keep);
  case Op::MinDim: return fmt::format("torch.min({}, {}, {})[0]", x, a.dim, keep);
  case Op::VarDim:
    return fmt::format("torch.var({}, [{}], correction={}, keepdim={})", x, a.dim, a.variant, keep);
  case Op::StdDim:
    return fmt::format("torch.std({}, [{}], correction={}, keepdim={})", x, a.dim, a.variant, keep);
  case Op::Logsumexp: return fmt::format("torch.logsumexp({}, [{}], {})", x, a.dim, keep);
  case Op::NormDim:
    return fmt::format("torch.linalg_vector_norm({}, {}, [{}], {})", x, real(a.exponent), a.dim,
                       keep);
  case Op::Cumsum:
  case Op::Cumprod:
  case Op::Logcumsumexp:
  case Op::Softmax:
  case Op::LogSoftmax: return fmt::format("torch.{}({}, {})", name, x, a.dim);
  case Op::Normalize:
    return fmt::format("{} / torch.norm({}, {}, [{}], True).clamp_min(1e-12).expand_as({})", x, x,
                       real(a.exponent), a.dim, x);
  case Op::CosineSimilarity: return fmt::format("torch.cosine_similarity({}, {}, {})", x, y, a.dim);
  case Op::Addmm:
    return fmt::format("torch.addmm({}, {}, {}, beta={}, alpha={})", x, y, z, real(a.beta),
                       real(a.alpha));
  case Op::Det: return fmt::format("torch.linalg_det({})", x);
  case Op::Slogdet: return fmt::format("torch.linalg_slogdet({})[1]", x);
  case Op::Inv: return fmt::format("torch.linalg_inv({})", x);
  case Op::Flip: return fmt::format("torch.flip({}, [{}])", x, a.dim);
  case Op::Roll: return fmt::format("torch.roll({}, [{}], [{}])", x, a.times, a.dim);
  case Op::Unsqueeze:
  case Op::Squeeze: return fmt::format("torch.{}({}, {})", name, x, a.dim);
  case Op::Tril:
  case Op::Triu: return fmt::format("torch.{}({}, {})", name, x, a.times);
  case Op::Movedim: return fmt::format("torch.movedim({}, {}, {})", x, a.dim, a.dim1);
  case Op::Narrow: return fmt::format("torch.narrow({}, {}, {}, {})", x, a.dim, a.dim1, a.times);
  case Op::Select: return fmt::format("torch.select({}, {}, {})", x, a.dim, a.dim1);
  case Op::Expand: {
    Shape sizes = p.shape_of(in.operands[0]);
    sizes[a.dim] = a.times;
    return fmt::format("{}.expand({})", x, int_list(sizes));
  }
  case Op::Diagonal:
    return fmt::format("torch.diagonal({}, {}, {}, {})", x, a.times, a.dim, a.dim1);
  case Op::Gather:
  case Op::IndexSelect: return fmt::format("torch.{}({}, {}, {})", name, x, a.dim, y);
  case Op::TakeAlongDim: return fmt::format("torch.take_along_dim({}, {}, {})", x, y, a.dim);
  case Op::ScatterAdd: return fmt::format("torch.scatter_add({}, {}, {}, {})", x, a.dim, y, z);
  case Op::ScatterReduce:
    return fmt::format("torch.scatter_reduce({}, {}, {}, {}, '{}', include_self={})", x, a.dim, y,
                       z, kScatterReduceNames[static_cast<std::size_t>(a.variant)],
                       boolean(a.include_self));
  case Op::MaskedFill: return fmt::format("torch.masked_fill({}, {}, {})", x, y, real(a.fill));
  case Op::IndexAdd: return fmt::format("torch.index_add({}, {}, {}, {})", x, a.dim, y, z);
  case Op::IndexCopy: return fmt::format("torch.index_copy({}, {}, {}, {})", x, a.dim, y, z);
  case Op::IndexFill:
    return fmt::format("torch.index_fill({}, {}, {}, {})", x, a.dim, y, real(a.fill));
  case Op::IndexPut:
    return fmt::format("torch.index_put({}, [{}], {}, accumulate={})", x, y, z,
                       boolean(a.variant != 0));
  case Op::MaskedScatter: return fmt::format("torch.masked_scatter({}, {}, {})", x, y, z);
  case Op::Reshape: return fmt::format("torch.reshape({}, {})", x, int_list(result));
  case Op::Permute: {
    const auto dims = *permutation_dims(a.times, p.shape_of(in.operands[0]).rank());
    Shape order;
    for (int i = 0; i < p.shape_of(in.operands[0]).rank(); ++i)
      order.push_back(dims[static_cast<std::size_t>(i)]);
    return fmt::format("torch.permute({}, {})", x, int_list(order));
  }
  case Op::Slice:
    return fmt::format("torch.slice({}, {}, {}, {}, {})", x, a.dim, a.dim1, a.times, a.variant);
  case Op::Stack: return fmt::format("torch.stack([{}, {}], {})", x, y, a.dim);
  case Op::Chunk: return fmt::format("torch.chunk({}, {}, {})[{}]", x, a.times, a.dim, a.dim1);
  case Op::DiagEmbed: return fmt::format("torch.diag_embed({}, {}, -2, -1)", x, a.times);
  case Op::Relayout: return relayout(x, a, result);
  }
  return "";
}

} // namespace

std::string torchscript_source(const Program& program) {
  std::string params;
  std::string body;
  std::vector<bool> used(program.stmts.size(), false);
  for (const Stmt& s : program.stmts) {
    if (s.kind == StmtKind::Alias) used[static_cast<std::size_t>(s.source)] = true;
    if (s.kind == StmtKind::Op)
      for (Reg r : s.instr.operands)
        used[static_cast<std::size_t>(r)] = true;
  }
  // Eager runs every statement, so an unused one that raises (inv of a singular matrix) fails
  // the whole run; the JIT would drop it as dead code. Returning the unused results too keeps
  // them, so both paths run the same statements.
  std::string outputs = reg(program.root);
  for (std::size_t i = 0; i < program.stmts.size(); ++i) {
    const Stmt& s = program.stmts[i];
    const Reg r = static_cast<Reg>(i);
    switch (s.kind) {
    case StmtKind::Leaf: params += (params.empty() ? "" : ", ") + reg(r) + ": Tensor"; break;
    // The same Value twice in the graph, as an alias is the same tensor twice in eager.
    case StmtKind::Alias: body += fmt::format("    {} = {}\n", reg(r), reg(s.source)); break;
    case StmtKind::Op:
      body += fmt::format("    {} = {}\n", reg(r), expression(program, s.instr, s.shape));
      if (!used[i] && r != program.root) outputs += ", " + reg(r);
      break;
    }
  }
  return fmt::format("def forward({}):\n{}    return ({},)\n", params, body, outputs);
}

} // namespace burnmark
