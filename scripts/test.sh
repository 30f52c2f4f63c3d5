#!/usr/bin/env bash
# Installs dependencies, builds everything (CPU path + every .cu file when nvcc exists) and runs all
# tests with ctest. Usage: scripts/test.sh [ctest args...]   Env: BUILD_DIR (default build), JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-2}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD_DIR" -j "$JOBS"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS" "$@"
