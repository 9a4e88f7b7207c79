#!/usr/bin/env bash
# The fuzzing command: installs what is missing, builds the `fuzz` preset and runs a bounded
# fuzz_autograd campaign on the default backends (ref,libtorch) with libFuzzer's progress on
# screen. Extra arguments go to libFuzzer (e.g. -max_total_time=3600); the environment knobs
# (BACKENDS, MODE, ...) work as documented in the README.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset fuzz
cmake --build --preset fuzz -j "$(nproc)" --target fuzz_autograd fuzz_tensor_ops burnmark
mkdir -p findings/fuzz_autograd work/fuzz_autograd
# The checked-in seeds stay read-only: new corpus entries go to work/, crashes to findings/.
exec build/fuzz/fuzz/fuzz_autograd -max_total_time=300 -print_final_stats=1 \
  -artifact_prefix=findings/fuzz_autograd/ "$@" work/fuzz_autograd corpus/fuzz_autograd
