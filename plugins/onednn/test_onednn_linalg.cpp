// Tests of the onednn plugin's mm and addmm (matmul; addmm's alpha as the output scale, beta as
// a sum post-op over the broadcast input): agreement with the reference, forward and gradient,
// at sizes that run jit:avx2's vector bodies and tails, for every (beta, alpha) the generator
// draws.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_onednn_common.h"

using namespace burnmark;
using burnmark::onednn_test::Backends;

namespace {

std::string leaf(int reg, int rows, int cols, double scale, double offset) {
  std::string s = "%" + std::to_string(reg) + " = leaf f32[" + std::to_string(rows) + "," +
                  std::to_string(cols) + "] [";
  for (int k = 0; k < rows * cols; ++k)
    s += (k ? ", " : "") +
         std::to_string(offset + scale * (((k * 37 + reg * 11) % 101) - 50) / 50.0);
  return s + "]\n";
}

std::string mat(int rows, int cols) {
  return "f32[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
}

// [n, k] @ [k, m] for k and m in and past one vector of 8.
const std::vector<std::vector<int>> kSizes = {{2, 3, 2}, {3, 10, 5}, {4, 19, 9}, {1, 17, 1}};

} // namespace

TEST(OnednnLinalg, MmAgrees) {
  Backends b;
  for (const auto& s : kSizes) {
    const int n = s[0], k = s[1], m = s[2];
    b.expect_agree(leaf(0, n, k, 1.5, 0.1) + leaf(1, k, m, 2.0, -0.2) + "%2 = mm %0, %1 : " +
                   mat(n, m) + "\n%3 = mul %2, %2 : " + mat(n, m) + "\nroot %3\n");
  }
}

// Each of kAddmmParams' (beta, alpha), with input at the result's shape, a row and a scalar
// (broadcast into dst before the sum post-op; its gradient summed back).
TEST(OnednnLinalg, AddmmAgreesForEveryBetaAlphaAndBroadcast) {
  Backends b;
  const char* params[] = {"beta=1, alpha=1", "beta=0, alpha=1", "beta=0.5, alpha=-2",
                          "beta=1, alpha=0", "beta=-1, alpha=0.5"};
  for (const auto& s : kSizes) {
    const int n = s[0], k = s[1], m = s[2];
    for (const char* p : params)
      for (const auto& in : std::vector<std::vector<int>>{{n, m}, {1, m}, {n, 1}}) {
        b.expect_agree(leaf(0, n, k, 1.5, 0.1) + leaf(1, k, m, 2.0, -0.2) +
                       leaf(2, in[0], in[1], 3.0, 0.5) + "%3 = addmm %2, %0, %1, " + p + " : " +
                       mat(n, m) + "\n%4 = mul %3, %3 : " + mat(n, m) + "\nroot %4\n");
      }
  }
}

// beta = 0 ignores input entirely (documented), NaN and inf included: no post-op reads it.
TEST(OnednnLinalg, AddmmWithBetaZeroIgnoresNanInput) {
  Backends b;
  b.expect_agree("%0 = leaf f32[2,2] [1, 2, 3, 4]\n%1 = leaf f32[2,2] [0.5, -1, 2, 0.25]\n"
                 "%2 = leaf f32[2,2] [nan, inf, -inf, 1]\n%3 = addmm %2, %0, %1, beta=0, alpha=1 "
                 ": f32[2,2]\nroot %3\n");
}
