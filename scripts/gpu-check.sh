#!/usr/bin/env bash
# GPU check for the imagery kernels (issue 4), <= 5 minutes on one GPU:
#   1. nvidia-smi (driver >= 580 for CUDA 13),
#   2. configure + build sm_90 only (the imagery library, GPU parity tests, kernel benchmark),
#   3. the GPU parity tests (CPU and GPU integer outputs must be identical; they fail here,
#      instead of skipping, when no GPU is visible),
#   4. per-kernel GB/s and % of the card's peak, pinned vs pageable H2D GB/s, and the overlapped
#      2-stream end-to-end time from host memory (JSON lines).
# Usage: scripts/gpu-check.sh [build-dir]   (default build-gpu; ARCH=90 overrides the arch)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-gpu}
ARCH=${ARCH:-90}
JOBS=${JOBS:-$(nproc)}
start=$(date +%s)

echo "== nvidia-smi"
nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current \
  --format=csv || { echo "gpu-check: nvidia-smi failed (no driver?)"; exit 1; }

echo "== configure + build (sm_${ARCH})"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DWARMPOOL_ENABLE_CUDA=ON \
  -DWARMPOOL_CUDA_ARCHITECTURES="${ARCH}" -DWARMPOOL_BUILD_TESTS=ON -DWARMPOOL_BUILD_BENCH=ON \
  > "$BUILD_DIR.configure.log" 2>&1 || { tail -30 "$BUILD_DIR.configure.log"; exit 1; }
cmake --build "$BUILD_DIR" -j"$JOBS" \
  --target imagery_gpu_parity_tests imagery_unit_tests imagery_gpu_bench

echo "== GPU parity tests"
export GDAL_NUM_THREADS=${GDAL_NUM_THREADS:-4}
"$BUILD_DIR/tests/integration/imagery/imagery_gpu_parity_tests" --success --reporter compact \
  | tail -n 40 | tee "$BUILD_DIR/gpu-parity.log"
if grep -q "skipped: no CUDA device" "$BUILD_DIR/gpu-parity.log"; then
  echo "gpu-check: the parity tests saw no CUDA device"; exit 1
fi
"$BUILD_DIR/tests/unit/imagery/imagery_unit_tests" --reporter compact | tail -n 3

echo "== kernel benchmark (JSON lines: kernel, bytes, ms, gbps, pct_peak)"
"$BUILD_DIR/bench/imagery/imagery_gpu_bench" --size 4096 --repeats 10 | tee "$BUILD_DIR/gpu-bench.jsonl"

echo "== done in $(( $(date +%s) - start )) s"
