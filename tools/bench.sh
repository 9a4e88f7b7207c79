#!/usr/bin/env bash
# Throughput and time-to-find figures (issues 12 and 30), from a `fuzz` preset build, run from
# any folder. Figures, not pass/fail: nothing here asserts a speed.
#
#   tools/bench.sh [SECONDS_PER_RUN]        (default 60; 0 skips to the planted faults)
#
# Part 1, throughput. Every configuration of CONFIGS runs once per round, round-robin (so the
# machine's load falls on all of them alike), each from a fresh copy of corpus/fuzz_autograd with
# libFuzzer seed 1, MODE=continuous. Per run: exec/s (libFuzzer's average), executions per CPU
# second (executed units over user + system time from /usr/bin/time: the steadier figure on a
# shared machine) and the ratio of both to `BACKENDS=libtorch` in the same round.
# Part 2, time to find. Every planted fixture of PLANTED runs beside the reference
# (BACKENDS=ref,<fixture>) from an empty corpus in MODE=panic, once per seed of SEEDS and setting
# of PLANTED_KNOBS (interleaved the same way), until its first divergence or CAP seconds; printed:
# the median over the seeds per fixture and setting of the seconds and of the executions to it
# (the load-independent figure), or "not-found" when no seed found it.
#
# FUZZ_BIN     the fuzz target (default: this checkout's build/fuzz/fuzz/fuzz_autograd)
# CONFIGS      semicolon list of "VAR=value ... BACKENDS=..." settings (default below); the first
#              entry equal to BACKENDS=libtorch is the ratios' baseline
# ROUNDS       rounds of CONFIGS (default 2)
# PLANTED      space list of fixtures: names (planted_tail, ...) looked up in PLANTED_DIR, or paths
#              to any plugin .so; "none" skips part 2 (default: the four plugins/planted faults)
# PLANTED_DIR  where the named fixtures are (default: FUZZ_BIN's build, <build>/plugins; build
#              them with `cmake --build --preset fuzz --target burnmark_planted`)
# PLANTED_KNOBS semicolon list of settings for part 2, "-" = the defaults (default "-"), e.g.
#              "-;BURNMARK_SEMANTIC_FEATURES=0;BURNMARK_MUTATOR=bytes"
# SEEDS        libFuzzer seeds for part 2 (default "1 2 3")
# CAP          seconds a part-2 run may search (default 120)
# PIN          a `taskset -c` CPU list to pin every run to (default 0; empty: no pinning)
# BURNMARK_KNOWN_BUGS  the known-bug list (default this checkout's corpus/known_bugs.txt, by
#              absolute path: the runs happen in a scratch folder)
# Run it under `nice` on a shared machine; every run inherits it.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
fuzz_bin="${FUZZ_BIN:-$root/build/fuzz/fuzz/fuzz_autograd}"
default_configs="BACKENDS=libtorch;BACKENDS=ref,libtorch;BURNMARK_TANGENTS=1 BACKENDS=ref,libtorch"
default_configs+=";BURNMARK_HVP=1 BACKENDS=ref,libtorch"
default_configs+=";BACKENDS=ref,libtorch,libtorch-strided,libtorch-inplace"
configs="${CONFIGS:-$default_configs}"
rounds="${ROUNDS:-2}"
planted="${PLANTED:-planted_tail planted_subnormal planted_broadcast planted_compose}"
planted_knobs="${PLANTED_KNOBS:--}"
seeds="${SEEDS:-1 2 3}"
cap="${CAP:-120}"
pin="${PIN-0}"
export BURNMARK_KNOWN_BUGS="${BURNMARK_KNOWN_BUGS:-$root/corpus/known_bugs.txt}"

fail() {
  echo "bench: $*" >&2
  exit 2
}
[[ -x "$fuzz_bin" ]] ||
  fail "$fuzz_bin not found (build it: cmake --build --preset fuzz --target fuzz_autograd)"
fuzz_bin="$(cd "$(dirname "$fuzz_bin")" && pwd)/$(basename "$fuzz_bin")"
planted_dir="${PLANTED_DIR:-$(dirname "$(dirname "$fuzz_bin")")/plugins}"
[[ -e "$BURNMARK_KNOWN_BUGS" ]] || fail "BURNMARK_KNOWN_BUGS=$BURNMARK_KNOWN_BUGS not found"
known="$BURNMARK_KNOWN_BUGS"
BURNMARK_KNOWN_BUGS="$(cd "$(dirname "$known")" && pwd)/$(basename "$known")"
[[ -x /usr/bin/time ]] || fail "/usr/bin/time (GNU time) not found: it measures the CPU time"
for n in "$seconds" "$rounds" "$cap"; do
  [[ "$n" =~ ^[0-9]+$ ]] ||
    fail "SECONDS_PER_RUN, ROUNDS and CAP must be non-negative integers, got '$n'"
