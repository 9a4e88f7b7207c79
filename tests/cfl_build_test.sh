#!/bin/sh
# .clusterfuzzlite/build.sh under the OSS-Fuzz contract on this machine, without a container:
# $CC/$CXX/$CFLAGS/$CXXFLAGS as OSS-Fuzz's libfuzzer+address build sets them (its -stdlib=libc++
# included, which build.sh must drop), LIB_FUZZING_ENGINE=-fsanitize=fuzzer, $SRC/burnmark the
# checkout, $OUT a scratch folder. Then each target's files are checked and each target runs 200
# inputs from its seed zip with none of BurnMark's knobs in its environment (a runner sets none),
# loading LibTorch from $OUT/lib. Run by ctest (tests/cfl.cmake):
#   cfl_build_test.sh <source dir> <torch wheel> <scratch dir> <persistent build parent>
# A compiler launcher (ccache) comes from the caller's CMAKE_<LANG>_COMPILER_LAUNCHER, or ccache
# when it is installed; its CCACHE_* settings pass through.
set -eu
source=$1 wheel=$2 work=$3 persistent=$4

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

rm -rf "$work"
mkdir -p "$work/src" "$work/out" "$persistent"
ln -s "$source" "$work/src/burnmark"
cd "$work"

CC=clang
CXX=clang++
CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
CXXFLAGS="$CFLAGS -stdlib=libc++"
LIB_FUZZING_ENGINE=-fsanitize=fuzzer
OUT=$work/out
SRC=$work/src
WORK=$persistent
export CC CXX CFLAGS CXXFLAGS LIB_FUZZING_ENGINE OUT SRC WORK
export BURNMARK_TORCH_WHEEL="$wheel" BURNMARK_JOBS="${BURNMARK_JOBS:-2}"
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi

nice bash "$source/.clusterfuzzlite/build.sh" >build.log 2>&1 || {
  tail -40 build.log >&2
  fail "build.sh exited non-zero (log: $work/build.log)"
}

[ -f "$OUT/known_bugs.txt" ] || fail "no known_bugs.txt in \$OUT"
[ -f "$OUT/lib/libtorch_cpu.so" ] || fail "no lib/libtorch_cpu.so in \$OUT"
for target in fuzz_autograd fuzz_tensor_ops fuzz_text; do
  for f in "$target" "${target}_seed_corpus.zip" "$target.options"; do
    [ -f "$OUT/$f" ] || fail "build.sh put no $f in \$OUT"
  done
  grep -qx '\[libfuzzer\]' "$OUT/$target.options" || fail "$target.options has no [libfuzzer] section"
  mkdir "seeds-$target"
  unzip -q "$OUT/${target}_seed_corpus.zip" -d "seeds-$target"
  [ -n "$(ls "seeds-$target")" ] || fail "${target}_seed_corpus.zip is empty"
  # The runner has nothing but $OUT: LibTorch must come from $OUT/lib (run path $ORIGIN/lib).
  if [ "$target" != fuzz_text ]; then
    torch=$(ldd "$OUT/$target" | awk '$1 == "libtorch_cpu.so" { print $3 }')
    [ "$torch" = "$OUT/lib/libtorch_cpu.so" ] || fail "$target loads libtorch_cpu.so from '$torch', not \$OUT/lib"
  fi
  # Only PATH: no BACKENDS, MODE or BURNMARK_* (the knobs' defaults), and no ASAN_OPTIONS of
  # ours (OSS-Fuzz's default leak detection stays on).
  env -i PATH=/usr/bin:/bin "$OUT/$target" -runs=200 -seed=1 "seeds-$target" >"run-$target.log" 2>&1 || {
    tail -40 "run-$target.log" >&2
    fail "$target -runs=200 on its seed corpus exited non-zero"
  }
  grep -q "^Done [0-9]* runs" "run-$target.log" || fail "$target did not run to the end"
  if [ "$target" != fuzz_text ]; then
    grep -qF "MODE=panic known-bugs=" "run-$target.log" || fail "$target did not start on the default knobs"
    grep -qF "from $OUT/known_bugs.txt" "run-$target.log" || fail "$target did not find known_bugs.txt beside itself"
  fi
done
rm -rf "$OUT/lib" # 450 MB of LibTorch, copied again by the next run
echo "cfl build test: ok ($work)"
