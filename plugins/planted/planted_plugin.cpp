// Planted faults that need search (issue 30): benchmark fixtures for tools/bench.sh's
// time-to-find. One source, built once per fault (BURNMARK_PLANTED_FAULT, see CMakeLists.txt):
// correct float32 kernels, with gradients, for add, sub, mul, neg, relu, exp and sum, except in
// one planted case that a program reaches only when the fuzzer draws (or mutates towards) a
// particular shape, value or composition:
//   tail       exp is wrong on the vector-width tail of each innermost row (size % 8 in 1..7 and
//              size > 8): the tail loop uses 1 + x + x²/2 in place of exp(x);
//   subnormal  mul is wrong when an operand holds a subnormal or a -0 (a slow path for
//              denormal-ish operands that never writes the last element, left 0);
//   broadcast  sub is wrong when a rank-3 operand is broadcast (its shape differs from the
//              rank-3 result's): that path computes b - a;
//   compose    sum is wrong when its operand is exp's result (through aliases): the fused
//              sum-of-exp kernel drops the last element;
//   clean      no fault: the kernels every other fault is planted into, so a test can show that
//              they agree with the reference everywhere else.
// Forward values only are planted; the backward is correct everywhere (the wrong values reach
// the root, which the oracle compares). Gradients come from plugin_walk.h, as in the example
// plugin (a fuzz_autograd backend must compute them). Not coverage-instrumented: the branch into
// a fault must be found by BurnMark's generator, mutator and features, not by libFuzzer's
// comparison tracing of the plugin.
#include <cmath>
#include <cstdint>
#include <span>

#include "burnmark/plugin/plugin_walk.h"

#define BURNMARK_PLANTED_CLEAN 0
#define BURNMARK_PLANTED_TAIL 1
#define BURNMARK_PLANTED_SUBNORMAL 2
#define BURNMARK_PLANTED_BROADCAST 3
#define BURNMARK_PLANTED_COMPOSE 4

#ifndef BURNMARK_PLANTED_FAULT
#error "BURNMARK_PLANTED_FAULT must name the planted fault (plugins/planted/CMakeLists.txt)"
#endif

namespace {

using burnmark::plugin::Dense;
using burnmark::plugin::OpId;

std::size_t idx(std::int64_t i) {
  return static_cast<std::size_t>(i);
}

[[maybe_unused]] bool subnormal_or_negative_zero(const Dense<float>& t) {
  for (float v : t.data)
    if (std::fpclassify(v) == FP_SUBNORMAL || (v == 0.0f && std::signbit(v))) return true;
  return false;
}

// A rank-3 operand broadcast to a rank-3 result: some dim of size 1 where the result's is not.
[[maybe_unused]] bool broadcast_rank3(const BurnmarkShape& operand, const BurnmarkShape& out) {
  if (out.rank != 3 || operand.rank != 3) return false;
  for (int i = 0; i < 3; ++i)
    if (operand.dims[i] != out.dims[i]) return true;
  return false;
}

struct PlantedKernels {
  using Scalar = float;
  using In = std::span<const Dense<float>* const>;

  // The program being run, for the compose fault's look at an operand's producer.
  const BurnmarkProgram* program = nullptr;

  void forward(const BurnmarkStmt& s, In in, Dense<float>& out) {
    switch (static_cast<OpId>(s.op)) {
    case OpId::Add: binary(in, out, [](float a, float b) { return a + b; }); return;
    case OpId::Sub:
#if BURNMARK_PLANTED_FAULT == BURNMARK_PLANTED_BROADCAST
      if (broadcast_rank3(in[0]->shape, out.shape) || broadcast_rank3(in[1]->shape, out.shape)) {
        binary(in, out, [](float a, float b) { return b - a; });
        return;
      }
#endif
      binary(in, out, [](float a, float b) { return a - b; });
      return;
    case OpId::Mul: binary(in, out, [](float a, float b) { return a * b; });
#if BURNMARK_PLANTED_FAULT == BURNMARK_PLANTED_SUBNORMAL
      if (subnormal_or_negative_zero(*in[0]) || subnormal_or_negative_zero(*in[1]))
        out.data.back() = 0.0f;
#endif
      return;
    case OpId::Neg: unary(in, out, [](float a) { return -a; }); return;
    // max(a, 0) with NaN propagating (PyTorch's relu), as in the example plugin.
    case OpId::Relu: unary(in, out, [](float a) { return a < 0.0f ? 0.0f : a; }); return;
    case OpId::Exp: unary(in, out, [](float a) { return std::exp(a); });
#if BURNMARK_PLANTED_FAULT == BURNMARK_PLANTED_TAIL
      if (out.shape.rank > 0) {
        const std::int64_t row = out.shape.dims[out.shape.rank - 1];
        const std::int64_t body = row - row % 8;
        if (row > 8 && row % 8 != 0)
          for (std::int64_t r = 0; r < out.numel(); r += row)
            for (std::int64_t j = body; j < row; ++j) {
              const float x = in[0]->data[idx(r + j)];
              out.data[idx(r + j)] = 1.0f + x + 0.5f * x * x;
            }
      }
#endif
      return;
    case OpId::SumAll: {
      // Summed in double and rounded once: within the bound of any float32 summation order.
      std::int64_t n = in[0]->numel();
#if BURNMARK_PLANTED_FAULT == BURNMARK_PLANTED_COMPOSE
      if (produced_by(s.operands[0], OpId::Exp)) --n;
#endif
      double acc = 0.0;
      for (std::int64_t i = 0; i < n; ++i)
        acc += in[0]->data[idx(i)];
      out.data[0] = static_cast<float>(acc);
      return;
    }
    default: break; // the op list below keeps the host from sending any other op
    }
    throw burnmark::plugin::Unsupported{s.op, {}};
  }

