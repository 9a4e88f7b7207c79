// The Python reproducer: one PyTorch call per SSA instruction, named like the registers, then
// the checks against the expected values.
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "burnmark/ir/shape_rules.h"
#include "burnmark/ir/text.h"
#include "literals.h"

namespace burnmark {
namespace {

std::string reg(Reg r) {
  return fmt::format("r{}", r);
}

// In forward mode, the leaf a register's dual tensor is made from.
std::string leaf_name(Reg r) {
  return fmt::format("r{}_leaf", r);
}

std::string literal(double v) {
  return double_literal(v, "nan", "inf");
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

std::string py_bool(bool b) {
  return b ? "True" : "False";
}

std::string int_list(const Shape& s) {
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i)
    out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The same overloads as the C++ reproducer and the BurnMark backend (a Python float exponent
// reaches pow's Scalar overload and its fast paths).
std::string call(const Program& p, const Instr& in, bool scripted) {
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
  }
  return "";
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

// Only the modules the script uses: struct for bit-pattern leaves, F for torch.nn.functional
// calls, fwAD for forward mode.
std::string imports(bool bits, bool functional, bool forward_ad) {
  std::string out = "\nimport math\n";
  if (bits) out += "import struct\n";
  out += "import sys\n\nimport torch\n";
  if (forward_ad) out += "import torch.autograd.forward_ad as fwAD\n";
  if (functional) out += "import torch.nn.functional as F\n";
  return out;
}

constexpr const char* kConstants = R"(
nan = float("nan")
inf = float("inf")
)";

// Only when some leaf value has no exact decimal spelling (a NaN with a payload or a sign).
constexpr const char* kBitsHelper = R"(
def leaf(shape, requires_grad, bits):
    """A DTYPE leaf from exact bit patterns (float64 ones in a float64 program, whose values need
    not be floats, float32 ones otherwise), so that NaN payloads, -0 and subnormals survive
    (every value is exact in DTYPE)."""
    wide = DTYPE == torch.float64
    raw = bytearray(struct.pack("=%d%s" % (len(bits), "Q" if wide else "I"), *bits))
    t = torch.frombuffer(raw, dtype=torch.float64 if wide else torch.float32)
    return t.clone().reshape(shape).to(DTYPE).requires_grad_(requires_grad)

)";

constexpr const char* kHelpers = R"(
# ---- Checking: BurnMark's comparison, so that the exit status says whether PyTorch agrees ----


def versions():
    """What a report needs: the PyTorch release and the CPU kernel set it dispatched to."""
    cpu = getattr(torch.backends, "cpu", None)
    capability = cpu.get_cpu_capability() if cpu and hasattr(cpu, "get_cpu_capability") else "?"
    return "torch %s, CPU kernels %s" % (torch.__version__, capability)


def diverges(got, expected, bound):
    """NaN vs non-NaN diverges, two NaNs agree, infinities must match exactly (sign included).
    Finite values: with no bound (None), diverge when |got - expected| > TOLERANCE * max(1,
    |got|, |expected|); with a bound E (the rounding a correct implementation may add), when
    |got - expected| > E + TOLERANCE * max(|got|, |expected|), relative only, unless E reaches
    zero (0 < E >= |expected|: zero up to rounding), where the max takes 1 too. An infinite
    bound means either answer is right."""
    if bound is not None and not bound < math.inf:
        return False
    if math.isnan(got) or math.isnan(expected):
        return not (math.isnan(got) and math.isnan(expected))
    if math.isinf(got) or math.isinf(expected):
        return got != expected
    larger = max(abs(got), abs(expected))
    if bound is None:
        return abs(got - expected) > TOLERANCE * max(1.0, larger)
    if 0 < bound and abs(expected) <= bound:
        larger = max(1.0, larger)
    return abs(got - expected) > bound + TOLERANCE * larger


def check(name, got, expected, bounds=None):
    """Prints PyTorch's values beside the expected ones (every element of small tensors, only
    the diverging ones of large tensors) and returns how many diverge."""
    values = got.detach().double().flatten().tolist()
    if len(values) != len(expected):
        print("%s: torch has %d elements, expected %d  <-- DIVERGES" % (name, len(values), len(expected)))
        return 1
    bounds = bounds or [None] * len(expected)
    bad = 0
    for i, (v, e) in enumerate(zip(values, expected)):
        d = diverges(v, e, bounds[i])
        bad += d
        if d or len(values) <= 64:
            print("%s[%d]  torch % .9g  expected % .17g%s" % (name, i, v, e, "  <-- DIVERGES" if d else ""))
    print("%s: %d of %d elements diverge" % (name, bad, len(values)))
    return bad


def grad_of(t):
    """A leaf the root does not depend on has no gradient; it is zero."""
    return t.grad if t.grad is not None else torch.zeros_like(t)

)";

// Forward mode: BurnMark's leaf_tangent (driver.h), the same formula.
constexpr const char* kTangentHelpers = R"(
TANGENT_STEPS = [1.0, -0.5, 2.0, -1.5, 0.75, -1.0, 0.25, -2.0]


def tangent(shape, leaf_index):
    """The direction leaf number leaf_index is differentiated along: nonzero, exact in DTYPE."""
    n = math.prod(shape)
    steps = [TANGENT_STEPS[(i * 3 + leaf_index * 5) % 8] for i in range(n)]
    return torch.tensor(steps, dtype=torch.float32).reshape(shape).to(DTYPE)


def tangent_of(t):
    """A root no tangent reached has derivative zero along it."""
    found = fwAD.unpack_dual(t).tangent
    return found if found is not None else torch.zeros_like(t)

)";

