// The example plugin: a minimal complete BurnMark plugin in plain C++, written against
// plugin_walk.h. It shows the whole contract a real library binding (oneDNN, Eigen) follows:
// a Kernels type with one forward and one backward case per op, an op list, and the entry
// symbol. Ops outside the list are never sent here; the host reports such programs as
// unsupported by this plugin.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "burnmark/plugin/plugin_walk.h"

namespace {

using burnmark::plugin::Dense;
using burnmark::plugin::OpId;

// Computes in double: the walk rounds every result to the program's dtype (f32, bf16, f16, or
// none for f64), so each op is correctly rounded in every dtype, as the reference is.
struct ExampleKernels {
  using Scalar = double;
  using In = std::span<const Dense<double>* const>;

  void forward(const BurnmarkStmt& s, In in, Dense<double>& out) {
    switch (static_cast<OpId>(s.op)) {
    case OpId::Add: binary(in, out, [](double a, double b) { return a + b; }); return;
    case OpId::Sub: binary(in, out, [](double a, double b) { return a - b; }); return;
    case OpId::Mul: binary(in, out, [](double a, double b) { return a * b; }); return;
    case OpId::Neg:
      unary(in, out, [](double a) { return -a; });
      return;
      // max(a, 0) with NaN propagating (IEEE 754 maximum, PyTorch's relu): a NaN is not < 0,
      // so it passes, and so does -0. BURNMARK_EXAMPLE_PLANTED_BUG (a CMake option, off by
      // default) builds the common slip `a > 0 ? a : 0` instead, which maps NaN to 0: the README's
      // quick start uses it to show a first finding.
#ifdef BURNMARK_EXAMPLE_PLANTED_BUG
    case OpId::Relu: unary(in, out, [](double a) { return a > 0.0 ? a : 0.0; }); return;
#else
    case OpId::Relu: unary(in, out, [](double a) { return a < 0.0 ? 0.0 : a; }); return;
#endif
    case OpId::Exp: unary(in, out, [](double a) { return std::exp(a); }); return;
    // Not implemented here: the op list below keeps the host from ever sending these, so a
    // plugin needs no case for ops it does not list (and keeps compiling as ops are added).
    default: break;
    }
    throw burnmark::plugin::Unsupported{s.op, {}};
  }

  // grad_in[i] arrives zeroed in operand i's shape; broadcasting is undone by accumulating
  // every output element into the operand element it was read from. Signed zeros as LibTorch
  // (and the reference): an operand of the output's shape gets the gradient itself, so its sum
  // starts from -0, the identity of IEEE addition, and a -0 (0 times a negative) stays -0; a
  // broadcast operand's gradient is a sum (sum_to_size), which starts from +0.
  void backward(const BurnmarkStmt& s, In in, const Dense<double>& out, const Dense<double>& g,
                std::span<Dense<double>* const> grad_in) {
    for (std::size_t i = 0; i < grad_in.size(); ++i)
      std::fill(grad_in[i]->data.begin(), grad_in[i]->data.end(),
                burnmark::plugin::same_shape(in[i]->shape, out.shape) ? -0.0 : 0.0);
    switch (static_cast<OpId>(s.op)) {
    case OpId::Add:
    case OpId::Sub: {
      const double sign_b = static_cast<OpId>(s.op) == OpId::Sub ? -1.0 : 1.0;
      burnmark::plugin::for_each_broadcast(out.shape, in[0]->shape, in[1]->shape,
                                           [&](std::int64_t o, std::int64_t a, std::int64_t b) {
                                             grad_in[0]->data[idx(a)] += g.data[idx(o)];
                                             grad_in[1]->data[idx(b)] += sign_b * g.data[idx(o)];
                                           });
      return;
    }
    // Each element's product is rounded to the program's dtype (LibTorch computes grad * b in
    // the dtype), then a broadcast operand's products are summed; the walk rounds the sum.
    case OpId::Mul:
      burnmark::plugin::for_each_broadcast(out.shape, in[0]->shape, in[1]->shape,
                                           [&](std::int64_t o, std::int64_t a, std::int64_t b) {
                                             grad_in[0]->data[idx(a)] +=
                                                 rounded(s, g.data[idx(o)] * in[1]->data[idx(b)]);
                                             grad_in[1]->data[idx(b)] +=
                                                 rounded(s, g.data[idx(o)] * in[0]->data[idx(a)]);
                                           });
      return;
    case OpId::Neg:
      for (std::size_t i = 0; i < g.data.size(); ++i)
        grad_in[0]->data[i] = -g.data[i];
      return;
    // PyTorch's threshold_backward(grad, result, 0): result <= 0 ? 0 : grad. The gradient at
    // exactly 0 is 0, and a NaN result (not <= 0) passes the gradient, as in the reference.
    case OpId::Relu:
      for (std::size_t i = 0; i < g.data.size(); ++i)
        grad_in[0]->data[i] = out.data[i] <= 0.0 ? 0.0 : g.data[i];
      return;
    case OpId::Exp:
      for (std::size_t i = 0; i < g.data.size(); ++i)
        grad_in[0]->data[i] = g.data[i] * out.data[i];
      return;
    // Not implemented here: the op list below keeps the host from ever sending these, so a
    // plugin needs no case for ops it does not list (and keeps compiling as ops are added).
    default: break;
    }
    throw burnmark::plugin::Unsupported{s.op, {}};
  }

private:
  // x rounded to the dtype of statement s (the program's float dtype).
  static double rounded(const BurnmarkStmt& s, double x) {
    return burnmark::plugin::round_to_dtype(x, s.dtype);
  }
  static std::size_t idx(std::int64_t i) {
    return static_cast<std::size_t>(i);
  }

  template <class F> static void unary(In in, Dense<double>& out, F f) {
    for (std::size_t i = 0; i < out.data.size(); ++i)
      out.data[i] = f(in[0]->data[i]);
  }
  template <class F> static void binary(In in, Dense<double>& out, F f) {
    burnmark::plugin::for_each_broadcast(
        out.shape, in[0]->shape, in[1]->shape, [&](std::int64_t o, std::int64_t a, std::int64_t b) {
          out.data[idx(o)] = f(in[0]->data[idx(a)], in[1]->data[idx(b)]);
        });
  }
};

constexpr std::uint32_t kOps[] = {
    static_cast<std::uint32_t>(OpId::Add),  static_cast<std::uint32_t>(OpId::Sub),
    static_cast<std::uint32_t>(OpId::Mul),  static_cast<std::uint32_t>(OpId::Neg),
    static_cast<std::uint32_t>(OpId::Relu), static_cast<std::uint32_t>(OpId::Exp),
};

// Every float dtype, strided leaves accepted (the walk gathers them).
constexpr auto kSupport = burnmark::plugin::op_support(kOps, BURNMARK_DTYPES_ALL_FLOAT, true);

} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  static constexpr BurnmarkPluginV1 table = burnmark::plugin::make_plugin_table<ExampleKernels>(
      "example",
      "BurnMark example plugin: add, sub, mul, neg, relu, exp in plain C++ (f32, f64, bf16, f16)",
      kSupport);
  return &table;
}
