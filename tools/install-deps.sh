#!/usr/bin/env bash
# Installs, from Debian's packages, whatever BurnMark needs that this machine lacks.
# Idempotent and quiet when everything is present; run as root (or with sudo available).
set -euo pipefail

packages=(
  clang libclang-rt-14-dev cmake ninja-build   # compiler, libFuzzer runtime, build
  libtorch-dev                                  # the library under test (LibTorch 1.13.1)
  libfmt-dev libgtest-dev                       # formatting, tests
  nlohmann-json3-dev                            # the campaign ledger's JSON
  libdnnl-dev libeigen3-dev                     # the oneDNN and Eigen plugins
  python3-torch                                 # runs the emitted Python repros
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "burnmark: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}"
