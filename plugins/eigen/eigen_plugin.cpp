// The Eigen plugin's entry point: plugin_walk.h's register file and tape over the Eigen Tensor
// kernels of eigen_forward.cpp and eigen_backward.cpp, exporting the ops listed in kOps.
#include <cstdint>

#include "eigen_tensor.h"

namespace {

struct EigenKernels {
  using Scalar = float;
  void forward(const BurnmarkStmt& s, burnmark::eigen::In in, burnmark::eigen::Dense& out) {
    burnmark::eigen::forward(s, in, out);
  }
  void backward(const BurnmarkStmt& s, burnmark::eigen::In in, const burnmark::eigen::Dense& out,
                const burnmark::eigen::Dense& grad_out, burnmark::eigen::GradIn grad_in) {
    burnmark::eigen::backward(s, in, out, grad_out, grad_in);
  }
};

// The first vocabulary (stable ids 0..21): the ops this plugin maps onto Eigen expressions.
constexpr std::uint32_t kOps[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                  11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};

#define BURNMARK_EIGEN_STR2(x) #x
#define BURNMARK_EIGEN_STR(x) BURNMARK_EIGEN_STR2(x)

} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  static constexpr BurnmarkPluginV1 table = burnmark::plugin::make_plugin_table<EigenKernels>(
      "eigen",
      "Eigen " BURNMARK_EIGEN_STR(EIGEN_WORLD_VERSION) "." BURNMARK_EIGEN_STR(
          EIGEN_MAJOR_VERSION) "." BURNMARK_EIGEN_STR(EIGEN_MINOR_VERSION) " Tensor module, "
                                                                           "float32, CPU, single "
                                                                           "thread, own "
                                                                           "reverse-mode tape",
      kOps);
  return &table;
}
