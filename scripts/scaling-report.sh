#!/usr/bin/env bash
# Regenerates docs/SCALING.md and docs/img/{scaling,pareto}-*.png: builds warmpool-sim, then
# scripts/scaling_report.py runs every workload of its WORKLOADS (W1..W5, the generated families,
# and the real traces when WARMPOOL_TRACE_DATA or ../shared/data/trace holds them) over the seeds,
# with warmpool, every baseline and the KEDA grid, plus the sweeps, the what-ifs and the population
# of real functions (about 40 minutes on 2 cores), and fills
# scripts/templates/SCALING.md.in.
#
# Usage: scripts/scaling-report.sh        Env: BUILD_DIR (default build-report), JOBS (default 2),
#        SEEDS (default "1 2 3 4 5"), OUT_DIR (default a temp dir for the raw JSON),
#        WARMPOOL_SIM (a built warmpool-sim: skips the build).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-report}
JOBS=${JOBS:-2}
SEEDS=${SEEDS:-"1 2 3 4 5"}

if [[ -z "${WARMPOOL_SIM:-}" ]]; then
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWARMPOOL_BUILD_TESTS=OFF \
    -DWARMPOOL_BUILD_BENCH=OFF -DWARMPOOL_ENABLE_CUDA=OFF >/dev/null
  cmake --build "$BUILD_DIR" --target warmpool-sim -j "$JOBS" >/dev/null
  WARMPOOL_SIM="$BUILD_DIR/sim/warmpool-sim"
fi
exec /usr/bin/python3 scripts/scaling_report.py --sim "$WARMPOOL_SIM" --jobs "$JOBS" \
  --seeds "$SEEDS" ${OUT_DIR:+--out-dir "$OUT_DIR"}
