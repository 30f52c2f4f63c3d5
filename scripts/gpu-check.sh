#!/usr/bin/env bash
# GPU check of the change-detection core (issue 22), one command, a few minutes on one GPU:
#   1. probe    nvcc and nvidia-smi (driver >= 580 for CUDA 13),
#   2. build    gpu-check/ (the core alone: no GDAL, gRPC, OpenCV, hiredis, Catch2, spdlog), Release,
#               sm_${ARCH}; CPU only when there is no nvcc or no GPU,
#   3. deps     every header the build read is the repo's, the compiler's, libc's or CUDA's,
#   4. parity   gpu_parity: CPU and GPU scores, histograms, thresholds and masks bit-identical,
#   5. bench    gpu_bench on a SIZE x SIZE 4-band uint16 pair (GPU half only with a GPU),
# then writes report.json and report.md into OUTDIR. Exit 0 when everything that could run here
# passed (the report says which GPU parts were skipped), 1 on a failure.
# Usage: scripts/gpu-check.sh [OUTDIR]   (default $OUT if set, else build-gpu-check/report)
# Env: GPU_CHECK_CUDA=AUTO|ON|OFF (AUTO: CUDA when nvcc and a GPU are both present), ARCH=90,
#      SIZE (default 10980 with a GPU, 1024 without), REPEATS=5, BUILD_DIR=build-gpu-check, JOBS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUTDIR=${1:-${OUT:-build-gpu-check/report}}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
BUILD_DIR=${BUILD_DIR:-build-gpu-check}
ARCH=${ARCH:-90}
REPEATS=${REPEATS:-5}
JOBS=${JOBS:-$(nproc)}
MODE=${GPU_CHECK_CUDA:-AUTO}
start_all=$(date +%s)
phases=()  # "name seconds status"

fail() {
  echo "gpu-check: $*" >&2
  exit 1
}
# phase NAME LIMIT_S CMD...: runs CMD (a program under a time limit, or a function of this
# script) with its output in OUTDIR/NAME.log, records its wall time and exit status.
phase() {
  local name=$1 limit=$2 t0 rc=0
  shift 2
  echo "== $name"
  t0=$(date +%s)
  if declare -F "$1" > /dev/null; then
    "$@" > "$OUTDIR/$name.log" 2>&1 || rc=$?
  else
    timeout "$limit" "$@" > "$OUTDIR/$name.log" 2>&1 || rc=$?
  fi
  phases+=("$name $(($(date +%s) - t0)) $rc")
  [[ $name == build ]] && tail -3 "$OUTDIR/$name.log" || cat "$OUTDIR/$name.log"
  return "$rc"
}

# ---- 1. probe ----------------------------------------------------------------------------------
t0=$(date +%s)
NVCC=$(command -v nvcc || true)
[[ -z $NVCC && -x /usr/local/cuda/bin/nvcc ]] && NVCC=/usr/local/cuda/bin/nvcc
nvcc_version=none
[[ -n $NVCC ]] && nvcc_version=$("$NVCC" --version | grep -o 'release [0-9.]*' | cut -d' ' -f2)
gpu_name=none
if command -v nvidia-smi > /dev/null 2>&1 &&
  smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2> /dev/null) &&
  [[ -n $smi ]]; then
  gpu_name=$(head -1 <<< "$smi")
fi
echo "== probe: nvcc $nvcc_version; GPU: $gpu_name"
case $MODE in
  OFF) cuda=OFF ;;
  ON) [[ -n $NVCC ]] || fail "GPU_CHECK_CUDA=ON but no nvcc"; cuda=ON ;;
  AUTO) [[ -n $NVCC && $gpu_name != none ]] && cuda=ON || cuda=OFF ;;
  *) fail "GPU_CHECK_CUDA must be AUTO, ON or OFF (got $MODE)" ;;
esac
skipped=""
[[ $gpu_name == none ]] && skipped="no GPU visible to nvidia-smi"
[[ $cuda == OFF && -z $skipped ]] && skipped="built without CUDA (GPU_CHECK_CUDA=$MODE, nvcc $nvcc_version)"
[[ -z $NVCC && $MODE != OFF ]] && skipped="no nvcc; ${skipped}"
phases+=("probe $(($(date +%s) - t0)) 0")

# ---- 2. build ----------------------------------------------------------------------------------
launcher=()
if command -v ccache > /dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
[[ -n $NVCC ]] && launcher+=(-DCMAKE_CUDA_COMPILER="$NVCC")
build() {
  timeout 60 cmake -S gpu-check -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DGPU_CHECK_CUDA="$cuda" -DGPU_CHECK_CUDA_ARCHITECTURES="$ARCH" "${launcher[@]}" &&
    timeout 480 cmake --build "$BUILD_DIR" -j "$JOBS"
}
phase build 0 build || {
  tail -30 "$OUTDIR/build.log"
  fail "build failed (log: $OUTDIR/build.log)"
}

