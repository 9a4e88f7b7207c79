// Which LibTorch kernels this process runs: the platform line of the LibTorch backends
// (Backend::platform), by which tests and bugs.md rows pin behaviour measured on one processor.
#pragma once

#include <string>

namespace burnmark {

// "LibTorch 1.13 AVX2 on GenuineIntel, oneDNN avx512": the release (major.minor: Debian's 1.13.1
// headers say 1.13.0), the kernel set ATen dispatches to, in ATEN_CPU_CAPABILITY's words
// (DEFAULT, AVX2, AVX512), the CPU vendor (Sleef, which LibTorch calls, dispatches at run time
// too), and the vector width of the oneDNN kernels LibTorch hands some ops to.
std::string libtorch_platform();

// NNC compiles its fused kernels with LLVM for the host's own instruction set, whatever ATen
// dispatches to: "LibTorch 1.13 AVX2 on GenuineIntel, oneDNN avx512, NNC for AVX-512".
std::string libtorch_nnc_platform();

// Stops LibTorch from taking a stack trace for every c10::Error it constructs: symbolising one
// (dladdr per frame) was 69 % of a fuzzing run's CPU, for a trace BurnMark never reports (an
// outcome keeps the message; triage reads its first line). Process-wide; idempotent.
void skip_libtorch_error_backtraces();

} // namespace burnmark
