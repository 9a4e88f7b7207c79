// relayout in LibTorch (with_layout): the op's result is really laid out (the strides and
// storage offset its definition gives, worked out here by hand), holds the operand's values and
// passes the gradient back unchanged; and on a program with relayout mid-program every LibTorch
// backend agrees with the reference, results, gradients, tangents and H·v, with values derived
// by hand.
// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"
#include "libtorch_framework.h"
#include "parsed_program.h"

using namespace burnmark;
using burnmark::test_support::parsed;

namespace {

struct Case {
  const char* layout;
  std::vector<std::int64_t> strides;
  std::int64_t offset;
  bool contiguous; // is_contiguous(): strides of size-1 dims do not count, nor an offset
};

// A [2,1,3] register (row-major strides [3, 3, 1]) in each layout.
const Case kCases[] = {
    {"layout=permuted(2,0,1)", {1, 1, 2}, 0, false},      // a [3,2,1] buffer
    {"layout=permuted(1,2,0)", {1, 6, 2}, 0, false},      // [1,3,2]: dim 0 innermost
    {"layout=slice(dim=2, step=2)", {6, 6, 2}, 0, false}, // [2,1,6], every other element
    {"layout=slice(dim=0, step=3)", {9, 3, 1}, 0, false}, // [6,1,3], every third row
    {"layout=expanded(1)", {3, 0, 1}, 0, true},           // stride 0 on the size-1 dim
    {"layout=offset(5)", {3, 3, 1}, 5, true},
};

const std::vector<double> kX = {0.5, -1, 2, 0.25, 3, -0.75};
const std::vector<double> kW = {2, 0.5, -1, 4, -0.5, 1};

std::string values_text(const std::vector<double>& v) {
  std::string out;
  for (double x : v)
    out += (out.empty() ? "" : ", ") + value_to_text(x, FloatDType::F32);
  return "[" + out + "]";
}

// (x * w) relaid out, times x: root x²w, gradient 2xw for x and x² for w, all exact in f32. With
// no layout, relayout is a plain copy: the same program with its result contiguous.
std::string program(const char* layout) {
  return "%0 = leaf f32[2,1,3] " + values_text(kX) + "\n%1 = leaf f32[2,1,3] " + values_text(kW) +
         "\n%2 = mul %0, %1 : f32[2,1,3]\n%3 = relayout %2" + layout +
         " : f32[2,1,3]\n%4 = mul %3, %0 : f32[2,1,3]\n";
}
std::string program(const Case& c) {
  return program((std::string(", ") + c.layout).c_str());
}

} // namespace

TEST(LibTorchRelayout, TheResultIsReallyLaidOutAndTheGradientPassesThrough) {
  for (const FloatDType dtype : {FloatDType::F32, FloatDType::BF16, FloatDType::F64})
    for (const Case& c : kCases) {
      SCOPED_TRACE(std::string(c.layout) + " in " + std::string(float_dtype_name(dtype)));
      const Program p = with_float_dtype(parsed(program(c)), dtype);
      LibTorchFramework f;
      f.reset(p);
      const torch::Tensor x = f.leaf(p.leaves[0], true);
      const Stmt& relayout = p.stmts[3];
      const torch::Tensor* operands[] = {&x};
      const torch::Tensor y = f.apply(relayout.instr, operands, relayout.shape);
      EXPECT_EQ(y.strides().vec(), c.strides);
      EXPECT_EQ(y.storage_offset(), c.offset);
      EXPECT_EQ(y.is_contiguous(), c.contiguous);
      EXPECT_TRUE(torch::equal(y, x));
      EXPECT_EQ(y.scalar_type(), x.scalar_type());
      // A buffer larger than the view holds NaN where the view does not reach.
      const auto storage = static_cast<std::int64_t>(y.storage().nbytes()) / y.element_size();
      const torch::Tensor buffer = torch::empty({0}, y.options()).set_(y.storage(), 0, {storage});
      EXPECT_EQ(torch::isnan(buffer).sum().item<std::int64_t>(), storage - y.numel());
      // d/dx sum(relayout(x) * w) = w, wherever the view put each element.
      const torch::Tensor w =
          torch::tensor(kW, x.options().requires_grad(false)).reshape({2, 1, 3});
      (y * w).sum().backward();
      ASSERT_TRUE(x.grad().defined());
      EXPECT_TRUE(torch::equal(x.grad(), w));
    }
}

TEST(LibTorchRelayout, EveryBackendAgreesWithTheReferenceAndTheHandValues) {
  const RunOptions all{true, true, true};
  const auto reference = make_reference_backend();
  for (const auto& make : {+[] { return make_libtorch_backend(1); }, &make_libtorch_inplace_backend,
                           &make_libtorch_strided_backend, &make_libtorch_fwd_over_rev_backend})
    for (const Case& c : kCases) {
      const auto backend = make();
      SCOPED_TRACE(backend->name() + " " + c.layout);
      const Program p = parsed(program(c));
      ASSERT_EQ(validate(p), "");
      const Outcome got = backend->run(p, all);
      const Outcome ref = reference->run(p, all);
      ASSERT_EQ(got.status, Status::Ok) << got.message;
      ASSERT_EQ(ref.status, Status::Ok) << ref.message;
      ASSERT_EQ(got.root.values.size(), 6u);
      ASSERT_EQ(got.grads.size(), 2u);
      ASSERT_EQ(ref.grads.size(), 2u);
      for (std::size_t i = 0; i < 6; ++i) {
        const double x = kX[i], w = kW[i];
        EXPECT_EQ(got.root.values[i], x * x * w) << i;
        EXPECT_EQ(got.grads[0].values[i], 2 * x * w) << i;
        EXPECT_EQ(got.grads[1].values[i], x * x) << i;
      }
      EXPECT_EQ(got.root.values, ref.root.values);
      for (std::size_t k = 0; k < 2; ++k)
        EXPECT_EQ(got.grads[k].values, ref.grads[k].values) << k;
      // Tangents and H·v round as LibTorch's kernels do: bit for bit those of the contiguous copy.
      const Outcome plain = backend->run(parsed(program("")), all);
      ASSERT_EQ(plain.status, Status::Ok) << plain.message;
      EXPECT_EQ(got.tangent.values, plain.tangent.values);
      EXPECT_FALSE(got.tangent.values.empty());
      ASSERT_EQ(got.hvp.size(), plain.hvp.size());
      for (std::size_t k = 0; k < got.hvp.size(); ++k)
        EXPECT_EQ(got.hvp[k].values, plain.hvp[k].values) << k;
    }
}

// TorchScript runs relayout as the same as_strided_scatter / as_strided pair.
TEST(LibTorchRelayout, TheJitBackendsAgreeToo) {
  const RunOptions grads{true, false, false};
  const auto reference = make_reference_backend();
  for (const bool fuse : {false, true})
    for (const Case& c : kCases) {
      const auto backend = make_libtorch_jit_backend(fuse);
      SCOPED_TRACE(backend->name() + " " + c.layout);
      const Program p = parsed(program(c));
      const Outcome got = backend->run(p, grads);
      const Outcome ref = reference->run(p, grads);
      ASSERT_EQ(got.status, Status::Ok) << got.message;
      EXPECT_EQ(got.root.values, ref.root.values);
      ASSERT_EQ(got.grads.size(), 2u);
      for (std::size_t k = 0; k < 2; ++k)
        EXPECT_EQ(got.grads[k].values, ref.grads[k].values) << k;
    }
}
