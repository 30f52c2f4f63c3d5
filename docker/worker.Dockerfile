# syntax=docker/dockerfile:1
# warmpool-worker image (GPU). Build from the repository root (the root .dockerignore keeps build
# trees and .git out of the context):
#   docker build -f docker/worker.Dockerfile -t warmpool-worker:0.1.0 .
#   docker build -f docker/worker.Dockerfile --build-arg WARMPOOL_ENABLE_CUDA=OFF -t warmpool-worker:dev .
# (the second: CPU-only image for kind/minikube, no NVIDIA download). Without a Docker engine:
# scripts/image-check.sh builds it with podman and runs it.
#
# CUDA 13 runtime: the kernels link cudart STATICALLY (CUDA::cudart_static in imagery/), so
# the only CUDA library needed at run time is the driver's libcuda.so.1, which the NVIDIA container
# toolkit mounts into the container on a GPU node (triggered by the device plugin, using the
# NVIDIA_* variables below - the same ones nvidia/cuda:13.0.x-runtime sets). We deliberately do NOT
# base the runtime on nvidia/cuda:13.0.x-runtime-ubuntu24.04: there is no Debian 12 flavour of it,
# and Ubuntu's grpc/gdal/opencv sonames (libgdal34, ...) differ from the Debian 12 ones this binary is
# built against (libgdal32, ...), so it would not start. Needs a node driver >= 580 (CUDA 13).
# Pin both bases by digest for reproducible images (--build-arg BUILD_IMAGE=debian:12@sha256:...).
ARG DEBIAN_RELEASE=12
ARG BUILD_IMAGE=debian:${DEBIAN_RELEASE}
ARG RUNTIME_IMAGE=debian:${DEBIAN_RELEASE}-slim

# ---- build --------------------------------------------------------------------------------------
FROM ${BUILD_IMAGE} AS build
ARG WARMPOOL_ENABLE_CUDA=ON
ARG CUDA_VERSION=13-0
ARG CUDA_HOME=/usr/local/cuda-13.0
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
# nvcc + static cudart from NVIDIA's Debian 12 CUDA repository (build stage only; nothing of it is
# copied to the runtime image except what is linked into the binary). CMake stays Debian's 3.25,
# as in CI: the kernels are compiled as CUDA C++17, which it knows for nvcc.
RUN if [ "$WARMPOOL_ENABLE_CUDA" != "OFF" ]; then \
      curl -fsSL -o /tmp/cuda-keyring.deb \
        https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
   && dpkg -i /tmp/cuda-keyring.deb && rm /tmp/cuda-keyring.deb \
   && apt-get update \
   && apt-get install -y --no-install-recommends cuda-nvcc-${CUDA_VERSION} cuda-cudart-dev-${CUDA_VERSION} \
   && rm -rf /var/lib/apt/lists/*; \
    fi
# NVIDIA's packages install under /usr/local/cuda-13.0 (the /usr/local/cuda link comes from an
# alternatives package that cuda-nvcc alone may not pull in), so put both on PATH for CMake.
ENV PATH=${CUDA_HOME}/bin:/usr/local/cuda/bin:${PATH}
WORKDIR /src
COPY . .
# WARMPOOL_ENABLE_CUDA=ON fails the build if nvcc is missing (no silent CPU-only GPU image).
# Default build type (RelWithDebInfo) is what the tests run; debug info is stripped below.
# tests/integration/images checks these flags configure and that the install rule yields the
# ENTRYPOINT path.
RUN cmake -S . -B /build -G Ninja \
      -DWARMPOOL_BUILD_TESTS=OFF -DWARMPOOL_BUILD_BENCH=OFF -DWARMPOOL_ENABLE_CUDA=${WARMPOOL_ENABLE_CUDA} \
      -DWARMPOOL_BUILD_SCALER=OFF -DWARMPOOL_BUILD_SIM=OFF -DCMAKE_INSTALL_PREFIX=/usr/local \
 && cmake --build /build --target warmpool-worker --parallel \
 && DESTDIR=/out cmake --install /build --component worker \
 && strip --strip-debug /out/usr/local/bin/warmpool-worker \
 && sh docker/runtime-packages.sh /out/usr/local/bin/warmpool-worker > /runtime-packages.txt \
 && echo "runtime packages:" && cat /runtime-packages.txt

# ---- runtime ------------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE_URL=unknown
ARG LICENSES=NOASSERTION
ARG RUNTIME_IMAGE
ARG WARMPOOL_ENABLE_CUDA=ON
# OCI annotations a registry shows; io.warmpool.cuda says whether the GPU kernels are in.
LABEL org.opencontainers.image.title="warmpool-worker" \
      org.opencontainers.image.description="C++ Celery worker for change-detection tasks (kombu Redis transport)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="${LICENSES}" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}" \
      io.warmpool.cuda="${WARMPOOL_ENABLE_CUDA}"
COPY --from=build /runtime-packages.txt /tmp/runtime-packages.txt
# ca-certificates: GDAL may read rasters over HTTPS (/vsicurl/ COGs).
RUN apt-get update \
 && xargs -a /tmp/runtime-packages.txt apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --system --gid 65532 warmpool \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin warmpool
COPY --from=build /out/usr/local/bin/warmpool-worker /usr/local/bin/warmpool-worker
# Read by the NVIDIA container runtime: mount the driver's compute libraries (libcuda) and
# nvidia-smi. Which GPUs is decided by the device plugin (nvidia.com/gpu), not by the image.
# NVIDIA_REQUIRE_CUDA makes the runtime refuse to start the container on a driver older than CUDA
# 13 needs (>= 580) with a clear error, instead of a GPU pod silently computing on the CPU.
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility \
    NVIDIA_REQUIRE_CUDA="cuda>=13.0"
USER 65532:65532
# 8080: /healthz /readyz /metrics when started with --health-listen 0.0.0.0:8080.
EXPOSE 8080
# SIGTERM: stop fetching, finish the running task within --grace-seconds or requeue it, exit 0.
# The worker is PID 1 and handles the signal itself.
ENTRYPOINT ["/usr/local/bin/warmpool-worker"]