  // As the example plugin's backward (its comments say why each rule is PyTorch's), plus sum.
  void backward(const BurnmarkStmt& s, In in, const Dense<float>& out, const Dense<float>& g,
                std::span<Dense<float>* const> grad_in) {
    switch (static_cast<OpId>(s.op)) {
    case OpId::Add:
    case OpId::Sub: {
      const float sign_b = static_cast<OpId>(s.op) == OpId::Sub ? -1.0f : 1.0f;
      burnmark::plugin::for_each_broadcast(out.shape, in[0]->shape, in[1]->shape,
                                           [&](std::int64_t o, std::int64_t a, std::int64_t b) {
                                             grad_in[0]->data[idx(a)] += g.data[idx(o)];
                                             grad_in[1]->data[idx(b)] += sign_b * g.data[idx(o)];
                                           });
      return;
    }
    case OpId::Mul:
      burnmark::plugin::for_each_broadcast(out.shape, in[0]->shape, in[1]->shape,
                                           [&](std::int64_t o, std::int64_t a, std::int64_t b) {
                                             grad_in[0]->data[idx(a)] +=
                                                 g.data[idx(o)] * in[1]->data[idx(b)];
                                             grad_in[1]->data[idx(b)] +=
                                                 g.data[idx(o)] * in[0]->data[idx(a)];
                                           });
      return;
    case OpId::Neg:
      for (std::size_t i = 0; i < g.data.size(); ++i)
        grad_in[0]->data[i] = -g.data[i];
      return;
    case OpId::Relu:
      for (std::size_t i = 0; i < g.data.size(); ++i)
        grad_in[0]->data[i] = out.data[i] <= 0.0f ? 0.0f : g.data[i];
      return;
    case OpId::Exp:
      // exp's own result, recomputed: the tail fault's wrong values must not leak into the
      // gradient, so that only the forward values are planted.
      for (std::size_t i = 0; i < g.data.size(); ++i)
        grad_in[0]->data[i] = g.data[i] * std::exp(in[0]->data[i]);
      return;
    case OpId::SumAll:
      for (float& v : grad_in[0]->data)
        v = g.data[0];
      return;
    default: break;
    }
    throw burnmark::plugin::Unsupported{s.op, {}};
  }

private:
  // Whether register r (through aliases) is the result of op `op`.
  [[maybe_unused]] bool produced_by(std::int32_t r, OpId op) const {
    while (program->stmts[r].kind == BURNMARK_STMT_ALIAS)
      r = program->stmts[r].source;
    const BurnmarkStmt& p = program->stmts[r];
    return p.kind == BURNMARK_STMT_OP && static_cast<OpId>(p.op) == op;
  }

  template <class F> static void unary(In in, Dense<float>& out, F f) {
    for (std::size_t i = 0; i < out.data.size(); ++i)
      out.data[i] = f(in[0]->data[i]);
  }
  template <class F> static void binary(In in, Dense<float>& out, F f) {
    burnmark::plugin::for_each_broadcast(
        out.shape, in[0]->shape, in[1]->shape, [&](std::int64_t o, std::int64_t a, std::int64_t b) {
          out.data[idx(o)] = f(in[0]->data[idx(a)], in[1]->data[idx(b)]);
        });
  }
};

constexpr std::uint32_t kOps[] = {
    static_cast<std::uint32_t>(OpId::Add),    static_cast<std::uint32_t>(OpId::Sub),
    static_cast<std::uint32_t>(OpId::Mul),    static_cast<std::uint32_t>(OpId::Neg),
    static_cast<std::uint32_t>(OpId::Relu),   static_cast<std::uint32_t>(OpId::Exp),
    static_cast<std::uint32_t>(OpId::SumAll),
};
// f32 only and contiguous inputs (the walk gathers strided leaves anyway; the host copies).
constexpr auto kSupport = burnmark::plugin::op_support(kOps, BURNMARK_DTYPES_F32, false);

// plugin_walk.h's run, after handing the kernels the program (the compose fault reads it).
std::int32_t run(void* context, const BurnmarkProgram* program, const BurnmarkRunOptions* options,
                 BurnmarkResult* result) {
  static_cast<PlantedKernels*>(context)->program = program;
  return burnmark::plugin::detail::Thunks<PlantedKernels>::run(context, program, options, result);
}

constexpr BurnmarkPluginV1 make_table() {
  BurnmarkPluginV1 t = burnmark::plugin::make_plugin_table<PlantedKernels>(
      BURNMARK_PLANTED_NAME,
      "BurnMark planted-fault fixture (" BURNMARK_PLANTED_NAME
      "): add, sub, mul, neg, relu, exp, sum in float32, one fault that needs search",
      kSupport);
  t.run = &run;
  return t;
}

} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  static constexpr BurnmarkPluginV1 table = make_table();
  return &table;
}