// Second order: H·v as BurnMark's libtorch backend computes it (libtorch_framework.cpp).
constexpr const char* kHessianHelper = R"(
def hessian_vector(root, leaves, directions):
    """Each leaf's H·v by double backward: the gradients with create_graph, then the gradient
    of sum <gradient, v>; zero for a leaf nothing second-order reaches."""
    grads = torch.autograd.grad(root, leaves, torch.ones_like(root), retain_graph=True,
                                create_graph=True, allow_unused=True)
    objective = None
    for g, v in zip(grads, directions):
        if g is not None and g.requires_grad:
            term = (g * v).sum()
            objective = term if objective is None else objective + term
    if objective is None:
        return [torch.zeros_like(leaf) for leaf in leaves]
    hv = torch.autograd.grad(objective, leaves, retain_graph=True, allow_unused=True)
    return [h if h is not None else torch.zeros_like(leaf) for h, leaf in zip(hv, leaves)]


def hessian_by_dual(root, leaves):
    """Each leaf's H·v by forward over reverse: inside the dual level the gradients, taken with
    create_graph, are dual tensors, and their tangents are H·v."""
    grads = torch.autograd.grad(root, leaves, torch.ones_like(root), retain_graph=True,
                                create_graph=True, allow_unused=True)
    out = []
    for g, leaf in zip(grads, leaves):
        found = None if g is None else fwAD.unpack_dual(g).tangent
        out.append(found if found is not None else torch.zeros_like(leaf))
    return out

)";

// libtorch-strided's layouts, the same views and copies as with_register_layout.
constexpr const char* kLayoutHelper = R"(
def layout(t, reg):
    """The same values in register reg's layout: reg % 3 == 0 transposed storage, 1 every other
    element (stride 2), 2 storage offset 1; rank < 2 takes stride 2, one element the offset."""
    kind = reg % 3
    if t.numel() <= 1:
        kind = 2
    if kind == 0 and t.dim() < 2:
        kind = 1
    if kind == 0:
        rev = list(range(t.dim()))[::-1]
        return t.permute(rev).contiguous().permute(rev)
    if kind == 1:
        return torch.stack([t, t], -1).select(-1, 0)
    return torch.cat([t.new_zeros(1), t.flatten()]).narrow(0, 1, t.numel()).view(t.shape)

)";

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

std::string emit_python_repro(const ReproCase& repro) {
  repro_detail::check_case(repro);
  const Program& p = repro.program;
  const bool scripted = repro.path == ReproPath::Jit || repro.path == ReproPath::Nnc;
  const bool strided = repro.path == ReproPath::Strided;
  const bool hessian = repro.check_hvp;
  const bool by_dual = hessian && repro.hvp_forward_over_reverse;
  const bool dual = repro.check_tangent || by_dual;
  if (dual && repro.path != ReproPath::Eager && repro.path != ReproPath::Scalar)
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
                           strided ? ", every tensor re-laid out by layout()" : "");
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
      to += fmt::format("{}# %{} = leaf {}{}\n", ind, r, float_dtype_name(p.float_dtype),
                        s.shape.to_string());
      const std::string made =
          decimal ? fmt::format("torch.tensor([{}], dtype=DTYPE){}.requires_grad_({})",
                                repro_detail::join_wrapped(decimals, 8, ind + "    "),
                                s.shape.rank() == 1 ? "" : ".reshape(" + int_list(s.shape) + ")",
                                py_bool(repro.check_gradients && !strided))
                  : fmt::format("leaf({}, {}, [{}])", int_list(s.shape),
                                py_bool(repro.check_gradients && !strided),
                                repro_detail::join_wrapped(bits, 8, ind + "    "));
      // Forward mode: the program sees the dual tensor, the gradient is read from the leaf.
      to += fmt::format("{}{} = {}\n", ind, dual ? leaf_name(r) : reg(r),
                        strided ? fmt::format("layout({}, {}).detach().requires_grad_({})", made, r,
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
      to += fmt::format("{}{} = {}  # {}\n", ind, reg(r), laid_out(call(p, s.instr, scripted), r),
                        stmt_to_text(p, r));
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
  if (strided) script += kLayoutHelper;
  if (dual || hessian) script += kTangentHelpers;
  if (hessian) script += kHessianHelper;
  script += kHelpers;
  script += "\nif __name__ == \"__main__\":\n    sys.exit(main())\n";
  return script;
}

} // namespace burnmark
