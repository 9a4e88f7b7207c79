// Tests of the onednn plugin, loaded through the real loader: one small program per op whose
// values and every leaf gradient must agree with the reference backend under the oracle, the
// conventions at kinks where oneDNN agrees with LibTorch, and the measured places where it does
// not (asserted as they are where they were measured, so a change in oneDNN shows up here;
// elsewhere a different value is reported and the verdict on it checked: expect_pinned).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "burnmark/plugin/loader.h"
#include "burnmark/plugin/plugin.h"
#include "burnmark/util/cpu_vendor.h"
#include "test_onednn_common.h"

using namespace burnmark;
using burnmark::onednn_test::Backends;
using burnmark::onednn_test::Pair;
namespace fs = std::filesystem;

TEST(OnednnPlugin, LoadsByNameAndDescribesItself) {
  PluginLoadResult r = load_plugin_backend("onednn");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r.take()->name(), "onednn");
}

// The first vocabulary and the later ops oneDNN 2.6 has a primitive for are declared, and no
// other: programs with the rest are skipped.
// The platform line names the ISA oneDNN's JIT writes kernels for, which ONEDNN_MAX_CPU_ISA caps
// (the suite runs again under avx2 and sse41), and the CPU vendor.
TEST(OnednnPlugin, PlatformNamesTheIsaItsKernelsAreFor) {
  Backends b;
  ASSERT_TRUE(b.dnn);
  const std::string platform = b.dnn->platform();
  EXPECT_TRUE(platform.starts_with("oneDNN ")) << platform;
  EXPECT_TRUE(platform.ends_with(" on " + cpu_vendor())) << platform;
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  const std::string isa = cap != nullptr ? cap : "";
  __builtin_cpu_init();
  if ((isa == "avx2" && __builtin_cpu_supports("avx2")) ||
      (isa == "sse41" && __builtin_cpu_supports("sse4.1")))
    EXPECT_NE(platform.find(" " + isa + " on "), std::string::npos) << platform;
}

TEST(OnednnPlugin, DeclaresExactlyTheMappedOps) {
  void* h = dlopen(BURNMARK_ONEDNN_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  auto entry = reinterpret_cast<BurnmarkPluginEntryFn>(dlsym(h, BURNMARK_PLUGIN_ENTRY_SYMBOL));
  ASSERT_NE(entry, nullptr);
  const BurnmarkPluginV1* t = entry(BURNMARK_PLUGIN_ABI_VERSION);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->computes_gradients, 1);
  std::vector<std::string> declared;
  for (std::uint32_t i = 0; i < t->num_ops; ++i) {
    const auto op = burnmark::op_from_stable_id(t->ops[i].op);
    ASSERT_TRUE(op.has_value()) << t->ops[i].op;
    // Every op in f32, none in f64 (oneDNN has no f64 primitives on the CPU); bf16 and f16 as
    // the load-time probe found (OnednnDtypes checks those); contiguous copies.
    EXPECT_NE(t->ops[i].dtypes & BURNMARK_DTYPES_F32, 0u);
    EXPECT_EQ(t->ops[i].dtypes & BURNMARK_DTYPE_BIT(BURNMARK_DTYPE_F64), 0u);
    EXPECT_EQ(t->ops[i].strided_inputs, 0);
    if (t->ops[i].op >= 22) declared.emplace_back(burnmark::op_name(*op));
  }
  EXPECT_EQ(t->num_ops, 22u + declared.size());
  const std::vector<std::string> want = {"reciprocal",
                                         "square",
                                         "round",
                                         "clamp_min",
                                         "clamp_max",
                                         "logsigmoid",
                                         "softplus",
                                         "gelu",
                                         "silu",
                                         "mish",
                                         "elu",
                                         "leaky_relu",
                                         "hardtanh",
                                         "relu6",
                                         "hardswish",
                                         "maximum",
                                         "minimum",
                                         "prod",
                                         "amax",
                                         "amin",
                                         "max",
                                         "min",
                                         "vector_norm",
                                         "prod_dim",
                                         "amax_dim",
                                         "amin_dim",
                                         "max_dim",
                                         "min_dim",
                                         "vector_norm_dim",
                                         "softmax",
                                         "log_softmax",
                                         "mm",
                                         "addmm"};
  EXPECT_EQ(declared, want);
  dlclose(h);
}

TEST(OnednnOps, AddWithEveryBroadcastPattern) {
  Backends b;
  // src1 broadcast (direct), src0 broadcast (swapped), both broadcast (src0 expanded).
  b.expect_agree(
      "%0 = leaf f32[2,3] [0.5, -1, 2, 0.25, -0.25, 1.5]\n%1 = leaf f32[3] [1, -2, 0.5]\n"
      "%2 = add %0, %1 : f32[2,3]\n%3 = add %1, %2 : f32[2,3]\n%4 = leaf f32[2,1] [3, -1]\n"
      "%5 = leaf f32[1,3] [0.5, 2, -4]\n%6 = add %4, %5 : f32[2,3]\n%7 = mul %3, %6 : "
      "f32[2,3]\nroot %7\n");
}

