#!/usr/bin/env bash
# Installs dependencies, builds everything (CPU path + every .cu file when nvcc exists) and runs all
# tests with ctest. Usage: scripts/test.sh [ctest args...]   Env: BUILD_DIR (default build), JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
# Release: what ships (and GCC 12's -O3 warnings, which only fire there). ccache when installed.
launcher=()
if command -v ccache > /dev/null 2>&1; then
  for lang in C CXX CUDA; do launcher+=("-DCMAKE_${lang}_COMPILER_LAUNCHER=ccache"); done
fi
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}"
cmake --build "$BUILD_DIR" -j "$JOBS"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS" "$@"
