#!/usr/bin/env bash
# Sanitizer builds, each in its own folder, running real tests (redis-server, Python Celery, gRPC):
#   asan: ASan+UBSan (-O1, no debug info) over the unit and integration suites (no benches; the
#         GPU parity test is left out: the sanitizer build has no CUDA).
#   tsan: TSan over the concurrent paths: the scaler (gRPC server threads, coalescing probe,
#         metrics) and the worker (consumer, pool threads, heartbeats).
# Usage: scripts/sanitize.sh [asan|tsan|all] [extra ctest args for asan...]   (default all)
# Env: JOBS (default 2), BUILD_PREFIX (default build-): build folders build-asan, build-tsan.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-all}
shift || true
JOBS=${JOBS:-2}
PREFIX=${BUILD_PREFIX:-build-}
SUPP="$PWD/scripts/sanitizers"

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

configure() {  # configure <dir> <sanitizers>
  # Build type "Sanitize" has no CMake default flags: asserts stay on (no NDEBUG) and only
  # WARMPOOL_SANITIZE's -O1 -g0 apply.
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Sanitize "${launcher[@]}" -DWARMPOOL_SANITIZE="$2" \
    -DWARMPOOL_ENABLE_CUDA=OFF -DWARMPOOL_BUILD_BENCH=OFF >/dev/null
}

run_asan() {
  local dir="${PREFIX}asan"
  configure "$dir" address,undefined
  cmake --build "$dir" -j "$JOBS"
  # Leaks are checked too; the few inside Debian's uninstrumented libraries are suppressed
  # (scripts/sanitizers/lsan.supp says which and why).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0 \
    LSAN_OPTIONS="suppressions=$SUPP/lsan.supp:print_suppressions=0" \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$dir" --output-on-failure -j "$JOBS" -L 'unit|integration' \
    -E 'gpu_parity' "$@"
}

run_tsan() {
  local dir="${PREFIX}tsan"
  configure "$dir" thread
  cmake --build "$dir" -j "$JOBS" --target scaler_unit_tests scaler_integration_tests \
    worker_integration_tests
  # The test binaries run directly (ctest lists Catch2 cases by name, not by binary); the
  # integration tests start the TSan-built warmpool-scaler and warmpool-worker, which inherit
  # TSAN_OPTIONS, so the daemons' own threads are checked too.
  export TSAN_OPTIONS="suppressions=$SUPP/tsan.supp:halt_on_error=1:exitcode=66:second_deadlock_stack=1"
  local status=0
  (cd "$dir/tests/unit/scaler" && ./scaler_unit_tests "[coalesce]") || status=1
  (cd "$dir/tests/integration/scaler" && ./scaler_integration_tests) || status=1
  (cd "$dir/tests/integration/worker" && ./worker_integration_tests) || status=1
  return $status
}

case "$MODE" in
  asan) run_asan "$@" ;;
  tsan) run_tsan ;;
  all) run_asan "$@" && run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all] [ctest args...]" >&2; exit 2 ;;
esac