TEST(OnednnOps, SubWithBroadcastFirstOperand) {
  Backends b;
  b.expect_agree(
      "%0 = leaf f32[3] [1, -2, 0.5]\n%1 = leaf f32[2,3] [0.5, -1, 2, 0.25, -0.25, 1.5]\n"
      "%2 = sub %0, %1 : f32[2,3]\n%3 = leaf f32[2,1] [3, -1]\n%4 = sub %2, %3 : f32[2,3]\n"
      "%5 = mul %4, %1 : f32[2,3]\nroot %5\n");
}

TEST(OnednnOps, MulBothBroadcast) {
  Backends b;
  b.expect_agree(
      "%0 = leaf f32[2,1] [3, -1]\n%1 = leaf f32[1,3] [0.5, 2, -4]\n%2 = mul %0, %1 : f32[2,3]\n"
      "%3 = mul %2, %2 : f32[2,3]\nroot %3\n");
}

TEST(OnednnOps, DivBothDirectionsOfBroadcast) {
  Backends b;
  b.expect_agree(
      "%0 = leaf f32[2,3] [0.5, -1, 2, 0.25, -0.25, 1.5]\n%1 = leaf f32[3] [1, -2, 0.5]\n"
      "%2 = div %0, %1 : f32[2,3]\n%3 = div %1, %2 : f32[2,3]\nroot %3\n");
}

TEST(OnednnOps, ScalarOperands) {
  Backends b;
  // Leaves have rank >= 1; a scalar register comes from a full reduction.
  b.expect_agree(
      "%0 = leaf f32[1] [2.5]\n%1 = sum %0 : f32[]\n%2 = leaf f32[2,2] [1, -2, 3, 0.5]\n"
      "%3 = div %1, %2 : f32[2,2]\n%4 = sub %3, %1 : f32[2,2]\n%5 = mul %1, %1 : f32[]\n"
      "%6 = mul %4, %5 : f32[2,2]\n%7 = mean %5 : f32[]\n%8 = mul %6, %7 : f32[2,2]\nroot %8\n");
}

TEST(OnednnOps, SmoothUnaryOps) {
  Backends b;
  const std::string x = "%0 = leaf f32[2,5] [0.5, -1.25, 2, 0.75, -0.3, 1.5, -2.5, 0.1, 3, -0.6]\n";
  for (const char* op : {"neg", "exp", "sigmoid", "tanh", "abs", "relu"})
    b.expect_agree(x + "%1 = " + op + " %0 : f32[2,5]\n%2 = mul %1, %0 : f32[2,5]\nroot %2\n");
  const std::string pos = "%0 = leaf f32[2,4] [0.5, 1.25, 2, 0.75, 0.3, 1.5, 2.5, 0.1]\n";
  for (const char* op : {"log", "sqrt"})
    b.expect_agree(pos + "%1 = " + op + " %0 : f32[2,4]\n%2 = mul %1, %0 : f32[2,4]\nroot %2\n");
}

TEST(OnednnOps, PowEveryExponentClass) {
  Backends b;
  for (const char* c : {"2", "3", "0.5", "-0.5", "-1", "-2", "1.5", "1", "0", "-1.5"})
    b.expect_agree(
        std::string(
            "%0 = leaf f32[2,4] [0.5, 1.25, 2, 0.75, 0.3, 1.5, 2.5, 0.1]\n%1 = pow %0, exponent=") +
        c + " : f32[2,4]\n%2 = sum %1 : f32[]\nroot %2\n");
  // Integral exponents on negative bases.
  for (const char* c : {"2", "3", "-1", "-2"})
    b.expect_agree(
        std::string("%0 = leaf f32[4] [-0.5, -1.25, -2, -0.75]\n%1 = pow %0, exponent=") + c +
        " : f32[4]\n%2 = sum %1 : f32[]\nroot %2\n");
}

TEST(OnednnOps, ClampEveryBoundPair) {
  Backends b;
  const std::string x = "%0 = leaf f32[8] [-1.7, -0.8, -0.3, 0.1, 0.4, 0.7, 1.3, 2.5]\n";
  for (const char* bounds :
       {"min=-1, max=1", "min=0, max=1", "min=-0.5, max=0.25", "min=0.5, max=-0.5"})
    b.expect_agree(x + "%1 = clamp %0, " + bounds +
                   " : f32[8]\n%2 = mul %1, %0 : f32[8]\nroot %2\n");
}

TEST(OnednnOps, Reductions) {
  Backends b;
  const std::string x =
      "%0 = leaf f32[2,3,2] [0.5, -1, 2, 0.25, -0.25, 1.5, 3, -0.5, 0.125, 1, -2, 0.75]\n";
  b.expect_agree(x + "%1 = sum %0 : f32[]\nroot %1\n");
  b.expect_agree(x + "%1 = mean %0 : f32[]\nroot %1\n");
  b.expect_agree(
      x +
      "%1 = sum_dim %0, dim=1, keepdim=false : f32[2,2]\n%2 = mul %1, %1 : f32[2,2]\nroot %2\n");
  b.expect_agree(
      x +
      "%1 = sum_dim %0, dim=2, keepdim=true : f32[2,3,1]\n%2 = mul %1, %1 : f32[2,3,1]\nroot %2\n");
  b.expect_agree(
      x +
      "%1 = mean_dim %0, dim=0, keepdim=false : f32[3,2]\n%2 = mul %1, %1 : f32[3,2]\nroot %2\n");
  b.expect_agree(x + "%1 = mean_dim %0, dim=1, keepdim=true : f32[2,1,2]\n%2 = mul %1, %1 : "
                     "f32[2,1,2]\nroot %2\n");
  // Reductions that reduce nothing: a scalar, and an axis of size 1.
  b.expect_agree("%0 = leaf f32[1] [1.5]\n%1 = mean %0 : f32[]\n%2 = sum %1 : f32[]\n%3 = mul %2, "
                 "%1 : f32[]\nroot %3\n");
  b.expect_agree("%0 = leaf f32[2,1] [1.5, -2]\n%1 = mean_dim %0, dim=1, keepdim=false : f32[2]\n"
                 "%2 = mul %1, %1 : f32[2]\nroot %2\n");
}

