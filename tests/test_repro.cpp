// The reproducer emitters: what the emitted text says for every op and for special values, and
// that the emitted C++ (built with CMake against the installed LibTorch) and Python script (run
// with the installed PyTorch) exit 0 on values LibTorch really computes and non-zero, printing
// both values, on a planted wrong value.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/repro/repro.h"
#include "libtorch_programs.h"

#include "scratch_dir.h"

using namespace burnmark;
using namespace burnmark::testing;
namespace fs = std::filesystem;

namespace {

// A program whose values and gradients are small dyadic rationals, exact in float32, worked out
// by hand:
//   m = a * b          a = [[1,2],[3,4]], b = [0.5,-1]   -> m = [[0.5,-2],[1.5,-4]]
//   t = transpose(alias(m))                              -> m^T
//   s = sum_dim(m @ m^T, 1)  = m . c with c = column sums of m = [2,-6] -> s = [13, 27]
//   root = s^2 = [169, 729]; d (a [3] leaf) is never used, so its gradient is zero.
// With g = 2s = [26,54]: dL/dm[p,k] = g[p] c[k] + (g^T m)[k], g^T m = [94,-268]
//   -> dL/dm = [[146,-424],[202,-592]]; grad a = dL/dm * b = [[73,424],[101,592]];
//   grad b = column sums of dL/dm * a = [146+606, -848-2368] = [752,-3216].
ReproCase hand_computed_case() {
  ProgramBuilder b;
  const Reg a = b.leaf({2, 2}, {1, 2, 3, 4});
  const Reg v = b.leaf({2}, {0.5f, -1});
  b.leaf({3}, {1, 2, 3});
  const Reg m = b.op(Op::Mul, {a, v});
  const Reg t = b.op(Op::Transpose, {b.alias(m)}, two_dims(0, 1));
  const Reg s = b.op(Op::SumDim, {b.op(Op::Matmul, {m, t})}, dim_keep(1, false));
  ReproCase c;
  c.program = b.finish(b.op(Op::Pow, {s}, exponent(2)));
  c.title = "hand-computed: (rowsum((a*b) @ (a*b)^T))^2";
  c.expected_root = {169, 729};
  c.expected_grads = {{73, 424, 101, 592}, {752, -3216}, {0, 0, 0}};
  return c;
}

ReproCase planted_bug_case() {
  ReproCase c = hand_computed_case();
  c.expected_grads[0][1] = 425; // LibTorch computes 424
  return c;
}

// Every op once, for the text checks.
Program all_ops_program() {
  ProgramBuilder b;
  const Reg x = b.leaf({2, 3}, {1, 2, 3, 4, 5, 6});
  const Reg y = b.leaf({3, 2}, {1, 2, 3, 4, 5, 6});
  Reg r = b.op(Op::Add, {x, x});
  r = b.op(Op::Sub, {r, x});
  r = b.op(Op::Mul, {r, x});
  r = b.op(Op::Div, {r, x});
  for (Op op : {Op::Neg, Op::Abs, Op::Exp, Op::Log, Op::Sqrt, Op::Relu, Op::Sigmoid, Op::Tanh})
    r = b.op(op, {r});
  r = b.op(Op::Pow, {r}, exponent(-0.5));
  r = b.op(Op::Clamp, {r}, bounds(-1e6, 1e6));
  r = b.op(Op::Matmul, {r, y});
  r = b.op(Op::Concat, {r, b.op(Op::Transpose, {r}, two_dims(1, 0))}, on_dim(0));
  r = b.op(Op::Repeat, {r}, dim_times(1, 3));
  r = b.op(Op::MeanDim, {b.op(Op::SumDim, {r}, dim_keep(0, true))}, dim_keep(1, false));
  Reg acc = b.op(Op::Add, {b.op(Op::SumAll, {r}), b.op(Op::MeanAll, {r})});
  // The later vocabulary, each op (at the first entry of its attribute table) on inputs inside
  // every op's domain and away from kinks, summed into the root.
  const Reg z = b.leaf({2, 3}, {0.15f, 0.35f, 0.6f, 0.7f, 0.85f, 0.95f});
  const Reg w = b.leaf({3}, {0.4f, 1.3f, 2.2f});
  const Reg c = b.op(Op::Cosh, {z});
  acc = b.op(
      Op::Add,
      {acc, b.op(Op::SumAll,
                 {b.op(Op::Sin, {z},
                       op_info(Op::Sin).params.empty() ? Attrs{} : op_info(Op::Sin).params[0])})});
  acc = b.op(
      Op::Add,
      {acc, b.op(Op::SumAll,
                 {b.op(Op::Cos, {z},
                       op_info(Op::Cos).params.empty() ? Attrs{} : op_info(Op::Cos).params[0])})});
  acc = b.op(
      Op::Add,
      {acc, b.op(Op::SumAll,
                 {b.op(Op::Tan, {z},
                       op_info(Op::Tan).params.empty() ? Attrs{} : op_info(Op::Tan).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Asin, {z},
                                                   op_info(Op::Asin).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Asin).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Acos, {z},
                                                   op_info(Op::Acos).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Acos).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Atan, {z},
                                                   op_info(Op::Atan).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Atan).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Sinh, {z},
                                                   op_info(Op::Sinh).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Sinh).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Cosh, {z},
                                                   op_info(Op::Cosh).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Cosh).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Asinh, {z},
                                                   op_info(Op::Asinh).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Asinh).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Acosh, {c},
                                                   op_info(Op::Acosh).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Acosh).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Atanh, {z},
                                                   op_info(Op::Atanh).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Atanh).params[0])})});
  acc = b.op(
      Op::Add,
      {acc, b.op(Op::SumAll,
                 {b.op(Op::Erf, {z},
                       op_info(Op::Erf).params.empty() ? Attrs{} : op_info(Op::Erf).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Erfc, {z},
                                                   op_info(Op::Erfc).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Erfc).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Erfinv, {z},
                                                   op_info(Op::Erfinv).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Erfinv).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Log1p, {z},
                                                   op_info(Op::Log1p).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Log1p).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Expm1, {z},
                                                   op_info(Op::Expm1).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Expm1).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Log2, {z},
                                                   op_info(Op::Log2).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Log2).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Log10, {z},
                                                   op_info(Op::Log10).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Log10).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Exp2, {z},
                                                   op_info(Op::Exp2).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Exp2).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Rsqrt, {z},
                                                   op_info(Op::Rsqrt).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Rsqrt).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Reciprocal, {z},
                                                   op_info(Op::Reciprocal).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Reciprocal).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Square, {z},
                                                   op_info(Op::Square).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Square).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Sign, {z},
                                                   op_info(Op::Sign).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Sign).params[0])})});
  acc = b.op(
      Op::Add,
      {acc, b.op(Op::SumAll,
                 {b.op(Op::Sgn, {z},
                       op_info(Op::Sgn).params.empty() ? Attrs{} : op_info(Op::Sgn).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Floor, {z},
                                                   op_info(Op::Floor).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Floor).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Ceil, {z},
                                                   op_info(Op::Ceil).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Ceil).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Round, {z},
                                                   op_info(Op::Round).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Round).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Trunc, {z},
                                                   op_info(Op::Trunc).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Trunc).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Frac, {z},
                                                   op_info(Op::Frac).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Frac).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Lgamma, {z},
                                                   op_info(Op::Lgamma).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Lgamma).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Digamma, {z},
                                                   op_info(Op::Digamma).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Digamma).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::ClampMin, {z},
                                                   op_info(Op::ClampMin).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::ClampMin).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::ClampMax, {z},
                                                   op_info(Op::ClampMax).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::ClampMax).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::LogSigmoid, {z},
                                                   op_info(Op::LogSigmoid).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::LogSigmoid).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Softplus, {z},
                                                   op_info(Op::Softplus).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Softplus).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Gelu, {z},
                                                   op_info(Op::Gelu).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Gelu).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Silu, {z},
                                                   op_info(Op::Silu).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Silu).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Mish, {z},
                                                   op_info(Op::Mish).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Mish).params[0])})});
  acc = b.op(
      Op::Add,
      {acc, b.op(Op::SumAll,
                 {b.op(Op::Elu, {z},
                       op_info(Op::Elu).params.empty() ? Attrs{} : op_info(Op::Elu).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Selu, {z},
                                                   op_info(Op::Selu).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Selu).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Celu, {z},
                                                   op_info(Op::Celu).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Celu).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::LeakyRelu, {z},
                                                   op_info(Op::LeakyRelu).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::LeakyRelu).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Hardtanh, {z},
                                                   op_info(Op::Hardtanh).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Hardtanh).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Relu6, {z},
                                                   op_info(Op::Relu6).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Relu6).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Hardsigmoid, {z},
                                                   op_info(Op::Hardsigmoid).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Hardsigmoid).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Hardswish, {z},
                                                   op_info(Op::Hardswish).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Hardswish).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Softsign, {z},
                                                   op_info(Op::Softsign).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Softsign).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Hardshrink, {z},
                                                   op_info(Op::Hardshrink).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Hardshrink).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Softshrink, {z},
                                                   op_info(Op::Softshrink).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Softshrink).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Tanhshrink, {z},
                                                   op_info(Op::Tanhshrink).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Tanhshrink).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Logit, {z},
                                                   op_info(Op::Logit).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Logit).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Maximum, {z, w},
                                                   op_info(Op::Maximum).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Maximum).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Minimum, {z, w},
                                                   op_info(Op::Minimum).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Minimum).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Fmax, {z, w},
                                                   op_info(Op::Fmax).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Fmax).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Fmin, {z, w},
                                                   op_info(Op::Fmin).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Fmin).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Atan2, {z, w},
                                                   op_info(Op::Atan2).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Atan2).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::PowTensor, {z, w},
                                                   op_info(Op::PowTensor).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::PowTensor).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Remainder, {z, w},
                                                   op_info(Op::Remainder).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Remainder).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Fmod, {z, w},
                                                   op_info(Op::Fmod).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Fmod).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::DivRounded, {z, w},
                                                   op_info(Op::DivRounded).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::DivRounded).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Hypot, {z, w},
                                                   op_info(Op::Hypot).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Hypot).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Xlogy, {z, w},
                                                   op_info(Op::Xlogy).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Xlogy).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Copysign, {z, w},
                                                   op_info(Op::Copysign).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Copysign).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Lerp, {z, w},
                                                   op_info(Op::Lerp).params.empty()
                                                       ? Attrs{}
                                                       : op_info(Op::Lerp).params[0])})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Where, {b.op(Op::Lt, {z, w}), z, w})})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Where, {b.op(Op::Le, {z, w}), z, w})})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Where, {b.op(Op::Gt, {z, w}), z, w})})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Where, {b.op(Op::Ge, {z, w}), z, w})})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Where, {b.op(Op::Eq, {z, w}), z, w})})});
  acc = b.op(Op::Add, {acc, b.op(Op::SumAll, {b.op(Op::Where, {b.op(Op::Ne, {z, w}), z, w})})});
  // The reductions, scans and normalisers, along dim 1 where they take one.
  for (const OpInfo& info : kOpTable) {
    if (info.stable_id < 93) continue;
    Attrs at = info.params.empty() ? Attrs{} : info.params[0];
    at.dim = 1;
    Reg r2 = -1;
    switch (info.family) {
    case OpFamily::ReduceAll: r2 = b.op(info.op, {z}, at); break;
    case OpFamily::ReduceDim: r2 = b.op(Op::SumAll, {b.op(info.op, {z}, at)}); break;
    case OpFamily::AlongDim:
      r2 = b.op(Op::SumAll, {b.op(Op::Mul, {b.op(info.op, {z}, at), z})});
      break;
    case OpFamily::Similarity: r2 = b.op(Op::SumAll, {b.op(info.op, {z, w}, at)}); break;
    case OpFamily::Linalg: {
      // z is [2, 3] and w is [3]: z @ z^T, z @ w, w . w, z's row (outer) w, addmm, trace.
      const Reg zt = b.op(Op::Transpose, {z}, two_dims(0, 1));
      Reg v = -1;
      if (info.op == Op::Mm) v = b.op(info.op, {z, zt});
      if (info.op == Op::Mv) v = b.op(info.op, {z, w});
      if (info.op == Op::Dot) v = b.op(info.op, {w, w});
      if (info.op == Op::Outer) v = b.op(info.op, {w, w});
      if (info.op == Op::Addmm) v = b.op(info.op, {w, zt, z}, at);
      if (info.op == Op::Trace) v = b.op(info.op, {b.op(Op::Mm, {z, zt})});
      if (info.op == Op::Det || info.op == Op::Slogdet || info.op == Op::Inv)
        v = b.op(info.op, {b.op(Op::Mm, {z, zt})}); // z z^T is regular
      if (info.op == Op::Bmm)
        v = b.op(info.op,
                 {b.op(Op::Unsqueeze, {z}, on_dim(0)), b.op(Op::Unsqueeze, {zt}, on_dim(0))});
      r2 = b.op(Op::SumAll, {v});
      break;
    }
    case OpFamily::View: {
      // z is [2, 3]: each view with attributes legal there, then summed.
      Attrs v = at;
      v.dim = info.op == Op::Unsqueeze ? 2 : 1;
      v.dim1 = info.op == Op::Movedim || info.op == Op::Diagonal ? 0 : 1;
      v.times = info.op == Op::Narrow ? 2 : (info.op == Op::Roll ? -1 : 0);
      if (info.op == Op::Expand) v.times = 3;
      const bool needs_one = info.op == Op::Squeeze || info.op == Op::Expand;
      const Reg src = needs_one ? b.op(Op::Unsqueeze, {z}, v) : z;
      // The shape views: flatten [2, 3], permute [1, 0], z[:, 0:3:2], stack at dim 1, the second
      // of two chunks of dim 1, diag_embed above the diagonal.
      const std::array<int, 2> swap = {1, 0};
      if (info.op == Op::Reshape) v = two_dims(0, 1);
      if (info.op == Op::Permute) v = dim_times(0, permutation_code(swap));
      if (info.op == Op::Slice) {
        v = two_dims(1, 0);
        v.times = 3;
        v.variant = 2;
      }
      if (info.op == Op::Chunk) {
        v = two_dims(1, 1);
        v.times = 2;
      }
      if (info.op == Op::DiagEmbed) v = dim_times(0, 1);
      // relayout: z stored transposed.
      if (info.op == Op::Relayout) {
        LeafLayout transposed;
        transposed.kind = LayoutKind::Permuted;
        transposed.dims = {1, 0};
        v = layout_attrs(transposed);
      }
      const Reg viewed =
          info.op == Op::Stack ? b.op(info.op, {src, src}, on_dim(1)) : b.op(info.op, {src}, v);
      r2 = b.op(Op::SumAll, {b.op(Op::Mul, {viewed, viewed})});
      break;
    }
    case OpFamily::Index: {
      // z is [2, 3]: every index op along dim 1 with repeated indices (index_copy's distinct);
      // scatters and index updates into z from z.
      Reg idx = -1;
      if (info.op == Op::Gather) idx = b.index_leaf({2, 2}, {2, 0, 1, 1});
      if (info.op == Op::IndexSelect) idx = b.index_leaf({3}, {1, 0, 1});
      if (info.op == Op::TakeAlongDim) idx = b.index_leaf({2, 1}, {2, 0});
      if (info.op == Op::ScatterAdd || info.op == Op::ScatterReduce)
        idx = b.index_leaf({2, 3}, {2, 2, 0, 1, 1, 0});
      // index_add and index_copy take z as source (a 3-long index along dim 1), index_copy's
      // index a permutation (its values are distinct); index_fill repeats its target.
      if (info.op == Op::IndexAdd) idx = b.index_leaf({3}, {2, 2, 0});
      if (info.op == Op::IndexCopy) idx = b.index_leaf({3}, {2, 0, 1});
      if (info.op == Op::IndexFill) idx = b.index_leaf({2}, {1, 1});
      // index_put is along dim 0 of z: a permutation of its rows without accumulate, a repeated
      // row with.
      if (info.op == Op::IndexPut) {
        at.dim = 0;
        idx = b.index_leaf({2}, {1, at.variant != 0 ? 1 : 0});
      }
      const bool scatter = op_arity(info.op) == 3;
      const Reg v = scatter ? b.op(info.op, {z, idx, z}, at) : b.op(info.op, {z, idx}, at);
      r2 = b.op(Op::SumAll, {b.op(Op::Mul, {v, v})});
      break;
    }
    case OpFamily::Masked: {
      // masked_scatter's source is z itself, flipped so that the scatter moves elements.
      const Reg mask = b.op(Op::Gt, {z, w});
      if (info.op == Op::MaskedFill) {
        r2 = b.op(Op::SumAll, {b.op(info.op, {z, mask}, at)});
        break;
      }
      const Reg v = b.op(info.op, {z, mask, b.op(Op::Flip, {z}, on_dim(1))});
      r2 = b.op(Op::SumAll, {b.op(Op::Mul, {v, v})});
      break;
    }
    case OpFamily::Unary:
    case OpFamily::Activation:
    case OpFamily::Binary:
    case OpFamily::Compare:
    case OpFamily::Select:
    case OpFamily::Matmul:
    case OpFamily::Transpose:
    case OpFamily::Concat:
    case OpFamily::Repeat: continue;
    }
    acc = b.op(Op::Add, {acc, r2});
  }
  return b.finish(acc);
}

