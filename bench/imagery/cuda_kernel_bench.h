#pragma once

// Kernel benchmark of the CUDA backend for bench/imagery/imagery_gpu_bench and gpu-check's
// gpu_bench: cuda_kernel_bench.cu in CUDA builds, else cuda_kernel_bench_stub.cpp (throws).
// Plain structs, no JSON library: gpu-check builds it without Debian packages.

#include <cstdint>
#include <string>
#include <vector>

#include "imagery/change_core.h"
#include "imagery/change_math.h"
#include "imagery/compute_backend.h"

namespace warmpool::imagery::bench {

// One timed step: mean milliseconds per run of `repeats` runs after a warm-up.
struct KernelTiming {
  std::string kernel;
  double bytes = 0;   // bytes read + written per run (the memory traffic it cannot avoid)
  double pixels = 0;  // pixels per run
  double ms = 0;
  double Gbps() const { return ms > 0 ? bytes / (ms * 1e6) : 0; }
  double Gpxps() const { return ms > 0 ? pixels / (ms * 1e6) : 0; }
};

struct CudaKernelReport {
  std::string device;
  double peak_gbps = 0;  // from the memory clock and bus width the driver reports (0 unknown)
  std::vector<KernelTiming> kernels;
};

// A planar host image pair: band b of pixel i at [b * width * height + i].
struct HostPair {
  int width = 0;
  int height = 0;
  int band_count = 0;
  const uint16_t* before = nullptr;
  const uint16_t* after = nullptr;
};

// Uploads `pair` to device `ordinal` once and times, on the resident pixels:
//   copy_d2d             cudaMemcpy device to device of one image (the bandwidth reference),
//   fused                the fused pass with histogram under `fused`,
//   threshold_morphology threshold + opening/closing under `mask`,
//   components_mmu       union-find CCL + minimum mapping unit on that mask,
//   pipeline_resident    fused + histogram to the host + choose_threshold (e.g. Otsu) + mask
//                        stage + scores and mask to pinned host memory (host wall clock: the
//                        whole device half of a task),
//   h2d_pinned, h2d_pageable  one image host to device from pinned / pageable memory.
// Throws ImageryError(kDevice).
CudaKernelReport BenchmarkCudaKernels(int ordinal, const HostPair& pair, const FusedParams& fused,
                                      const MaskParams& mask,
                                      const ThresholdChooser& choose_threshold, int repeats);

}  // namespace warmpool::imagery::bench
