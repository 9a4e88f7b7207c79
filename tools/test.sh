#!/usr/bin/env bash
# The test command: installs what is missing, builds the `test` preset, runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake --preset test
cmake --build --preset test -j "$(nproc)"
ctest --preset test -j "$(nproc)"
