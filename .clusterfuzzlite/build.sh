#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build of BurnMark's fuzz targets, under the engine's contract: the
# compilers and flags come from $CC, $CXX, $CFLAGS, $CXXFLAGS (instrumentation and sanitizer
# included), the engine's link flags from $LIB_FUZZING_ENGINE, the source from $SRC/burnmark, and
# everything the targets need at run time goes to $OUT, the only folder the runner has:
#   <target>                    the fuzz target, run path $ORIGIN/lib
#   <target>_seed_corpus.zip    corpus/<target>/ (fuzz_text: the text programs)
#   <target>.options            libFuzzer flags ([libfuzzer]); see below for BurnMark's knobs
#   <target>.dict               if the repository has fuzz/<target>.dict (none today)
#   known_bugs.txt              corpus/known_bugs.txt, found beside the binary (BURNMARK_KNOWN_BUGS=auto)
#   lib/                        LibTorch's libraries and the other shared libraries the targets load
#                               that a runner image lacks (all but glibc's, libgcc's and libstdc++)
# BurnMark's knobs are environment variables, and a .options file cannot set them (ClusterFuzz
# passes only a fixed list of variables from an [env] section), so the targets run on their
# defaults: BACKENDS=ref,libtorch, MODE=panic (a divergence aborts: the engine saves the input).
#
# Optional: BURNMARK_TORCH_WHEEL (site-packages/torch of torch 2.15.0; default the checkout's
# .deps, tools/install-deps.sh), BURNMARK_FUZZ_TARGETS (default all three), BURNMARK_JOBS,
# $WORK (the build folder's parent; OSS-Fuzz sets it). tests/cfl_build_test.sh runs this script on
# a plain machine under the same contract.
src=${BURNMARK_SOURCE:-$SRC/burnmark}
wheel=${BURNMARK_TORCH_WHEEL:-$src/.deps/torch-2.15.0/lib/python3.11/site-packages/torch}
targets=${BURNMARK_FUZZ_TARGETS:-fuzz_autograd fuzz_tensor_ops fuzz_text}
build=${WORK:-/tmp}/burnmark-cfl-build

# OSS-Fuzz's $CXXFLAGS carry -stdlib=libc++; LibTorch's wheel is built against libstdc++ (its
# std::string crosses the API), so BurnMark links libstdc++ as LibTorch does.
cxxflags=${CXXFLAGS//-stdlib=libc++/}

# No build type: the optimisation and debug flags are the engine's. Warnings are not errors under
# another compiler. The run path is $ORIGIN/lib, first (CMAKE_BUILD_WITH_INSTALL_RPATH).
cmake -G Ninja -S "$src" -B "$build" \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_BUILD_TYPE= \
  -DBURNMARK_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" -DBURNMARK_WERROR=OFF \
  -DBURNMARK_BUILD_TESTS=OFF -DBURNMARK_BUILD_PLUGINS=OFF -DBURNMARK_TORCH_WHEEL="$wheel" \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON '-DCMAKE_INSTALL_RPATH=$ORIGIN/lib'
# shellcheck disable=SC2086 # a list of target names
cmake --build "$build" -j "${BURNMARK_JOBS:-$(nproc)}" --target $targets

mkdir -p "$OUT/lib"
cp "$src/corpus/known_bugs.txt" "$OUT/known_bugs.txt"
for target in $targets; do
  cp "$build/fuzz/$target" "$OUT/$target"
  seeds=$src/corpus/$target
  [ "$target" = fuzz_text ] && seeds="$src/corpus/programs $src/corpus/bugs"
  rm -f "$OUT/${target}_seed_corpus.zip"
  # shellcheck disable=SC2086 # fuzz_text's two folders
  find $seeds -type f | sort | zip -q -j -@ "$OUT/${target}_seed_corpus.zip"
  [ -f "$src/fuzz/$target.dict" ] && cp "$src/fuzz/$target.dict" "$OUT/$target.dict"
  cat >"$OUT/$target.options" <<OPTIONS
[libfuzzer]
# Inputs are generator bytes: 4 KB (libFuzzer's default, what campaigns and the presets' runs
# use) is dozens of ops on several tensors; longer ones only make programs slower to run.
max_len = 4096
OPTIONS
  [ -f "$OUT/$target.dict" ] && echo "dict = $target.dict" >>"$OUT/$target.options"
  # The shared libraries the target loads that a runner image does not have.
  ldd "$OUT/$target" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
    case $name in
      libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | libutil.so.* | \
        libgcc_s.so.* | libstdc++.so.* | ld-linux*) ;;
      *) [ -f "$OUT/lib/$name" ] || cp -L "$path" "$OUT/lib/$name" ;;
    esac
  done
done
