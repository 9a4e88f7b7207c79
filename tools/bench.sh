#!/usr/bin/env bash
# Throughput and time-to-first-divergence figures for the README (issue 12): prints, for a fixed
# input set (a fresh copy of corpus/fuzz_autograd and libFuzzer seed 1), programs per second for
# each BACKENDS configuration and its ratio to `libtorch` alone, then the median time a planted
# bug takes to be found from an empty corpus. Figures, not pass/fail: nothing here asserts a speed.
#
#   tools/bench.sh [SECONDS_PER_CONFIG]        (default 60; 0 skips to the planted bug)
#
# FUZZ_BIN   the fuzz target (default build/fuzz/fuzz/fuzz_autograd, the `fuzz` preset)
# PLANTED    the planted-bug plugin (default build/test/tests/campaign_fixtures/burnmark_planted.so,
#            the `test` preset's; when the default is not built the planted part is skipped)
# SEEDS      libFuzzer seeds for the planted part (default "1 2 3 4 5")
# CONFIGS    semicolon list of "ENV ... BACKENDS=..." settings to measure (default below)
# PIN        a `taskset -c` CPU list to pin every run to (default 0; empty: no pinning)
# BURNMARK_KNOWN_BUGS  the known-bug list (default this tree's corpus/known_bugs.txt, by absolute
#            path: the runs happen in a scratch folder, where the knob's relative default is absent)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
fuzz_bin="${FUZZ_BIN:-$root/build/fuzz/fuzz/fuzz_autograd}"
planted="${PLANTED:-$root/build/test/tests/campaign_fixtures/burnmark_planted.so}"
seeds="${SEEDS:-1 2 3 4 5}"
export BURNMARK_KNOWN_BUGS="${BURNMARK_KNOWN_BUGS:-$root/corpus/known_bugs.txt}"
pin="${PIN-0}"
configs="${CONFIGS:-BACKENDS=libtorch;BACKENDS=ref;BACKENDS=ref,libtorch;BURNMARK_TANGENTS=1 BACKENDS=ref,libtorch;BACKENDS=ref,libtorch,libtorch-strided,libtorch-inplace}"

if [[ ! -e "$fuzz_bin" ]]; then
  echo "bench: $fuzz_bin not found (build the fuzz preset first)" >&2
  exit 2
fi
# A PLANTED named by the caller must exist; the default is the test preset's, so a fuzz-only
# build measures throughput and says why it skips the planted part.
if [[ ! -e "$planted" ]]; then
  if [[ -n "${PLANTED:-}" ]]; then
    echo "bench: PLANTED=$planted not found" >&2
    exit 2
  fi
  echo "bench: $planted not built (the test preset's): the planted part is skipped" >&2
  planted=""
fi
if [[ ! -e "$BURNMARK_KNOWN_BUGS" ]]; then
  echo "bench: BURNMARK_KNOWN_BUGS=$BURNMARK_KNOWN_BUGS not found" >&2
  exit 2
fi
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "bench: SECONDS_PER_CONFIG must be a non-negative integer, got '$seconds'" >&2
  exit 2
fi
runner=()
[[ -n "$pin" ]] && runner=(taskset -c "$pin")

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# exec/s of one configuration: libFuzzer's own average over the run.
measure() {
  local settings="$1" dir="$scratch/run"
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp "$root"/corpus/fuzz_autograd/* "$dir/corpus/"
  (cd "$dir" && env $settings MODE=continuous BURNMARK_FULL_REPORTS=0 BURNMARK_SUMMARY_EVERY=1000000 \
     "${runner[@]}" "$fuzz_bin" -seed=1 -max_total_time="$seconds" -print_final_stats=1 corpus \
     > log 2>&1) || true
  sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1
}

if (( seconds > 0 )); then
  echo "# programs/s, $seconds s per configuration, seed 1, from corpus/fuzz_autograd${pin:+, CPU $pin}"
  printf '%-70s %10s %8s\n' "configuration" "exec/s" "ratio"
  baseline=""
  IFS=';' read -r -a list <<< "$configs"
  for c in "${list[@]}"; do
    rate="$(measure "$c")"
    [[ -z "$rate" ]] && rate=0
    [[ -z "$baseline" && "$c" == "BACKENDS=libtorch" ]] && baseline="$rate"
    ratio="-"
    if [[ -n "$baseline" && "$baseline" != 0 ]]; then
      ratio="$(awk -v r="$rate" -v b="$baseline" 'BEGIN { printf "%.2f", r / b }')"
    fi
    printf '%-70s %10s %8s\n' "$c" "$rate" "$ratio"
  done
fi
[[ -z "$planted" ]] && exit 0

# Time to the first divergence: the planted plugin's neg bug, found from an empty corpus, in
# panic mode (the first finding aborts the run); the median over SEEDS.
echo
echo "# seconds to the first divergence, BACKENDS=ref,<planted neg plugin>, empty corpus"
times=()
for seed in $seeds; do
  dir="$scratch/ttfd$seed"
  mkdir -p "$dir/corpus"
  start="$(date +%s.%N)"
  (cd "$dir" && env BACKENDS="ref,$planted" MODE=panic "${runner[@]}" "$fuzz_bin" \
     -seed="$seed" -max_total_time=300 corpus > log 2>&1) || true
  end="$(date +%s.%N)"
  if grep -q "DIVERGENCE" "$dir/log"; then
    t="$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')"
  else
    t="none-in-300s"
  fi
  times+=("$t")
  echo "seed $seed: $t"
done
printf '%s\n' "${times[@]}" | grep -v none | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print "median: none found"; else print "median: " v[int((NR + 1) / 2)] " s" }'