// The LibTorch call each later op emits, as a maintainer would write it.
const std::vector<std::string> kLaterCppCalls = {"torch::sin(",
                                                 "torch::cos(",
                                                 "torch::tan(",
                                                 "torch::asin(",
                                                 "torch::acos(",
                                                 "torch::atan(",
                                                 "torch::sinh(",
                                                 "torch::cosh(",
                                                 "torch::asinh(",
                                                 "torch::acosh(",
                                                 "torch::atanh(",
                                                 "torch::erf(",
                                                 "torch::erfc(",
                                                 "torch::erfinv(",
                                                 "torch::log1p(",
                                                 "torch::expm1(",
                                                 "torch::log2(",
                                                 "torch::log10(",
                                                 "torch::exp2(",
                                                 "torch::rsqrt(",
                                                 "torch::reciprocal(",
                                                 "torch::square(",
                                                 "torch::sign(",
                                                 "torch::sgn(",
                                                 "torch::floor(",
                                                 "torch::ceil(",
                                                 "torch::round(",
                                                 "torch::trunc(",
                                                 "torch::frac(",
                                                 "torch::lgamma(",
                                                 "torch::digamma(",
                                                 "torch::clamp(",
                                                 "torch::clamp(",
                                                 "torch::log_sigmoid(",
                                                 "torch::softplus(",
                                                 "torch::gelu(",
                                                 "torch::silu(",
                                                 "torch::mish(",
                                                 "torch::elu(",
                                                 "torch::selu(",
                                                 "torch::celu(",
                                                 "torch::leaky_relu(",
                                                 "torch::hardtanh(",
                                                 "torch::relu6(",
                                                 "torch::hardsigmoid(",
                                                 "torch::hardswish(",
                                                 "torch::nn::functional::softsign(",
                                                 "torch::hardshrink(",
                                                 "torch::softshrink(",
                                                 "torch::nn::functional::tanhshrink(",
                                                 "torch::logit(",
                                                 "torch::maximum(",
                                                 "torch::minimum(",
                                                 "torch::fmax(",
                                                 "torch::fmin(",
                                                 "torch::atan2(",
                                                 "torch::pow(",
                                                 "torch::remainder(",
                                                 "torch::fmod(",
                                                 "torch::div(",
                                                 "torch::hypot(",
                                                 "torch::xlogy(",
                                                 "torch::copysign(",
                                                 "torch::lerp(",
                                                 "torch::lt(",
                                                 "torch::le(",
                                                 "torch::gt(",
                                                 "torch::ge(",
                                                 "torch::eq(",
                                                 "torch::ne(",
                                                 "torch::where(",
                                                 "torch::prod(",
                                                 "torch::amax(",
                                                 "torch::amin(",
                                                 "torch::max(",
                                                 "torch::min(",
                                                 "torch::var(",
                                                 "torch::std(",
                                                 "torch::linalg_vector_norm(",
                                                 "std::get<0>(torch::max(",
                                                 "torch::logsumexp(",
                                                 "torch::cumsum(",
                                                 "torch::cumprod(",
                                                 "torch::logcumsumexp(",
                                                 "torch::softmax(",
                                                 "torch::log_softmax(",
                                                 "torch::nn::functional::normalize(",
                                                 "torch::cosine_similarity(",
                                                 "torch::mm(",
                                                 "torch::mv(",
                                                 "torch::dot(",
                                                 "torch::outer(",
                                                 "torch::addmm(",
                                                 "torch::trace(",
                                                 "torch::flip(",
                                                 "torch::roll(",
                                                 "torch::unsqueeze(",
                                                 "torch::squeeze(",
                                                 "torch::tril(",
                                                 "torch::triu(",
                                                 "torch::movedim(",
                                                 "torch::narrow(",
                                                 "torch::select(",
                                                 ".expand(",
                                                 "torch::diagonal(",
                                                 "torch::gather(",
                                                 "torch::index_select(",
                                                 "torch::take_along_dim(",
                                                 "torch::scatter_add(",
                                                 "torch::scatter_reduce(",
                                                 "torch::masked_fill(",
                                                 "torch::index_add(",
                                                 "torch::index_copy(",
                                                 "torch::index_fill(",
                                                 "torch::index_put(",
                                                 "torch::masked_scatter(",
                                                 "torch::kInt64",
                                                 "torch::linalg_det(",
                                                 "torch::linalg_slogdet(",
                                                 "torch::linalg_inv(",
                                                 "torch::reshape(r",
                                                 "torch::permute(r",
                                                 ".slice(1, 0, 3, 2)",
                                                 "torch::stack({",
                                                 "torch::chunk(",
                                                 "torch::diag_embed(",
                                                 "torch::bmm(",
                                                 "relaid_out(r"};