# ---- 3. deps: headers from the repo, the compiler, libc or CUDA only ---------------------------
CUDA_ROOT=/usr/local/cuda
[[ -n $NVCC ]] && CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
foreign_headers() {
  find "$BUILD_DIR" -name '*.o.d' -exec cat {} + | tr ' \\' '\n\n' | grep '^/' | sort -u |
    grep -v -E "^($ROOT/|$CUDA_ROOT/|/usr/include/c\+\+/|/usr/lib/gcc/|/usr/include/x86_64-linux-gnu/|/usr/include/aarch64-linux-gnu/|/usr/include/(linux|asm|asm-generic|sys|bits|gnu)/|/usr/include/[^/]+\.h$|/usr/local/cuda[^/]*/|/usr/lib/cuda/|/opt/nvidia/)" || true
}
check_deps() {
  local n
  n=$(find "$BUILD_DIR" -name '*.o.d' | wc -l)
  [[ $n -gt 0 ]] || { echo "no dependency files found"; return 1; }
  local foreign
  foreign=$(foreign_headers)
  if [[ -n $foreign ]]; then
    echo "headers from outside the repo, compiler, libc and CUDA:"
    echo "$foreign"
    return 1
  fi
  echo "$n objects: every header is the repo's, the compiler's, libc's or CUDA's"
}
phase deps 0 check_deps || fail "the core depends on other packages"

# ---- 4. parity ---------------------------------------------------------------------------------
parity_rc=0
phase parity 240 "$BUILD_DIR/gpu_parity" --json "$OUTDIR/parity.json" || parity_rc=$?
parity_gpu=$(grep -o '"gpu": [a-z]*' "$OUTDIR/parity.json" 2> /dev/null | cut -d' ' -f2 || echo false)

# ---- 5. bench ----------------------------------------------------------------------------------
if [[ $cuda == ON && $gpu_name != none ]]; then SIZE=${SIZE:-10980}; else SIZE=${SIZE:-1024}; fi
bench_rc=0
phase bench 300 "$BUILD_DIR/gpu_bench" --size "$SIZE" --repeats "$REPEATS" \
  --json "$OUTDIR/bench.json" --md "$OUTDIR/bench.md" || bench_rc=$?

# ---- report ------------------------------------------------------------------------------------
ok=true
[[ $parity_rc -eq 0 && $bench_rc -eq 0 ]] || ok=false
if [[ $cuda == ON && $gpu_name != none && $parity_gpu != true ]]; then
  ok=false
  skipped="nvidia-smi sees $gpu_name but CUDA found no usable device"
fi
[[ -z $skipped ]] && gpu_parts=run || gpu_parts="skipped: $skipped"
total=$(($(date +%s) - start_all))
phase_json=""
phase_md=""
for p in "${phases[@]}"; do
  read -r name secs rc <<< "$p"
  phase_json+="${phase_json:+, }\"$name\": {\"s\": $secs, \"rc\": $rc}"
  phase_md+="| $name | $secs | $rc |"$'\n'
done
esc() { sed 's/\\/\\\\/g; s/"/\\"/g' <<< "$1"; }
{
  echo "{"
  echo "  \"ok\": $ok,"
  echo "  \"gpu_parts\": \"$(esc "$gpu_parts")\","
  echo "  \"gpu\": \"$(esc "$gpu_name")\", \"nvcc\": \"$nvcc_version\", \"cuda_built\": \"$cuda\","
  echo "  \"arch\": \"sm_$ARCH\", \"size\": $SIZE, \"total_s\": $total,"
  echo "  \"phases\": {$phase_json},"
  echo "  \"parity\": $(cat "$OUTDIR/parity.json" 2> /dev/null || echo null),"
  echo "  \"bench\": $(cat "$OUTDIR/bench.json" 2> /dev/null || echo null)"
  echo "}"
} > "$OUTDIR/report.json"
{
  echo "# GPU check of the change-detection core"
  echo
  echo "- result: $([[ $ok == true ]] && echo passed || echo FAILED); GPU parts: $gpu_parts"
  echo "- GPU: $gpu_name; nvcc $nvcc_version; CUDA built: $cuda (sm_$ARCH); $(nproc) CPUs"
  echo "- parity: $(tail -1 "$OUTDIR/parity.log" 2> /dev/null)"
  echo "- total: $total s"
  echo
  echo "| phase | s | exit |"
  echo "|---|---|---|"
  printf '%s' "$phase_md"
  echo
  echo "Benchmark ($SIZE x $SIZE, 4 bands uint16, CVA + PIF gain/offset, Otsu, 3x3 opening, MMU 16 px):"
  echo
  cat "$OUTDIR/bench.md" 2> /dev/null || echo "(no benchmark output)"
} > "$OUTDIR/report.md"
echo "== report: $OUTDIR/report.json, $OUTDIR/report.md ($total s; GPU parts: $gpu_parts)"
[[ $ok == true ]] || fail "parity or benchmark failed (see $OUTDIR)"
