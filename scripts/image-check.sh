#!/usr/bin/env bash
# Builds docker/scaler.Dockerfile and docker/worker.Dockerfile without a Docker engine and runs
# what they built (minutes; by hand and in release automation, not in CI - see docs/deploy.md):
#   1. base images debian:12 / debian:12-slim made with debootstrap from the Debian mirror apt
#      already uses (cached under $WARMPOOL_IMAGE_CACHE, rebuilt when missing),
#   2. podman build of both images (the worker with CUDA when NVIDIA's apt repository is
#      reachable, else CPU-only; WARMPOOL_IMAGE_CUDA=ON|OFF overrides the detection),
#   3. each image's entrypoint run from the image's filesystem (podman image mount + chroot) as
#      the image's USER with the image's ENV, the root read-only and /tmp a scratch directory as
#      the manifests run it, against a local redis-server on a free loopback port: the scaler answers gRPC health and GetMetrics, the worker answers a Celery
#      warmpool.ping and a change detection on a synthetic GeoTIFF pair, both exit 0 on SIGTERM,
#   4. image sizes and the packages each runtime image adds to debian:12-slim.
# `podman run` is not used: it needs a container runtime with cgroups and setrlimit, which build
# sandboxes often lack; chroot into the image's filesystem needs neither. Needs root, podman,
# debootstrap, redis-server and Python 3 with celery, grpcio, protobuf, numpy and GDAL
# (scripts/install-deps.sh + `apt-get install podman debootstrap python3-gdal`).
# Usage: [nice -n 19] bash scripts/image-check.sh [scaler] [worker]   (default both)
# Env: WARMPOOL_IMAGE_CACHE (base image cache), WARMPOOL_REBUILD_BASE=1, WARMPOOL_DEBIAN_MIRROR,
#      WARMPOOL_IMAGE_CUDA=ON|OFF.   Exit 0 = every check passed.
set -euo pipefail
SELECTED=("$@")
((${#SELECTED[@]})) || SELECTED=(scaler worker)
for name in "${SELECTED[@]}"; do
  [[ $name == scaler || $name == worker ]] || { echo "usage: $0 [scaler] [worker]" >&2; exit 2; }
done
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=/usr/bin/python3
RELEASE=bookworm
DEBIAN_VERSION=12
BASE_IMAGE=localhost/warmpool-debian:$DEBIAN_VERSION
SLIM_IMAGE=localhost/warmpool-debian:$DEBIAN_VERSION-slim
SCALER_TAG=localhost/warmpool-scaler:check
WORKER_TAG=localhost/warmpool-worker:check
RUNTIME_UID=65532
if [[ -z ${WARMPOOL_IMAGE_CACHE:-} ]]; then
  WARMPOOL_IMAGE_CACHE=/var/cache/warmpool-images
  mkdir -p "$WARMPOOL_IMAGE_CACHE" 2>/dev/null || WARMPOOL_IMAGE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/warmpool-images
fi
CACHE=$WARMPOOL_IMAGE_CACHE

fail() { echo "image-check: FAIL: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }
now() { date +%s; }
START=$(now)
TIMINGS=()
timed() { TIMINGS+=("$(printf '%-34s %5d s' "$1" "$2")"); }

[[ $(id -u) -eq 0 ]] || fail "needs root (debootstrap, podman storage, chroot, mounts)"
for tool in podman debootstrap redis-server redis-cli chroot unshare protoc curl; do
  command -v "$tool" >/dev/null || fail "$tool not found (apt-get install podman debootstrap; scripts/install-deps.sh)"
done
$PY -c 'import celery, grpc, google.protobuf, numpy; from osgeo import gdal' 2>/dev/null ||
  fail "python3 needs celery, grpcio, protobuf, numpy (scripts/install-deps.sh) and GDAL (apt-get install python3-gdal)"

WORK=$(mktemp -d /tmp/warmpool-image-check-XXXXXX)
PIDS=()
MOUNTED=()
cleanup() {
  local rc=$?
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for image in "${MOUNTED[@]}"; do podman image unmount "$image" >/dev/null 2>&1 || true; done
  if ((rc == 0)); then rm -rf "$WORK"; else echo "image-check: logs kept in $WORK" >&2; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # so that the EXIT trap runs on a signal too

# ---- 1. base images --------------------------------------------------------------------------
# "URI SUITE" for every deb source apt is configured with (one-line .list and deb822 .sources).
apt_source_pairs() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f $f ]] && awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                                     print $i, $(i + 1) }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] && awk 'function flush() { if (deb) for (u in uris) for (s in suites) print uris[u], suites[s]
                                          deb = 0; delete uris; delete suites }
      /^[ \t]*$/ { flush(); next }
      tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
      tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris[i] = $i }
      tolower($1) == "suites:" { for (i = 2; i <= NF; i++) suites[i] = $i }
      END { flush() }' "$f"
  done
}
mirror_for() { apt_source_pairs | awk -v s="$1" '$2 == s { print $1; exit }'; }