const std::vector<std::string> kLaterPythonCalls = {"torch.sin(",
                                                    "torch.cos(",
                                                    "torch.tan(",
                                                    "torch.asin(",
                                                    "torch.acos(",
                                                    "torch.atan(",
                                                    "torch.sinh(",
                                                    "torch.cosh(",
                                                    "torch.asinh(",
                                                    "torch.acosh(",
                                                    "torch.atanh(",
                                                    "torch.erf(",
                                                    "torch.erfc(",
                                                    "torch.erfinv(",
                                                    "torch.log1p(",
                                                    "torch.expm1(",
                                                    "torch.log2(",
                                                    "torch.log10(",
                                                    "torch.exp2(",
                                                    "torch.rsqrt(",
                                                    "torch.reciprocal(",
                                                    "torch.square(",
                                                    "torch.sign(",
                                                    "torch.sgn(",
                                                    "torch.floor(",
                                                    "torch.ceil(",
                                                    "torch.round(",
                                                    "torch.trunc(",
                                                    "torch.frac(",
                                                    "torch.lgamma(",
                                                    "torch.digamma(",
                                                    "torch.clamp(",
                                                    "torch.clamp(",
                                                    "F.logsigmoid(",
                                                    "F.softplus(",
                                                    "F.gelu(",
                                                    "F.silu(",
                                                    "F.mish(",
                                                    "F.elu(",
                                                    "F.selu(",
                                                    "F.celu(",
                                                    "F.leaky_relu(",
                                                    "F.hardtanh(",
                                                    "F.relu6(",
                                                    "F.hardsigmoid(",
                                                    "F.hardswish(",
                                                    "F.softsign(",
                                                    "F.hardshrink(",
                                                    "F.softshrink(",
                                                    "F.tanhshrink(",
                                                    "torch.logit(",
                                                    "torch.maximum(",
                                                    "torch.minimum(",
                                                    "torch.fmax(",
                                                    "torch.fmin(",
                                                    "torch.atan2(",
                                                    "torch.pow(",
                                                    "torch.remainder(",
                                                    "torch.fmod(",
                                                    "torch.div(",
                                                    "torch.hypot(",
                                                    "torch.xlogy(",
                                                    "torch.copysign(",
                                                    "torch.lerp(",
                                                    "torch.lt(",
                                                    "torch.le(",
                                                    "torch.gt(",
                                                    "torch.ge(",
                                                    "torch.eq(",
                                                    "torch.ne(",
                                                    "torch.where(",
                                                    "torch.prod(",
                                                    "torch.amax(",
                                                    "torch.amin(",
                                                    "torch.max(",
                                                    "torch.min(",
                                                    "torch.var(",
                                                    "torch.std(",
                                                    "torch.linalg.vector_norm(",
                                                    ".values",
                                                    "torch.logsumexp(",
                                                    "torch.cumsum(",
                                                    "torch.cumprod(",
                                                    "torch.logcumsumexp(",
                                                    "torch.softmax(",
                                                    "torch.log_softmax(",
                                                    "F.normalize(",
                                                    "F.cosine_similarity(",
                                                    "torch.mm(",
                                                    "torch.mv(",
                                                    "torch.dot(",
                                                    "torch.outer(",
                                                    "torch.addmm(",
                                                    "torch.trace(",
                                                    "torch.diagonal(",
                                                    "torch.gather(",
                                                    "torch.index_select(",
                                                    "torch.take_along_dim(",
                                                    "torch.scatter_add(",
                                                    "torch.scatter_reduce(",
                                                    "torch.masked_fill(",
                                                    "torch.index_add(",
                                                    "torch.index_copy(",
                                                    "torch.index_fill(",
                                                    "torch.index_put(",
                                                    "torch.masked_scatter(",
                                                    "dtype=torch.int64",
                                                    "torch.linalg.det(",
                                                    "torch.linalg.slogdet(",
                                                    "torch.linalg.inv(",
                                                    "torch.flip(",
                                                    "torch.roll(",
                                                    "torch.unsqueeze(",
                                                    "torch.squeeze(",
                                                    "torch.tril(",
                                                    "torch.triu(",
                                                    "torch.movedim(",
                                                    "torch.narrow(",
                                                    "torch.select(",
                                                    ".expand(",
                                                    "torch.diagonal(",
                                                    "torch.reshape(r",
                                                    "torch.permute(r",
                                                    "[:, 0:3:2]",
                                                    "torch.stack([",
                                                    "torch.chunk(",
                                                    "torch.diag_embed(",
                                                    "torch.bmm(",
                                                    "torch.as_strided_scatter("};