TEST(OnednnOps, LayoutOps) {
  Backends b;
  const std::string x =
      "%0 = leaf f32[2,3,2] [0.5, -1, 2, 0.25, -0.25, 1.5, 3, -0.5, 0.125, 1, -2, 0.75]\n";
  b.expect_agree(
      x +
      "%1 = transpose %0, dim0=0, dim1=2 : f32[2,3,2]\n%2 = mul %1, %0 : f32[2,3,2]\nroot %2\n");
  b.expect_agree(
      x +
      "%1 = transpose %0, dim0=1, dim1=2 : f32[2,2,3]\n%2 = exp %1 : f32[2,2,3]\n"
      "%3 = sum_dim %2, dim=2, keepdim=false : f32[2,2]\n%4 = mul %3, %3 : f32[2,2]\nroot %4\n");
  b.expect_agree(
      x +
      "%1 = repeat %0, dim=1, times=3 : f32[2,9,2]\n%2 = exp %1 : f32[2,9,2]\n"
      "%3 = sum_dim %2, dim=1, keepdim=false : f32[2,2]\n%4 = mul %3, %3 : f32[2,2]\nroot %4\n");
  b.expect_agree(
      x +
      "%1 = repeat %0, dim=0, times=2 : f32[4,3,2]\n%2 = leaf f32[4,3,2] [1, 2, 3, 4, 5, 6, 7, 8, "
      "9, 10, 11, 12, 13, 14, 15, 16, 1, 2, 3, 4, 5, 6, 7, 8]\n%3 = mul %1, %2 : f32[4,3,2]\nroot "
      "%3\n");
  b.expect_agree(x + "%1 = leaf f32[2,1,2] [4, -3, 2, 1]\n%2 = concat %0, %1, dim=1 : f32[2,4,2]\n"
                     "%3 = exp %2 : f32[2,4,2]\n%4 = mul %3, %2 : f32[2,4,2]\nroot %4\n");
  b.expect_agree(x +
                 "%1 = concat %0, %0, dim=2 : f32[2,3,4]\n%2 = mul %1, %1 : f32[2,3,4]\nroot %2\n");
}

TEST(OnednnOps, Matmul) {
  Backends b;
  b.expect_agree("%0 = leaf f32[2,3] [1, 2, 3, 4, 5, 6]\n%1 = leaf f32[3,2] [1, 0.5, -1, 1, 1, 2]\n"
                 "%2 = matmul %0, %1 : f32[2,2]\n%3 = mul %2, %2 : f32[2,2]\nroot %3\n");
  // Batch dims broadcasting on both sides, and 3-D @ 2-D.
  b.expect_agree(
      "%0 = leaf f32[2,1,2,3] [0.5, -0.25, 1, 0.75, -0.5, 0.25, -1, 0.5, 0.125, 1.5, -0.75, "
      "0.375]\n"
      "%1 = leaf f32[3,3,2] [0.5, -0.25, 1, 0.75, -0.5, 0.25, 0.5, -0.25, 1, 0.75, -0.5, 0.25, "
      "0.5, -0.25, "
      "1, 0.75, -0.5, 0.25]\n%2 = matmul %0, %1 : f32[2,3,2,2]\n%3 = mul %2, %2 : f32[2,3,2,2]\n"
      "%4 = leaf f32[2,4] [0.25, -0.5, 0.75, 1, -1, 0.5, -0.25, 0.125]\n%5 = matmul %1, %4 : "
      "f32[3,3,4]\n"
      "%6 = sum %3 : f32[]\n%7 = mul %5, %5 : f32[3,3,4]\n%8 = mean %7 : f32[]\n%9 = add %6, %8 : "
      "f32[]\n"
      "root %9\n");
}

TEST(OnednnOps, OperandUsedTwiceAndAlias) {
  Backends b;
  b.expect_agree("%0 = leaf f32[2,2] [1, -2, 3, 0.5]\n%1 = alias %0 : f32[2,2]\n%2 = matmul %0, %1 "
                 ": f32[2,2]\n"
                 "%3 = mul %2, %0 : f32[2,2]\nroot %3\n");
}

