# syntax=docker/dockerfile:1
# warmpool-scaler image. Build from the repository root (the context must be the whole repo):
#   docker build -f docker/scaler.Dockerfile -t warmpool-scaler:0.1.0 .
# docker/scaler.Dockerfile.dockerignore keeps build trees and .git out of the context (BuildKit reads
# <Dockerfile>.dockerignore next to the Dockerfile).
#
# Build and runtime use the same Debian release, so the runtime libraries are exactly the ones the
# -dev packages were built against. Pin both to one point release/digest for reproducible images.
ARG DEBIAN_RELEASE=12

# ---- build: the same toolchain CI uses (scripts/install-deps.sh, CMake) -------------------------
FROM debian:${DEBIAN_RELEASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# Only the script first, so the (slow) package layer is cached until the package list changes.
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Tests, benchmarks, CUDA and the worker/imagery/sim folders are not needed for the scaler.
# Default build type (RelWithDebInfo) = what the tests run; debug info is stripped below.
RUN cmake -S . -B /build -G Ninja \
      -DWARMPOOL_BUILD_TESTS=OFF -DWARMPOOL_BUILD_BENCH=OFF -DWARMPOOL_ENABLE_CUDA=OFF \
      "-DWARMPOOL_SKIP_DIRS=worker;worker/imagery;sim" \
 && cmake --build /build --target warmpool-scaler --parallel \
 && mkdir -p /out \
 && install -m 0755 /build/scaler/warmpool-scaler /out/warmpool-scaler \
 && strip --strip-debug /out/warmpool-scaler \
 && sh docker/runtime-packages.sh /out/warmpool-scaler > /out/runtime-packages.txt \
 && echo "runtime packages:" && cat /out/runtime-packages.txt

# ---- runtime: debian slim + only the shared libraries the binary loads -------------------------
FROM debian:${DEBIAN_RELEASE}-slim AS runtime
COPY --from=build /out/runtime-packages.txt /tmp/runtime-packages.txt
RUN apt-get update \
 && xargs -a /tmp/runtime-packages.txt apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt \
 && groupadd --system --gid 65532 warmpool \
 && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin warmpool
COPY --from=build /out/warmpool-scaler /usr/local/bin/warmpool-scaler
# Numeric user: Kubernetes can verify runAsNonRoot without looking up names.
USER 65532:65532
# 6000: gRPC (KEDA externalscaler.ExternalScaler + grpc.health.v1 + reflection); 9090: /metrics.
EXPOSE 6000 9090
ENV WARMPOOL_LOG_FORMAT=json
# The gRPC server handles SIGTERM itself (graceful stop), so the binary is PID 1 directly.
ENTRYPOINT ["/usr/local/bin/warmpool-scaler"]