# debian:12-slim is debian:12 without docs, man pages and locales (debuerreotype --slimify).
SLIM_EXCLUDES=(usr/share/doc/* usr/share/man/* usr/share/info/* usr/share/locale/*
  usr/share/groff/* usr/share/linda/* usr/share/lintian/*)
write_slim_dpkg_config() {
  {
    echo "# like debian:*-slim: keep docs, man pages and translations out of the image"
    for p in "${SLIM_EXCLUDES[@]}"; do echo "path-exclude /$p"; done
    echo "path-include /usr/share/doc/*/copyright"
  } >"$1/etc/dpkg/dpkg.cfg.d/docker-slim"
}

make_base_tars() {
  local mirror security rootfs=$CACHE/rootfs.tmp
  mirror=${WARMPOOL_DEBIAN_MIRROR:-$(mirror_for "$RELEASE")}
  security=$(mirror_for "$RELEASE-security")
  [[ -n $mirror ]] || fail "no apt source for $RELEASE in /etc/apt (set WARMPOOL_DEBIAN_MIRROR)"
  echo "debootstrap --variant=minbase $RELEASE from $mirror (security: ${security:-none})"
  rm -rf "$rootfs"
  debootstrap --variant=minbase "$RELEASE" "$rootfs" "$mirror" >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log"; fail "debootstrap"; }
  # The same sources as the official image: release, updates and security.
  rm -f "$rootfs/etc/apt/sources.list"
  {
    printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\n' "$mirror" "$RELEASE" "$RELEASE"
    printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
    [[ -z $security ]] ||
      printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$security" "$RELEASE"
  } >"$rootfs/etc/apt/sources.list.d/debian.sources"
  chroot "$rootfs" apt-get clean
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  tar -C "$rootfs" --numeric-owner -cf "$CACHE/debian-$DEBIAN_VERSION.tar.tmp" .
  write_slim_dpkg_config "$rootfs"
  tar -C "$rootfs" --numeric-owner --wildcards "${SLIM_EXCLUDES[@]/#/--exclude=./}" \
    -cf "$CACHE/debian-$DEBIAN_VERSION-slim.tar.tmp" .
  # Copyright files stay, as in the official slim image.
  tar -C "$rootfs" --numeric-owner --wildcards -rf "$CACHE/debian-$DEBIAN_VERSION-slim.tar.tmp" \
    --no-recursion $(cd "$rootfs" && find ./usr/share/doc -name copyright)
  mv "$CACHE/debian-$DEBIAN_VERSION.tar.tmp" "$CACHE/debian-$DEBIAN_VERSION.tar"
  mv "$CACHE/debian-$DEBIAN_VERSION-slim.tar.tmp" "$CACHE/debian-$DEBIAN_VERSION-slim.tar"
  rm -rf "$rootfs"
}

step "1. base images ($BASE_IMAGE, $SLIM_IMAGE; cache $CACHE)"
t0=$(now)
mkdir -p "$CACHE"
if [[ ! -f $CACHE/debian-$DEBIAN_VERSION.tar || ! -f $CACHE/debian-$DEBIAN_VERSION-slim.tar ||
  -n ${WARMPOOL_REBUILD_BASE:-} ]]; then
  make_base_tars
  podman rmi -f "$BASE_IMAGE" "$SLIM_IMAGE" >/dev/null 2>&1 || true
fi
for pair in "$BASE_IMAGE:debian-$DEBIAN_VERSION.tar" "$SLIM_IMAGE:debian-$DEBIAN_VERSION-slim.tar"; do
  image=${pair%:*} tarball=${pair##*:}
  if ! podman image exists "$image"; then
    podman import --quiet "$CACHE/$tarball" "$image" >/dev/null || fail "podman import $tarball"
  fi
done
echo "base images ready ($(cd "$CACHE" && du -h --apparent-size ./*.tar | tr '\n\t' '  '))"
timed "base images" $(($(now) - t0))

# ---- 2. builds -------------------------------------------------------------------------------
CUDA_REPO=https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/
case ${WARMPOOL_IMAGE_CUDA:-auto} in
  ON | OFF) WORKER_CUDA=$WARMPOOL_IMAGE_CUDA; why="WARMPOOL_IMAGE_CUDA" ;;
  *) if curl -fsSI --max-time 10 "$CUDA_REPO" >/dev/null 2>&1; then
       WORKER_CUDA=ON; why="NVIDIA's apt repository is reachable"
     else
       WORKER_CUDA=OFF; why="NVIDIA's apt repository ($CUDA_REPO) is not reachable from here"
     fi ;;