namespace {

// 10 and 19 elements: jit:avx2 handles 8 floats per vector, so each size runs the vector body
// and a tail. Values stay clear of every kink of the ops tested with them (0, ±0.5, ±1, ±3, 6,
// halves).
const std::string kX10 =
    "%0 = leaf f32[2,5] [0.75, -1.25, 2.25, 0.3, -0.3, 1.5, -2.625, 0.1, 3.5, -0.6]\n";
const std::string kX19 = "%0 = leaf f32[19] [0.75, -1.25, 2.25, 0.3, -0.3, 1.5, -2.625, 0.1, 3.5, "
                         "-0.6, 4.25, -3.75, 7.5, -7.5, 0.2, -0.2, 1.125, -1.875, 5.25]\n";
// kX19 with its tails (-3.75, 7.5, -7.5) brought in to ±2.75 and -2.25, for the ops whose oneDNN
// formulas cancel there (logsigmoid and softplus at 7.5 and -7.5, mish at -7.5, gelu at -3.75 and
// -7.5): OnednnKnownDifference.ActivationFormulasCancel pins those inputs.
const std::string kX19Near = "%0 = leaf f32[19] [0.75, -1.25, 2.25, 0.3, -0.3, 1.5, -2.625, 0.1, "
                             "3.5, -0.6, 4.25, -2.25, 2.75, -2.75, 0.2, -0.2, 1.125, -1.875, "
                             "5.25]\n";

// `op` applied to both leaves, multiplied by the input so that the gradient is not just the
// derivative.
void expect_unary_agrees(Backends& b, const std::string& op, const std::string& x19 = kX19) {
  b.expect_agree(kX10 + "%1 = " + op + " : f32[2,5]\n%2 = mul %1, %0 : f32[2,5]\nroot %2\n");
  b.expect_agree(x19 + "%1 = " + op + " : f32[19]\n%2 = mul %1, %0 : f32[19]\nroot %2\n");
}

} // namespace

TEST(OnednnOps, NewUnaryOps) {
  Backends b;
  for (const char* op :
       {"reciprocal %0", "square %0", "round %0", "silu %0", "relu6 %0", "hardswish %0"})
    expect_unary_agrees(b, op);
  for (const char* op :
       {"logsigmoid %0", "mish %0", "gelu %0, approximate=none", "gelu %0, approximate=tanh"})
    expect_unary_agrees(b, op, kX19Near);
}

TEST(OnednnOps, NewParameterisedOps) {
  Backends b;
  for (const char* a : {"1", "0.5", "2", "0", "-0.5"})
    expect_unary_agrees(b, std::string("elu %0, alpha=") + a);
  expect_unary_agrees(b, "softplus %0, beta=1, threshold=20", kX19Near);
  for (const char* s : {"0.01", "0", "0.2", "1", "-0.5", "5"})
    expect_unary_agrees(b, std::string("leaky_relu %0, negative_slope=") + s);
  for (const char* m :
       {"min=-1, max=1", "min=0, max=1", "min=-0.5, max=0.25", "min=-2, max=3", "min=0, max=6"})
    expect_unary_agrees(b, std::string("hardtanh %0, ") + m);
  for (const char* lo : {"0", "-1", "0.5"})
    expect_unary_agrees(b, std::string("clamp_min %0, min=") + lo);
  for (const char* hi : {"0", "1", "-0.5"})
    expect_unary_agrees(b, std::string("clamp_max %0, max=") + hi);
}

TEST(OnednnOps, MaximumMinimumWithBroadcastAndTies) {
  Backends b;
  // Ties (1.5, -2.625, 0.1 and 3.5 appear in both) split the gradient in halves.
  const std::string y10 =
      "%1 = leaf f32[2,5] [0.5, -1.5, 2.25, 0.4, -0.35, 1.5, -2.625, 0.2, 3.5, -0.7]\n";
  for (const char* op : {"maximum", "minimum"}) {
    b.expect_agree(kX10 + y10 + "%2 = " + op + " %0, %1 : f32[2,5]\n%3 = mul %2, %0 : f32[2,5]\n" +
                   "%4 = mul %3, %1 : f32[2,5]\nroot %4\n");
    // Each side broadcast, and both (the first operand is expanded before the primitive).
    b.expect_agree(kX19 + "%1 = leaf f32[1] [0.3]\n%2 = " + op + " %0, %1 : f32[19]\n%3 = " + op +
                   " %1, %2 : f32[19]\n%4 = mul %3, %0 : f32[19]\nroot %4\n");
    b.expect_agree(
        std::string("%0 = leaf f32[2,1] [3, -1]\n%1 = leaf f32[1,3] [0.5, 3, -4]\n%2 = ") + op +
        " %0, %1 : f32[2,3]\n%3 = mul %2, %2 : f32[2,3]\nroot %3\n");
  }
}

// The whole hand-written corpus, less the programs that probe the conventions where oneDNN is
// measured to differ (the KnownDifference tests below pin those down).
TEST(OnednnOps, AgreesOnTheCorpus) {
  const fs::path dir = BURNMARK_ONEDNN_CORPUS_DIR;
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no corpus at " << dir;
  Backends b;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt" || entry.path().stem() == "special_values_unary")
      continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Programs with ops the plugin does not declare are skipped by the host, never run.
    if (b.run(text).status == Status::Unsupported) continue;
    b.expect_agree(text);
    ++count;
  }
  EXPECT_GT(count, 0);
}

