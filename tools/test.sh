#!/usr/bin/env bash
# The test command: installs what is missing, then builds and runs the whole suite twice: against
# LibTorch 2.15.0 from PyPI (the `test` preset, the default target) and against Debian's LibTorch
# 1.13.1 (`test-1.13`, the baseline whose pinned bugs the suite keeps checking).
set -euo pipefail
cd "$(dirname "$0")/.."
# BURNMARK_TORCH_PYTHON=1: `import torch` in the torch 2.15.0 venv, which the Python backends'
# tests need (test_python_backend: torch-eager-py against libtorch, bit for bit). It costs ~1.9 GB
# of CUDA libraries downloaded once (torch's import loads them even on CPU); later runs are a
# no-op.
BURNMARK_TORCH_PYTHON=1 tools/install-deps.sh
# torch.compile's compiled kernels go under build/, not the machine-wide /tmp/torchinductor_<user>,
# which grows by gigabytes over repeated runs and is shared with every torch process.
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-$PWD/build/inductor-cache}"
for preset in test test-1.13; do
  echo "burnmark: preset $preset" >&2
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j "$(nproc)"
  ctest --preset "$preset" -j "$(nproc)"
done
