#!/usr/bin/env bash
# Sanitizer builds, each in its own folder, running real tests (redis-server, Python Celery, gRPC):
#   asan: ASan+UBSan (-O1, no debug info) over the unit and integration suites (no benches; the
#         GPU parity test is left out: the sanitizer build has no CUDA; so are the simulator's
#         long sweeps, ASAN_SKIP below).
#   tsan: TSan over the scaler's concurrent core (coalescing probe, per-connection readers,
#         deadline timer, bounded state); see run_tsan for why gRPC paths are not included.
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

# The simulator's long sweeps (thousands of simulated hours each) run some 9x slower under ASan,
# minutes apiece: they run in the Release suite, and the simulator's short unit tests cover the
# same code under ASan.
ASAN_SKIP='gpu_parity|imagery_real_quality|sim_tune_e2e|sim_policy_check|sim_grid_cli'
ASAN_SKIP+='|The oracle is never beaten|RunTune recommends'

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
    -E "$ASAN_SKIP" "$@"
}

run_tsan() {
  local dir="${PREFIX}tsan"
  configure "$dir" thread
  cmake --build "$dir" -j "$JOBS" --target scaler_unit_tests
  # The scaler's concurrent core without gRPC: the coalescing probe and its per-connection reader
  # threads, the deadline timer, bounded per-object state. Tests that go through Debian's gRPC
  # are left out: gRPC and abseil are not TSan-instrumented, and TSan reports thousands of races
  # between their own threads (epoll poller, absl GraphCycles) that only a TSan build of gRPC
  # could settle.
  export TSAN_OPTIONS="suppressions=$SUPP/tsan.supp:halt_on_error=1:exitcode=66:second_deadlock_stack=1"
  (cd "$dir/tests/unit/scaler" && ./scaler_unit_tests)
}

case "$MODE" in
  asan) run_asan "$@" ;;
  tsan) run_tsan ;;
  all) run_asan "$@" && run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all] [ctest args...]" >&2; exit 2 ;;
esac
