// The onednn plugin's kernels: BurnMark's ops mapped onto oneDNN primitives (dnnl_ops.h), forward
// and backward. Values come from oneDNN's own kernels, including its eltwise_backward at kinks and
// special values: where those differ from LibTorch's conventions the fuzzer is meant to see it.
// Only the fix-and-continue patches the host turns on (onednn_patches.h) rewrite oneDNN's answer,
// each at its one known bug.
#include "onednn_kernels.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "row_grads.h"

namespace burnmark::onednn {
namespace {

using burnmark::plugin::OpId;
using dnnl::algorithm;

ConstView cv(const Dense<float>& d) {
  return ConstView{d.shape, d.data.data()};
}
View v(Dense<float>& d) {
  return View{d.shape, d.data.data()};
}

// A sum_dim / mean_dim result seen with the reduced axis kept as 1, whatever keepdim says: the
// same elements in the same order.
BurnmarkShape kept(const BurnmarkShape& in, int dim) {
  BurnmarkShape s = in;
  s.dims[dim] = 1;
  return s;
}

// The eltwise algorithm and its alpha, beta for a unary op, the same for forward and backward.
// LibTorch's backward of exp, sqrt, relu, sigmoid and tanh reads the result, so those use the
// *_use_dst_for_bwd variants, which read oneDNN's own forward result the same way.
struct Eltwise {
  algorithm alg;
  float alpha = 0.0f;
  float beta = 0.0f;
  bool uses_dst = false;
};

constexpr float kInf = std::numeric_limits<float>::infinity();

// -x as linear -1 * x + beta: beta = -0 keeps -(+0) = -0, which beta = +0 would turn into +0.
constexpr Eltwise kNeg{algorithm::eltwise_linear, -1.0f, -0.0f, false};

// oneDNN's clip refuses to create a primitive with a NaN bound (invalid_arguments): a gap in
// what the library can express, so the program is skipped rather than reported as an error.
Eltwise clip(const BurnmarkStmt& s, algorithm alg, float lo, float hi) {
  if (std::isnan(lo) || std::isnan(hi))
    throw burnmark::plugin::Unsupported{s.op, std::string(burnmark::plugin::op_id_name(s.op)) +
                                                  ": oneDNN's clip rejects a NaN bound"};
  return {alg, lo, hi, false};
}

Eltwise eltwise_of(const BurnmarkStmt& s) {
  switch (static_cast<OpId>(s.op)) {
  case OpId::Neg: return kNeg;
  case OpId::Abs: return {algorithm::eltwise_abs, 0.0f, 0.0f, false};
  case OpId::Exp: return {algorithm::eltwise_exp_use_dst_for_bwd, 0.0f, 0.0f, true};
  case OpId::Log: return {algorithm::eltwise_log, 0.0f, 0.0f, false};
  case OpId::Sqrt: return {algorithm::eltwise_sqrt_use_dst_for_bwd, 0.0f, 0.0f, true};
  case OpId::Pow:
    return {algorithm::eltwise_pow, 1.0f, static_cast<float>(s.attrs.exponent), false};
  case OpId::Relu: return {algorithm::eltwise_relu_use_dst_for_bwd, 0.0f, 0.0f, true};
  case OpId::Sigmoid: return {algorithm::eltwise_logistic_use_dst_for_bwd, 0.0f, 0.0f, true};
  case OpId::Tanh: return {algorithm::eltwise_tanh_use_dst_for_bwd, 0.0f, 0.0f, true};
  case OpId::Clamp: {
    // oneDNN's clip requires lo <= hi. LibTorch's min(max(x, lo), hi) with lo > hi is hi
    // everywhere with zero gradient, which clip(hi, hi) also gives.
    const auto lo = static_cast<float>(s.attrs.lo), hi = static_cast<float>(s.attrs.hi);
    return clip(s, algorithm::eltwise_clip, lo > hi ? hi : lo, hi);
  }
  case OpId::Square: return {algorithm::eltwise_square, 0.0f, 0.0f, false};
  // Forward only: oneDNN has no backward for round, whose gradient is zero (plugin_walk's
  // zero-filled grad_in is left as it is).
  case OpId::Round: return {algorithm::eltwise_round, 0.0f, 0.0f, false};
  // A one-sided clamp is clip with the other bound at an infinity, not at FLT_MAX: clip(x, lo,
  // FLT_MAX) would turn x = +inf into FLT_MAX, and min(x, +inf) is x for every x (clip's backward
  // test s <= +inf holds for x = +inf as well).
  case OpId::ClampMin:
    return clip(s, algorithm::eltwise_clip, static_cast<float>(s.attrs.lo), kInf);
  case OpId::ClampMax:
    return clip(s, algorithm::eltwise_clip, -kInf, static_cast<float>(s.attrs.hi));
  case OpId::LogSigmoid: return {algorithm::eltwise_logsigmoid, 0.0f, 0.0f, false};
  case OpId::Gelu:
    return {s.attrs.variant == 0 ? algorithm::eltwise_gelu_erf : algorithm::eltwise_gelu_tanh, 0.0f,
            0.0f, false};
  // swish is x * sigmoid(alpha x).
  case OpId::Silu: return {algorithm::eltwise_swish, 1.0f, 0.0f, false};
  case OpId::Mish: return {algorithm::eltwise_mish, 0.0f, 0.0f, false};
  // The *_use_dst_for_bwd forms of elu and relu need alpha >= 0, so these read the input.
  case OpId::Elu: return {algorithm::eltwise_elu, static_cast<float>(s.attrs.alpha), 0.0f, false};
  case OpId::LeakyRelu:
    return {algorithm::eltwise_relu, static_cast<float>(s.attrs.slope), 0.0f, false};
  // clip_v2's backward passes the gradient only strictly between the bounds, which is
  // hardtanh's (and relu6's) rule; clip's passes at the upper bound.
  case OpId::Hardtanh:
    return clip(s, algorithm::eltwise_clip_v2, static_cast<float>(s.attrs.lo),
                static_cast<float>(s.attrs.hi));
  case OpId::Relu6: return {algorithm::eltwise_clip_v2, 0.0f, 6.0f, false};
  // pow(x, -1) is 1 / x at every special value too (C99 F.9.4.4: pow(±0, -1) = ±inf, pow(±inf,
  // -1) = ±0). rsqrt is not mapped to pow(x, -0.5): that gives pow(-0, -0.5) = +inf and
  // pow(-inf, -0.5) = +0 where rsqrt gives -inf and NaN.
  case OpId::Reciprocal: return {algorithm::eltwise_pow, 1.0f, -1.0f, false};
  case OpId::Hardswish: return {algorithm::eltwise_hardswish, 0.0f, 0.0f, false};
  case OpId::Softplus: {
    // oneDNN 2.6's soft_relu is log(1 + e^x), beta 1, with no threshold: it is softplus where
    // the threshold is high enough that x and log1p(e^x) round to the same float above it
    // (e^-17 is below half an ulp of any x >= 17).
    if (s.attrs.beta != 1.0 || s.attrs.threshold < 17.0)
      throw burnmark::plugin::Unsupported{
          s.op, std::string(burnmark::plugin::op_id_name(s.op)) +
                    ": oneDNN's soft_relu is beta = 1 without a low threshold"};
    return {algorithm::eltwise_soft_relu, 0.0f, 0.0f, false};
  }
  case OpId::Add:
  case OpId::Sub:
  case OpId::Mul:
  case OpId::Div:
  case OpId::SumAll:
  case OpId::MeanAll:
  case OpId::SumDim:
  case OpId::MeanDim:
  case OpId::Transpose:
  case OpId::Concat:
  case OpId::Repeat:
  case OpId::Matmul: break;
  // The other ops have no oneDNN eltwise mapping; forward_op never asks for them.
  default: break;
  }
  throw std::logic_error("not an eltwise op");
}

algorithm binary_of(OpId op) {
  switch (op) {
  case OpId::Add: return algorithm::binary_add;
  case OpId::Sub: return algorithm::binary_sub;
  case OpId::Mul: return algorithm::binary_mul;
  case OpId::Div: return algorithm::binary_div;
  case OpId::Maximum: return algorithm::binary_max;
  case OpId::Minimum: return algorithm::binary_min;
  case OpId::Neg:
  case OpId::Abs:
  case OpId::Exp:
  case OpId::Log:
  case OpId::Sqrt:
  case OpId::Pow:
  case OpId::Relu:
  case OpId::Sigmoid:
  case OpId::Tanh:
  case OpId::SumAll:
  case OpId::MeanAll:
  case OpId::SumDim:
  case OpId::MeanDim:
  case OpId::Transpose:
  case OpId::Concat:
  case OpId::Repeat:
  case OpId::Matmul:
  case OpId::Clamp: break;
  default: break;
  }
  throw std::logic_error("not a binary op");
}

// The shape of a matmul operand's gradient before un-broadcasting: the result's batch dims
// with the operand's own last two.
BurnmarkShape batch_broadcast(const BurnmarkShape& out, const BurnmarkShape& operand) {
  BurnmarkShape s = out;
  s.dims[out.rank - 2] = operand.dims[operand.rank - 2];
  s.dims[out.rank - 1] = operand.dims[operand.rank - 1];
  return s;
}

algorithm softmax_alg(OpId op) {
  return op == OpId::LogSoftmax ? algorithm::softmax_log : algorithm::softmax_accurate;
}

// The reduction algorithm of a reduction op oneDNN computes. max and min (over every element or
// along a dim) are the same values as amax and amin; only their backward differs.
algorithm reduction_of(OpId op) {
  switch (op) {
  case OpId::Prod:
  case OpId::ProdDim: return algorithm::reduction_mul;
  case OpId::Amax:
  case OpId::Max:
  case OpId::AmaxDim:
  case OpId::MaxDim: return algorithm::reduction_max;
  case OpId::Amin:
  case OpId::Min:
  case OpId::AminDim:
  case OpId::MinDim: return algorithm::reduction_min;
  case OpId::VectorNorm:
  case OpId::NormDim: return algorithm::reduction_norm_lp_sum;
  default: break;
  }
  throw std::logic_error("not a reduction op");
}

bool reduces_along_dim(OpId op) {
  return op == OpId::ProdDim || op == OpId::AmaxDim || op == OpId::AminDim || op == OpId::MaxDim ||
         op == OpId::MinDim || op == OpId::NormDim;
}

// vector_norm's ord as reduction_norm_lp_sum's p: (sum |x|^p + eps)^(1 / p) with eps 0 is the
// p-norm for finite p >= 1, which oneDNN accepts. ord 0 (a count), ±inf (max / min of |x|) and
// p < 1 are not what the primitive computes, so those programs are skipped.
float norm_p(const BurnmarkStmt& s) {
  const double p = s.attrs.exponent;
  if (!(std::isfinite(p) && p >= 1.0))
    throw burnmark::plugin::Unsupported{
        s.op, std::string(burnmark::plugin::op_id_name(s.op)) + ": ord " + std::to_string(p) +
                  " is not a p-norm oneDNN's reduction computes (finite p >= 1)"};
  return static_cast<float>(p);
}

// The oneDNN data type a statement computes in: the program's float dtype. f64 is never
// declared (oneDNN has no f64 primitives on the CPU), so the host never sends it.
dnnl::memory::data_type data_type_of(const BurnmarkStmt& s) {
  switch (s.dtype) {
  case BURNMARK_DTYPE_F32: return dnnl::memory::data_type::f32;
  case BURNMARK_DTYPE_BF16: return dnnl::memory::data_type::bf16;
  case BURNMARK_DTYPE_F16: return dnnl::memory::data_type::f16;
  default: break;
  }
  throw burnmark::plugin::Unsupported{s.op, std::string(burnmark::plugin::op_id_name(s.op)) +
                                                ": oneDNN computes in f32, bf16 or f16 only"};
}

} // namespace

void OnednnKernels::forward(const BurnmarkStmt& s, In in, Dense<float>& out) {
  guarded(s, [&] { forward_op(s, in, out); });
  burnmark::onednn::patch_forward(patches_, s, in, out);
}

void OnednnKernels::backward(const BurnmarkStmt& s, In in, const Dense<float>& out,
                             const Dense<float>& g, GradIn gin) {
  guarded(s, [&] { backward_op(s, in, out, g, gin); });
  burnmark::onednn::patch_backward(patches_, s, in, out, g, gin);
}
// A primitive oneDNN has no implementation for is a gap in the library, not a wrong answer.
template <class F> void OnednnKernels::guarded(const BurnmarkStmt& s, F&& f) {
  const burnmark::onednn::DnnlOps::SingleThreaded one_thread(ops_);
  // Every primitive of the statement reads and writes memory of the program's dtype, as
  // LibTorch stores every intermediate of a backward formula in the tensors' dtype.
  ops_.set_dtype(data_type_of(s));
  try {
    f();
  } catch (const dnnl::error& e) {
    if (e.status == dnnl_unimplemented)
      throw burnmark::plugin::Unsupported{s.op, std::string(burnmark::plugin::op_id_name(s.op)) +
                                                    ": oneDNN has no implementation (" + e.what() +
                                                    ")"};
    throw;
  }
}

void OnednnKernels::forward_op(const BurnmarkStmt& s, In in, Dense<float>& out) {
  const auto op = static_cast<OpId>(s.op);
  switch (op) {
  case OpId::Add:
  case OpId::Sub:
  case OpId::Mul:
  case OpId::Div:
  case OpId::Maximum:
  case OpId::Minimum: return ops_.binary(binary_of(op), cv(*in[0]), cv(*in[1]), v(out));
  case OpId::Neg:
  case OpId::Abs:
  case OpId::Exp:
  case OpId::Log:
  case OpId::Sqrt:
  case OpId::Pow:
  case OpId::Relu:
  case OpId::Sigmoid:
  case OpId::Tanh:
  case OpId::Clamp:
  case OpId::Reciprocal:
  case OpId::Square:
  case OpId::Round:
  case OpId::ClampMin:
  case OpId::ClampMax:
  case OpId::LogSigmoid:
  case OpId::Gelu:
  case OpId::Silu:
  case OpId::Mish:
  case OpId::Elu:
  case OpId::LeakyRelu:
  case OpId::Hardtanh:
  case OpId::Relu6:
  case OpId::Softplus:
  case OpId::Hardswish: {
    const Eltwise e = eltwise_of(s);
    return ops_.eltwise(e.alg, e.alpha, e.beta, cv(*in[0]), v(out));
  }
  case OpId::SumAll: return ops_.reduce_to(algorithm::reduction_sum, cv(*in[0]), v(out));
  case OpId::MeanAll: return ops_.reduce_to(algorithm::reduction_mean, cv(*in[0]), v(out));
  case OpId::SumDim:
  case OpId::MeanDim:
    return ops_.reduce_to(op == OpId::SumDim ? algorithm::reduction_sum : algorithm::reduction_mean,
                          cv(*in[0]), View{kept(in[0]->shape, s.attrs.dim), out.data.data()});
  case OpId::Transpose: return ops_.transpose(cv(*in[0]), s.attrs.dim, s.attrs.dim1, v(out));
  case OpId::Concat: return ops_.concat(cv(*in[0]), cv(*in[1]), s.attrs.dim, v(out));
  case OpId::Repeat: return ops_.repeat(cv(*in[0]), s.attrs.dim, s.attrs.times, v(out));
  case OpId::Matmul:
  case OpId::Mm: return ops_.matmul(cv(*in[0]), false, cv(*in[1]), false, v(out));
  case OpId::Addmm: {
    // beta input + alpha (mat1 @ mat2): alpha is matmul's output scale, beta the scale of a
    // sum post-op over input broadcast into dst. beta = 0 ignores input (documented), so
    // there is no post-op then.
    const auto beta = static_cast<float>(s.attrs.beta), alpha = static_cast<float>(s.attrs.alpha);
    if (beta == 0.0f) return ops_.matmul(cv(*in[1]), false, cv(*in[2]), false, v(out), alpha);
    ops_.expand(cv(*in[0]), v(out));
    return ops_.matmul(cv(*in[1]), false, cv(*in[2]), false, v(out), alpha, true, beta);
  }
  case OpId::Softmax:
  case OpId::LogSoftmax: return ops_.softmax(softmax_alg(op), cv(*in[0]), s.attrs.dim, v(out));
  case OpId::Prod:
  case OpId::Amax:
  case OpId::Amin:
  case OpId::Max:
  case OpId::Min:
  case OpId::VectorNorm:
  case OpId::ProdDim:
  case OpId::AmaxDim:
  case OpId::AminDim:
  case OpId::MaxDim:
  case OpId::MinDim:
  case OpId::NormDim: return reduce_forward(s, *in[0], out);
  // Not in kOps (no oneDNN primitive computes them exactly), so the host never sends them.
  default: break;
  }
  throw burnmark::plugin::Unsupported{s.op, {}};
}

// Each gradient is built at the shape the op saw its input (LibTorch's order of operations)
// and then summed down to the operand's shape with a oneDNN reduction: plugin_walk hands
// over grad_in already at the operand's shape and leaves un-broadcasting to the kernel.
void OnednnKernels::backward_op(const BurnmarkStmt& s, In in, const Dense<float>& out,
                                const Dense<float>& g, GradIn gin) {
  const auto op = static_cast<OpId>(s.op);
  switch (op) {
  case OpId::Add:
    sum_to(cv(g), *gin[0]);
    sum_to(cv(g), *gin[1]);
    return;
  case OpId::Sub: {
    sum_to(cv(g), *gin[0]);
    Dense<float> neg_g = negated(g);
    sum_to(cv(neg_g), *gin[1]);
    return;
  }
  case OpId::Mul: {
    Dense<float> t = Dense<float>::zeros(out.shape);
    ops_.binary(algorithm::binary_mul, cv(g), cv(*in[1]), v(t)); // grad * other
    sum_to(cv(t), *gin[0]);
    ops_.binary(algorithm::binary_mul, cv(g), cv(*in[0]), v(t)); // grad * self
    sum_to(cv(t), *gin[1]);
    return;
  }
  case OpId::Div: {
    Dense<float> t = Dense<float>::zeros(out.shape);
    ops_.binary(algorithm::binary_div, cv(g), cv(*in[1]), v(t)); // grad / other
    sum_to(cv(t), *gin[0]);
    // -grad * ((self / other) / other)
    ops_.binary(algorithm::binary_div, cv(*in[0]), cv(*in[1]), v(t));
    ops_.binary(algorithm::binary_div, cv(t), cv(*in[1]), v(t));
    Dense<float> neg_g = negated(g);
    ops_.binary(algorithm::binary_mul, cv(t), cv(neg_g), v(t)); // in place as src0; mul commutes
    sum_to(cv(t), *gin[1]);
    return;
  }
  case OpId::Maximum:
  case OpId::Minimum: {
    // LibTorch: grad where the operand is not beaten, halved at ties; a NaN makes every
    // comparison false, so both operands get it whole. The share is 1 - beaten - eq / 2 (0, 0.5
    // or 1, exact), made by comparison primitives and multiplied in. "Beaten" is always
    // binary_lt with the operands in the needed order: oneDNN 2.6's binary_gt and binary_ge
    // are true when an operand is NaN (unordered compare predicates), binary_lt is false.
    const bool max = op == OpId::Maximum;
    Dense<float> eq = Dense<float>::zeros(out.shape), t = Dense<float>::zeros(out.shape);
    ops_.binary(algorithm::binary_eq, cv(*in[0]), cv(*in[1]), v(eq));
    ops_.eltwise(algorithm::eltwise_linear, -0.5f, 1.0f, cv(eq), v(eq)); // 1 - eq / 2
    share_to(cv(eq), max ? *in[0] : *in[1], max ? *in[1] : *in[0], g, t, *gin[0]);
    share_to(cv(eq), max ? *in[1] : *in[0], max ? *in[0] : *in[1], g, t, *gin[1]);
    return;
  }
  case OpId::Neg:
  case OpId::Abs:
  case OpId::Exp:
  case OpId::Log:
  case OpId::Sqrt:
  case OpId::Pow:
  case OpId::Relu:
  case OpId::Sigmoid:
  case OpId::Tanh:
  case OpId::Clamp:
  case OpId::Reciprocal:
  case OpId::Square:
  case OpId::Round:
  case OpId::ClampMin:
  case OpId::ClampMax:
  case OpId::LogSigmoid:
  case OpId::Gelu:
  case OpId::Silu:
  case OpId::Mish:
  case OpId::Elu:
  case OpId::LeakyRelu:
  case OpId::Hardtanh:
  case OpId::Relu6:
  case OpId::Softplus:
  case OpId::Hardswish: {
    const Eltwise e = eltwise_of(s);
    if (op == OpId::Round) return; // zero gradient; grad_in is already zeros
    return ops_.eltwise_backward(e.alg, e.alpha, e.beta, e.uses_dst ? cv(out) : cv(*in[0]), cv(g),
                                 v(*gin[0]));
  }
  case OpId::SumAll: return ops_.expand(cv(g), v(*gin[0]));
  case OpId::MeanAll:
    ops_.expand(cv(g), v(*gin[0]));
    return ops_.divide_by(cv(*gin[0]), static_cast<float>(gin[0]->numel()), v(*gin[0]));
  case OpId::SumDim:
    return ops_.expand(ConstView{kept(in[0]->shape, s.attrs.dim), g.data.data()}, v(*gin[0]));
  case OpId::MeanDim:
    ops_.expand(ConstView{kept(in[0]->shape, s.attrs.dim), g.data.data()}, v(*gin[0]));
    return ops_.divide_by(cv(*gin[0]), static_cast<float>(in[0]->shape.dims[s.attrs.dim]),
                          v(*gin[0]));
  case OpId::Transpose: return ops_.transpose(cv(g), s.attrs.dim, s.attrs.dim1, v(*gin[0]));
  case OpId::Concat:
    ops_.slice(cv(g), s.attrs.dim, 0, v(*gin[0]));
    return ops_.slice(cv(g), s.attrs.dim, in[0]->shape.dims[s.attrs.dim], v(*gin[1]));
  case OpId::Repeat: return ops_.unrepeat(cv(g), s.attrs.dim, s.attrs.times, v(*gin[0]));
  case OpId::Matmul:
    // grad @ other^T and self^T @ grad, at the result's batch shape; transposes are strides.
    matmul_grad(cv(g), false, cv(*in[1]), true, out.shape, *gin[0]);
    matmul_grad(cv(*in[0]), true, cv(g), false, out.shape, *gin[1]);
    return;
  case OpId::Mm:
    ops_.matmul(cv(g), false, cv(*in[1]), true, v(*gin[0]));
    return ops_.matmul(cv(*in[0]), true, cv(g), false, v(*gin[1]));
  case OpId::Addmm: {
    // maybe_multiply(grad, beta) summed to input's shape; alpha (grad @ mat2^T) and alpha
    // (mat1^T @ grad), alpha as the output scale (skipped at 1, as maybe_multiply does).
    const auto beta = static_cast<float>(s.attrs.beta), alpha = static_cast<float>(s.attrs.alpha);
    if (beta == 1.0f) {
      sum_to(cv(g), *gin[0]);
    } else {
      Dense<float> t = Dense<float>::zeros(g.shape);
      ops_.binary_scalar(algorithm::binary_mul, cv(g), beta, v(t));
      sum_to(cv(t), *gin[0]);
    }
    ops_.matmul(cv(g), false, cv(*in[2]), true, v(*gin[1]), alpha);
    return ops_.matmul(cv(*in[1]), true, cv(g), false, v(*gin[2]), alpha);
  }
  case OpId::Softmax:
  case OpId::LogSoftmax:
    return ops_.softmax_backward(softmax_alg(op), cv(out), cv(g), s.attrs.dim, v(*gin[0]));
  case OpId::Prod:
  case OpId::Amax:
  case OpId::Amin:
  case OpId::Max:
  case OpId::Min:
  case OpId::VectorNorm:
  case OpId::ProdDim:
  case OpId::AmaxDim:
  case OpId::AminDim:
  case OpId::MaxDim:
  case OpId::MinDim:
  case OpId::NormDim: return reduce_backward(s, *in[0], out, g, *gin[0]);
  default: break;
  }
  throw burnmark::plugin::Unsupported{s.op, {}};
}

// A reduction computed by oneDNN, down to the result seen with the reduced axis kept. oneDNN
// refuses one that reduces nothing (a single element, an axis of size 1): the product, max
// and min of one element are that element (a copy), its p-norm is |x| (oneDNN's abs).
void OnednnKernels::reduce_forward(const BurnmarkStmt& s, const Dense<float>& x,
                                   Dense<float>& out) {
  const auto op = static_cast<OpId>(s.op);
  const bool along = reduces_along_dim(op);
  const View dst = along ? View{kept(x.shape, s.attrs.dim), out.data.data()} : v(out);
  const bool is_norm = op == OpId::VectorNorm || op == OpId::NormDim;
  const float p = is_norm ? norm_p(s) : 0.0f;
  const bool nothing = along ? x.shape.dims[s.attrs.dim] == 1 : x.numel() == 1;
  if (nothing && is_norm) return ops_.eltwise(algorithm::eltwise_abs, 0.0f, 0.0f, cv(x), dst);
  if (nothing) return ops_.reduce_to(reduction_of(op), cv(x), dst); // a copy
  ops_.reduce(reduction_of(op), p, 0.0f, cv(x), dst);
}

// The plugin's own backward of those (row_grads.h), from oneDNN's forward result.
void OnednnKernels::reduce_backward(const BurnmarkStmt& s, const Dense<float>& x,
                                    const Dense<float>& out, const Dense<float>& g,
                                    Dense<float>& dx) {
  using namespace burnmark::onednn;
  const auto op = static_cast<OpId>(s.op);
  const Rows r = rows_of(x.shape, reduces_along_dim(op) ? s.attrs.dim : -1);
  const float *px = x.data.data(), *py = out.data.data(), *pg = g.data.data();
  float* pd = dx.data.data();
  switch (op) {
  case OpId::Prod:
  case OpId::ProdDim: return product_of_others(r, px, pg, pd);
  case OpId::Amax:
  case OpId::Amin:
  case OpId::AmaxDim:
  case OpId::AminDim: return split_between_equal(r, px, py, pg, pd);
  case OpId::Max:
  case OpId::Min: return distribute_evenly(r, px, py, pg, pd);
  case OpId::MaxDim:
  case OpId::MinDim: return select_first_extreme(r, op == OpId::MaxDim, px, pg, pd);
  case OpId::VectorNorm:
  case OpId::NormDim: return norm_backward(r, s.attrs.exponent, px, py, pg, pd);
  default: break;
  }
  throw std::logic_error("not a reduction op");
}

void OnednnKernels::sum_to(ConstView g, Dense<float>& grad) {
  ops_.reduce_to(algorithm::reduction_sum, g, v(grad));
}

// grad = sum_to(g * (base - (lhs < rhs))), with t as out-shaped scratch.
void OnednnKernels::share_to(ConstView base, const Dense<float>& lhs, const Dense<float>& rhs,
                             const Dense<float>& g, Dense<float>& t, Dense<float>& grad) {
  ops_.binary(algorithm::binary_lt, cv(lhs), cv(rhs), v(t));
  ops_.binary(algorithm::binary_sub, base, cv(t), v(t));
  ops_.binary(algorithm::binary_mul, cv(t), cv(g), v(t)); // in place as src0
  sum_to(cv(t), grad);
}

Dense<float> OnednnKernels::negated(const Dense<float>& g) {
  Dense<float> r = Dense<float>::zeros(g.shape);
  ops_.eltwise(kNeg.alg, kNeg.alpha, kNeg.beta, cv(g), v(r));
  return r;
}

void OnednnKernels::matmul_grad(ConstView a, bool ta, ConstView b, bool tb,
                                const BurnmarkShape& out, Dense<float>& grad) {
  const BurnmarkShape full = batch_broadcast(out, grad.shape);
  if (burnmark::plugin::same_shape(full, grad.shape)) return ops_.matmul(a, ta, b, tb, v(grad));
  Dense<float> t = Dense<float>::zeros(full);
  ops_.matmul(a, ta, b, tb, v(t));
  sum_to(cv(t), grad);
}

} // namespace burnmark::onednn
