#!/usr/bin/env bash
# Regenerates docs/QUALITY.md: precision/recall/F1/IoU per change-detection method on the seeded
# synthetic suite, against the plain baseline (absdiff, fixed threshold, no normalisation, no
# morphology), then the real-data section (scripts/real_quality.py: real pairs with ground truth
# from ../shared/data/cd, or REAL_CD_DATA). CPU only, ~1-2 minutes on 2 cores.
# Usage: scripts/quality-report.sh [build-dir]   (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}
OUT=docs/QUALITY.md
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  cmake -S . -B "$BUILD_DIR" > /dev/null
fi
cmake --build "$BUILD_DIR" --target warmpool-quality warmpool-change -j"${JOBS:-2}" > /dev/null
previous=$(mktemp)
trap 'rm -f "$previous"' EXIT
[[ -f $OUT ]] && cp "$OUT" "$previous"
"$BUILD_DIR/imagery/warmpool-quality" --size 512 --seeds 3 \
  --command "scripts/quality-report.sh" --out "$OUT"
real_args=(--build "$BUILD_DIR" --out "$OUT")
[[ -n ${REAL_CD_DATA:-} ]] && real_args+=(--data "$REAL_CD_DATA")
rc=0
/usr/bin/python3 scripts/real_quality.py "${real_args[@]}" || rc=$?
if [[ $rc -eq 77 ]]; then
  # No real data here: keep the section the last run with data wrote.
  echo "quality-report: real-data section kept from the previous $OUT" >&2
  if grep -q '<!-- real-data:begin -->' "$previous"; then
    { echo; sed -n '/<!-- real-data:begin -->/,/<!-- real-data:end -->/p' "$previous"; } >> "$OUT"
  fi
elif [[ $rc -ne 0 ]]; then
  exit "$rc"
fi
