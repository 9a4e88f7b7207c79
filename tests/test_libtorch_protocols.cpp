// The LibTorch backend's protocols, whatever the op: an alias is the same tensor, an unreached
// leaf gets zeros, LibTorch's exceptions and a wrong result shape become error outcomes (without
// a stack trace), a forward-only run, special values bit for bit, run-to-run determinism with its
// throughput; and the libtorch-strided and libtorch-inplace frameworks' own mechanics.
// Must come first: clang 14 + libstdc++ 12 in C++20 otherwise sees IValue as incomplete.
#include <ATen/core/ivalue.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "burnmark/backends/builtin.h"
#include "burnmark/ir/text.h"
#include "libtorch_framework.h"
#include "libtorch_inplace.h"
#include "libtorch_programs.h"
#include "libtorch_strided.h"
#include "libtorch_test_run.h"

using namespace burnmark;
using namespace burnmark::testing;
using namespace burnmark::libtorch_test;

TEST(LibTorch, AliasIsTheSameTensorAndKeepsTheLeafGradient) {
  LibTorchFramework fw;
  const Leaf leaf{{3}, {1.0f, -2.0f, 0.5f}};
  const torch::Tensor t = fw.leaf(leaf, true);
  EXPECT_EQ(fw.alias(t).unsafeGetTensorImpl(), t.unsafeGetTensorImpl());

  // root = alias(x) * x, so d/dx = 2x: both paths must reach the one leaf.
  ProgramBuilder b;
  const Reg x = b.leaf({3}, {leaf.data.begin(), leaf.data.end()});
  const Reg y = b.alias(x);
  const Outcome out = run_ok(b.finish(b.op(Op::Mul, {y, x})));
  expect_values(out.root, {3}, {1.0, 4.0, 0.25}, "forward");
  expect_values(out.grads[0], {3}, {2.0, -4.0, 1.0}, "gradient through the alias");

  // The alias is the only path to the leaf.
  ProgramBuilder b2;
  const Reg x2 = b2.leaf({3}, {leaf.data.begin(), leaf.data.end()});
  const Outcome only = run_ok(b2.finish(b2.op(Op::Exp, {b2.alias(x2)})));
  expect_values(only.grads[0], {3}, {std::exp(1.0), std::exp(-2.0), std::exp(0.5)},
                "gradient via alias only");
}

TEST(LibTorch, UnreachedLeafGetsZerosOfItsShape) {
  ProgramBuilder b;
  const Reg x = b.leaf({2}, {1.0f, 2.0f});
  b.leaf({3, 2}, {1, 2, 3, 4, 5, 6});
  const Outcome out = run_ok(b.finish(b.op(Op::Neg, {x})));
  ASSERT_EQ(out.grads.size(), 2u);
  expect_values(out.grads[0], {2}, {-1.0, -1.0}, "reached leaf");
  expect_values(out.grads[1], {3, 2}, std::vector<double>(6, 0.0), "unreached leaf");
}

TEST(LibTorch, LibTorchExceptionBecomesErrorOutcome) {
  // Bypasses validation: add of [2,3] and [4] does not broadcast, so LibTorch itself raises.
  Program p;
  p.leaves = {Leaf{{2, 3}, std::vector<double>(6, 1.0)}, Leaf{{4}, std::vector<double>(4, 1.0)}};
  Stmt l0, l1, add;
  l0.kind = l1.kind = StmtKind::Leaf;
  l0.leaf = 0;
  l0.shape = {2, 3};
  l1.leaf = 1;
  l1.shape = {4};
  add.instr = Instr{Op::Add, {0, 1}, {}};
  add.shape = {2, 3};
  p.stmts = {l0, l1, add};
  p.root = 2;
  ASSERT_FALSE(validate(p).empty());
  const Outcome out = run(p);
  EXPECT_EQ(out.status, Status::Error);
  EXPECT_EQ(out.backend, "libtorch");
  EXPECT_NE(out.message.find("size of tensor"), std::string::npos) << out.message;
  EXPECT_TRUE(out.grads.empty());
}

TEST(LibTorch, ResultShapeDifferentFromInferredIsAnError) {
  // A transpose whose recorded shape was left untransposed: LibTorch's [3,2] must be caught.
  ProgramBuilder b;
  const Reg x = b.leaf({2, 3}, kMixed);
  Program p = b.finish(b.op(Op::Transpose, {x}, two_dims(0, 1)));
  p.stmts[1].shape = {2, 3};
  const Outcome out = run(p);
  EXPECT_EQ(out.status, Status::Error);
  EXPECT_NE(out.message.find("[3,2] where [2,3] was inferred"), std::string::npos) << out.message;
}

