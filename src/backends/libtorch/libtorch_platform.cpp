// libtorch_platform and libtorch_nnc_platform (libtorch_platform.h).
#include "libtorch_platform.h"

#include <ATen/Version.h>
#include <torch/version.h>

#include <fmt/format.h>

#include "burnmark/backends/builtin.h"
#include "burnmark/util/cpu_vendor.h"

namespace burnmark {
namespace {

// ATen's word for the kernel set it dispatches to, from the one public place that states it
// ("CPU capability usage: AVX2"; "NO AVX" under ATEN_CPU_CAPABILITY=default).
std::string aten_capability() {
  const std::string config = at::show_config();
  const std::string key = "CPU capability usage: ";
  const std::size_t at = config.find(key);
  if (at == std::string::npos) return "unknown";
  const std::size_t begin = at + key.size();
  const std::string word = config.substr(begin, config.find('\n', begin) - begin);
  return word == "NO AVX" ? "DEFAULT" : word;
}

// The widest vector extension LLVM may use here (NNC targets the host CPU).
const char* host_vector_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "AVX-512";
  if (__builtin_cpu_supports("avx2")) return "AVX2";
  if (__builtin_cpu_supports("avx")) return "AVX";
  return "SSE";
}

} // namespace

std::string libtorch_release() {
  return fmt::format("{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
}

std::string libtorch_platform() {
  // Read once: ATen picks its kernels at the first dispatch and keeps them for the process.
  static const std::string line =
      fmt::format("LibTorch {} {} on {}", libtorch_release(), aten_capability(), cpu_vendor());
  return line;
}

std::string libtorch_nnc_platform() {
  return fmt::format("{}, NNC for {}", libtorch_platform(), host_vector_isa());
}

} // namespace burnmark