// Kinks where oneDNN's backward primitives give LibTorch's answer.
TEST(OnednnConventions, AgreeingKinks) {
  Backends b;
  // relu'(±0) = 0; abs'(±0) = 0 (oneDNN returns -0 at -0, equal as a value).
  b.expect_agree("%0 = leaf f32[4] [0, -0, 1, -1]\n%1 = relu %0 : f32[4]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[4] [0, -0, 1, -1]\n%1 = abs %0 : f32[4]\nroot %1\n");
  // sqrt(-0) = -0, sqrt'(+0) = +inf, sqrt'(-0) = -inf; log'(±0) = ±inf.
  b.expect_agree("%0 = leaf f32[3] [0, -0, 4]\n%1 = sqrt %0 : f32[3]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[3] [0, -0, 4]\n%1 = log %0 : f32[3]\nroot %1\n");
  // clamp at its upper bound passes the gradient; min > max gives zeros.
  b.expect_agree("%0 = leaf f32[3] [1, 0.5, 2]\n%1 = clamp %0, min=-1, max=1 : f32[3]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[3] [1, -1, 0]\n%1 = clamp %0, min=1, max=-1 : f32[3]\nroot %1\n");
  // pow at ±0 for the exponents whose derivative is finite or a matching infinity.
  b.expect_agree("%0 = leaf f32[2] [0, -0]\n%1 = pow %0, exponent=2 : f32[2]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[1] [0]\n%1 = pow %0, exponent=0.5 : f32[1]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[2] [0, -0]\n%1 = pow %0, exponent=-2 : f32[2]\nroot %1\n");
  // exp(-inf) = 0 with gradient 0, exp(+inf) = inf.
  b.expect_agree("%0 = leaf f32[2] [-inf, inf]\n%1 = exp %0 : f32[2]\nroot %1\n");
}

// Where oneDNN 2.6 differs from LibTorch 1.13.1's conventions, as measured on kOnednnMeasuredOn
// (its other ISAs' kernels agree on these, under ONEDNN_MAX_CPU_ISA=avx, avx2, sse41). These are
// findings the fuzzer reports; the plugin passes oneDNN's answers through unchanged.
TEST(OnednnKnownDifference, ReluOfNanIsZero) {
  Backends b;
  const Pair p =
      expect_pinned(b, "%0 = leaf f32[1] [nan]\n%1 = relu %0 : f32[1]\nroot %1\n", false, 0, 0.0);
  EXPECT_TRUE(std::isnan(p.ref));
  // Read from oneDNN's own result (relu_use_dst_for_bwd), so the gradient is 0 too; LibTorch 1.
  const Pair g =
      expect_pinned(b, "%0 = leaf f32[1] [nan]\n%1 = relu %0 : f32[1]\nroot %1\n", true, 0, 0.0);
  EXPECT_EQ(g.ref, 1.0);
}

TEST(OnednnKnownDifference, AbsGradientAtNanIsOne) {
  Backends b;
  const Pair g =
      expect_pinned(b, "%0 = leaf f32[1] [nan]\n%1 = abs %0 : f32[1]\nroot %1\n", true, 0, 1.0);
  EXPECT_TRUE(std::isnan(g.ref)); // sgn(NaN) is NaN, so abs'(NaN) is NaN
}

TEST(OnednnKnownDifference, ClampBlocksTheGradientAtItsLowerBound) {
  Backends b;
  const Pair g = expect_pinned(
      b, "%0 = leaf f32[1] [-1]\n%1 = clamp %0, min=-1, max=1 : f32[1]\nroot %1\n", true, 0, 0.0);
  EXPECT_EQ(g.ref, 1.0);
}

TEST(OnednnKnownDifference, ClampOfNanIsTheLowerBound) {
  Backends b;
  const Pair p =
      expect_pinned(b, "%0 = leaf f32[1] [nan]\n%1 = clamp %0, min=-1, max=1 : f32[1]\nroot %1\n",
                    false, 0, -1.0);
  EXPECT_TRUE(std::isnan(p.ref));
}

TEST(OnednnKnownDifference, PowGradientAtInfinityIsNan) {
  Backends b;
  const Pair g = expect_pinned(
      b, "%0 = leaf f32[1] [inf]\n%1 = pow %0, exponent=2 : f32[1]\nroot %1\n", true, 0, NAN);
  EXPECT_EQ(g.ref, INFINITY);
}

// eltwise_pow with beta = +-0.5 is not C's pow at -0 and -inf (C99 F.9.4.4): beta = 0.5 takes
// sqrt's answers (pow(-inf, 0.5) = NaN, not +inf; pow(-0, 0.5) = -0, so its gradient is -inf, not
// +inf), and beta = -0.5's forward is right but its gradient at -0 has the wrong sign (+inf where
// -0.5 * pow(-0, -1.5) = -inf). corpus/bugs/onednn-pow-half-negzero.txt, onednn-pow-negzero.txt.
TEST(OnednnKnownDifference, PowHalfAtNegativeZeroAndInfinity) {
  Backends b;
  const std::string half =
      "%0 = leaf f32[2] [-0, -inf]\n%1 = pow %0, exponent=0.5 : f32[2]\nroot %1\n";
  EXPECT_EQ(expect_pinned(b, half, false, 1, NAN).ref, INFINITY);
  EXPECT_EQ(expect_pinned(b, half, true, 0, -INFINITY).ref, INFINITY);
  const std::string minus_half =
      "%0 = leaf f32[1] [-0]\n%1 = pow %0, exponent=-0.5 : f32[1]\nroot %1\n";
  EXPECT_EQ(expect_pinned(b, minus_half, false, 0, INFINITY).ref, INFINITY); // the value agrees
  EXPECT_EQ(expect_pinned(b, minus_half, true, 0, INFINITY).ref, -INFINITY);
}

