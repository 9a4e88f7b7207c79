#!/usr/bin/env bash
# Python reproducers for the corpus/bugs rows live in LibTorch 2.15: writes each row's PyTorch
# script to corpus/repros-2.15/<id>.py and runs it with pip's torch 2.15 (the .deps venv that
# `BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh` makes), one line per row:
#
#   tools/python-repros.sh                      # every live row
#   tools/python-repros.sh corpus/bugs/X.txt    # only these
#
# A row is live when a backend on its "# diverges:" line has a "# seen-on:" fact at LibTorch 2.15.
# Exit 1 when some live row's script agrees or fails to run (a row the emitter has no path for is
# listed as "no Python repro" and does not fail the run); see corpus/repros-2.15/README.md.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
burnmark="${BURNMARK:-$repo/build/test/src/cli/burnmark}"
python="${TORCH_PYTHON:-$repo/.deps/torch-2.15.0/bin/python}"
out="$repo/corpus/repros-2.15"
logs="$(mktemp -d)" # each run's output, kept for the rows that do not reproduce
mkdir -p "$out"

header() { sed -n "s/^# $1: //p" "$2" | head -1; }
clip() { if [ ${#1} -le 90 ]; then echo "$1"; else echo "${1:0:89}…"; fi; }

# The repro --path for a diverging backend; empty when the emitter has none.
path_of() {
  case "$1" in
  libtorch | libtorch-threads | libtorch-fwd-over-rev) echo eager ;; # fwd-over-rev: repro picks H·v by dual
  libtorch-scalar) echo scalar ;;
  libtorch-strided) echo strided ;;
  libtorch-inplace) echo inplace ;;
  libtorch-jit) echo jit ;;
  libtorch-nnc | child:libtorch-nnc) echo nnc ;;
  torch-compile) echo compile ;; # eager, compiled and a float64 baseline (docs/triage.md)
  esac
}

[ $# -gt 0 ] || set -- "$repo"/corpus/bugs/*.txt
failed=0
for file in "$@"; do
  id="$(basename "$file" .txt)"
  seen="$(header seen-on "$file")"
  # The first diverging LibTorch backend (or torch.compile) that was seen diverging in 2.15.
  backend=""
  IFS=, read -ra diverging <<<"$(header diverges "$file")"
  for b in "${diverging[@]}"; do
    b="${b// /}"
    case "$b" in *libtorch* | torch-compile) ;; *) continue ;; esac
    if [[ ";$seen" == *"; $b @ LibTorch 2.15 "* || ";$seen" == *";$b @ LibTorch 2.15 "* ||
      ";$seen" == *"; $b @ torch 2.15."* || ";$seen" == *";$b @ torch 2.15."* ]]; then
      backend="$b" && break
    fi
  done
  [ -n "$backend" ] || continue # not live in 2.15 (or not a LibTorch row)
  path="$(path_of "$backend")"
  if [ -z "$path" ]; then
    printf '%-58s   -  no Python repro (%s: the emitter has no path for it)\n' "$id" "$backend"
    continue
  fi
  # The row's run conditions, as test_bugs and record-platforms.py set them. `burnmark run`
  # reports a divergence a registered convention explains (with its CONVENTION line); `repro`
  # minimises through the triage Runner, which drops those unless asked to keep them.
  env=(BACKENDS="$(header backends "$file")" BURNMARK_KNOWN_BUGS= BURNMARK_CONVENTION_FINDINGS=1)
  case "$(header mode "$file")" in
  tangents) env+=(BURNMARK_TANGENTS=1) ;;
  hvp) env+=(BURNMARK_HVP=1) ;;
  esac
  script="$out/$id.py"
  if ! env "${env[@]}" nice "$burnmark" repro --lang python --path "$path" --no-minimize "$file" \
    >"$script" 2>"$logs/$id.log"; then
    printf '%-58s   -  error (repro: %s)\n' "$id" "$(tail -1 "$logs/$id.log")"
    rm -f "$script"
    failed=1
    continue
  fi
  { nice "$python" "$script" >"$logs/$id.log" 2>&1; } 2>/dev/null # no "Segmentation fault" from bash
  status=$?
  # A LibTorch error (RuntimeError, torch's own errors) or crash where the reference has values
  # is a divergence too (BurnMark's kinds "error" and "crash"); any other exception is the
  # script's own failure.
  last="$(grep -v '^\s*$' "$logs/$id.log" | tail -1)"
  reproduced=1
  # A compile script's summary: "COMPILED FURTHER from float64 than eager: N element(s)".
  if [ $status = 1 ] && grep -q '^DIVERGES:\|^COMPILED FURTHER' "$logs/$id.log"; then
    verdict="reproduces"
  elif [ $status = 1 ] && [[ "$last" =~ ^(RuntimeError|torch\.[A-Za-z_.]*Error): ]]; then
    verdict="reproduces, raises: $(clip "$last")"
  elif [ $status -gt 128 ]; then
    verdict="reproduces, crashes: signal $((status - 128))"
  elif [ $status = 0 ]; then
    verdict="AGREES (not reproduced)" && reproduced=0
  else
    verdict="error: $(clip "$last")" && reproduced=0
  fi
  printf '%-58s %3s  %s (%s)\n' "$id" "$status" "$verdict" "$path"
  [ $reproduced = 1 ] && rm -f "$logs/$id.log" || failed=1
done
[ $failed = 0 ] && rm -rf "$logs" || echo "the runs that did not reproduce: $logs" >&2
exit $failed