#ifdef BURNMARK_HAVE_REF
// Every op, with gradients, expected values from the reference backend: LibTorch agrees with it
// on this program (tests/test_ref_vs_libtorch.cpp checks each op), so a reproducer that runs
// every op faithfully must exit 0.
ReproCase all_ops_reference_case() {
  ReproCase c;
  c.program = all_ops_program();
  c.title = "every op, expected values from the reference backend";
  const Outcome ref = make_reference_backend()->run(c.program, RunOptions{true});
  if (ref.status != Status::Ok) throw std::runtime_error("reference failed: " + ref.message);
  c.expected_root = ref.root.values;
  for (const HostTensor& g : ref.grads)
    c.expected_grads.push_back(g.values);
  return c;
}
#endif

void expect_contains(const std::string& text, const std::string& needle) {
  EXPECT_NE(text.find(needle), std::string::npos) << "missing: " << needle;
}

struct RunResult {
  int status = -1;
  std::string output;
};

RunResult run(const std::string& command) {
  RunResult r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe))
    r.output += buf.data();
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

} // namespace

TEST(ReproText, EveryOpEmitsItsLibTorchCall) {
  ReproCase c;
  c.program = all_ops_program();
  c.title = "all ops";
  c.expected_root = {0};
  c.check_gradients = false;
  const std::string cpp = emit_cpp_repro(c);
  const std::string py = emit_python_repro(c);
  for (const char* call : {"torch::add(r0, r0)",
                           "torch::sub(r2, r0)",
                           "torch::mul(r3, r0)",
                           "torch::div(r4, r0)",
                           "torch::neg(r5)",
                           "torch::abs(",
                           "torch::exp(",
                           "torch::log(",
                           "torch::sqrt(",
                           "torch::relu(",
                           "torch::sigmoid(",
                           "torch::tanh(",
                           "torch::pow(r13, -0.5)",
                           "torch::clamp(r14, -1000000.0, 1000000.0)",
                           "torch::matmul(r15, r1)",
                           "torch::transpose(r16, 1, 0)",
                           "torch::cat({r16, r17}, 0)",
                           "r18.repeat({1, 3})",
                           "torch::sum(r19, {0}, /*keepdim=*/true)",
                           "torch::mean(r20, {1}, /*keepdim=*/false)",
                           "torch::sum(r21)",
                           "torch::mean(r21)"})
    expect_contains(cpp, call);
  for (const char* call :
       {"torch.add(r0, r0)", "torch.sub(r2, r0)", "torch.mul(r3, r0)", "torch.div(r4, r0)",
        "torch.neg(r5)", "torch.pow(r13, -0.5)", "torch.clamp(r14, min=-1000000.0, max=1000000.0)",
        "torch.matmul(r15, r1)", "torch.transpose(r16, 1, 0)", "torch.cat([r16, r17], dim=0)",
        "r18.repeat(1, 3)", "torch.sum(r19, dim=0, keepdim=True)",
        "torch.mean(r20, dim=1, keepdim=False)", "torch.sum(r21)", "torch.mean(r21)"})
    expect_contains(py, call);
  for (const std::string& call : kLaterCppCalls)
    expect_contains(cpp, call);
  for (const std::string& call : kLaterPythonCalls)
    expect_contains(py, call);
  // Forward-only: no backward, leaves without gradient tracking.
  EXPECT_EQ(cpp.find("backward"), std::string::npos);
  EXPECT_EQ(py.find("backward"), std::string::npos);
}