TEST(OnednnKnownDifference, ExpOfNanIsInfinity) {
  Backends b;
  const Pair p = expect_pinned(b, "%0 = leaf f32[1] [nan]\n%1 = exp %0 : f32[1]\nroot %1\n", false,
                               0, INFINITY);
  EXPECT_TRUE(std::isnan(p.ref));
}

// relu and clip backward multiply the upstream gradient by 0 where LibTorch selects 0, so an
// infinite upstream gradient (here sqrt'(0) and log'(0)) becomes NaN instead of 0.
TEST(OnednnKnownDifference, BlockedGradientTimesInfinityIsNan) {
  Backends b;
  const Pair r = expect_pinned(
      b, "%0 = leaf f32[1] [-1]\n%1 = relu %0 : f32[1]\n%2 = sqrt %1 : f32[1]\nroot %2\n", true, 0,
      NAN);
  EXPECT_EQ(r.ref, 0.0);
  const Pair c = expect_pinned(b,
                               "%0 = leaf f32[1] [-1]\n%1 = clamp %0, min=0, max=1 : f32[1]\n%2 = "
                               "log %1 : f32[1]\nroot %2\n",
                               true, 0, NAN);
  EXPECT_EQ(c.ref, 0.0);
}

// oneDNN's jit log reads a subnormal's exponent as if it were normal: log(1e-40) comes out near
// log(FLT_MIN) = -87.3 instead of -92.1. (Its log is also ~20 ulp off at normal inputs, e.g.
// log(2) = 0.6931458, inside the oracle's default tolerance.)
TEST(OnednnKnownDifference, LogOfSubnormalIsFarOff) {
  Backends b;
  const Pair p = expect_pinned(b, "%0 = leaf f32[1] [1e-40]\n%1 = log %0 : f32[1]\nroot %1\n",
                               false, 0, "above -89", [](double v) { return v > -89.0; });
  EXPECT_NEAR(p.ref, -92.1034, 1e-3);
}

// ---- the ops past the first vocabulary ----

// Kinks and special values where the new mappings give LibTorch's (and the reference's) answer.
TEST(OnednnConventions, AgreeingEdgesOfTheNewOps) {
  Backends b;
  // square: overflow from 1.8446744e19, underflow below 1e-23, signed zeros, NaN and infinities.
  b.expect_agree("%0 = leaf f32[10] [1.8446743e19, 1.8446744e19, -1.9e19, 1e-23, 1.0842022e-19, 0, "
                 "-0, nan, inf, -inf]\n%1 = square %0 : f32[10]\nroot %1\n");
  // round: halves to even, the last fractional f32, integers past 2^23 and 2^24; gradient 0.
  b.expect_agree("%0 = leaf f32[16] [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, "
                 "8388607.5, 8388608, 16777216, 1e30, 0, -0, inf, nan]\n%1 = round %0 : f32[16]\n"
                 "root %1\n");
  // reciprocal: signed zeros and infinities, subnormals and the overflow below 2^-128.
  b.expect_agree("%0 = leaf f32[12] [0, -0, 1e-40, -1e-40, 2.9e-39, 3e38, inf, -inf, 1, 2, nan, "
                 "1.1754944e-38]\n%1 = reciprocal %0 : f32[12]\nroot %1\n");
  // logsigmoid over its whole range, saturation included (not 15 and 20, where oneDNN cancels:
  // ActivationFormulasCancel).
  b.expect_agree("%0 = leaf f32[11] [0, -0, -15, -20, 88.72, -88.72, -103.9, 1e-30, nan, inf, "
                 "-inf]\n%1 = logsigmoid %0 : f32[11]\nroot %1\n");
  // elu with alpha 1 at its kink, signed zeros and -inf (not -1e-30, where oneDNN's exp(x) - 1
  // is 0: ActivationFormulasCancel); leaky_relu with slope 1 everywhere.
  b.expect_agree("%0 = leaf f32[10] [0, -0, -inf, -88.72, -104, 1e-40, 1, -1, nan, inf]\n"
                 "%1 = elu %0, alpha=1 : f32[10]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[9] [0, -0, 1e-40, -1e-40, nan, 1, -1, inf, -inf]\n"
                 "%1 = leaky_relu %0, negative_slope=1 : f32[9]\nroot %1\n");
  // leaky_relu'(±0) = slope; hardtanh and relu6 block the gradient at both bounds.
  b.expect_agree("%0 = leaf f32[4] [0, -0, 1, -1]\n%1 = leaky_relu %0, negative_slope=0.2 : "
                 "f32[4]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[6] [-1, 1, 0, -0, 2, -2]\n%1 = hardtanh %0, min=-1, max=1 : "
                 "f32[6]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[7] [0, -0, 6, 6.0000005, 5.9999995, inf, -inf]\n%1 = relu6 %0 : "
                 "f32[7]\nroot %1\n");
  // clamp_max passes the gradient at its bound; both one-sided clamps keep ±inf (±inf bounds,
  // not ±FLT_MAX).
  b.expect_agree("%0 = leaf f32[5] [1, 0.5, 2, inf, -1]\n%1 = clamp_max %0, max=1 : f32[5]\nroot "
                 "%1\n");
  b.expect_agree("%0 = leaf f32[4] [1, 0.5, inf, -inf]\n%1 = clamp_min %0, min=0 : f32[4]\nroot "
                 "%1\n");
  // maximum and minimum: infinities, NaN as the second operand, halved gradients at ties (signed
  // zeros included) and whole ones at NaN.
  for (const char* op : {"maximum", "minimum"})
    b.expect_agree(std::string("%0 = leaf f32[8] [0, -0, 0, 1, inf, -inf, 1, -1]\n%1 = leaf f32[8] "
                               "[-0, 0, 0, nan, -inf, inf, 1, nan]\n%2 = ") +
                   op + " %0, %1 : f32[8]\nroot %2\n");
}

