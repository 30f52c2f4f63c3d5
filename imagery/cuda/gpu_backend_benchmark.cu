// Kernel timings of the CUDA backend on a device-resident pair (gpu_benchmark.h). Device steps
// are timed with CUDA events; the resident pipeline, which includes host work (the threshold), with
// the host clock.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "imagery/cuda/gpu_backend.h"
#include "imagery/cuda/gpu_backend_kernels.h"
#include "imagery/cuda/gpu_benchmark.h"

namespace warmpool::imagery {
namespace {

using cuda::CheckCuda;

// Mean ms per run of `repeats` runs of `launch` after one warm-up, timed by events on `stream`.
double EventMs(cudaStream_t stream, int repeats, const std::function<void()>& launch) {
  launch();
  CheckCuda(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t start, stop;
  CheckCuda(cudaEventCreate(&start), "cudaEventCreate");
  CheckCuda(cudaEventCreate(&stop), "cudaEventCreate");
  CheckCuda(cudaEventRecord(start, stream), "cudaEventRecord");
  for (int r = 0; r < repeats; ++r) {
    launch();
  }
  CheckCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
  CheckCuda(cudaEventSynchronize(stop), "benchmark");
  float ms = 0;
  CheckCuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return static_cast<double>(ms) / repeats;
}

// Mean host wall-clock ms per run (one warm-up first); `run` synchronises itself.
double WallMs(int repeats, const std::function<void()>& run) {
  run();
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    run();
  }
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - t0;
  return elapsed.count() / repeats;
}

}  // namespace

CudaKernelReport BenchmarkCudaKernels(int ordinal, const HostPair& pair, const FusedParams& fused,
                                      const MaskParams& mask,
                                      const ThresholdChooser& choose_threshold, int repeats) {
  if (ordinal < 0 || ordinal >= CudaDeviceCount()) {
    throw ImageryError(ImageryError::Kind::kDevice, "no CUDA device " + std::to_string(ordinal));
  }
  CheckCuda(cudaSetDevice(ordinal), "cudaSetDevice");
  cudaDeviceProp prop{};
  CheckCuda(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
  int sm = 1, mem_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, ordinal);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ordinal);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal);
  CudaKernelReport report;
  report.device = prop.name;
  report.peak_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;

  const int width = pair.width, height = pair.height;
  const size_t n = static_cast<size_t>(width) * height;
  const size_t image_bytes = n * pair.band_count * sizeof(uint16_t);
  cudaStream_t stream = nullptr;
  CheckCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cuda::DeviceBuffer before, after, copy, scores, histogram;
  cuda::MaskBuffers mask_buffers;
  cuda::PinnedBuffer host_scores, host_mask;
  auto* d_before = static_cast<uint16_t*>(before.Ensure(image_bytes));
  auto* d_after = static_cast<uint16_t*>(after.Ensure(image_bytes));
  CheckCuda(cudaMemcpy(d_before, pair.before, image_bytes, cudaMemcpyHostToDevice), "upload");
  CheckCuda(cudaMemcpy(d_after, pair.after, image_bytes, cudaMemcpyHostToDevice), "upload");
  void* d_copy = copy.Ensure(image_bytes);
  auto* d_scores = static_cast<uint16_t*>(scores.Ensure(n * sizeof(uint16_t)));
  auto* d_hist = static_cast<uint32_t*>(histogram.Ensure(kScoreBins * sizeof(uint32_t)));
  auto* h_scores = static_cast<uint16_t*>(host_scores.Ensure(n * sizeof(uint16_t)));
  auto* h_mask = static_cast<uint8_t*>(host_mask.Ensure(n));
  const double px = static_cast<double>(n);
  const auto add = [&](const char* kernel, double bytes, double ms) {
    report.kernels.push_back({kernel, bytes, px, ms});
  };

  add("copy_d2d", 2.0 * image_bytes, EventMs(stream, repeats, [&] {
        CheckCuda(cudaMemcpyAsync(d_copy, d_before, image_bytes, cudaMemcpyDeviceToDevice, stream),
                  "cudaMemcpyAsync");
      }));
  const auto fused_pass = [&] {
    CheckCuda(cudaMemsetAsync(d_hist, 0, kScoreBins * sizeof(uint32_t), stream), "memset");
    cuda::LaunchFused(fused, d_before, d_after, n, 0, d_scores, d_hist, sm, stream);
  };
  add("fused", 2.0 * image_bytes + n * sizeof(uint16_t), EventMs(stream, repeats, fused_pass));

  uint8_t* d_mask = nullptr;
  const int passes = 2 * ((mask.open_radius > 0 ? 1 : 0) + (mask.close_radius > 0 ? 1 : 0));
  // Each pass reads a byte mask (the first the uint16 scores) and writes one; then nodata clear.
  add("threshold_morphology", n * (2.0 + 1.0 + 2.0 * std::max(passes - 1, 0) + 2.0 + 1.0),
      EventMs(stream, repeats, [&] {
        d_mask = cuda::LaunchThresholdMorphology(mask_buffers, d_scores, mask, width, height, sm,
                                                 stream);
      }));
  // After the first run the mask holds only kept regions: later runs do the same labelling work.
  add("components_mmu", n * (1.0 + 4.0 + 1.0 + 4.0 * 3 + 4.0 + 1.0), EventMs(stream, repeats, [&] {
        cuda::LaunchComponentsFilter(mask_buffers, d_mask, std::max<int64_t>(mask.min_area_px, 2),
                                     width, height, sm, stream);
      }));

  std::vector<uint32_t> h32(kScoreBins);
  std::vector<uint64_t> h64(kScoreBins);
  add("pipeline_resident", 2.0 * image_bytes + n * 3.0, WallMs(repeats, [&] {
        fused_pass();
        CheckCuda(cudaMemcpyAsync(h32.data(), d_hist, kScoreBins * sizeof(uint32_t),
                                  cudaMemcpyDeviceToHost, stream),
                  "D2H histogram");
        CheckCuda(cudaMemcpyAsync(h_scores, d_scores, n * sizeof(uint16_t), cudaMemcpyDeviceToHost,
                                  stream),
                  "D2H scores");
        CheckCuda(cudaStreamSynchronize(stream), "fused");
        std::copy(h32.begin(), h32.end(), h64.begin());
        MaskParams m = mask;
        m.threshold_bin = choose_threshold(h64);
        uint8_t* out = cuda::LaunchMask(mask_buffers, d_scores, m, width, height, sm, stream);
        CheckCuda(cudaMemcpyAsync(h_mask, out, n, cudaMemcpyDeviceToHost, stream), "D2H mask");
        CheckCuda(cudaStreamSynchronize(stream), "mask");
      }));
  // Host to device from pinned and from pageable memory (what staging through pinned buys).
  cuda::PinnedBuffer pinned;
  void* h_pinned = pinned.Ensure(image_bytes);
  std::memcpy(h_pinned, pair.before, image_bytes);
  add("h2d_pinned", static_cast<double>(image_bytes), EventMs(stream, repeats, [&] {
        CheckCuda(cudaMemcpyAsync(d_copy, h_pinned, image_bytes, cudaMemcpyHostToDevice, stream),
                  "H2D pinned");
      }));
  add("h2d_pageable", static_cast<double>(image_bytes), EventMs(stream, repeats, [&] {
        CheckCuda(cudaMemcpyAsync(d_copy, pair.before, image_bytes, cudaMemcpyHostToDevice, stream),
                  "H2D pageable");
      }));
  cudaStreamDestroy(stream);
  return report;
}

}  // namespace warmpool::imagery
