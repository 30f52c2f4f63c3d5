#!/usr/bin/env bash
# warmpool demo on an embedded default: installs and builds everything, starts a local
# redis-server, warmpool-scaler and warmpool-worker on free loopback ports, sends real Celery tasks
# with Python Celery, and prints what KEDA would see before, during and after the work, then runs
# a change-detection job on a synthetic image pair. Everything stops when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${BUILD_DIR:-build}
PY=/usr/bin/python3

bash scripts/install-deps.sh
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target warmpool-scaler warmpool-worker \
  warmpool-keda-probe warmpool-synth

free_port() { $PY -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
WORK=$(mktemp -d /tmp/warmpool-demo-XXXXXX)
REDIS_PORT=$(free_port); GRPC_PORT=$(free_port); METRICS_PORT=$(free_port); HEALTH_PORT=$(free_port)
BROKER=redis://127.0.0.1:$REDIS_PORT/0
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
kedasees() {
  "$BUILD_DIR/scaler/warmpool-keda-probe" --scaler "127.0.0.1:$GRPC_PORT" --name gpu-workers \
    --namespace demo --meta queues=gpu,celery --meta keepAlive=30 --meta coldStartSeconds=120
}

step "Starting redis-server on 127.0.0.1:$REDIS_PORT"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" \
  >"$WORK/redis.log" 2>&1 &
PIDS+=($!)
until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.1; done

step "Starting warmpool-scaler (gRPC 127.0.0.1:$GRPC_PORT, metrics :$METRICS_PORT)"
"$BUILD_DIR/scaler/warmpool-scaler" --listen "127.0.0.1:$GRPC_PORT" \
  --metrics-listen "127.0.0.1:$METRICS_PORT" --redis "default=$BROKER" >"$WORK/scaler.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do kedasees >/dev/null 2>&1 && break; sleep 0.1; done

step "Idle: what KEDA sees for a ScaledObject on queues gpu,celery"
kedasees

step "An app sends 3 GPU tasks with priority=5 and 2 default tasks (Python Celery send_task)"
$PY scripts/demo_client.py --broker "$BROKER" --task warmpool.sleep --args '[1.5]' --queue gpu \
  --priority 5 --count 3
$PY scripts/demo_client.py --broker "$BROKER" --task warmpool.ping --queue celery --count 2
echo "LLEN gpu (all KEDA's built-in redis scaler reads): $(redis-cli -p "$REDIS_PORT" llen gpu)"
echo "LLEN gpu\\x06\\x163 (kombu's priority sub-list):    $(redis-cli -p "$REDIS_PORT" llen $'gpu\x06\x163')"
sleep 0.5
kedasees

step "Starting warmpool-worker on gpu,celery (it logs which device it uses)"
"$BUILD_DIR/worker/warmpool-worker" --broker "$BROKER" -Q gpu,celery -c 1 \
  --health-listen "127.0.0.1:$HEALTH_PORT" --data-root "$WORK" >"$WORK/worker.log" 2>&1 &
PIDS+=($!)
sleep 1
echo "While a task runs it sits in kombu's unacked hash, so the pool is not scaled to zero under it:"
kedasees

step "The app waits on AsyncResult.get() for new tasks"
$PY scripts/demo_client.py --broker "$BROKER" --task warmpool.ping --queue celery --count 2 --wait 30
$PY scripts/demo_client.py --broker "$BROKER" --task warmpool.sleep --args '[0.2]' --queue gpu \
  --wait 30
sleep 4

step "Change detection: a synthetic before/after pair (known ground truth), sent as a Celery task"
"$BUILD_DIR/imagery/warmpool-synth" --out-dir "$WORK/pair" --width 1024 --height 1024 \
  --seed 7 --misregister 1 | tail -n 3
$PY scripts/demo_client.py --broker "$BROKER" --task imagery.change_detection --queue gpu \
  --kwargs "{\"before\": \"$WORK/pair/synth_before.tif\", \"after\": \"$WORK/pair/synth_after.tif\", \"output_dir\": \"$WORK/out\"}" \
  --wait 120 | $PY -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    res = r["result"]
    print(json.dumps({k: res.get(k) for k in ("method", "device", "changed_pixels", "changed_fraction", "region_count", "threshold", "outputs", "timings_s") if k in res}, indent=1))
    print("regions:", len(res.get("regions", [])))
'
echo "Quick-look PNG and GeoTIFF mask are in $WORK/out"

step "Queues drained: KEDA sees the keep-alive decided by the policy (then scale to zero)"
kedasees
echo
echo "Worker log (last lines):"
tail -n 5 "$WORK/worker.log"
echo "Scaler decisions (kubectl logs would show these):"
grep decision "$WORK/scaler.log" | tail -n 4
echo
echo "Demo files: $WORK"
