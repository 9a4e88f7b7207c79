#!/bin/sh
# The installed package as a library team uses it (docs/install.md), from a folder outside the
# checkout: `cmake --install` to a scratch prefix, the example plugin copied out of the tree and
# built against find_package(BurnMark), then the installed burnmark and fuzz_autograd run with it.
# Run by ctest (tests/install.cmake):
#   install_test.sh <cmake> <generator> <c++ compiler> <build dir> <source dir> <scratch dir>
set -eu
cmake=$1 generator=$2 cxx=$3 build=$4 source=$5 work=$6

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# expect <what> <haystack file> <needle>: the file holds the fixed string.
expect() {
  grep -qF -- "$3" "$2" || {
    cat "$2" >&2
    fail "$1: no '$3' in $2"
  }
}

rm -rf "$work"
mkdir -p "$work"
cd "$work"
prefix=$work/prefix

"$cmake" --install "$build" --prefix "$prefix" >install.log

# The plugin headers are self-contained and nothing more: plugin.h, plugin_walk.h and the ops.def
# plugin_walk.h includes (its #include lines), none of the host's own headers.
(cd "$prefix/include" && find . -type f | sort) >headers.txt
printf '%s\n' ./burnmark/ir/ops.def ./burnmark/plugin/plugin.h ./burnmark/plugin/plugin_walk.h \
  >headers.expected
cmp -s headers.txt headers.expected || {
  diff headers.expected headers.txt >&2 || true
  fail "installed headers differ from the plugin headers"
}
for f in bin/burnmark bin/fuzz_autograd share/burnmark/known_bugs.txt \
  share/burnmark/fuzz_autograd lib/burnmark/plugins/burnmark_example.so \
  lib/cmake/BurnMark/BurnMarkConfig.cmake lib/cmake/BurnMark/BurnMarkConfigVersion.cmake; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
# The installed programs load the LibTorch the build linked, not whichever one the system has.
torch_of() { readlink -f "$(ldd "$1" | awk '$1 == "libtorch_cpu.so" { print $3 }')"; }
[ "$(torch_of "$prefix/bin/burnmark")" = "$(torch_of "$build/src/cli/burnmark")" ] ||
  fail "installed burnmark loads $(torch_of "$prefix/bin/burnmark"), the build" \
    "$(torch_of "$build/src/cli/burnmark")"

# The example plugin, out of the tree, exactly as a user builds one: its CMakeLists.txt finds the
# package through CMAKE_PREFIX_PATH and nothing of the source tree is on the include path.
mkdir example
cp "$source/plugins/example/CMakeLists.txt" "$source/plugins/example/example_plugin.cpp" example/
"$cmake" -S example -B example-build -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" >configure.log 2>&1 || {
  cat configure.log >&2
  fail "configuring the example plugin against the installed package"
}
expect "find_package(BurnMark) took the installed package" example-build/CMakeCache.txt \
  "BurnMark_DIR:PATH=$prefix/lib/cmake/BurnMark"
"$cmake" --build example-build >build.log 2>&1 || {
  cat build.log >&2
  fail "building the example plugin against the installed package"
}
plugin=$work/example-build/burnmark_example.so
[ -f "$plugin" ] || fail "no $plugin"

# Every op the example plugin lists (add, sub, mul, neg, relu, exp), broadcasting included.
# root = -(relu(a + b) * exp(b)) - a with a: [2,3], b: [3]. Column 1 is exact by hand:
# a + b = -3.25 and -2.5 there, relu gives 0, so root = -a = 1.25 and 0.5; d root/d a = -1;
# d root/d b = 0 (relu'(negative) = 0 and exp(b) multiplies relu's 0).
cat >example_ops.txt <<'EOF'
# burnmark program v1
%0 = leaf f32[2,3] [0.5, -1.25, 2, 0.75, -0.5, 1.5]
%1 = leaf f32[3] [1.5, -2, 0.25]
%2 = add %0, %1 : f32[2,3]
%3 = relu %2 : f32[2,3]
%4 = exp %1 : f32[3]
%5 = mul %3, %4 : f32[2,3]
%6 = neg %5 : f32[2,3]
%7 = sub %6, %0 : f32[2,3]
root %7
EOF
BACKENDS="ref,$plugin" "$prefix/bin/burnmark" run example_ops.txt >run.log 2>&1 ||
  fail "burnmark run with the out-of-tree plugin exited $? ($(cat run.log))"
expect "the plugin ran" run.log "backend=example status=ok"
expect "the plugin agreed with the reference" run.log \
  "VERDICT reference=ref compared=1 divergences=0 skipped=0"
