// Each BurnMark op mapped to the LibTorch call with the same semantics, plus leaf creation,
// backward and read-out. Nothing is caught here: the driver turns LibTorch's exceptions
// (c10::Error is a std::exception) into the backend's Error outcome.
// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include "libtorch_framework.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace burnmark {
namespace {

c10::IntArrayRef sizes_of(const Shape& shape) {
  return {shape.data(), static_cast<std::size_t>(shape.rank())};
}

Shape shape_of(const torch::Tensor& t) {
  if (t.dim() > kMaxRank)
    throw std::runtime_error(fmt::format("libtorch returned a tensor of rank {}", t.dim()));
  Shape s;
  for (std::int64_t d : t.sizes())
    s.push_back(d);
  return s;
}

} // namespace

torch::Tensor LibTorchFramework::leaf(const Leaf& leaf, bool track_gradient) {
  // A fresh buffer rather than from_blob: the program's data must not be aliased by a tensor
  // that outlives it, and memcpy keeps every bit (NaN payloads, -0, subnormals).
  torch::Tensor t =
      torch::empty(sizes_of(leaf.shape), torch::TensorOptions().dtype(torch::kFloat32));
  std::memcpy(t.data_ptr<float>(), leaf.data.data(), leaf.data.size() * sizeof(float));
  if (track_gradient) t.set_requires_grad(true);
  return t;
}

torch::Tensor LibTorchFramework::apply(const Instr& instr, std::span<const Tensor* const> operands,
                                       const Shape& shape) {
  const torch::Tensor& x = *operands[0];
  const Attrs& a = instr.attrs;
  // Only binary ops may read operands[1].
  const auto y = [&]() -> const torch::Tensor& { return *operands[1]; };
  torch::Tensor out;
  switch (instr.op) {
  case Op::Add: out = torch::add(x, y()); break;
  case Op::Sub: out = torch::sub(x, y()); break;
  case Op::Mul: out = torch::mul(x, y()); break;
  case Op::Div: out = torch::div(x, y()); break;
  case Op::Neg: out = torch::neg(x); break;
  case Op::Abs: out = torch::abs(x); break;
  case Op::Exp: out = torch::exp(x); break;
  case Op::Log: out = torch::log(x); break;
  case Op::Sqrt: out = torch::sqrt(x); break;
  // A Scalar exponent, not a tensor: LibTorch's special cases (sqrt, rsqrt, x*x, ...) only
  // run on this overload, and they are part of what is under test.
  case Op::Pow: out = torch::pow(x, a.exponent); break;
  case Op::Relu: out = torch::relu(x); break;
  case Op::Sigmoid: out = torch::sigmoid(x); break;
  case Op::Tanh: out = torch::tanh(x); break;
  case Op::SumAll: out = torch::sum(x); break;
  case Op::MeanAll: out = torch::mean(x); break;
  case Op::SumDim: out = torch::sum(x, {a.dim}, a.keepdim); break;
  case Op::MeanDim: out = torch::mean(x, {a.dim}, a.keepdim); break;
  case Op::Transpose: out = torch::transpose(x, a.dim, a.dim1); break;
  case Op::Concat: out = torch::cat({x, y()}, a.dim); break;
  case Op::Repeat: {
    std::int64_t reps[kMaxRank] = {1, 1, 1, 1};
    reps[a.dim] = a.times;
    out = x.repeat(c10::IntArrayRef(reps, static_cast<std::size_t>(x.dim())));
    break;
  }
  case Op::Matmul: out = torch::matmul(x, y()); break;
  case Op::Clamp: out = torch::clamp(x, a.lo, a.hi); break;
  }
  if (out.sizes() != sizes_of(shape)) {
    throw std::runtime_error(fmt::format("libtorch {} returned shape {} where {} was inferred",
                                         op_name(instr.op), shape_of(out).to_string(),
                                         shape.to_string()));
  }
  return out;
}

void LibTorchFramework::backward(const Tensor& root) {
  root.backward(torch::ones_like(root));
}

std::optional<HostTensor> LibTorchFramework::grad(const Tensor& t) {
  const torch::Tensor& g = t.grad();
  if (!g.defined()) return std::nullopt;
  return read(g);
}

HostTensor LibTorchFramework::read(const Tensor& t) {
  // A silent dtype promotion would be a LibTorch finding, not something to convert away.
  if (t.scalar_type() != torch::kFloat32)
    throw std::runtime_error(
        fmt::format("libtorch returned dtype {}, not float32", c10::toString(t.scalar_type())));
  const torch::Tensor c = t.detach().contiguous();
  HostTensor out;
  out.shape = shape_of(c);
  const float* p = c.data_ptr<float>();
  out.values.assign(p, p + c.numel());
  return out;
}

} // namespace burnmark