// oneDNN's clip refuses NaN bounds; the plugin reports those programs as unsupported.
TEST(OnednnConventions, NanClipBoundsAreUnsupported) {
  Backends b;
  for (const char* op : {"clamp_min %0, min=nan", "clamp_max %0, max=nan",
                         "clamp %0, min=nan, max=1", "clamp %0, min=-1, max=nan"})
    EXPECT_EQ(
        b.run(std::string("%0 = leaf f32[2] [1, -2]\n%1 = ") + op + " : f32[2]\nroot %1\n").status,
        Status::Unsupported)
        << op;
}

// soft_relu has no beta and no threshold: softplus maps onto it only at beta 1 with a high one.
TEST(OnednnConventions, SoftplusOtherThanBetaOneAndAHighThresholdIsUnsupported) {
  Backends b;
  for (const char* op : {"softplus %0, beta=1, threshold=0", "softplus %0, beta=2, threshold=20",
                         "softplus %0, beta=-1, threshold=20"})
    EXPECT_EQ(
        b.run(std::string("%0 = leaf f32[2] [1, -2]\n%1 = ") + op + " : f32[2]\nroot %1\n").status,
        Status::Unsupported)
        << op;
}

// clip (clamp_min, clamp_max) and clip_v2 (hardtanh, relu6) return the lower bound for NaN,
// which for clamp_max is -inf; clip_v2's backward blocks NaN, where LibTorch's hardtanh passes it.
TEST(OnednnKnownDifference, ClipOfNanIsTheLowerBoundInTheNewOps) {
  Backends b;
  const auto nan_of = [&](const std::string& op, double measured) {
    return expect_pinned(b, "%0 = leaf f32[1] [nan]\n%1 = " + op + " : f32[1]\nroot %1\n", false, 0,
                         measured);
  };
  EXPECT_TRUE(std::isnan(nan_of("clamp_min %0, min=0.5", 0.5).ref));
  EXPECT_TRUE(std::isnan(nan_of("clamp_max %0, max=1", -INFINITY).ref));
  EXPECT_TRUE(std::isnan(nan_of("hardtanh %0, min=-2, max=3", -2.0).ref));
  EXPECT_TRUE(std::isnan(nan_of("relu6 %0", 0.0).ref));
  for (const char* op : {"hardtanh %0, min=-1, max=1", "relu6 %0"}) {
    const Pair g =
        expect_pinned(b, std::string("%0 = leaf f32[1] [nan]\n%1 = ") + op + " : f32[1]\nroot %1\n",
                      true, 0, 0.0);
    EXPECT_EQ(g.ref, 1.0) << op;
  }
}

// clip's backward is alpha < x <= beta: clamp_min blocks the gradient at its bound (as clamp
// does at its lower bound), and clamp_max, whose lower bound is -inf, blocks it at x = -inf.
TEST(OnednnKnownDifference, OneSidedClampBlocksAtTheLowerEnd) {
  Backends b;
  Pair g = expect_pinned(
      b, "%0 = leaf f32[1] [0.5]\n%1 = clamp_min %0, min=0.5 : f32[1]\nroot %1\n", true, 0, 0.0);
  EXPECT_EQ(g.ref, 1.0);
  g = expect_pinned(b, "%0 = leaf f32[1] [-inf]\n%1 = clamp_max %0, max=1 : f32[1]\nroot %1\n",
                    true, 0, 0.0);
  EXPECT_EQ(g.ref, 1.0);
}

// relu's backward in oneDNN is x > 0 ? g : alpha g, but NaN takes the 1 branch; LibTorch's
// leaky_relu_backward takes the slope. With slope 0 the forward also maps NaN to 0, as relu does.
TEST(OnednnKnownDifference, LeakyReluAtNan) {
  Backends b;
  const Pair g =
      expect_pinned(b,
                    "%0 = leaf f32[1] [nan]\n%1 = leaky_relu %0, negative_slope=0.2 : f32[1]\nroot "
                    "%1\n",
                    true, 0, 1.0);
  EXPECT_FLOAT_EQ(static_cast<float>(g.ref), 0.2f);
  const Pair p =
      expect_pinned(b,
                    "%0 = leaf f32[1] [nan]\n%1 = leaky_relu %0, negative_slope=0 : f32[1]\nroot "
                    "%1\n",
                    false, 0, 0.0);
  EXPECT_TRUE(std::isnan(p.ref));
}

// elu's backward takes the negative branch (alpha e^x) at a positive subnormal input, as if the
// subnormal were 0; the forward there is right.
TEST(OnednnKnownDifference, EluGradientAtPositiveSubnormalIsAlpha) {
  Backends b;
  const Pair g = expect_pinned(
      b, "%0 = leaf f32[1] [1e-40]\n%1 = elu %0, alpha=0.5 : f32[1]\nroot %1\n", true, 0, 0.5);
  EXPECT_EQ(g.ref, 1.0);
}

