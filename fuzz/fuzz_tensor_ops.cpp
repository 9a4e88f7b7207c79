// libFuzzer target: forward values only (no backward pass), compared across BACKENDS.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  burnmark::fuzz::initialize("fuzz_tensor_ops", /*gradients=*/false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return burnmark::fuzz::test_one_input(data, size);
}
