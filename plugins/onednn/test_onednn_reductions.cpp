// Tests of the onednn plugin's reductions (reduction primitive forward, the plugin's own loops
// backward) and softmax / log_softmax (softmax_v2 forward and backward): agreement with the
// reference at sizes that run jit:avx2's vector bodies and tails (8 floats a vector), the
// conventions at ties and zeros, and the measured differences, pinned as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "test_onednn_common.h"

using namespace burnmark;
using burnmark::onednn_test::Backends;
using burnmark::onednn_test::Pair;

namespace {

std::string shape_text(const std::vector<int>& dims) {
  std::string s = "f32[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// "%<reg> = leaf f32[dims] [...]" with distinct values offset + scale * u_k, u_k in [-1, 1)
// (distinct for up to 101 elements), so no row has ties unless a test puts them there.
std::string leaf(int reg, const std::vector<int>& dims, double scale, double offset = 0.0) {
  int n = 1;
  for (int d : dims)
    n *= d;
  std::string s = "%" + std::to_string(reg) + " = leaf " + shape_text(dims) + " [";
  for (int k = 0; k < n; ++k) {
    const double u = ((k * 37) % 101 - 50) / 50.0;
    s += (k ? ", " : "") + std::to_string(offset + scale * u);
  }
  return s + "]\n";
}

// The shape with dim removed (keepdim false) or set to 1.
std::vector<int> reduced(std::vector<int> dims, int dim, bool keepdim) {
  if (keepdim)
    dims[static_cast<std::size_t>(dim)] = 1;
  else
    dims.erase(dims.begin() + dim);
  return dims;
}

// The shapes every test runs: one vector (19: two vectors' bodies and a tail), and rank 3 with
// reduced axes of 10 and 19 elements, inner and outer.
const std::vector<std::vector<int>> kShapes = {{19}, {2, 5}, {3, 19}, {19, 3}, {2, 3, 10}};

} // namespace

// softmax and log_softmax along every axis of every shape; the result is multiplied by a second
// leaf so that the upstream gradient is not all ones (whose softmax gradient is 0).
TEST(OnednnSoftmax, AgreesAlongEveryAxis) {
  Backends b;
  for (const auto& dims : kShapes)
    for (int dim = 0; dim < static_cast<int>(dims.size()); ++dim)
      for (const char* op : {"softmax", "log_softmax"}) {
        // Row 9 of this one ([3.2, -1.92, 1.04], upstream [1.45, -0.47, 0.64]) cancels in
        // log_softmax's backward: OnednnKnownDifference.LogSoftmaxGradientCancelsItsForwardError.
        if (dims == std::vector<int>{19, 3} && dim == 1 && std::string(op) == "log_softmax")
          continue;
        const std::string t = shape_text(dims);
        b.expect_agree(leaf(0, dims, 4.0) + leaf(1, dims, 1.5, 0.25) + "%2 = " + op +
                       " %0, dim=" + std::to_string(dim) + " : " + t + "\n%3 = mul %2, %1 : " + t +
                       "\nroot %3\n");
      }
}

// Large logits (the max is subtracted first), -inf entries (exp gives 0; log_softmax keeps
// -inf with gradient 1 - ... as documented), a single-element row (softmax 1, log_softmax 0).
TEST(OnednnSoftmax, AgreesAtLargeLogitsAndMinusInfinity) {
  Backends b;
  for (const char* op : {"softmax", "log_softmax"}) {
    const std::string o = op;
    b.expect_agree("%0 = leaf f32[2,3] [100, 101, 99, -80, -81, -79.5]\n%1 = leaf f32[2,3] [1, -2, "
                   "0.5, 3, 0.25, -1]\n%2 = " +
                   o + " %0, dim=1 : f32[2,3]\n%3 = mul %2, %1 : f32[2,3]\nroot %3\n");
    b.expect_agree("%0 = leaf f32[3] [-inf, 1, 0.5]\n%1 = leaf f32[3] [1, -2, 0.5]\n%2 = " + o +
                   " %0, dim=0 : f32[3]\n%3 = mul %2, %1 : f32[3]\nroot %3\n");
    b.expect_agree("%0 = leaf f32[3,1] [2, -1, 0.5]\n%1 = " + o +
                   " %0, dim=1 : f32[3,1]\n%2 = mul %1, %0 : f32[3,1]\nroot %2\n");
  }
}

// prod, amax, amin, max, min and the p-norms over every element, forward and gradient.
TEST(OnednnReductions, AllElementsAgree) {
  Backends b;
  for (const auto& dims : kShapes) {
    const std::string t = shape_text(dims);
    // Factors near 1 keep the product of 57 of them well inside f32.
    b.expect_agree(leaf(0, dims, 0.3, 1.0) + "%1 = prod %0 : f32[]\nroot %1\n");
    for (const char* op :
         {"amax %0", "amin %0", "max %0", "min %0", "vector_norm %0, ord=1",
          "vector_norm %0, ord=2", "vector_norm %0, ord=3", "vector_norm %0, ord=1.5"})
      b.expect_agree(leaf(0, dims, 2.0, 0.1) + "%1 = " + op +
                     " : f32[]\n%2 = mul %1, %1 : f32[]\nroot %2\n");
  }
}

// The same along every axis, with and without keepdim; the result is multiplied by a leaf of
// its shape so that each row's upstream gradient differs.
TEST(OnednnReductions, AlongEveryDimAgree) {
  Backends b;
  for (const auto& dims : kShapes)
    for (int dim = 0; dim < static_cast<int>(dims.size()); ++dim)
      for (bool keepdim : {false, true}) {
        const std::vector<int> rd = reduced(dims, dim, keepdim);
        const std::string rt = rd.empty() ? "f32[]" : shape_text(rd);
        const std::string attrs =
            "dim=" + std::to_string(dim) + ", keepdim=" + (keepdim ? "true" : "false");
        const std::string g = rd.empty() ? "%1 = leaf f32[1] [1.5]\n" : leaf(1, rd, 1.0, 0.3);
        for (const char* op : {"prod_dim %0, ", "amax_dim %0, ", "amin_dim %0, ", "max_dim %0, ",
                               "min_dim %0, ", "vector_norm_dim %0, ord=1, ",
                               "vector_norm_dim %0, ord=2, ", "vector_norm_dim %0, ord=3, "}) {
          const bool prod = std::string(op).rfind("prod", 0) == 0;
          b.expect_agree((prod ? leaf(0, dims, 0.3, 1.0) : leaf(0, dims, 2.0, 0.1)) + g +
                         "%2 = " + op + attrs + " : " + rt +
                         "\n%3 = mul %2, %1 : " + (rd.empty() ? "f32[1]" : rt) + "\nroot %3\n");
        }
      }
}

// Reductions that reduce nothing (one element, an axis of size 1), which oneDNN refuses: a copy,
// and |x| for a norm.
TEST(OnednnReductions, ReducingNothingAgrees) {
  Backends b;
  for (const char* op :
       {"prod %0", "amax %0", "min %0", "vector_norm %0, ord=2", "vector_norm %0, ord=3"})
    b.expect_agree(std::string("%0 = leaf f32[1] [-1.5]\n%1 = ") + op +
                   " : f32[]\n%2 = mul %1, %1 : f32[]\nroot %2\n");
  for (const char* op : {"prod_dim", "amax_dim", "amin_dim", "max_dim", "min_dim"})
    b.expect_agree(std::string("%0 = leaf f32[3,1] [-1.5, 2, 0.25]\n%1 = ") + op +
                   " %0, dim=1, keepdim=false : f32[3]\n%2 = mul %1, %1 : f32[3]\nroot %2\n");
  b.expect_agree("%0 = leaf f32[3,1] [-1.5, 2, 0.25]\n%1 = vector_norm_dim %0, ord=1, dim=1, "
                 "keepdim=true : f32[3,1]\n%2 = mul %1, %1 : f32[3,1]\nroot %2\n");
}

// The backward conventions of docs/conventions_reductions.md, through oneDNN's forward: ties
// split evenly for amax / amin and max / min, all of the gradient to the first extreme for
// max_dim / min_dim, the product of the others at zeros, a norm's gradient 0 at a zero norm.
TEST(OnednnReductions, ConventionsAtTiesAndZeros) {
  Backends b;
  const std::string tied = "%0 = leaf f32[11] [3, 1, 3, -2, 3, 0.5, -2, 1, 2.5, -2, 0]\n";
  for (const char* op : {"amax", "amin", "max", "min"})
    b.expect_agree(tied + "%1 = " + op + " %0 : f32[]\nroot %1\n");
  const std::string tied2 = "%0 = leaf f32[2,5] [3, 1, 3, -2, -2, 0.5, 0.5, 1, -1, -1]\n";
  for (const char* op : {"amax_dim", "amin_dim", "max_dim", "min_dim"})
    b.expect_agree(tied2 + "%1 = " + op + " %0, dim=1, keepdim=true : f32[2,1]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[3] [2, 0, 3]\n%1 = prod %0 : f32[]\nroot %1\n");
  b.expect_agree("%0 = leaf f32[10] [2, 0, 3, 0, 5, 1.5, 2, -1, 0.5, 3]\n%1 = prod %0 : f32[]\n"
                 "root %1\n");
  b.expect_agree("%0 = leaf f32[2,3] [2, 0, 3, 0, 0, 1]\n%1 = prod_dim %0, dim=1, keepdim=false : "
                 "f32[2]\nroot %1\n");
  for (const char* ord : {"2", "3"})
    b.expect_agree(std::string("%0 = leaf f32[2,3] [0, 0, 0, 1, -2, 0]\n%1 = vector_norm_dim %0, "
                               "ord=") +
                   ord + ", dim=1, keepdim=false : f32[2]\nroot %1\n");
  // ord 1 at zeros: sgn(0) = 0.
  b.expect_agree("%0 = leaf f32[4] [0, -0, 1, -2]\n%1 = vector_norm %0, ord=1 : f32[]\nroot %1\n");
}

// ord 0 (a count of nonzeros), ±inf (max / min of |x|) and p < 1 are not p-norms oneDNN's
// reduction computes: those programs are skipped.
TEST(OnednnReductions, OtherOrdsAreUnsupported) {
  Backends b;
  for (const char* ord : {"0", "inf", "-inf", "0.5"}) {
    EXPECT_EQ(b.run(std::string("%0 = leaf f32[3] [1, -2, 3]\n%1 = vector_norm %0, ord=") + ord +
                    " : f32[]\nroot %1\n")
                  .status,
              Status::Unsupported)
        << ord;
    EXPECT_EQ(b.run(std::string("%0 = leaf f32[2,3] [1, -2, 3, 1, 2, 3]\n%1 = vector_norm_dim %0, "
                                "ord=") +
                    ord + ", dim=1, keepdim=false : f32[2]\nroot %1\n")
                  .status,
              Status::Unsupported)
        << ord;
  }
}

// ---- measured differences (oneDNN 2.6.3 on kOnednnMeasuredOn), asserted there as they are ----

// reduction_max and reduction_min drop a NaN (maxps / minps keep the other operand), so amax,
// amin, their dim forms and max_dim / min_dim's values come out as the extreme of the other
// elements; LibTorch's and the reference's propagate NaN. The gradient follows oneDNN's value:
// amax's tie mask finds the element equal to 3 instead of none (NaN everywhere).
TEST(OnednnKnownDifference, ReductionMaxMinDropNan) {
  Backends b;
  const std::string amax = "%0 = leaf f32[4] [1, nan, 3, 2]\n%1 = amax %0 : f32[]\nroot %1\n";
  EXPECT_TRUE(std::isnan(expect_pinned(b, amax, false, 0, 3.0).ref));
  EXPECT_TRUE(std::isnan(expect_pinned(b, amax, true, 2, 1.0).ref));
  // Past one vector of 8 too, and for amin with the NaN first.
  EXPECT_TRUE(std::isnan(
      expect_pinned(
          b,
          "%0 = leaf f32[10] [1, 2, 3, 4, 5, 6, 7, 8, nan, 2]\n%1 = amax %0 : f32[]\nroot "
          "%1\n",
          false, 0, 8.0)
          .ref));
  EXPECT_TRUE(std::isnan(
      expect_pinned(
          b,
          "%0 = leaf f32[10] [nan, 2, 3, 4, 5, 6, 7, 8, 1, 2]\n%1 = amin %0 : f32[]\nroot "
          "%1\n",
          false, 0, 1.0)
          .ref));
  // Along a dim: [[1, nan, 3], [nan, 1, 2]] gives [3, 2] for max_dim (its gradient, to the first
  // NaN by the plugin's own argmax, agrees) and amax_dim.
  for (const char* op : {"max_dim", "amax_dim"}) {
    const Pair p = expect_pinned(b,
                                 std::string("%0 = leaf f32[2,3] [1, nan, 3, nan, 1, 2]\n%1 = ") +
                                     op + " %0, dim=1, keepdim=false : f32[2]\nroot %1\n",
                                 false, 1, 2.0);
    EXPECT_TRUE(std::isnan(p.ref)) << op;
  }
}

// reduction_max of [+0, -0] is -0 (the second operand on a tie, as maxps); IEEE 754-2019's
// maximum, and the reference, give +0. Seen through 1 / x.
TEST(OnednnKnownDifference, ReductionMaxOfSignedZerosIsNegativeZero) {
  Backends b;
  const Pair p = expect_pinned(b,
                               "%0 = leaf f32[2] [0, -0]\n%1 = amax %0 : f32[]\n%2 = reciprocal %1 "
                               ": f32[]\nroot %2\n",
                               false, 0, -INFINITY);
  EXPECT_EQ(p.ref, INFINITY);
}

// reduction_norm_lp_sum sums |x|^p in f32 without scaling, so the norm overflows (underflows)
// where the powers do although the norm is representable: ||[1e20, 1e20]||_2 is inf (1.414e20),
// ||[1e-25, 1e-25]||_2 is 0 (1.414e-25), ||[1e13, 1e13]||_3 is inf (1.26e13). The gradient
// follows oneDNN's norm: x / inf = 0, and a zero norm gives 0.
TEST(OnednnKnownDifference, NormOverflowsAndUnderflowsInItsPowers) {
  Backends b;
  const std::string big = "%0 = leaf f32[2] [1e20, 1e20]\n%1 = vector_norm %0, ord=2 : f32[]\n"
                          "root %1\n";
  Pair p = expect_pinned(b, big, false, 0, INFINITY);
  EXPECT_FLOAT_EQ(static_cast<float>(p.ref), 1.4142136e20f);
  p = expect_pinned(b, big, true, 0, 0.0);
  EXPECT_FLOAT_EQ(static_cast<float>(p.ref), 0.70710677f);
  const std::string tiny = "%0 = leaf f32[2] [1e-25, 1e-25]\n%1 = vector_norm %0, ord=2 : "
                           "f32[]\nroot %1\n";
  p = expect_pinned(b, tiny, false, 0, 0.0);
  EXPECT_FLOAT_EQ(static_cast<float>(p.ref), 1.4142136e-25f);
  p = expect_pinned(b, tiny, true, 0, 0.0);
  EXPECT_FLOAT_EQ(static_cast<float>(p.ref), 0.70710677f);
  p = expect_pinned(b,
                    "%0 = leaf f32[2] [1e13, 1e13]\n%1 = vector_norm %0, ord=3 : f32[]\nroot %1\n",
                    false, 0, INFINITY);
  EXPECT_FLOAT_EQ(static_cast<float>(p.ref), 1.2599210e13f);
}

// softmax_v2 (softmax_accurate) with a NaN or +inf in the row: only some elements become NaN,
// the others 0 (x - NaN max and exp's NaN handling), where every element is NaN in LibTorch and
// the reference. [inf, 1, 2] and [nan, 1, 2] give [nan, 0, 0]; a NaN at index 8 of 10 gives NaN
// at indices 7 and 8 and 0 elsewhere. (The gradients are NaN in both.)
TEST(OnednnKnownDifference, SoftmaxOfNanOrInfinityIsPartlyZero) {
  Backends b;
  for (const char* row : {"[inf, 1, 2]", "[nan, 1, 2]"}) {
    const std::string t =
        std::string("%0 = leaf f32[3] ") + row + "\n%1 = softmax %0, dim=0 : f32[3]\nroot %1\n";
    expect_pinned(b, t, false, 0, NAN);
    EXPECT_TRUE(std::isnan(expect_pinned(b, t, false, 1, 0.0).ref)) << row;
  }
  const std::string ten = "%0 = leaf f32[10] [1, 2, 3, 4, 5, 6, 7, 8, nan, 2]\n%1 = softmax %0, "
                          "dim=0 : f32[10]\nroot %1\n";
  EXPECT_TRUE(std::isnan(expect_pinned(b, ten, false, 0, 0.0).ref));
  expect_pinned(b, ten, false, 7, NAN);
}

// softmax_v2 (softmax_log) with a NaN or +inf: [1, nan, 2] gives [-inf, nan, -inf] with
// gradient [1, -inf, 1]; [inf, 1, 2] gives [nan, -inf, -inf] with gradient [-inf, 1, 1]; an
// all -inf row is NaN in both, but oneDNN's gradient is -inf. LibTorch and the reference: NaN
// everywhere.
TEST(OnednnKnownDifference, LogSoftmaxOfNanOrInfinity) {
  Backends b;
  const std::string nan_row =
      "%0 = leaf f32[3] [1, nan, 2]\n%1 = log_softmax %0, dim=0 : f32[3]\nroot %1\n";
  const std::string inf_row =
      "%0 = leaf f32[3] [inf, 1, 2]\n%1 = log_softmax %0, dim=0 : f32[3]\nroot %1\n";
  const std::string all_minus_inf =
      "%0 = leaf f32[3] [-inf, -inf, -inf]\n%1 = log_softmax %0, dim=0 : f32[3]\nroot %1\n";
  // LibTorch and the reference: NaN everywhere.
  EXPECT_TRUE(std::isnan(expect_pinned(b, nan_row, false, 0, -INFINITY).ref));
  EXPECT_TRUE(std::isnan(expect_pinned(b, nan_row, true, 0, 1.0).ref));
  EXPECT_TRUE(std::isnan(expect_pinned(b, nan_row, true, 1, -INFINITY).ref));
  EXPECT_TRUE(std::isnan(expect_pinned(b, inf_row, false, 1, -INFINITY).ref));
  EXPECT_TRUE(std::isnan(expect_pinned(b, inf_row, true, 0, -INFINITY).ref));
  EXPECT_TRUE(std::isnan(expect_pinned(b, all_minus_inf, true, 0, -INFINITY).ref));
}

// log_softmax of a row whose largest element dominates is log(1) in oneDNN's jit log, 1.43e-6
// rather than 0 (the root cause of onednn-log-one); inside the oracle's absolute tolerance, so
// pinned here as a value.
TEST(OnednnKnownDifference, LogSoftmaxOfADominantElementIsNotZero) {
  Backends b;
  const Pair p =
      expect_pinned(b, "%0 = leaf f32[2] [-inf, 0]\n%1 = log_softmax %0, dim=0 : f32[2]\nroot %1\n",
                    false, 1, 1.43e-6, 1e-8);
  EXPECT_EQ(p.ref, 0.0);
}