TEST(ReproText, LeafBitsAndExpectedSpecialValuesAreExact) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  ProgramBuilder b;
  const Reg x = b.leaf({5}, {-0.0f, std::numeric_limits<float>::denorm_min(), nan, -inf, 0.1f});
  ReproCase c;
  c.program = b.finish(b.op(Op::Neg, {x}));
  c.expected_root = {0.0, -1e-45, std::nan(""), -std::numeric_limits<double>::infinity(), 0.1};
  c.expected_grads = {{-1, -1, -1, -1, -1}};
  const std::string cpp = emit_cpp_repro(c), py = emit_python_repro(c);
  for (const char* bits : {"0x80000000", "0x00000001", "0x7fc00000", "0xff800000", "0x3dcccccd"})
    expect_contains(cpp, bits);
  expect_contains(cpp, "{0.0, -1e-45, kNaN, -kInf, 0.1}");
  // Python: the leaf as the shortest decimals that round to exactly these floats (0.1 is 0.1f
  // once torch.tensor rounds it to float32; 1e-45 the smallest subnormal), and only the imports
  // the script uses.
  expect_contains(py, "torch.tensor([-0.0, 1e-45, nan, -inf, 0.1], dtype=DTYPE)");
  expect_contains(py, "0.0, -1e-45, nan, -inf, 0.1]");
  for (const char* unused : {"import struct", "forward_ad", "import torch.nn.functional"})
    EXPECT_EQ(py.find(unused), std::string::npos) << unused;
  expect_contains(py, "print(versions())");
  // The workaround include must come before any other LibTorch header.
  EXPECT_LT(cpp.find("#include <ATen/core/ivalue.h>"), cpp.find("#include <torch/"));
}

TEST(ReproText, InconsistentCasesAreRejected) {
  ReproCase c = hand_computed_case();
  c.expected_root.pop_back();
  EXPECT_THROW(emit_cpp_repro(c), std::invalid_argument);
  c = hand_computed_case();
  c.expected_grads.pop_back();
  EXPECT_THROW(emit_python_repro(c), std::invalid_argument);
  c.check_gradients = false; // then the gradients are not needed
  EXPECT_NO_THROW(emit_python_repro(c));
}

TEST(ReproText, CMakeListsFindsTorchAndBuildsTheFile) {
  const std::string cmake = emit_cpp_cmake("pow_grad.cpp");
  expect_contains(cmake, "find_package(Torch REQUIRED)");
  expect_contains(cmake, "add_executable(pow_grad pow_grad.cpp)");
  expect_contains(cmake, "${TORCH_LIBRARIES}");
}