done
# Fixtures resolved to absolute paths before any run, so a typo fails at once.
fixtures=()
if [[ "$planted" != none ]]; then
  for f in $planted; do
    if [[ "$f" == */* || "$f" == *.so ]]; then
      path="$f"
    else
      path="$planted_dir/burnmark_$f.so"
    fi
    [[ -e "$path" ]] ||
      fail "planted fixture $f: $path not found (build them: --target burnmark_planted)"
    fixtures+=("$(cd "$(dirname "$path")" && pwd)/$(basename "$path")")
  done
fi
runner=()
[[ -n "$pin" ]] && runner=(taskset -c "$pin")

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

ratio() { awk -v r="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", r / b; else print "-" }'; }

# One throughput run of settings $1: prints "exec/s executions-per-CPU-s peak-RSS-MB".
measure() {
  local settings="$1" dir="$scratch/run"
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp "$root"/corpus/fuzz_autograd/* "$dir/corpus/"
  (cd "$dir" && env $settings MODE=continuous BURNMARK_FULL_REPORTS=0 \
     BURNMARK_SUMMARY_EVERY=1000000 /usr/bin/time -f "%U %S" -o time "${runner[@]}" "$fuzz_bin" \
     -seed=1 -max_total_time="$seconds" -print_final_stats=1 corpus > log 2>&1) || true
  local rate units cpu rss
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -1)"
  units="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$dir/log" | tail -1)"
  cpu="$(awk '{ s = $1 + $2 } END { print s + 0 }' "$dir/time" 2>/dev/null || echo 0)"
  awk -v r="${rate:-0}" -v u="${units:-0}" -v c="$cpu" -v m="${rss:--}" \
    'BEGIN { printf "%d %d %s\n", r, (c > 0 ? u / c : 0), m }'
}

if ((seconds > 0 && rounds > 0)); then
  IFS=';' read -r -a list <<< "$configs"
  echo "# throughput: $seconds s per run, $rounds round(s), seed 1," \
    "from corpus/fuzz_autograd${pin:+, CPU $pin}"
  echo "# $fuzz_bin"
  printf '%-5s  %-62s %8s %10s %7s %9s %6s\n' \
    round configuration exec/s exec/CPU-s ratio ratio-CPU rss-MB
  for ((round = 1; round <= rounds; ++round)); do
    base_rate="" base_cpu=""
    for c in "${list[@]}"; do
      read -r rate per_cpu rss <<< "$(measure "$c")"
      if [[ -z "$base_rate" && "$c" == "BACKENDS=libtorch" ]]; then
        base_rate="$rate" base_cpu="$per_cpu"
      fi
      printf '%-5s  %-62s %8s %10s %7s %9s %6s\n' "$round" "$c" "$rate" "$per_cpu" \
        "$(ratio "$rate" "${base_rate:-0}")" "$(ratio "$per_cpu" "${base_cpu:-0}")" "$rss"
    done
  done
fi
((${#fixtures[@]} > 0)) || exit 0

# Seconds to the first divergence of one fixture ($1) with settings $2 and seed $3, wall clock
# from the process's start (LibTorch's loading included), and the executions libFuzzer made until
# then, as "SECONDS/EXECUTIONS"; "-" when not found within CAP. Executions do not depend on how
# loaded the machine is, so they compare binaries measured beside other work. A divergence counts
# only when the fixture is the diverging backend.
time_to_find() {
  local fixture="$1" settings="$2" seed="$3" dir="$scratch/ttf" start end execs
  [[ "$settings" == - ]] && settings=""
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  start="$(date +%s.%N)"
  (cd "$dir" && env $settings BACKENDS="ref,$fixture" MODE=panic \
     timeout $((cap + 60)) "${runner[@]}" "$fuzz_bin" -seed="$seed" -max_total_time="$cap" \
     -print_final_stats=1 corpus > log 2>&1) || true
  end="$(date +%s.%N)"
  if grep -q "^DIVERGENCE backend=" "$dir/log"; then
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)"
    awk -v a="$start" -v b="$end" -v n="${execs:-?}" 'BEGIN { printf "%.2f/%s", b - a, n }'
  else
    echo -
  fi
}

name() {
  local n
  n="$(basename "$1" .so)"
  echo "${n#burnmark_}"
}

echo
echo "# seconds and executions to the first divergence, BACKENDS=ref,<fixture>, empty corpus, MODE=panic," \
  "cap $cap s${pin:+, CPU $pin}"
IFS=';' read -r -a knobs <<< "$planted_knobs"
declare -A found
for seed in $seeds; do
  for f in "${fixtures[@]}"; do
    for k in "${knobs[@]}"; do
      t="$(time_to_find "$f" "$k" "$seed")"
      found["$f|$k"]+="$t "
      printf 'seed %-3s %-20s %-36s %s\n' "$seed" "$(name "$f")" "$k" "$t"
    done
  done
done
echo
printf '%-20s %-36s %-40s %-10s %s\n' fixture settings "seeds ($seeds): s/executions" median-s median-execs
# The median over every seed of field $1 (1 seconds, 2 executions) of the runs $2, a seed that
# found nothing counting as above the cap.
median_of() {
  printf '%s\n' $2 | awk -F/ -v f="$1" '{ print ($0 == "-" ? 1e18 : $f) }' | sort -g |
    awk '{ v[NR] = $1 } END { m = v[int((NR + 1) / 2)]; print (m >= 1e18 ? "not-found" : m) }'
}
for f in "${fixtures[@]}"; do
  for k in "${knobs[@]}"; do
    runs="${found["$f|$k"]}"
    printf '%-20s %-36s %-40s %-10s %s\n' "$(name "$f")" "$k" "$runs" "$(median_of 1 "$runs")" "$(median_of 2 "$runs")"
  done
done