# The example's own lines (those after "backend=example"), and the values of one of them, one a
# line: `values "grad leaf=0"` for "  grad leaf=0 [2,3] = [a, b, ...]".
awk '/^backend=example/ { on = 1; next } /^backend=/ { on = 0 } on' run.log >example.log
values() { sed -n "s/^  $1 \[[0-9,]*\] = \[\(.*\)\]\$/\1/p" example.log | tr -d ' ' | tr ',' '\n'; }
column1() { printf '%s ' "$(values "$1" | sed -n 2p)" "$(values "$1" | sed -n 5p)"; }
[ "$(column1 root)" = "1.25 0.5 " ] ||
  fail "example root column 1 is not (1.25, 0.5): $(cat example.log)"
[ "$(column1 "grad leaf=0")" = "-1 -1 " ] ||
  fail "example d root/d a column 1 is not (-1, -1): $(cat example.log)"
[ "$(values "grad leaf=1" | sed -n 2p)" = "0" ] ||
  fail "example d root/d b[1] is not 0: $(cat example.log)"

# A plugin copied into the installation's plugin folder is found by name, relative to the
# installed executable: this name exists nowhere else (not in the build tree, not in the
# configured prefix).
cp "$plugin" "$prefix/lib/burnmark/plugins/burnmark_installtest.so"
BACKENDS=ref,installtest "$prefix/bin/burnmark" run example_ops.txt >byname.log 2>&1 ||
  fail "burnmark run with BACKENDS=ref,installtest exited $? ($(cat byname.log))"
expect "the installed plugin found by name agreed" byname.log \
  "VERDICT reference=ref compared=1 divergences=0"

# The installed fuzz target against the plugin, briefly, on a copy of the installed seeds (new
# inputs land in the copy), continuous mode: findings are recorded, the run goes on and exits 0.
cp -R "$prefix/share/burnmark/fuzz_autograd" seeds
mkdir findings
MODE=continuous BACKENDS="ref,$plugin" BURNMARK_FINDINGS_DIR="$work/findings" \
  BURNMARK_KNOWN_BUGS="$prefix/share/burnmark/known_bugs.txt" \
  "$prefix/bin/fuzz_autograd" -runs=200 -seed=1 seeds >fuzz.log 2>&1 || {
  cat fuzz.log >&2
  fail "fuzz_autograd against the out-of-tree plugin exited non-zero"
}
expect "fuzz_autograd started with the plugin" fuzz.log "BACKENDS=ref,$plugin MODE=continuous"
expect "fuzz_autograd ran to the end" fuzz.log "Done 200 runs"

# The README's quick start, from here (outside the checkout): the example built with its planted
# bug (relu(NaN) = 0), fuzzed in panic mode with the default known-bug list (found next to the
# installed binary) and the plugin's ops only, stops at a finding with a crash-* artifact, which
# `burnmark minimize` shrinks to relu at NaN. A fixed seed and a run cap: no timing involved.
"$cmake" -S example -B planted-build -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" -DBURNMARK_EXAMPLE_PLANTED_BUG=ON >planted-configure.log 2>&1 &&
  "$cmake" --build planted-build >planted-build.log 2>&1 ||
  fail "building the example plugin with its planted bug ($(tail -5 planted-build.log))"
planted=$work/planted-build/burnmark_example.so
cp -R "$prefix/share/burnmark/fuzz_autograd" planted-seeds
mkdir planted-findings
if BACKENDS="ref,$planted" "$prefix/bin/fuzz_autograd" -artifact_prefix=planted-findings/ \
  -runs=100000 -seed=1 planted-seeds >panic.log 2>&1; then
  fail "fuzz_autograd found nothing in the planted plugin ($(tail -3 panic.log))"
fi
expect "the default known-bug list is the installed one" panic.log \
  "from $prefix/share/burnmark/known_bugs.txt"
expect "the generator drew the plugin's ops" panic.log "ops=add,sub,mul,neg"
expect "the finding is marked as expected" panic.log "END OF FINDING"
crash=$(ls planted-findings/crash-* 2>/dev/null | head -1)
[ -n "$crash" ] || fail "no crash-* artifact in planted-findings/"
BACKENDS="ref,$planted" "$prefix/bin/burnmark" minimize "$crash" >minimized.txt 2>minimize.log ||
  true # exit 1: it diverges, as it should
expect "the minimised finding names relu at NaN" minimized.txt "culprit=relu"
expect "the minimised program is relu of a NaN" minimized.txt "relu %0"
echo "install test: ok ($prefix)"