TEST(ReproBuild, EmittedCppBuildsAgreesAndCatchesAPlantedBug) {
  const fs::path dir = burnmark::testing::scratch_dir("repro_cpp");
  write_file(dir / "CMakeLists.txt", emit_cpp_cmake("repro.cpp"));
  write_file(dir / "repro.cpp", emit_cpp_repro(hand_computed_case()));
  const std::string build = (dir / "build").string();
  const RunResult configure =
      run("cmake -S " + dir.string() + " -B " + build +
          " -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=" BURNMARK_REPRO_CXX);
  ASSERT_EQ(configure.status, 0) << configure.output;
  const RunResult compiled = run("cmake --build " + build);
  ASSERT_EQ(compiled.status, 0) << compiled.output;
  const RunResult good = run(build + "/repro");
  EXPECT_EQ(good.status, 0) << good.output;
  expect_contains(good.output, "AGREES");
  expect_contains(good.output, "grad %0[1]  libtorch  424  expected  424\n");

  write_file(dir / "repro.cpp", emit_cpp_repro(planted_bug_case()));
  const RunResult recompiled = run("cmake --build " + build);
  ASSERT_EQ(recompiled.status, 0) << recompiled.output;
  const RunResult bad = run(build + "/repro");
  EXPECT_EQ(bad.status, 1) << bad.output;
  expect_contains(bad.output, "grad %0[1]  libtorch  424  expected  425  <-- DIVERGES");
  expect_contains(bad.output, "DIVERGES: 1 element(s)");
#ifdef BURNMARK_HAVE_REF
  write_file(dir / "repro.cpp", emit_cpp_repro(all_ops_reference_case()));
  const RunResult all_compiled = run("cmake --build " + build);
  ASSERT_EQ(all_compiled.status, 0) << all_compiled.output;
  const RunResult all_ops = run(build + "/repro");
  EXPECT_EQ(all_ops.status, 0) << all_ops.output;
#endif
  fs::remove_all(dir);
}

// The first python3 on PATH may be a private interpreter without Debian's python3-torch.
std::string python_with_torch() {
  for (const char* candidate : {"python3", "/usr/bin/python3"})
    if (run(std::string(candidate) + " -c 'import torch'").status == 0) return candidate;
  return "";
}

TEST(ReproBuild, EmittedPythonAgreesAndCatchesAPlantedBug) {
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_py");
  write_file(dir / "good.py", emit_python_repro(hand_computed_case()));
  write_file(dir / "bad.py", emit_python_repro(planted_bug_case()));
  const RunResult good = run(python + " " + (dir / "good.py").string());
  EXPECT_EQ(good.status, 0) << good.output;
  expect_contains(good.output, "AGREES");
  expect_contains(good.output, "grad %0[1]  torch  424  expected  424\n");
  const RunResult bad = run(python + " " + (dir / "bad.py").string());
  EXPECT_EQ(bad.status, 1) << bad.output;
  expect_contains(bad.output, "grad %0[1]  torch  424  expected  425  <-- DIVERGES");
#ifdef BURNMARK_HAVE_REF
  write_file(dir / "all_ops.py", emit_python_repro(all_ops_reference_case()));
  const RunResult all_ops = run(python + " " + (dir / "all_ops.py").string());
  EXPECT_EQ(all_ops.status, 0) << all_ops.output;
#endif
  fs::remove_all(dir);
}

// y = x * x at x = 3 along leaf_tangent's first step (1): y' = 2 x = 6, by hand.
ReproCase forward_mode_case(double expected_tangent) {
  ProgramBuilder b;
  const Reg x = b.leaf({1}, {3.0f});
  ReproCase c;
  c.program = b.finish(b.op(Op::Mul, {x, x}));
  c.title = "x * x in forward mode";
  c.expected_root = {9.0};
  c.expected_grads = {{6.0}};
  c.check_tangent = true;
  c.expected_tangent = {expected_tangent};
  return c;
}

TEST(ReproBuild, EmittedPythonChecksTheForwardModeTangent) {
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_tangent");
  write_file(dir / "good.py", emit_python_repro(forward_mode_case(6.0)));
  write_file(dir / "bad.py", emit_python_repro(forward_mode_case(7.0)));
  const RunResult good = run(python + " " + (dir / "good.py").string());
  EXPECT_EQ(good.status, 0) << good.output;
  expect_contains(good.output, "tangent %1[0]  torch  6  expected  6\n");
  expect_contains(good.output, "grad %0[0]  torch  6  expected  6\n");
  const RunResult bad = run(python + " " + (dir / "bad.py").string());
  EXPECT_EQ(bad.status, 1) << bad.output;
  expect_contains(bad.output, "tangent %1[0]  torch  6  expected  7  <-- DIVERGES");
  // Forward mode has no C++ reproducer: the emitter says so rather than drop the tangent.
  EXPECT_THROW(emit_cpp_repro(forward_mode_case(6.0)), std::invalid_argument);
  fs::remove_all(dir);
}

// f = x^2 y at x = 3, y = 2: gradient (2xy, x^2) = (12, 9); Hessian [[2y, 2x], [2x, 0]] =
// [[4, 6], [6, 0]]; the leaves' tangents are 1 and -1 (leaf_tangent), so H·v = (-2, 6).
ReproCase second_order_case(double expected_hvp_of_x) {
  ProgramBuilder b;
  const Reg x = b.leaf({1}, {3.0f});
  const Reg y = b.leaf({1}, {2.0f});
  ReproCase c;
  c.program = b.finish(b.op(Op::Mul, {b.op(Op::Mul, {x, x}), y}));
  c.title = "x * x * y to second order";
  c.expected_root = {18.0};
  c.expected_grads = {{12.0}, {9.0}};
  c.check_hvp = true;
  c.expected_hvps = {{expected_hvp_of_x}, {6.0}};
  return c;
}

TEST(ReproBuild, EmittedPythonChecksEachLeafsHessianVectorProduct) {
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_hvp");
  write_file(dir / "good.py", emit_python_repro(second_order_case(-2.0)));
  write_file(dir / "bad.py", emit_python_repro(second_order_case(-3.0)));
  const RunResult good = run(python + " " + (dir / "good.py").string());
  EXPECT_EQ(good.status, 0) << good.output;
  expect_contains(good.output, "hvp %0[0]  torch -2  expected -2\n");
  expect_contains(good.output, "hvp %1[0]  torch  6  expected  6\n");
  expect_contains(good.output, "grad %1[0]  torch  9  expected  9\n");
  const RunResult bad = run(python + " " + (dir / "bad.py").string());
  EXPECT_EQ(bad.status, 1) << bad.output;
  expect_contains(bad.output, "hvp %0[0]  torch -2  expected -3  <-- DIVERGES");
  EXPECT_THROW(emit_cpp_repro(second_order_case(-2.0)), std::invalid_argument);
  // libtorch-fwd-over-rev's way: dual leaves, the gradients' tangents.
  ReproCase by_dual = second_order_case(-2.0);
  by_dual.hvp_forward_over_reverse = true;
  const std::string by_dual_script = emit_python_repro(by_dual);
  expect_contains(by_dual_script, "hvp = hessian_by_dual(root, [r0_leaf, r1_leaf])");
  write_file(dir / "by_dual.py", by_dual_script);
  const RunResult dual_run = run(python + " " + (dir / "by_dual.py").string());
  EXPECT_EQ(dual_run.status, 0) << dual_run.output;
  expect_contains(dual_run.output, "hvp %0[0]  torch -2  expected -2\n");
  fs::remove_all(dir);
}