TEST(LibTorch, ForwardOnlyRunRecordsNoGradientAndRestoresGradMode) {
  ProgramBuilder b;
  const Reg x = b.leaf({2, 3}, kPositive);
  const Outcome out = run(b.finish(b.op(Op::Sqrt, {x})), false);
  ASSERT_EQ(out.status, Status::Ok) << out.message;
  EXPECT_TRUE(out.grads.empty());
  std::vector<double> f;
  for (float v : kPositive)
    f.push_back(std::sqrt(double{v}));
  expect_values(out.root, {2, 3}, f, "forward");
  EXPECT_TRUE(torch::GradMode::is_enabled());
}

TEST(LibTorch, SpecialValuesSurviveBitForBit) {
  const float sub = std::numeric_limits<float>::denorm_min() * 3;
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  ProgramBuilder b;
  const Reg x = b.leaf({6}, {0.0f, -0.0f, inf, -inf, nan, sub});
  const Outcome out = run_ok(b.finish(b.op(Op::Neg, {x})));
  const auto& v = out.root.values;
  ASSERT_EQ(v.size(), 6u);
  EXPECT_TRUE(v[0] == 0 && std::signbit(v[0]));
  EXPECT_TRUE(v[1] == 0 && !std::signbit(v[1]));
  EXPECT_EQ(v[2], -double{inf});
  EXPECT_EQ(v[3], double{inf});
  EXPECT_TRUE(std::isnan(v[4]));
  EXPECT_EQ(v[5], -double{sub});
}

TEST(LibTorch, RepeatedRunsAreBitIdenticalAndReportThroughput) {
  // A program shaped like the generator's typical output: a dozen ops over a few leaves of
  // up to a few hundred elements, with broadcasting, layout ops, a matmul and reductions.
  std::vector<float> ad(8 * 16), bd(16), cd(16 * 8);
  for (std::size_t i = 0; i < ad.size(); ++i)
    ad[i] = std::sin(static_cast<float>(i)) * 2;
  for (std::size_t i = 0; i < bd.size(); ++i)
    bd[i] = 0.1f * static_cast<float>(i) + 0.05f;
  for (std::size_t i = 0; i < cd.size(); ++i)
    cd[i] = std::cos(static_cast<float>(i));
  ProgramBuilder b;
  const Reg a = b.leaf({8, 16}, ad);
  const Reg bb = b.leaf({16}, bd);
  const Reg c = b.leaf({16, 8}, cd);
  const Reg s1 = b.op(Op::Mul, {a, bb});
  const Reg s2 = b.op(Op::Tanh, {s1});
  const Reg s3 = b.op(Op::Matmul, {s2, c});
  const Reg s4 = b.op(Op::Sigmoid, {s3});
  const Reg s5 = b.op(Op::Transpose, {s4}, two_dims(0, 1));
  const Reg s6 = b.op(Op::Concat, {s5, b.alias(s4)}, on_dim(0));
  const Reg s7 = b.op(Op::Pow, {s6}, exponent(1.5));
  const Reg s8 = b.op(Op::SumDim, {s7}, dim_keep(1, true));
  const Reg s9 = b.op(Op::Div, {s7, s8});
  const Reg s10 = b.op(Op::Clamp, {s9}, bounds(-0.5, 0.25));
  const Reg s11 = b.op(Op::Repeat, {s10}, dim_times(1, 2));
  const Reg s12 = b.op(Op::Log, {b.op(Op::Exp, {s11})});
  const Program p = b.finish(b.op(Op::MeanAll, {s12}));

  const Outcome first = run_ok(p);
  const int n = 500;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const Outcome again = run(p);
    ASSERT_EQ(again.root.values, first.root.values);
    ASSERT_EQ(again.grads.size(), first.grads.size());
    for (std::size_t g = 0; g < first.grads.size(); ++g)
      ASSERT_EQ(again.grads[g].values, first.grads[g].values);
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("programs_per_second", static_cast<int>(n / secs));
  std::printf("libtorch: %.0f programs/s with gradients (%zu statements)\n", n / secs,
              p.stmts.size());
}

