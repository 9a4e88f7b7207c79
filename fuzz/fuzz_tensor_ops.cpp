// libFuzzer target: forward values only (no backward pass), compared across BACKENDS.
#include "burnmark/backends/builtin.h"
#include "burnmark/backends/process.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  burnmark::quiet_libtorch_logs();
  burnmark::serve_backend_if_requested(); // a child backend (libtorch-scalar, child:...) never
                                          // returns
  burnmark::fuzz::initialize("fuzz_tensor_ops", /*gradients=*/false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return burnmark::fuzz::test_one_input(data, size);
}
