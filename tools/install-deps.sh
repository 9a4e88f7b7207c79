#!/usr/bin/env bash
# Installs whatever BurnMark needs that this machine lacks: Debian's packages (LibTorch 1.13.1 among
# them) and LibTorch 2.15.0 from PyPI's torch wheel into .deps/ (the `-2.15` presets build against it).
# Idempotent and quiet when everything is present; run as root (or with sudo available).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  clang libclang-rt-14-dev cmake ninja-build   # compiler, libFuzzer runtime, build
  libtorch-dev                                  # the library under test (LibTorch 1.13.1)
  libfmt-dev libgtest-dev                       # formatting, tests
  libcli11-dev                                  # the `burnmark` command line
  nlohmann-json3-dev                            # the campaign ledger's JSON
  libdnnl-dev libeigen3-dev                     # the oneDNN and Eigen plugins
  python3-torch                                 # runs the emitted Python repros
  python3-venv                                  # the venv that holds torch 2.15 from PyPI
  libjs-dygraphs                                # `burnmark report`'s plots (copied beside the page)
  chromium                                      # test_report opens the page in headless Chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "burnmark: installing ${missing[*]}" >&2
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}"
fi

# LibTorch 2.15.0: PyPI's torch wheel is LibTorch too (headers, libtorch_cpu.so, libc10.so under
# site-packages/torch). It is a CUDA build that declares ~3 GB of CUDA packages; --no-deps and
# only what is measured to be needed (README, "LibTorch 2.15"):
# - the C++ build: the wheel and the two CUDA libraries libtorch_cpu.so itself links (cudart, cupti);
# - `import torch` (BURNMARK_TORCH_PYTHON=1, for Python repros): the pure-Python dependencies and
#   the CUDA libraries libtorch_python.so pulls in through libtorch_cuda.so (+1.9 GB download).
# Debian's python3 because the wheel is cp311. The stamp lists what is installed: a changed pin
# or BURNMARK_TORCH_PYTHON reinstalls, an unchanged one is a quiet no-op.
torch_version=2.15.0
torch_pins=("torch==$torch_version" nvidia-cuda-runtime==13.2.86 nvidia-cuda-cupti==13.2.86)
if [ "${BURNMARK_TORCH_PYTHON:-0}" = 1 ]; then
  torch_pins+=(
    filelock==4.3.2 typing-extensions==4.16.0 sympy==1.14.0 mpmath==1.3.0 networkx==3.6.1
    jinja2==3.1.6 markupsafe==3.0.4 fsspec==2026.9.0
    nvidia-cublas==13.4.1.3 nvidia-cuda-nvrtc==13.2.86 nvidia-cufft==12.2.0.57
    nvidia-nvjitlink==13.5.37 nvidia-cufile==1.17.1.22 nvidia-cusparse==12.7.10.12
    nvidia-cudnn-cu13==9.26.0.51 nvidia-cusparselt-cu13==0.8.1 nvidia-nccl-cu13==2.30.7
    nvidia-nvshmem-cu13==3.7.2
  )
fi
torch_venv="$repo/.deps/torch-$torch_version"
stamp="$torch_venv/.burnmark-installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "${torch_pins[*]}" ]; then
  echo "burnmark: installing ${torch_pins[*]} into $torch_venv" >&2
  [ -x "$torch_venv/bin/pip" ] || /usr/bin/python3 -m venv "$torch_venv"
  # One wheel at a time and no pip cache: the peak on disk is what is installed plus the one wheel
  # being unpacked, not every wheel three times (download, pip's cache, the install). A CI machine
  # ran out of space installing all of them at once.
  need_mb=2600
  [ "${BURNMARK_TORCH_PYTHON:-0}" = 1 ] && need_mb=5200
  have_mb=$(du -sm "$torch_venv" | cut -f1)   # a re-install keeps what is already there
  free_mb=$(df -Pm "$repo" | awk 'NR == 2 { print $4 }')
  if [ "$free_mb" -lt $((need_mb - have_mb)) ]; then
    echo "burnmark: installing torch $torch_version needs about $((need_mb - have_mb)) MB more" \
      "in $repo/.deps (measured peak: 4.9 GB with BURNMARK_TORCH_PYTHON=1); $free_mb MB are free" >&2
    exit 1
  fi
  # No uninstall of pins dropped from the list: a leftover CUDA library is harmless.
  for pin in "${torch_pins[@]}"; do
    "$torch_venv/bin/pip" install -q --no-deps --no-cache-dir "$pin"
  done
  echo "${torch_pins[*]}" >"$stamp"
fi

# JAX, the second independent framework (docs/backends.md, "jax"): CPU jaxlib from PyPI in its own
# venv, every dependency pinned and installed --no-deps like the torch venv. 0.10.2 is the newest
# jax with cp311 wheels (Debian's python3 is 3.11); numpy, scipy and ml-dtypes are the newest that
# resolve with it for cp311. Same stamp: a changed pin reinstalls, an unchanged one is a quiet no-op.
jax_version=0.10.2
jax_pins=("jax==$jax_version" "jaxlib==$jax_version" ml-dtypes==0.7.0 numpy==2.4.6
  opt-einsum==3.4.0 scipy==1.17.1)
jax_venv="$repo/.deps/jax-$jax_version"
stamp="$jax_venv/.burnmark-installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "${jax_pins[*]}" ]; then
  echo "burnmark: installing ${jax_pins[*]} into $jax_venv" >&2
  [ -x "$jax_venv/bin/pip" ] || /usr/bin/python3 -m venv "$jax_venv"
  "$jax_venv/bin/pip" install -q --no-deps --no-cache-dir "${jax_pins[@]}"
  echo "${jax_pins[*]}" >"$stamp"
fi
