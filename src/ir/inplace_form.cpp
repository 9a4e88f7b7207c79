// libtorch-inplace's choice between an op's in-place form and its functional call (see
// inplace_form.h); one case per op, no default, so a new op fails the build until it is decided.
#include "burnmark/ir/inplace_form.h"

namespace burnmark {

bool runs_in_place(const Instr& instr, bool fits) {
  const Attrs& a = instr.attrs;
  switch (instr.op) {
  case Op::Neg:
  case Op::Abs:
  case Op::Exp:
  case Op::Log:
  case Op::Sqrt:
  case Op::Pow:
  case Op::Relu:
  case Op::Sigmoid:
  case Op::Tanh:
  case Op::Clamp:
  case Op::Sin:
  case Op::Cos:
  case Op::Tan:
  case Op::Asin:
  case Op::Acos:
  case Op::Atan:
  case Op::Sinh:
  case Op::Cosh:
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
  case Op::ClampMin:
  case Op::ClampMax:
  case Op::Silu:
  case Op::Mish:
  case Op::Selu:
  case Op::Hardtanh:
  case Op::Relu6:
  case Op::Hardsigmoid:
  case Op::Hardswish:
  case Op::Logit:
  case Op::Cumsum:
  case Op::Cumprod:
  case Op::Tril:
  case Op::Triu:
  // These write into self whatever the other operands' shapes: scatter and index forms by
  // their indices, masked_scatter by a mask the shape rule broadcasts to self.
  case Op::ScatterAdd:
  case Op::IndexAdd:
  case Op::IndexCopy:
  case Op::IndexFill:
  case Op::IndexPut:
  case Op::MaskedScatter:
  case Op::ScatterReduce: return true;
  // Their result-based backward raises for a negative alpha or slope, as documented.
  case Op::Elu:
  case Op::Celu: return a.alpha >= 0;
  case Op::LeakyRelu: return a.slope >= 0;
  // A binary form writes into the first operand: only when the result has its shape.
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::PowTensor:
  case Op::Atan2:
  case Op::Remainder:
  case Op::Fmod:
  case Op::DivRounded:
  case Op::Hypot:
  case Op::Xlogy:
  case Op::Copysign:
  case Op::Lerp:
  case Op::MaskedFill: return fits;
  // derivatives.yaml declares the in-place forms not differentiable: `not_implemented("inplace
  // version of asinh")`, and the same for acosh and atanh.
  case Op::Asinh:
  case Op::Acosh:
  case Op::Atanh:
  // No in-place form in LibTorch 1.13 (or one with other semantics: lt_ writes floats into x).
  case Op::SumAll:
  case Op::MeanAll:
  case Op::SumDim:
  case Op::MeanDim:
  case Op::Transpose:
  case Op::Concat:
  case Op::Repeat:
  case Op::Matmul:
  case Op::LogSigmoid:
  case Op::Softplus:
  case Op::Gelu:
  case Op::Softsign:
  case Op::Hardshrink:
  case Op::Softshrink:
  case Op::Tanhshrink:
  case Op::Maximum:
  case Op::Minimum:
  case Op::Fmax:
  case Op::Fmin:
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne:
  case Op::Where:
  case Op::Prod:
  case Op::Amax:
  case Op::Amin:
  case Op::Max:
  case Op::Min:
  case Op::Var:
  case Op::Std:
  case Op::VectorNorm:
  case Op::ProdDim:
  case Op::AmaxDim:
  case Op::AminDim:
  case Op::MaxDim:
  case Op::MinDim:
  case Op::VarDim:
  case Op::StdDim:
  case Op::Logsumexp:
  case Op::NormDim:
  case Op::Logcumsumexp:
  case Op::Softmax:
  case Op::LogSoftmax:
  case Op::Normalize:
  case Op::CosineSimilarity:
  case Op::Mm:
  case Op::Mv:
  case Op::Dot:
  case Op::Outer:
  case Op::Addmm:
  case Op::Trace:
  case Op::Det:
  case Op::Slogdet:
  case Op::Inv:
  case Op::Flip:
  case Op::Roll:
  case Op::Unsqueeze:
  case Op::Squeeze:
  case Op::Movedim:
  case Op::Narrow:
  case Op::Select:
  case Op::Expand:
  case Op::Diagonal:
  case Op::Gather:
  case Op::IndexSelect:
  case Op::TakeAlongDim:
  case Op::Reshape:
  case Op::Permute:
  case Op::Slice:
  case Op::Stack:
  case Op::Chunk:
  case Op::DiagEmbed:
  case Op::Relayout:
  case Op::Bmm: return false;
  }
  return false;
}

} // namespace burnmark
