#!/bin/bash
# Imports a slice of each real trace (Azure Functions 2019, Alibaba GPU 2023, Azure LLM 2023) with
# `warmpool-sim import` and runs `warmpool-sim run` on it: every task imported is simulated, and
# warmpool finishes them all. Exit 77 (ctest: Skipped) when the trace data is absent.
# Usage: trace_import_real.sh WARMPOOL_SIM TRACE_DIR WORK_DIR
set -euo pipefail
sim=$1 data=$2 work=$3
azf=$data/azure_functions_2019_fullday
ali=$data/alibaba_gpu_v2023/openb_pod_list_default.csv
llm=$data/azure_llm_2023/AzureLLMInferenceTrace_code.csv
for f in "$azf/400_inv.csv" "$azf/400_run.csv" "$ali" "$llm"; do
  if [[ ! -r $f ]]; then
    echo "SKIPPED: trace file $f is absent"
    exit 77
  fi
done
mkdir -p "$work"

check() {  # check NAME CSV: simulate and compare task counts
  local name=$1 csv=$2
  local rows
  rows=$(grep -c -v -e '^#' -e '^arrival_s' "$csv")
  [[ $rows -gt 0 ]] || { echo "FAIL: $name imported no tasks"; exit 1; }
  "$sim" run --workload "$csv" --seed 1 --policies warmpool,keda-redis-cd300,oracle --format json \
    >"$work/$name.json"
  /usr/bin/python3 - "$work/$name.json" "$rows" "$name" <<'PY'
import json, sys
report, rows, name = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
by = {p["policy"]: p for p in report["policies"]}
assert set(by) == {"warmpool", "keda-redis-cd300", "oracle"}, by.keys()
for p in by.values():
    assert p["tasks"] == rows, (name, p["policy"], p["tasks"], rows)
    assert p["billedGpuHours"] >= p["busyGpuHours"] > 0, (name, p)
assert by["warmpool"]["unfinished"] == 0, (name, by["warmpool"])
print(f"{name}: {rows} tasks, warmpool {by['warmpool']['billedGpuHours']:.1f} GPU-h "
      f"p95 {by['warmpool']['waitP95']:.0f} s")
PY
}

"$sim" import --format azure-functions-2019 --in "$azf/400_inv.csv" --durations "$azf/400_run.csv" \
  --top 2 --hours 2 --out "$work/azf.csv"
check azf "$work/azf.csv"
"$sim" import --format alibaba-gpu-2023 --in "$ali" --start-hour 2880 --hours 6 \
  --out "$work/alibaba.csv"
check alibaba "$work/alibaba.csv"
"$sim" import --format azure-llm-2023 --in "$llm" --hours 0.25 --out "$work/llm.csv"
check llm "$work/llm.csv"

# Bad input: a clear error, exit 2, nothing written.
if "$sim" import --format azure-functions-2019 --in "$azf/400_inv.csv" --top 1 \
  --out "$work/none.csv" 2>"$work/err.txt"; then
  echo "FAIL: import without --durations succeeded"
  exit 1
fi
grep -q -- "--durations" "$work/err.txt"
[[ ! -e $work/none.csv ]]
echo "PASS"
