// The Eigen plugin's entry point: plugin_walk.h's register file and tape over the Eigen Tensor
// kernels of eigen_forward.cpp, eigen_backward.cpp and the family files, exporting the ops
// listed in kOps.
#include <cstdint>
#include <string>
#include <string_view>

#include "burnmark/util/cpu_vendor.h"
#include "eigen_patches.h"
#include "eigen_tensor.h"

namespace {

struct EigenKernels {
  using Scalar = float;
  void forward(const BurnmarkStmt& s, burnmark::eigen::In in, burnmark::eigen::Dense& out) {
    if (s.shape.rank > burnmark::eigen::kRank)
      throw burnmark::plugin::Unsupported{s.op, "rank above 4"};
    for (const burnmark::eigen::Dense* x : in)
      if (x != nullptr && x->shape.rank > burnmark::eigen::kRank)
        throw burnmark::plugin::Unsupported{s.op, "rank above 4"};
    burnmark::eigen::forward(s, in, out);
    burnmark::eigen::apply_patches(patches, s, in, out);
  }
  void backward(const BurnmarkStmt& s, burnmark::eigen::In in, const burnmark::eigen::Dense& out,
                const burnmark::eigen::Dense& grad_out, burnmark::eigen::GradIn grad_in) {
    burnmark::eigen::backward(s, in, out, grad_out, grad_in);
    burnmark::eigen::apply_backward_patches(patches, s, in, grad_out, grad_in);
  }
  // Fix-and-continue patches (eigen_patches.h), set by the host through set_patches.
  bool enable_patch(std::string_view id) { return patches.enable(id); }
  void clear_patches() { patches.clear(); }
  burnmark::eigen::Patches patches;
};

// The ops this plugin maps onto Eigen expressions, by stable id: the first vocabulary (0..21),
// then the later ops Eigen 3.4 has a functor or Tensor method for (eigen_unary.cpp,
// eigen_binary.cpp, eigen_views.cpp say which it lacks). Listed explicitly, so a new op in ops.def
// is skipped until it is mapped here.
constexpr std::uint32_t kOps[] = {
    0,   1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22,  // sin
    23,  // cos
    24,  // tan
    25,  // asin
    26,  // acos
    27,  // atan
    28,  // sinh
    29,  // cosh
    30,  // asinh
    31,  // acosh
    32,  // atanh
    33,  // erf
    34,  // erfc
    36,  // log1p
    37,  // expm1
    38,  // log2
    39,  // log10
    41,  // rsqrt
    42,  // reciprocal
    43,  // square
    44,  // sign
    45,  // sgn
    46,  // floor
    47,  // ceil
    48,  // round
    51,  // lgamma
    52,  // digamma
    53,  // clamp_min
    54,  // clamp_max
    64,  // hardtanh
    65,  // relu6
    73,  // maximum
    74,  // minimum
    75,  // fmax
    76,  // fmin
    78,  // pow_tensor
    80,  // fmod
    86,  // lt
    87,  // le
    88,  // gt
    89,  // ge
    90,  // eq
    91,  // ne
    92,  // where
    110, // cumsum
    111, // cumprod
    117, // mm
    118, // mv
    119, // dot
    120, // outer
    121, // addmm
    122, // trace
    123, // flip
    125, // unsqueeze
    126, // squeeze
    129, // movedim
    130, // narrow
    131, // select
    132, // expand
    134, // reshape
    135, // permute
    136, // slice
    137, // stack
    138, // chunk
    140, // bmm
    150, // relayout
};
// f32 only and contiguous inputs (the walk gathers strided leaves anyway; the host copies).
constexpr auto kSupport = burnmark::plugin::op_support(kOps, BURNMARK_DTYPES_F32, false);

#define BURNMARK_EIGEN_STR2(x) #x
#define BURNMARK_EIGEN_STR(x) BURNMARK_EIGEN_STR2(x)

// The SIMD packets Eigen was compiled with: its packet bodies differ from its scalar tails, so a
// finding holds for this instruction set (BURNMARK_EIGEN_NATIVE builds for the machine's own).
#if defined(EIGEN_VECTORIZE_AVX512)
#define BURNMARK_EIGEN_PACKETS "AVX-512"
#elif defined(EIGEN_VECTORIZE_AVX2)
#define BURNMARK_EIGEN_PACKETS "AVX2"
#elif defined(EIGEN_VECTORIZE_AVX)
#define BURNMARK_EIGEN_PACKETS "AVX"
#elif defined(EIGEN_VECTORIZE_SSE4_2)
#define BURNMARK_EIGEN_PACKETS "SSE4.2"
#elif defined(EIGEN_VECTORIZE_SSE2)
#define BURNMARK_EIGEN_PACKETS "SSE2"
#else
#define BURNMARK_EIGEN_PACKETS "none"
#endif

} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  static constexpr BurnmarkPluginV1 table = burnmark::plugin::make_plugin_table<EigenKernels>(
      "eigen",
      "Eigen " BURNMARK_EIGEN_STR(EIGEN_WORLD_VERSION) "." BURNMARK_EIGEN_STR(
          EIGEN_MAJOR_VERSION) "." BURNMARK_EIGEN_STR(EIGEN_MINOR_VERSION) " Tensor module, "
                                                                           "float32, CPU, single "
                                                                           "thread, own "
                                                                           "reverse-mode tape, "
                                                                           "packets:"
                                                                           " " BURNMARK_EIGEN_PACKETS,
      kSupport);
  return &table;
}

// The packets, and the CPU vendor: with EIGEN_FAST_MATH, sqrt and rsqrt in the packet body
// start from rsqrtps, whose approximation is implementation-defined (Intel's and AMD's tables
// differ), so Eigen's sqrt(4) is 1.9999999 on one vendor's CPUs and 2 on another's.
extern "C" BURNMARK_PLUGIN_EXPORT const char* burnmark_plugin_platform(void* /*context*/) {
  static const std::string line =
      "Eigen " BURNMARK_EIGEN_STR(EIGEN_WORLD_VERSION) "." BURNMARK_EIGEN_STR(
          EIGEN_MAJOR_VERSION) " " BURNMARK_EIGEN_PACKETS " on " +
      burnmark::cpu_vendor();
  return line.c_str();
}
