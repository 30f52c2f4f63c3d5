#!/usr/bin/env bash
# Installs every Debian 12 package warmpool needs to build, test, benchmark and demo.
# Idempotent: packages already present are skipped by apt. CUDA comes from the machine (nvcc on PATH).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ninja-build git clang-format ccache
  clang-14 libclang-rt-14-dev
  libgrpc++-dev libabsl-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libhiredis-dev libspdlog-dev libfmt-dev catch2
  nlohmann-json3-dev libsimdjson-dev libcli11-dev prometheus-cpp-dev libssl-dev
  libcurl4-openssl-dev
  libopencv-dev libgdal-dev gdal-bin
  openssl
  redis-server redis-tools
  python3-celery python3-redis python3-grpcio python3-protobuf python3-numpy python3-gdal
  python3-matplotlib python3-yaml
  curl ca-certificates openssl
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# redis-server from Debian starts a system instance on 6379 on some machines; tests use their own
# instances on free ports, so it is harmless either way.
if command -v nvcc >/dev/null 2>&1; then
  echo "install-deps: nvcc found: $(nvcc --version | tail -1)"
else
  echo "install-deps: nvcc not found; CUDA targets will be skipped (CPU path only)"
fi
