# syntax=docker/dockerfile:1
# warmpool-scaler image. Build from the repository root (the context must be the whole repo; the
# root .dockerignore keeps build trees and .git out of it):
#   docker build -f docker/scaler.Dockerfile -t warmpool-scaler:0.1.0 .
# Without a Docker engine: scripts/image-check.sh builds it with podman and runs it.
#
# Build and runtime use the same Debian release, so the runtime libraries are exactly the ones the
# -dev packages were built against. For reproducible images pin both bases by digest, e.g.
#   --build-arg BUILD_IMAGE=debian:12@sha256:... --build-arg RUNTIME_IMAGE=debian:12-slim@sha256:...
ARG DEBIAN_RELEASE=12
ARG BUILD_IMAGE=debian:${DEBIAN_RELEASE}
ARG RUNTIME_IMAGE=debian:${DEBIAN_RELEASE}-slim

# ---- build: the same toolchain CI uses (scripts/install-deps.sh, CMake) -------------------------
FROM ${BUILD_IMAGE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# Only the script first, so the (slow) package layer is cached until the package list changes.
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Tests, benchmarks, CUDA, the worker (with imagery) and the simulator are not needed here.
# Default build type (RelWithDebInfo) = what the tests run; debug info is stripped below.
# tests/integration/images checks these flags configure and that the install rule yields the
# ENTRYPOINT path.
RUN cmake -S . -B /build -G Ninja \
      -DWARMPOOL_BUILD_TESTS=OFF -DWARMPOOL_BUILD_BENCH=OFF -DWARMPOOL_ENABLE_CUDA=OFF \
      -DWARMPOOL_BUILD_WORKER=OFF -DWARMPOOL_BUILD_SIM=OFF -DCMAKE_INSTALL_PREFIX=/usr/local \
 && cmake --build /build --target warmpool-scaler --parallel \
 && DESTDIR=/out cmake --install /build --component scaler \
 && strip --strip-debug /out/usr/local/bin/warmpool-scaler \
 && sh docker/runtime-packages.sh /out/usr/local/bin/warmpool-scaler > /runtime-packages.txt \
 && echo "runtime packages:" && cat /runtime-packages.txt

# ---- runtime: debian slim + only the shared libraries the binary loads -------------------------
FROM ${RUNTIME_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE_URL=unknown
ARG LICENSES=NOASSERTION
ARG RUNTIME_IMAGE
# OCI annotations a registry shows (GHCR/ACR link the image to its source and version with them).
LABEL org.opencontainers.image.title="warmpool-scaler" \
      org.opencontainers.image.description="KEDA external scaler over a Celery/kombu backlog in Redis" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="${LICENSES}" \
      org.opencontainers.image.base.name="${RUNTIME_IMAGE}"
COPY --from=build /runtime-packages.txt /tmp/runtime-packages.txt
# ca-certificates: the system CA bundle that verifies rediss:// servers (Azure Cache for Redis).
RUN apt-get update \
 && xargs -a /tmp/runtime-packages.txt apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --system --gid 65532 warmpool \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin warmpool
COPY --from=build /out/usr/local/bin/warmpool-scaler /usr/local/bin/warmpool-scaler
# Numeric user: Kubernetes can verify runAsNonRoot without looking up names.
USER 65532:65532
# 6000: gRPC (KEDA externalscaler.ExternalScaler + grpc.health.v1 + reflection); 9090: /metrics.
EXPOSE 6000 9090
ENV WARMPOOL_LOG_FORMAT=json
# The gRPC server handles SIGTERM itself (graceful stop), so the binary is PID 1 directly.
ENTRYPOINT ["/usr/local/bin/warmpool-scaler"]