esac
VERSION=$(sed -n 's/^project(warmpool VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
build_image() { # name tag [extra build args...]
  local name=$1 tag=$2 t
  shift 2
  t=$(now)
  echo "podman build -f docker/$name.Dockerfile $* (log $WORK/$name-build.log)"
  podman build --isolation chroot --network host --pull=never -f "docker/$name.Dockerfile" \
    --build-arg BUILD_IMAGE="$BASE_IMAGE" --build-arg RUNTIME_IMAGE="$SLIM_IMAGE" \
    --build-arg VERSION="$VERSION" --build-arg REVISION="$REVISION" "$@" -t "$tag" . \
    >"$WORK/$name-build.log" 2>&1 || { tail -40 "$WORK/$name-build.log"; fail "building $name"; }
  timed "build $name" $(($(now) - t))
}
step "2. image builds (worker CUDA $WORKER_CUDA: $why)"
for name in "${SELECTED[@]}"; do
  case $name in
    scaler) build_image scaler "$SCALER_TAG" ;;
    worker) build_image worker "$WORKER_TAG" --build-arg WARMPOOL_ENABLE_CUDA="$WORKER_CUDA" ;;
  esac
done

# ---- 3. run each entrypoint from its image's filesystem --------------------------------------
free_port() { $PY -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
start_redis() { # -> REDIS_PORT
  REDIS_PORT=$(free_port)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" \
    >"$WORK/redis-$REDIS_PORT.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return; sleep 0.1; done
  fail "redis-server did not start"
}
image_config() { podman image inspect --format "{{$2}}" "$1"; }

# The image's filesystem, read-only (the manifests set readOnlyRootFilesystem) -> ROOTFS.
mount_image() {
  ROOTFS=$(podman image mount "$1") || fail "podman image mount $1"
  MOUNTED+=("$1")
}

# Starts the image's entrypoint + args inside ROOTFS as the image's USER with only the image's ENV,
# in a private mount namespace (its /proc, /dev, /tmp and /srv binds vanish with it) -> APP_PID.
# /tmp is an empty scratch directory (the manifests' emptyDir), /srv the data directory.
# unshare, sh and chroot exec in turn, so APP_PID is the entrypoint itself (PID 1's role).
start_entrypoint() { # image log data_dir args...
  local image=$1 log=$2 data=$3 user entrypoint scratch
  shift 3
  user=$(image_config "$image" .Config.User)
  [[ $user == "$RUNTIME_UID:$RUNTIME_UID" ]] || fail "$image: USER is '$user', want $RUNTIME_UID:$RUNTIME_UID"
  entrypoint=$(image_config "$image" '.Config.Entrypoint' | tr -d '[]')
  [[ -x $ROOTFS$entrypoint ]] || fail "$image: ENTRYPOINT $entrypoint is not an executable in the image"
  local -a env
  mapfile -t env < <(podman image inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$image" | sed '/^$/d')
  scratch=$(mktemp -d "$WORK/tmp-XXXXXX")
  chmod 1777 "$scratch"
  # shellcheck disable=SC2016 # expanded by the inner sh
  unshare --mount --propagation private sh -c '
    root=$1 data=$2 scratch=$3 user=$4; shift 4
    mount --bind /dev "$root/dev" && mount -t proc proc "$root/proc" &&
      mount --bind "$scratch" "$root/tmp" && mount --bind "$data" "$root/srv" &&
    exec chroot --userspec="$user" --groups="${user#*:}" "$root" /usr/bin/env -i "$@"' \
    sh "$ROOTFS" "$data" "$scratch" "$user" "${env[@]}" "$entrypoint" "$@" >"$log" 2>&1 &
  APP_PID=$!
  PIDS+=("$APP_PID")
}

# The process must run as the image's UID (read from the kernel, not from the image's claims).
check_uid() { # pid what
  local uid
  uid=$(awk '/^Uid:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || fail "$2 is not running"
  [[ $uid == "$RUNTIME_UID" ]] || fail "$2 runs as UID $uid, want $RUNTIME_UID"
}

# SIGTERM, then the exit status must be 0 within 30 s.
stop_expect_zero() { # pid what log
  local rc=0
  kill -TERM "$1"
  for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && { kill -KILL "$1"; tail -20 "$3"; fail "$2 still running 30 s after SIGTERM"; }
  wait "$1" || rc=$?
  ((rc == 0)) || { tail -20 "$3"; fail "$2 exited $rc after SIGTERM, want 0"; }
  echo "$2: exit 0 after SIGTERM"
}

# Packages the runtime image holds beyond debian:12-slim, with versions (dpkg-query on the mount).
packages_added() { # rootfs -> lines
  local base
  base=$(dpkg-query --admindir="$SLIM_ROOTFS/var/lib/dpkg" -W -f '${Package}\n' | sort)
  dpkg-query --admindir="$1/var/lib/dpkg" -W -f '${Package} ${Version}\n' | sort |
    awk 'NR == FNR { base[$1] = 1; next } !($1 in base)' <(echo "$base") -
}

mount_image "$SLIM_IMAGE"
SLIM_ROOTFS=$ROOTFS
REPORT=()
image_report() { # image rootfs
  local size added
  size=$(image_config "$1" .Size)
  added=$(packages_added "$2")
  REPORT+=("$(printf '%s: %d MB, user %s, entrypoint %s, %d packages beyond %s:' "$1" \
    $((size / 1000000)) "$(image_config "$1" .Config.User)" "$(image_config "$1" .Config.Entrypoint)" \
    "$(echo "$added" | grep -c .)" "$SLIM_IMAGE")")
  REPORT+=("$(echo "$added" | awk '{ printf "  %s", $0 } NR % 4 == 0 { printf "\n" }')")
}

check_scaler() {
  step "3a. scaler: gRPC health + GetMetrics from the image's filesystem"
  t0=$(now)
  mount_image "$SCALER_TAG"
  SCALER_ROOTFS=$ROOTFS
  start_redis
  GRPC_PORT=$(free_port) METRICS_PORT=$(free_port)
  mkdir -p "$WORK/scaler-srv"
  start_entrypoint "$SCALER_TAG" "$WORK/scaler.log" "$WORK/scaler-srv" --listen "127.0.0.1:$GRPC_PORT" \
    --metrics-listen "127.0.0.1:$METRICS_PORT" --redis "default=redis://127.0.0.1:$REDIS_PORT/0"
  SCALER_PID=$APP_PID
  # Three pending Celery tasks on queue gpu: GetMetrics must ask for at least one replica.
  $PY scripts/demo_client.py --broker "redis://127.0.0.1:$REDIS_PORT/0" --task warmpool.sleep \
    --args '[1]' --queue gpu --count 3 >/dev/null
  protoc -I proto --python_out="$WORK" proto/externalscaler.proto
  $PY - "127.0.0.1:$GRPC_PORT" "$WORK" <<'EOF' || { tail -20 "$WORK/scaler.log"; fail "scaler gRPC checks"; }
import json, sys, time
import grpc
sys.path.insert(0, sys.argv[2])
import externalscaler_pb2 as pb

channel = grpc.insecure_channel(sys.argv[1])
# grpc.health.v1 without generated code: HealthCheckRequest{service=1}, HealthCheckResponse{status=1}.
health = channel.unary_unary("/grpc.health.v1.Health/Check")
for service in ("", "readiness"):
    request = bytes([0x0A, len(service)]) + service.encode() if service else b""
    deadline = time.time() + 20
    while True:
        try:
            reply = health(request, timeout=2)
            break
        except grpc.RpcError as e:
            if time.time() > deadline:
                sys.exit(f"health({service!r}): {e.code()} {e.details()}")
            time.sleep(0.2)
    if reply != b"\x08\x01":
        sys.exit(f"health({service!r}) answered {reply!r}, want SERVING (08 01)")
    print(f"health({service!r}): SERVING")
# As KEDA does: GetMetricSpec names the metric, GetMetrics asks for its value.
get_spec = channel.unary_unary("/externalscaler.ExternalScaler/GetMetricSpec",
                               request_serializer=pb.ScaledObjectRef.SerializeToString,
                               response_deserializer=pb.GetMetricSpecResponse.FromString)
get_metrics = channel.unary_unary("/externalscaler.ExternalScaler/GetMetrics",
                                  request_serializer=pb.GetMetricsRequest.SerializeToString,
                                  response_deserializer=pb.GetMetricsResponse.FromString)
ref = pb.ScaledObjectRef(name="image-check", namespace="warmpool", scalerMetadata={"queues": "gpu"})
metric = get_spec(ref, timeout=5).metricSpecs[0].metricName
reply = get_metrics(pb.GetMetricsRequest(scaledObjectRef=ref, metricName=metric), timeout=5)
values = [(m.metricName, m.metricValue) for m in reply.metricValues]
print("GetMetrics(queues=gpu, 3 pending):", json.dumps(values))
if not values or values[0][1] < 1:
    sys.exit("GetMetrics asked for no replica with 3 tasks pending")
EOF
  check_uid "$SCALER_PID" warmpool-scaler
  stop_expect_zero "$SCALER_PID" warmpool-scaler "$WORK/scaler.log"
  image_report "$SCALER_TAG" "$SCALER_ROOTFS"
  timed "run scaler" $(($(now) - t0))
}

check_worker() {
  step "3b. worker: Celery warmpool.ping + imagery.change_detection from the image's filesystem"
  t0=$(now)
  mount_image "$WORKER_TAG"
  WORKER_ROOTFS=$ROOTFS
  start_redis
  BROKER=redis://127.0.0.1:$REDIS_PORT/0
  DATA=$WORK/data
  mkdir -p "$DATA/pair"
  # A 256x256 4-band UTM pair: noise everywhere, one 48x48 square brightened in `after`.
  $PY - "$DATA/pair" <<'EOF'
import sys
import numpy as np
from osgeo import gdal, osr

rng = np.random.default_rng(23)
before = rng.normal(1000, 20, (4, 256, 256))
after = before + rng.normal(0, 20, before.shape)
after[:, 100:148, 60:108] += 600
srs = osr.SpatialReference()
srs.ImportFromEPSG(32633)
for name, bands in (("before", before), ("after", after)):
    ds = gdal.GetDriverByName("GTiff").Create(f"{sys.argv[1]}/{name}.tif", 256, 256, 4, gdal.GDT_UInt16)
    ds.SetGeoTransform((500000, 10, 0, 4500000, 0, -10))
    ds.SetProjection(srs.ExportToWkt())
    for i, band in enumerate(bands):
        ds.GetRasterBand(i + 1).WriteArray(np.clip(band, 0, 65535).astype(np.uint16))
    ds = None
EOF
  chown -R "$RUNTIME_UID:$RUNTIME_UID" "$DATA"
  HEALTH_PORT=$(free_port)
  start_entrypoint "$WORKER_TAG" "$WORK/worker.log" "$DATA" --broker "$BROKER" -Q gpu,celery -c 1 \
    --health-listen "127.0.0.1:$HEALTH_PORT" --data-root /srv --device auto
  WORKER_PID=$APP_PID
  ping=$($PY scripts/demo_client.py --broker "$BROKER" --task warmpool.ping --queue celery --wait 60) ||
    { tail -20 "$WORK/worker.log"; fail "warmpool.ping"; }
  echo "$ping"
  check_uid "$WORKER_PID" warmpool-worker
  change=$($PY scripts/demo_client.py --broker "$BROKER" --task imagery.change_detection --queue gpu \
    --kwargs '{"before": "/srv/pair/before.tif", "after": "/srv/pair/after.tif", "output_dir": "/srv/out"}' \
    --wait 180) || { tail -20 "$WORK/worker.log"; fail "imagery.change_detection"; }
  CHANGE_RESULT=$change $PY - "$DATA" <<'EOF' || { tail -20 "$WORK/worker.log"; fail "change detection result"; }
import json, os, sys
r = json.loads(os.environ["CHANGE_RESULT"])
res = r["result"]
print(json.dumps({k: res.get(k) for k in ("state", "method", "device", "changed_pixels",
                                           "changed_fraction", "region_count") if k in res}))
if r["state"] != "SUCCESS":
    sys.exit(f"state {r['state']}")
# The 48x48 square (2304 px, 3.5 %) changed and nothing much else did.
if not (1500 <= res["changed_pixels"] <= 4000 and res["region_count"] >= 1):
    sys.exit("the changed square was not found")
for kind, path in res["outputs"].items():
    host = sys.argv[1] + path[len("/srv"):]
    if not path.startswith("/srv/out/") or not os.path.getsize(host):
        sys.exit(f"output {kind} {path} missing")
    print(f"output {kind}: {path} ({os.path.getsize(host)} bytes)")
EOF
  stop_expect_zero "$WORKER_PID" warmpool-worker "$WORK/worker.log"
  image_report "$WORKER_TAG" "$WORKER_ROOTFS"
  timed "run worker" $(($(now) - t0))
}

for name in "${SELECTED[@]}"; do "check_$name"; done

step "4. images"
printf '%s\n' "${REPORT[@]}"
step "timings"
printf '%s\n' "${TIMINGS[@]}"
printf '%-34s %5d s\n' total $(($(now) - START))
echo "image-check: PASS (worker CUDA $WORKER_CUDA: $why)"
