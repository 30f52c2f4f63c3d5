#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang-14, ASan+UBSan) in their own build folder and runs
# each for a bounded time from its seed corpus (fuzz/corpus/<target>) and regression inputs
# (fuzz/regressions/<target>). Fails on the first crash, leak, timeout or out-of-memory; the
# input that did it is left in $BUILD_DIR/artifacts/<target>/.
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]   (default 60 s, every target)
# Env: BUILD_DIR (default build-fuzz), JOBS (default 2), CXX (default clang++-14),
#      FUZZ_MAX_LEN (default 4096 bytes: large enough for real envelopes, small enough to mutate).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
BUILD_DIR=${BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-2}
CXX_BIN=${CXX:-clang++-14}
CC_BIN=${CC:-clang-14}
MAX_LEN=${FUZZ_MAX_LEN:-4096}
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(celery_message celery_result redis_url scaler_metadata warm_windows
  policy_decision)

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# Only the pure libraries the harnesses link: no gRPC, OpenCV, GDAL, tests or benches. Build type
# "Sanitize" adds no flags of its own: asserts stay on, -O1 -g0 from WARMPOOL_FUZZ.
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Sanitize \
  -DCMAKE_CXX_COMPILER="$CXX_BIN" -DCMAKE_C_COMPILER="$CC_BIN" "${launcher[@]}" \
  -DWARMPOOL_FUZZ=ON -DWARMPOOL_ENABLE_CUDA=OFF -DWARMPOOL_BUILD_TESTS=OFF \
  -DWARMPOOL_BUILD_BENCH=OFF -DWARMPOOL_BUILD_SCALER=OFF -DWARMPOOL_BUILD_WORKER=OFF \
  -DWARMPOOL_BUILD_SIM=OFF >/dev/null
build_start=$SECONDS
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]/#/fuzz_}"
echo "fuzz: build took $((SECONDS - build_start)) s"

export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "${TARGETS[@]}"; do
  work="$BUILD_DIR/corpus/$t"  # new inputs land here, not in the committed seeds
  artifacts="$BUILD_DIR/artifacts/$t"
  mkdir -p "$work" "$artifacts" "fuzz/regressions/$t"
  echo "fuzz: $t for ${SECONDS_EACH}s"
  "$BUILD_DIR/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -timeout=10 \
    -max_len="$MAX_LEN" -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$work" "fuzz/corpus/$t" "fuzz/regressions/$t" 2>&1 | grep -vE '^#[0-9]|NEW_FUNC' || {
    echo "fuzz: $t FAILED; the input is in $artifacts/" >&2
    exit 1
  }
done
echo "fuzz: all ${#TARGETS[@]} targets ran ${SECONDS_EACH}s without a finding"