// gelu(x, approximate="tanh") = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), from its
// definition in double, rounded to the program's dtype; one ulp of that dtype allowed.
ReproCase gelu_tanh_case(FloatDType dtype) {
  ProgramBuilder b;
  Attrs tanh_form;
  tanh_form.variant = 1;
  ReproCase c;
  c.program = b.finish(b.op(Op::Gelu, {b.leaf({1}, {-2.59375f})}, tanh_form));
  c.program.float_dtype = dtype;
  const double x = -2.59375;
  const double exact = x / 2 * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  c.title = "gelu(-2.59375, approximate=tanh)";
  c.expected_root = {round_to(exact, dtype)};
  c.root_bound = {2 * float_format(dtype).unit_roundoff() * std::fabs(exact)};
  c.check_gradients = false;
  return c;
}

TEST(ReproBuild, EmittedReproducersRunInTheProgramsDtype) {
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_dtype");
  // 27^2 = 729 is not a bf16 value (8 significand bits): it rounds to 728.
  ReproCase hand = hand_computed_case();
  hand.program.float_dtype = FloatDType::BF16;
  hand.expected_root = {169, 728};
  const std::string script = emit_python_repro(hand);
  expect_contains(script, "DTYPE = torch.bfloat16");
  expect_contains(script, "# %0 = leaf bf16[2,2]");
  write_file(dir / "hand.py", script);
  const RunResult good = run(python + " " + (dir / "hand.py").string());
  EXPECT_EQ(good.status, 0) << good.output;
  expect_contains(good.output, "[1]  torch  728  expected  728\n");
  expect_contains(emit_cpp_repro(hand), "const torch::ScalarType kDType = torch::kBFloat16;");
  // LibTorch 1.13.1's bf16 gelu(tanh) rounds 1 + tanh(u) to bf16 (bugs.md,
  // libtorch-bf16-gelu-tanh-cancellation); in f32 it is right.
  write_file(dir / "gelu_bf16.py", emit_python_repro(gelu_tanh_case(FloatDType::BF16)));
  const RunResult bf16 = run(python + " " + (dir / "gelu_bf16.py").string());
  EXPECT_EQ(bf16.status, 1) << bf16.output;
  write_file(dir / "gelu_f32.py", emit_python_repro(gelu_tanh_case(FloatDType::F32)));
  const RunResult f32 = run(python + " " + (dir / "gelu_f32.py").string());
  EXPECT_EQ(f32.status, 0) << f32.output;
  fs::remove_all(dir);
}

// An f64 program's leaves carry f64 bit patterns: values no f32 holds (subnormals of f64, past
// f32's range, 53-bit mantissas) reach the script's tensors exactly.
TEST(ReproBuild, EmittedReproducersKeepF64OnlyLeafValuesExact) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {1e-310, 5e-324, 1e300, std::nan(""), -inf, 0.1};
  ProgramBuilder b;
  const Reg leaf = b.leaf({6}, {1, 1, 1, 1, 1, 1});
  ReproCase c;
  c.program = b.finish(b.op(Op::Neg, {leaf}));
  c.program.float_dtype = FloatDType::F64;
  c.program.leaves[0].data = x;
  c.expected_root = {-1e-310, -5e-324, -1e300, std::nan(""), inf, -0.1};
  c.expected_grads = {{-1, -1, -1, -1, -1, -1}};
  const std::string cpp = emit_cpp_repro(c), py = emit_python_repro(c);
  expect_contains(cpp, "leaf64({6}");
  for (double v : {1e-310, 5e-324, 1e300, 0.1}) {
    const std::string bits = fmt::format("0x{:016x}", std::bit_cast<std::uint64_t>(v));
    expect_contains(cpp, bits);
  }
  // Python parses a decimal to the double it names: the shortest that round-trips.
  expect_contains(py, "torch.tensor([1e-310, 5e-324, 1e+300, nan, -inf, 0.1], dtype=DTYPE)");
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_f64");
  write_file(dir / "f64.py", py);
  const RunResult r = run(python + " " + (dir / "f64.py").string());
  EXPECT_EQ(r.status, 0) << r.output;
  expect_contains(r.output, "AGREES");
  fs::remove_all(dir);
}

// frac(-0.375)^2 = 0.140625, gradient 2 * frac(x) * frac'(x) = -0.75 (by hand). NNC lowers frac
// as x - floor(x) (bugs.md, libtorch-nnc-frac-floor): 0.625^2 = 0.390625 when fused.
ReproCase frac_case(ReproPath path) {
  ProgramBuilder b;
  const Reg f = b.op(Op::Frac, {b.leaf({1}, {-0.375f})});
  ReproCase c;
  c.program = b.finish(b.op(Op::Mul, {f, f}));
  c.title = "frac(x)^2";
  c.expected_root = {0.140625};
  c.expected_grads = {{-0.75}};
  c.path = path;
  return c;
}