// hardswish's kinks at ±3: oneDNN takes the outer one-sided derivatives (1 at 3, 0 at -3),
// LibTorch the inner ones (1.5 and -0.5).
TEST(OnednnKnownDifference, HardswishGradientAtItsKinks) {
  Backends b;
  const std::string text = "%0 = leaf f32[2] [3, -3]\n%1 = hardswish %0 : f32[2]\nroot %1\n";
  EXPECT_EQ(expect_pinned(b, text, true, 0, 1.0).ref, 1.5);
  EXPECT_EQ(expect_pinned(b, text, true, 1, 0.0).ref, -0.5);
}

// gelu (both forms), silu, mish and hardswish compute x * f(x) with f(-inf) = 0, so -inf gives
// NaN, as LibTorch does; the reference gives the limit -0. Their gradients at ±inf are NaN too
// (LibTorch: NaN), except mish'(+inf), which oneDNN makes +inf; the limits are 1 at +inf and 0 at
// -inf.
TEST(OnednnKnownDifference, ActivationsAtInfinity) {
  Backends b;
  for (const char* op : {"gelu %0, approximate=none", "gelu %0, approximate=tanh", "silu %0",
                         "mish %0", "hardswish %0"}) {
    const std::string text =
        std::string("%0 = leaf f32[2] [-inf, inf]\n%1 = ") + op + " : f32[2]\nroot %1\n";
    EXPECT_EQ(expect_pinned(b, text, false, 0, NAN).ref, 0.0) << op;
    if (std::string(op) == "hardswish %0") continue; // its gradients at ±inf agree
    EXPECT_EQ(expect_pinned(b, text, true, 0, NAN).ref, 0.0) << op;
    const double hi = std::string(op) == "mish %0" ? INFINITY : NAN;
    EXPECT_EQ(expect_pinned(b, text, true, 1, hi).ref, 1.0) << op;
  }
}

// mish far into its tail, inside the oracle's tolerance for tiny values but far from right:
// -5.36e-6 for -4.59e-6 at -15 (17%), and -0 at -20 for -4.12e-8.
TEST(OnednnKnownDifference, MishTailIsInaccurate) {
  Backends b;
  const std::string text = "%0 = leaf f32[2] [-15, -20]\n%1 = mish %0 : f32[2]\nroot %1\n";
  EXPECT_NEAR(
      expect_pinned(b, text, false, 0, "below -5.3e-6", [](double v) { return v < -5.3e-6; }).ref,
      -4.5885e-6, 1e-9);
  EXPECT_NEAR(expect_pinned(b, text, false, 1, -0.0).ref, -4.1223e-8, 1e-11);
}

// binary_max and binary_min return the second operand when the first is NaN (max(NaN, 1) = 1)
// and on signed-zero ties (max(+0, -0) = -0, min(-0, +0) = +0), as x86's maxps / minps do;
// LibTorch's maximum and minimum propagate either NaN, and IEEE 754-2019's maximum / minimum
// order -0 below +0 (the oracle counts zeros of either sign as equal, so only NaN diverges).
TEST(OnednnKnownDifference, MaximumMinimumReturnTheSecondOperandOnNanFirstAndTies) {
  Backends b;
  for (const char* op : {"maximum", "minimum"}) {
    const Pair p =
        expect_pinned(b,
                      std::string("%0 = leaf f32[1] [nan]\n%1 = leaf f32[1] [1]\n%2 = ") + op +
                          " %0, %1 : f32[1]\nroot %2\n",
                      false, 0, 1.0);
    EXPECT_TRUE(std::isnan(p.ref)) << op;
  }
  // Zeros are pinned with their sign.
  Pair z = expect_pinned(
      b, "%0 = leaf f32[1] [0]\n%1 = leaf f32[1] [-0]\n%2 = maximum %0, %1 : f32[1]\nroot %2\n",
      false, 0, -0.0);
  EXPECT_TRUE(z.ref == 0 && !std::signbit(z.ref));
  z = expect_pinned(
      b, "%0 = leaf f32[1] [-0]\n%1 = leaf f32[1] [0]\n%2 = minimum %0, %1 : f32[1]\nroot %2\n",
      false, 0, 0.0);
  EXPECT_TRUE(z.ref == 0 && std::signbit(z.ref));
}

// Blocked gradients are products with 0 here too (clip and hardswish backward in oneDNN, and the
// plugin's maximum / minimum share), so an infinite upstream gradient gives NaN, not 0.
TEST(OnednnKnownDifference, BlockedGradientTimesInfinityIsNanInTheNewOps) {
  Backends b;
  for (const char* op : {"hardtanh %0, min=0, max=1", "clamp_min %0, min=0", "hardswish %0"}) {
    const Pair g = expect_pinned(b,
                                 std::string("%0 = leaf f32[1] [-4]\n%1 = ") + op +
                                     " : f32[1]\n%2 = sqrt %1 : f32[1]\nroot %2\n",
                                 true, 0, NAN);
    EXPECT_EQ(g.ref, 0.0) << op;
  }
  const std::string text = "%0 = leaf f32[1] [-1]\n%1 = leaf f32[1] [0]\n%2 = maximum %0, %1 : "
                           "f32[1]\n%3 = sqrt %2 : f32[1]\nroot %3\n";
  EXPECT_EQ(expect_pinned(b, text, true, 0, NAN).ref, 0.0); // leaf 0, the beaten operand
}
