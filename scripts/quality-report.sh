#!/usr/bin/env bash
# Regenerates docs/QUALITY.md: precision/recall/F1/IoU per change-detection method on the seeded
# synthetic suite, against the plain baseline (absdiff, fixed threshold, no normalisation, no
# morphology). CPU only, ~1-2 minutes on 2 cores.
# Usage: scripts/quality-report.sh [build-dir]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" > /dev/null
fi
cmake --build "$BUILD_DIR" --target warmpool-quality -j"${JOBS:-2}" > /dev/null
"$BUILD_DIR/imagery/warmpool-quality" --size 512 --seeds 3 \
  --command "scripts/quality-report.sh" --out docs/QUALITY.md