TEST(ReproBuild, EmittedPythonRunsTheScalarStridedJitAndFuserPaths) {
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_jit");
  for (ReproPath path : {ReproPath::Jit, ReproPath::Nnc}) {
    ReproCase hand = hand_computed_case();
    hand.path = path;
    const std::string script = emit_python_repro(hand);
    expect_contains(script, "torch.jit.script(program)");
    EXPECT_EQ(script.find("_jit_override_can_fuse_on_cpu") != std::string::npos,
              path == ReproPath::Nnc);
    write_file(dir / "hand.py", script);
    const RunResult good = run(python + " " + (dir / "hand.py").string());
    EXPECT_EQ(good.status, 0) << good.output;
    expect_contains(good.output, "grad %0[1]  torch  424  expected  424\n");
  }
  // libtorch-strided's layouts, rebuilt by the script's layout(): the same exact values.
  ReproCase strided = hand_computed_case();
  strided.path = ReproPath::Strided;
  const std::string strided_script = emit_python_repro(strided);
  expect_contains(strided_script, "def layout(t, reg):");
  expect_contains(strided_script, "r3 = layout(torch.mul(r0, r1), 3)");
  write_file(dir / "strided.py", strided_script);
  const RunResult laid_out = run(python + " " + (dir / "strided.py").string());
  EXPECT_EQ(laid_out.status, 0) << laid_out.output;
  expect_contains(laid_out.output, "grad %0[1]  torch  424  expected  424\n");
  // The scalar kernels: cosh's AVX2 body overflows at 89 (bugs.md, libtorch-cosh-vector-overflow),
  // the scalar kernel does not, so the same case agrees only on the scalar path.
  ReproCase cosh;
  {
    ProgramBuilder b;
    cosh.program = b.finish(b.op(Op::Cosh, {b.leaf({16}, std::vector<float>(16, 89.0f))}));
    cosh.title = "cosh(89)";
    cosh.expected_root = std::vector<double>(16, static_cast<double>(std::cosh(89.0f)));
    cosh.check_gradients = false;
  }
  write_file(dir / "cosh_avx2.py", emit_python_repro(cosh));
  EXPECT_EQ(run(python + " " + (dir / "cosh_avx2.py").string()).status, 1);
  cosh.path = ReproPath::Scalar;
  write_file(dir / "cosh_scalar.py", emit_python_repro(cosh));
  const RunResult scalar = run(python + " " + (dir / "cosh_scalar.py").string());
  EXPECT_EQ(scalar.status, 0) << scalar.output;
  // The C++ reproducer takes the same path by the same variable, set before LibTorch's first call.
  const std::string cpp = emit_cpp_repro(cosh);
  EXPECT_LT(cpp.find("setenv(\"ATEN_CPU_CAPABILITY\", \"default\", 1);"),
            cpp.find("torch::set_num_threads(1);"));
  // libtorch-threads' reproducer is eager on that variant's thread count, in both languages.
  ReproCase threaded = frac_case(ReproPath::Eager);
  threaded.intra_op_threads = kThreadsVariantThreads;
  const std::string threaded_python = emit_python_repro(threaded);
  expect_contains(threaded_python,
                  fmt::format("torch.set_num_threads({})", kThreadsVariantThreads));
  expect_contains(emit_cpp_repro(threaded),
                  fmt::format("torch::set_num_threads({});", kThreadsVariantThreads));
  write_file(dir / "frac_threads.py", threaded_python);
  const RunResult on_threads = run(python + " " + (dir / "frac_threads.py").string());
  EXPECT_EQ(on_threads.status, 0) << on_threads.output;
  write_file(dir / "frac_jit.py", emit_python_repro(frac_case(ReproPath::Jit)));
  const RunResult jit = run(python + " " + (dir / "frac_jit.py").string());
  EXPECT_EQ(jit.status, 0) << jit.output;
  write_file(dir / "frac_nnc.py", emit_python_repro(frac_case(ReproPath::Nnc)));
  const RunResult nnc = run(python + " " + (dir / "frac_nnc.py").string());
  EXPECT_EQ(nnc.status, 1) << nnc.output;
  expect_contains(nnc.output, "root %2[0]  torch  0.390625  expected  0.140625  <-- DIVERGES");
  EXPECT_THROW(emit_cpp_repro(frac_case(ReproPath::Nnc)), std::invalid_argument);
  fs::remove_all(dir);
}

// A scripted reproducer returns the results nothing uses after the root, as libtorch-jit does, so
// TorchScript runs them: neg(x) with lgamma(x) unused gets the leaf's gradient NaN from the
// JIT's second run on (bugs.md, libtorch-jit-unused-output-grad-nan; LibTorch 1.13.1 and 2.15.0),
// which a function returning the root alone (the dead lgamma dropped) does not show.
TEST(ReproBuild, EmittedScriptedPythonKeepsUnusedResults) {
  ProgramBuilder b;
  const Reg x = b.leaf({1}, {0.0f});
  const Reg neg = b.op(Op::Neg, {x});
  b.op(Op::Add, {neg, b.op(Op::Lgamma, {x})});
  ReproCase c;
  c.program = b.finish(neg);
  c.title = "neg(x), lgamma(x) unused";
  c.expected_root = {-0.0};
  c.expected_grads = {{-1.0}};
  c.path = ReproPath::Jit;
  const std::string script = emit_python_repro(c);
  expect_contains(script, "    return r1, r3\n");
  expect_contains(script, "root = scripted(r0)[0]\n");
  // Nothing unused: the root alone, as before.
  expect_contains(emit_python_repro(frac_case(ReproPath::Jit)), "    return r2\n");
  const std::string python = python_with_torch();
  if (python.empty()) GTEST_SKIP() << "no python3 can import torch (apt-get install python3-torch)";
  const fs::path dir = burnmark::testing::scratch_dir("repro_unused");
  write_file(dir / "unused.py", script);
  const RunResult r = run(python + " " + (dir / "unused.py").string());
  EXPECT_EQ(r.status, 1) << r.output;
  expect_contains(r.output, "grad %0[0]  torch  nan  expected -1  <-- DIVERGES");
  fs::remove_all(dir);
}

// A NaN with a sign or a payload has no decimal spelling that survives the trip into a tensor:
// that leaf, and only it, is written as bit patterns (and the script then imports struct).
TEST(ReproText, ALeafWithoutExactDecimalsKeepsItsBitPatterns) {
  const float negative_nan = std::bit_cast<float>(0xffc00000u);
  ProgramBuilder b;
  const Reg x = b.leaf({2}, {negative_nan, 1.5f});
  const Reg y = b.leaf({2}, {0.25f, 2.0f});
  ReproCase c;
  c.program = b.finish(b.op(Op::Add, {x, y}));
  c.expected_root = {std::nan(""), 3.5};
  c.expected_grads = {{1, 1}, {1, 1}};
  const std::string py = emit_python_repro(c);
  expect_contains(py, "leaf([2], True, [0xffc00000, 0x3fc00000])");
  expect_contains(py, "torch.tensor([0.25, 2.0], dtype=DTYPE)");
  expect_contains(py, "import struct");
  expect_contains(py, "def leaf(");
}

// bf16 and f16 leaves: torch.tensor turns each Python float into the dtype through float32, so a
// decimal is used only when both roundings land on the value; 0.1 in bf16 is 0.10009765625.
TEST(ReproText, ReducedPrecisionDecimalsRoundTripThroughFloat) {
  for (FloatDType d : {FloatDType::BF16, FloatDType::F16}) {
    ProgramBuilder b;
    const Reg x = b.leaf({2}, {0.5f, 0.1f});
    ReproCase c;
    c.program = b.finish(b.op(Op::Neg, {x}));
    c.program = with_float_dtype(c.program, d);
    const double tenth = round_to(0.1, d);
    c.expected_root = {-0.5, -tenth};
    c.expected_grads = {{-1, -1}};
    const std::string py = emit_python_repro(c);
    SCOPED_TRACE(py);
    const std::size_t at = py.find("torch.tensor([0.5, ");
    ASSERT_NE(at, std::string::npos);
    const std::string literal = py.substr(at + 19, py.find(']', at) - at - 19);
    const double parsed = std::strtod(literal.c_str(), nullptr);
    EXPECT_EQ(round_to(parsed, d), tenth);
    EXPECT_EQ(round_to(static_cast<double>(static_cast<float>(parsed)), d), tenth);
  }
}
