// The onednn plugin's ABI entry points (plugin_walk.h): the ops it declares, probed per dtype on
// the first handshake (dtype_probe.h), its function table over OnednnKernels (onednn_kernels.h),
// and the platform line naming oneDNN's version, the ISA its JIT targets and the CPU vendor.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "burnmark/plugin/plugin_walk.h"
#include "burnmark/util/cpu_vendor.h"
#include "dtype_probe.h"
#include "onednn_kernels.h"

namespace {

using burnmark::onednn::OnednnKernels;

#define BURNMARK_ONEDNN_STR2(x) #x
#define BURNMARK_ONEDNN_STR(x) BURNMARK_ONEDNN_STR2(x)

// The ops this plugin maps onto oneDNN primitives: the first vocabulary (stable ids 0..21), then
// reciprocal, square, round, clamp_min, clamp_max, logsigmoid, gelu, silu, mish, elu,
// leaky_relu, hardtanh, relu6, hardswish, softplus (beta 1), maximum and minimum; the reductions
// oneDNN's reduction primitive computes (prod, amax, amin, max, min, vector_norm over every element
// and along a dim), softmax and log_softmax (softmax_v2), mm and addmm (matmul).
constexpr std::uint32_t kOps[] = {0,  1,  2,   3,   4,   5,   6,   7,   8,   9,   10,  11,  12, 13,
                                  14, 15, 16,  17,  18,  19,  20,  21,  42,  43,  48,  53,  54, 55,
                                  56, 57, 58,  59,  60,  63,  64,  65,  67,  73,  74,  93,  94, 95,
                                  96, 97, 100, 101, 102, 103, 104, 105, 109, 113, 114, 117, 121};
} // namespace

extern "C" BURNMARK_PLUGIN_EXPORT const BurnmarkPluginV1*
burnmark_plugin_entry(uint32_t /*host_abi_version*/) {
  // Probed once per process, on the first handshake.
  static const std::vector<BurnmarkOpSupport> support =
      burnmark::onednn::declared_support<OnednnKernels>(kOps);
  static const BurnmarkPluginV1 table = burnmark::plugin::make_plugin_table<OnednnKernels>(
      "onednn",
      "oneDNN " BURNMARK_ONEDNN_STR(DNNL_VERSION_MAJOR) "." BURNMARK_ONEDNN_STR(
          DNNL_VERSION_MINOR) "." BURNMARK_ONEDNN_STR(DNNL_VERSION_PATCH) " CPU float32, and "
                                                                          "bfloat16 and float16 "
                                                                          "where this CPU has the "
                                                                          "primitives: eltwise, "
                                                                          "binary, reduction, "
                                                                          "matmul, concat, reorder "
                                                                          "and softmax_v2 "
                                                                          "primitives; gradients "
                                                                          "by eltwise and "
                                                                          "softmax_v2 backward and "
                                                                          "forward primitives, "
                                                                          "the reductions' by the "
                                                                          "plugin's own loops",
      std::span<const BurnmarkOpSupport>(support));
  return &table;
}

// The instruction set oneDNN's JIT generates its kernels for here (capped by
// ONEDNN_MAX_CPU_ISA): its eltwise and softmax kernels round, and treat NaN and infinities,
// differently from one ISA to another, so a behaviour pinned by a test holds for one ISA (and,
// as every platform line says, one CPU vendor).
extern "C" BURNMARK_PLUGIN_EXPORT const char* burnmark_plugin_platform(void* /*context*/) {
  static const std::string line = [] {
    const char* isa = "unknown";
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_all: isa = "all"; break;
    case dnnl_cpu_isa_sse41: isa = "sse41"; break;
    case dnnl_cpu_isa_avx: isa = "avx"; break;
    case dnnl_cpu_isa_avx2: isa = "avx2"; break;
    case dnnl_cpu_isa_avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl_cpu_isa_avx512_mic: isa = "avx512_mic"; break;
    case dnnl_cpu_isa_avx512_mic_4ops: isa = "avx512_mic_4ops"; break;
    case dnnl_cpu_isa_avx512_core: isa = "avx512_core"; break;
    case dnnl_cpu_isa_avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl_cpu_isa_avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl_cpu_isa_avx512_core_amx: isa = "avx512_core_amx"; break;
    }
    return std::string("oneDNN ") +
           BURNMARK_ONEDNN_STR(DNNL_VERSION_MAJOR) "." BURNMARK_ONEDNN_STR(DNNL_VERSION_MINOR) " " +
           isa + " on " + burnmark::cpu_vendor();
  }();
  return line.c_str();
}
