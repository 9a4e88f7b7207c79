// Leaf layouts in LibTorch (LibTorchFramework::leaf, with_leaf_layout): each layout is really
// built (the strides and storage offset its definition gives, worked out here by hand), holds
// the same values as the contiguous leaf, and every LibTorch backend gives the same results,
// gradients, tangents and H·v on a laid-out leaf as on the contiguous one.
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
  const char* layout; // after the leaf's type
  std::vector<double> values;
  std::vector<std::int64_t> strides;
  std::int64_t offset;
  bool contiguous; // is_contiguous(): strides only, so an offset alone keeps it
};

// A [2,3] leaf (row-major strides [3, 1]) in each layout.
const Case kCases[] = {
    {"layout=permuted(1,0)", {1, 2, 3, 4, 5, 6}, {1, 2}, 0, false},        // a [3,2] buffer
    {"layout=slice(dim=1, step=2)", {1, 2, 3, 4, 5, 6}, {6, 2}, 0, false}, // [2,6], every other
    {"layout=slice(dim=0, step=3)", {1, 2, 3, 4, 5, 6}, {9, 1}, 0, false}, // [6,3], every third row
    {"layout=expanded(0)", {1, -2, 3, 1, -2, 3}, {0, 1}, 0, false},        // one row read twice
    {"layout=offset(5)", {1, 2, 3, 4, 5, 6}, {3, 1}, 5, true},
};

std::string leaf_line(const Case& c, bool laid_out) {
  std::string values;
  for (double v : c.values)
    values += (values.empty() ? "" : ", ") + value_to_text(v, FloatDType::F32);
  return std::string("%0 = leaf f32[2,3] ") + (laid_out ? c.layout : "") + " [" + values + "]\n";
}

} // namespace

TEST(LibTorchLayout, EachLeafLayoutIsReallyBuiltAndHoldsTheSameValues) {
  for (const FloatDType dtype : {FloatDType::F32, FloatDType::BF16, FloatDType::F64})
    for (const Case& c : kCases) {
      SCOPED_TRACE(std::string(c.layout) + " in " + std::string(float_dtype_name(dtype)));
      const Program laid = with_float_dtype(parsed(leaf_line(c, true)), dtype);
      const Program plain = with_float_dtype(parsed(leaf_line(c, false)), dtype);
      LibTorchFramework f;
      f.reset(laid);
      const torch::Tensor t = f.leaf(laid.leaves[0], true);
      const torch::Tensor u = f.leaf(plain.leaves[0], true);
      EXPECT_EQ(t.strides().vec(), c.strides);
      EXPECT_EQ(t.storage_offset(), c.offset);
      EXPECT_EQ(t.is_contiguous(), c.contiguous);
      EXPECT_TRUE(u.is_contiguous());
      EXPECT_EQ(u.storage_offset(), 0);
      EXPECT_TRUE(t.is_leaf() && t.requires_grad());
      EXPECT_EQ(t.scalar_type(), u.scalar_type());
      EXPECT_TRUE(torch::equal(t, u));
    }
  // Rank 3, dims stored in reverse: the [4,3,2] buffer's strides [6, 2, 1], dim 2 taking 6.
  Program q = parsed("%0 = leaf f32[2,3,4] [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, "
                     "15, 16, 17, 18, 19, 20, 21, 22, 23]\n");
  q.leaves[0].layout.kind = LayoutKind::Permuted;
  q.leaves[0].layout.dims = {2, 1, 0};
  ASSERT_EQ(validate(q), "");
  LibTorchFramework f;
  f.reset(q);
  const torch::Tensor t = f.leaf(q.leaves[0], false);
  EXPECT_EQ(t.strides().vec(), (std::vector<std::int64_t>{1, 2, 6}));
  EXPECT_TRUE(torch::equal(t, torch::arange(24, torch::kFloat32).reshape({2, 3, 4})));
}

// x * w + x * x, whose results, gradient (w + 2x), tangent and H·v (2v) are exact in f32: a
// laid-out leaf must give bit for bit what the contiguous one gives, in every LibTorch backend.
TEST(LibTorchLayout, BackendsGiveTheSameResultsOnEveryLayout) {
  const std::string tail = "%1 = leaf f32[2,3] [0.5, -1, 2, 0.25, 3, -0.75]\n"
                           "%2 = mul %0, %1 : f32[2,3]\n%3 = mul %0, %0 : f32[2,3]\n"
                           "%4 = add %2, %3 : f32[2,3]\n";
  const RunOptions all{true, true, true};
  for (const auto& make : {+[] { return make_libtorch_backend(1); }, &make_libtorch_inplace_backend,
                           &make_libtorch_strided_backend, &make_libtorch_fwd_over_rev_backend})
    for (const Case& c : kCases) {
      const auto backend = make();
      SCOPED_TRACE(backend->name() + " " + c.layout);
      const Outcome laid = backend->run(parsed(leaf_line(c, true) + tail), all);
      const Outcome plain = backend->run(parsed(leaf_line(c, false) + tail), all);
      ASSERT_EQ(laid.status, Status::Ok) << laid.message;
      ASSERT_EQ(plain.status, Status::Ok) << plain.message;
      EXPECT_EQ(laid.root.values, plain.root.values);
      ASSERT_EQ(laid.grads.size(), 2u);
      for (std::size_t k = 0; k < 2; ++k)
        EXPECT_EQ(laid.grads[k].values, plain.grads[k].values) << k;
      EXPECT_EQ(laid.tangent.values, plain.tangent.values);
      ASSERT_EQ(laid.hvp.size(), plain.hvp.size());
      for (std::size_t k = 0; k < laid.hvp.size(); ++k)
        EXPECT_EQ(laid.hvp[k].values, plain.hvp[k].values) << k;
      // The gradient of x is w + 2x, by hand.
      const std::vector<double> w = {0.5, -1, 2, 0.25, 3, -0.75};
      for (std::size_t i = 0; i < 6; ++i)
        EXPECT_EQ(laid.grads[0].values[i], w[i] + 2 * c.values[i]);
    }
}
