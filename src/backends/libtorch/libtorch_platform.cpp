// libtorch_platform and libtorch_nnc_platform (libtorch_platform.h).
#include "libtorch_platform.h"

#include <ATen/Version.h>
#include <torch/version.h>

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

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

// The widest vector extension this CPU has, 0 (SSE4.1) to 3 (AVX-512 with BW, VL, DQ): what
// NNC's LLVM and LibTorch's oneDNN write their kernels for, unless capped.
int host_vector_level() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return 3;
  if (__builtin_cpu_supports("avx2")) return 2;
  return __builtin_cpu_supports("avx") ? 1 : 0;
}

// The vector width LibTorch's oneDNN writes its kernels for: LibTorch hands some ops to the
// oneDNN it carries (2.15's gelu on a contiguous CPU tensor: libtorch-gelu-huge-overflow
// diverges with AVX-512 kernels and not with AVX2 ones), whose JIT targets the widest ISA the
// CPU has, capped by ONEDNN_MAX_CPU_ISA. The wheel does not export oneDNN's own query, so the
// level is derived the same way, coarsely: avx512, avx2, avx or sse41.
const char* onednn_isa() {
  int level = host_vector_level();
  const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (cap == nullptr) cap = std::getenv("DNNL_MAX_CPU_ISA");
  if (cap != nullptr) {
    std::string isa(cap);
    for (char& c : isa)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const int capped = isa.starts_with("avx512") ? 3
                       : isa.starts_with("avx2") ? 2
                       : isa.starts_with("avx")  ? 1
                       : isa.starts_with("sse")  ? 0
                                                 : 3; // "all" or unknown: no cap
    level = std::min(level, capped);
  }
  static constexpr const char* kNames[] = {"sse41", "avx", "avx2", "avx512"};
  return kNames[level];
}

} // namespace

std::string libtorch_release() {
  return fmt::format("{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
}

std::string libtorch_platform() {
  // Read once: ATen picks its kernels at the first dispatch and keeps them for the process.
  static const std::string line = fmt::format("LibTorch {} {} on {}, oneDNN {}", libtorch_release(),
                                              aten_capability(), cpu_vendor(), onednn_isa());
  return line;
}

std::string libtorch_nnc_platform() {
  static constexpr const char* kNames[] = {"SSE", "AVX", "AVX2", "AVX-512"};
  return fmt::format("{}, NNC for {}", libtorch_platform(), kNames[host_vector_level()]);
}

void skip_libtorch_error_backtraces() {
  static const bool done = [] {
    c10::SetStackTraceFetcher(std::function<std::string()>([] { return std::string(); }));
    return true;
  }();
  (void)done;
}

namespace {

// TORCH_WARN(_ONCE) lands here instead of on stderr ("scatter_reduce() is in beta ..."): such
// warnings are about the API, not about the values BurnMark compares.
// The handler's interface changed after 1.13 (a c10::Warning object instead of its parts).
class DroppedWarnings final : public c10::WarningHandler {
public:
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning&) override { count_.fetch_add(1, std::memory_order_relaxed); }
#else
  void process(const c10::SourceLocation&, const std::string&, bool) override {
    count_.fetch_add(1, std::memory_order_relaxed);
  }
#endif

private:
  std::atomic<std::uint64_t> count_{0};
};

} // namespace

void quiet_libtorch_logs() {
  static const bool done = [] {
    // A user who set the level gets it (overwrite = 0); children inherit ours.
    setenv("TORCH_CPP_LOG_LEVEL", "ERROR", 0);
    c10::initLogging(); // reads the variable again: LibTorch read it before main()
    // A glog build (Debian's LibTorch 1.13): its first warning came with "Logging before
    // InitGoogleLogging() is written to STDERR". glog's own level, found only when glog is
    // loaded; InitGoogleLogging itself would install glog's crash handlers over ours.
    const std::string level = std::getenv("TORCH_CPP_LOG_LEVEL");
    if (level == "ERROR" || level == "2")
      if (void* flag = dlsym(RTLD_DEFAULT, "_ZN3fLI17FLAGS_minloglevelE"))
        *static_cast<std::int32_t*>(flag) = 2; // glog's ERROR
    static DroppedWarnings dropped;
#if TORCH_VERSION_MAJOR >= 2
    c10::WarningUtils::set_warning_handler(&dropped);
#else
    c10::Warning::set_warning_handler(&dropped);
#endif
    return true;
  }();
  (void)done;
}

} // namespace burnmark
