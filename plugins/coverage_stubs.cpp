// No-op SanitizerCoverage callbacks, compiled into every plugin, so a coverage-instrumented plugin
// (eigen; in the fuzz presets also any that links an instrumented BurnMark library, see
// burnmark_fuzz_coverage) also loads in processes without libFuzzer (the burnmark CLI, the tests).
// They are weak and exported: when the host is a fuzz target, its libFuzzer exports the real
// callbacks, and the dynamic linker binds the plugin's calls to those first (the executable
// precedes every dlopen'd object in symbol lookup), so the fuzzer sees coverage of the plugin's
// library kernels; anywhere else these run. The list is every callback -fsanitize=fuzzer-no-link
// emits (minus stack-depth, turned off in the top-level CMakeLists.txt and for eigen because its
// thread-local counter would need static TLS in a dlopen'd object); plugins/CMakeLists.txt's
// -Wl,--no-undefined keeps it complete.
#include <cstdint>

#define BURNMARK_COV_STUB extern "C" __attribute__((weak, visibility("default"))) void

BURNMARK_COV_STUB __sanitizer_cov_8bit_counters_init(std::uint8_t*, std::uint8_t*) {}
BURNMARK_COV_STUB __sanitizer_cov_pcs_init(const std::uintptr_t*, const std::uintptr_t*) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_pc_indir(std::uintptr_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_cmp1(std::uint8_t, std::uint8_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_cmp2(std::uint16_t, std::uint16_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_cmp4(std::uint32_t, std::uint32_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_cmp8(std::uint64_t, std::uint64_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_const_cmp1(std::uint8_t, std::uint8_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_const_cmp2(std::uint16_t, std::uint16_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_const_cmp4(std::uint32_t, std::uint32_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_const_cmp8(std::uint64_t, std::uint64_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_switch(std::uint64_t, std::uint64_t*) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_div4(std::uint32_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_div8(std::uint64_t) {}
BURNMARK_COV_STUB __sanitizer_cov_trace_gep(std::uintptr_t) {}