TEST(LibTorchStrided, EachRegisterLayoutKeepsTheValuesInAnotherLayoutAndPassesGradients) {
  const torch::Tensor x = torch::arange(6, torch::kFloat32).reshape({2, 3}).requires_grad_(true);
  for (int reg : {0, 1, 2, 3, 4, 5}) {
    SCOPED_TRACE(reg);
    const torch::Tensor y = with_register_layout(x, reg);
    EXPECT_TRUE(torch::equal(y, x));
    EXPECT_EQ(y.sizes(), x.sizes());
    switch (reg % 3) {
    case 0: // transposed storage: the first dim is the fastest
      EXPECT_EQ(y.strides(), (std::vector<std::int64_t>{1, 2}));
      break;
    case 1: // every other element
      EXPECT_EQ(y.strides(), (std::vector<std::int64_t>{6, 2}));
      break;
    case 2: // contiguous one element past the start
      EXPECT_TRUE(y.is_contiguous());
      EXPECT_EQ(y.storage_offset(), 1);
      break;
    }
    x.mutable_grad() = torch::Tensor();
    (y * torch::arange(6, torch::kFloat32).reshape({2, 3})).sum().backward();
    EXPECT_TRUE(torch::equal(x.grad(), torch::arange(6, torch::kFloat32).reshape({2, 3})));
  }
  // Rank 1 cannot be transposed (stride 2 instead); one element can only be offset.
  EXPECT_EQ(with_register_layout(torch::ones({4}), 0).strides(), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(with_register_layout(torch::ones({}), 0).storage_offset(), 1);
}

TEST(LibTorchStrided, LeavesAreLaidOutTooAndKeepTheirOwnGradient) {
  LibTorchStridedFramework f;
  f.reset(Program{});
  const Leaf leaf{{2, 3}, {1, 2, 3, 4, 5, 6}};
  const torch::Tensor a = f.leaf(leaf, true); // register 0: transposed storage
  const torch::Tensor b = f.leaf(leaf, true); // register 1: stride 2
  EXPECT_TRUE(a.is_leaf() && a.requires_grad() && !a.is_contiguous());
  EXPECT_TRUE(b.is_leaf() && b.requires_grad() && !b.is_contiguous());
  (a * b).sum().backward();
  EXPECT_TRUE(torch::equal(a.grad(), b.detach()));
}

TEST(LibTorchInplace, OpsWithAnInPlaceFormWriteIntoAViewAndTheOthersDoNot) {
  // The version counter of a tensor written in place is above 0; a fresh functional result's
  // is 0. The operand itself is never written. (test_libtorch_inplace_view: which view.)
  LibTorchInplaceFramework f;
  const torch::Tensor x = f.leaf(Leaf{{2, 3}, {0.5f, 1, 1.5f, 2, 2.5f, 3}}, true);
  const torch::Tensor row = f.leaf(Leaf{{3}, {1, 2, 3}}, true);
  const auto version_after = [&](Op op, std::vector<const torch::Tensor*> operands, Attrs attrs,
                                 Shape shape) {
    Instr in;
    in.op = op;
    in.attrs = attrs;
    return f.apply(in, operands, shape)._version();
  };
  EXPECT_GT(version_after(Op::Sin, {&x}, {}, {2, 3}), 0u);
  EXPECT_GT(version_after(Op::Add, {&x, &row}, {}, {2, 3}), 0u);
  EXPECT_EQ(version_after(Op::Add, {&row, &x}, {}, {2, 3}), 0u); // would broadcast into row
  EXPECT_EQ(version_after(Op::Asinh, {&x}, {}, {2, 3}), 0u);     // not differentiable in place
  Attrs negative;
  negative.slope = -0.5;
  EXPECT_EQ(version_after(Op::LeakyRelu, {&x}, negative, {2, 3}), 0u);
  EXPECT_EQ(version_after(Op::Softplus, {&x}, {}, {2, 3}), 0u); // no in-place form
  EXPECT_EQ(x._version(), 0u);
}

// An error outcome carries LibTorch's message and no stack trace: the backend switches the trace
// off (symbolising it was most of a fuzzing run's CPU), and nothing BurnMark reports reads it.
TEST(LibTorchBackend, AnErrorOutcomeIsTheMessageWithoutAStackTrace) {
  ProgramBuilder b;
  const Reg x = b.leaf({2, 2}, {1, 2, 2, 4});
  const Program p = b.finish(b.op(Op::Inv, {x}));
  const Outcome o = make_libtorch_backend(1)->run(p, RunOptions{true});
  ASSERT_EQ(o.status, Status::Error);
  EXPECT_NE(o.message.find("singular"), std::string::npos) << o.message;
  EXPECT_EQ(o.message.find("frame #"), std::string::npos) << o.message;
}
