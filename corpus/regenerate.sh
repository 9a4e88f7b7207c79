#!/usr/bin/env bash
# Regenerates the binary fuzz seeds from the text programs: every corpus/programs/NAME.txt
# becomes corpus/fuzz_autograd/NAME and corpus/fuzz_tensor_ops/NAME (fuzzer bytes that decode
# to exactly that program, via `burnmark encode`), and every corpus/programs-bf16/NAME.txt
# (-f16, -f64) becomes corpus/fuzz_autograd_bf16/NAME (_f16, _f64), seeds for campaigns at
# that BURNMARK_DTYPES. Run after editing a program or the generator.
#
#   corpus/regenerate.sh [BUILD_DIR]     (default: build/test; configured and built if needed)
#   BURNMARK=/path/to/burnmark corpus/regenerate.sh     (use an existing binary)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build/test}
burnmark=${BURNMARK:-}
if [[ -z $burnmark ]]; then
  if [[ ! -f $build/build.ninja ]]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
  fi
  cmake --build "$build" --target burnmark
  burnmark=$build/src/cli/burnmark
fi

# The seeds must decode under the fuzzers' default knobs, whatever this shell has set.
unset MAX_LEAVES MIN_OPS FUZZ_MIN_DIM FUZZ_MAX_DIM BURNMARK_SPECIAL_RATE BURNMARK_EDGE_RATE BURNMARK_LAYOUT_RATE BURNMARK_DTYPES

shopt -s nullglob
programs=("$root"/corpus/programs/*.txt)
if (( ${#programs[@]} == 0 )); then
  echo "regenerate.sh: no programs in $root/corpus/programs" >&2
  exit 1
fi
mkdir -p "$root/corpus/fuzz_autograd" "$root/corpus/fuzz_tensor_ops"
for program in "${programs[@]}"; do
  name=$(basename "$program" .txt)
  "$burnmark" encode "$program" "$root/corpus/fuzz_autograd/$name"
  cp "$root/corpus/fuzz_autograd/$name" "$root/corpus/fuzz_tensor_ops/$name"
done
echo "regenerate.sh: ${#programs[@]} seeds in corpus/fuzz_autograd and corpus/fuzz_tensor_ops"
for dtype in bf16 f16 f64; do
  typed=("$root"/corpus/programs-$dtype/*.txt)
  mkdir -p "$root/corpus/fuzz_autograd_$dtype"
  for program in "${typed[@]}"; do
    BURNMARK_DTYPES=$dtype "$burnmark" encode "$program" \
      "$root/corpus/fuzz_autograd_$dtype/$(basename "$program" .txt)"
  done
  echo "regenerate.sh: ${#typed[@]} seeds in corpus/fuzz_autograd_$dtype"
done
