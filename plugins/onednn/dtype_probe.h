// The onednn plugin's load-time probe: which ops run in bf16 and f16 on this CPU. oneDNN 2.6
// creates a bf16 or f16 primitive only where the ISA it runs at has the conversions it needs, so
// the plugin's declarations (BurnmarkOpSupport) are made on the machine that loads it, by
// running each op's own kernels, forward and backward, on a small example in each dtype.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "burnmark/plugin/plugin_walk.h"

namespace burnmark::onednn {

using burnmark::plugin::Dense;
using burnmark::plugin::OpId;

inline BurnmarkShape shape_of(std::initializer_list<std::int64_t> dims) {
  BurnmarkShape s{};
  for (const std::int64_t d : dims)
    s.dims[s.rank++] = d;
  return s;
}

// A small statement of `op` in `dtype` with its operands: the example the load-time probe runs.
struct Example {
  BurnmarkStmt stmt{};
  std::vector<Dense<float>> operands;
};

inline Example example_of(std::uint32_t id, std::int32_t dtype) {
  const auto op = static_cast<OpId>(id);
  Example e;
  BurnmarkStmt& s = e.stmt;
  s.kind = BURNMARK_STMT_OP;
  s.op = id;
  s.dtype = dtype;
  s.attrs.times = 1;
  s.attrs.exponent = 2.0;
  s.attrs.lo = -1.0;
  s.attrs.hi = 1.0;
  s.attrs.alpha = 1.0;
  s.attrs.slope = 0.1;
  s.attrs.beta = 1.0;
  s.attrs.threshold = 20.0;
  const BurnmarkShape m23 = shape_of({2, 3});
  std::vector<BurnmarkShape> in{m23};
  s.shape = m23;
  switch (op) {
  case OpId::Add:
  case OpId::Sub:
  case OpId::Mul:
  case OpId::Div:
  case OpId::Maximum:
  case OpId::Minimum: in = {m23, shape_of({3})}; break; // a broadcast operand
  case OpId::SumAll:
  case OpId::MeanAll:
  case OpId::Prod:
  case OpId::Amax:
  case OpId::Amin:
  case OpId::Max:
  case OpId::Min:
  case OpId::VectorNorm: s.shape = BurnmarkShape{}; break;
  case OpId::SumDim:
  case OpId::MeanDim:
  case OpId::ProdDim:
  case OpId::AmaxDim:
  case OpId::AminDim:
  case OpId::MaxDim:
  case OpId::MinDim:
  case OpId::NormDim:
    s.attrs.dim = 1;
    s.shape = shape_of({2});
    break;
  case OpId::Softmax:
  case OpId::LogSoftmax: s.attrs.dim = 1; break;
  case OpId::Transpose:
    s.attrs.dim1 = 1;
    s.shape = shape_of({3, 2});
    break;
  case OpId::Concat:
    in = {m23, m23};
    s.shape = shape_of({4, 3});
    break;
  case OpId::Repeat:
    s.attrs.times = 2;
    s.shape = shape_of({4, 3});
    break;
  case OpId::Matmul:
  case OpId::Mm:
    in = {m23, shape_of({3, 2})};
    s.shape = shape_of({2, 2});
    break;
  case OpId::Addmm:
    // beta other than 0 and 1 and alpha other than 1: the sum post-op, the output scale and the
    // scalar product of the backward.
    in = {shape_of({2, 2}), m23, shape_of({3, 2})};
    s.shape = shape_of({2, 2});
    s.attrs.beta = 0.5;
    s.attrs.alpha = 2.0;
    break;
  default: break; // elementwise: [2, 3] to [2, 3]
  }
  s.num_operands = static_cast<std::int32_t>(in.size());
  for (const BurnmarkShape& shape : in) {
    Dense<float> d = Dense<float>::zeros(shape);
    for (std::size_t i = 0; i < d.data.size(); ++i)
      d.data[i] = 0.5f + 0.25f * static_cast<float>(i); // positive: inside log's and sqrt's domain
    e.operands.push_back(std::move(d));
  }
  return e;
}

// Whether `op` runs forward and backward in `dtype` here: the kernels run the example, so
// exactly the primitives the op uses are created, on this CPU and under ONEDNN_MAX_CPU_ISA.
// oneDNN 2.6 refuses a bf16 or f16 primitive where the ISA lacks the conversions it needs
// (f16: everything but reorder and concat without avx512_core_fp16).
template <class Kernels> bool runs_in(Kernels& k, std::uint32_t op, std::int32_t dtype) {
  try {
    Example e = example_of(op, dtype);
    std::vector<const Dense<float>*> in;
    std::vector<Dense<float>> grads;
    for (const Dense<float>& d : e.operands) {
      in.push_back(&d);
      grads.push_back(Dense<float>::zeros(d.shape));
    }
    std::vector<Dense<float>*> gin;
    for (Dense<float>& g : grads)
      gin.push_back(&g);
    Dense<float> out = Dense<float>::zeros(e.stmt.shape);
    k.forward(e.stmt, std::span<const Dense<float>* const>(in.data(), in.size()), out);
    Dense<float> g = Dense<float>::zeros(out.shape);
    std::fill(g.data.begin(), g.data.end(), 1.0f);
    k.backward(e.stmt, std::span<const Dense<float>* const>(in.data(), in.size()), out, g,
               std::span<Dense<float>* const>(gin.data(), gin.size()));
    return true;
  } catch (...) {
    return false;
  }
}

// The op list: every op in f32 (as before), and in bf16 and f16 where the probe ran it. Inputs
// are contiguous copies (the walk gathers strided leaves anyway; the host copies).
template <class Kernels>
std::vector<BurnmarkOpSupport> declared_support(std::span<const std::uint32_t> ops) {
  std::vector<BurnmarkOpSupport> out;
  std::unique_ptr<Kernels> k;
  try {
    k = std::make_unique<Kernels>();
  } catch (...) {
    // No engine: create() will fail the same way and say why; declare no 16-bit dtype.
  }
  for (const std::uint32_t op : ops) {
    std::uint32_t dtypes = BURNMARK_DTYPES_F32;
    for (const std::int32_t d : {BURNMARK_DTYPE_BF16, BURNMARK_DTYPE_F16})
      if (k && runs_in(*k, op, d)) dtypes |= BURNMARK_DTYPE_BIT(d);
    out.push_back(BurnmarkOpSupport{op, dtypes, 0, 0});
  }
  return out;
}

} // namespace burnmark::onednn
