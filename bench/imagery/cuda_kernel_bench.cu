// Kernel timings of the CUDA backend on a device-resident pair (cuda_kernel_bench.h). Device
// steps are timed with CUDA events; the resident pipeline, which includes host work (the
// threshold), with the host clock.
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "bench/imagery/cuda_kernel_bench.h"
#include "bench/imagery/wall_ms.h"
#include "imagery/cuda/cuda_error.h"
#include "imagery/cuda/device_buffer.h"
#include "imagery/cuda/fused_kernels.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/cuda/mask_kernels.h"

namespace warmpool::imagery::bench {
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

// The pair uploaded once to the current device, with every buffer the timed steps use.
class ResidentBench {
 public:
  ResidentBench(const HostPair& pair, const FusedParams& fused, const MaskParams& mask, int sm,
                int repeats, CudaKernelReport& report)
      : pair_(pair),
        fused_(fused),
        mask_(mask),
        sm_(sm),
        repeats_(repeats),
        report_(report),
        n_(static_cast<size_t>(pair.width) * pair.height),
        image_bytes_(n_ * pair.band_count * sizeof(uint16_t)) {
    CheckCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    d_before_ = static_cast<uint16_t*>(before_.Ensure(image_bytes_));
    d_after_ = static_cast<uint16_t*>(after_.Ensure(image_bytes_));
    CheckCuda(cudaMemcpy(d_before_, pair.before, image_bytes_, cudaMemcpyHostToDevice), "upload");
    CheckCuda(cudaMemcpy(d_after_, pair.after, image_bytes_, cudaMemcpyHostToDevice), "upload");
    d_copy_ = copy_.Ensure(image_bytes_);
    d_scores_ = static_cast<uint16_t*>(scores_.Ensure(n_ * sizeof(uint16_t)));
    d_hist_ = static_cast<uint32_t*>(histogram_.Ensure(kScoreBins * sizeof(uint32_t)));
    h_scores_ = static_cast<uint16_t*>(host_scores_.Ensure(n_ * sizeof(uint16_t)));
    h_mask_ = static_cast<uint8_t*>(host_mask_.Ensure(n_));
  }
  ResidentBench(const ResidentBench&) = delete;
  ResidentBench& operator=(const ResidentBench&) = delete;
  ~ResidentBench() { cudaStreamDestroy(stream_); }

  // copy_d2d, fused, threshold_morphology, components_mmu.
  void TimeDeviceSteps() {
    Add("copy_d2d", 2.0 * image_bytes_, EventMs(stream_, repeats_, [&] {
          CheckCuda(
              cudaMemcpyAsync(d_copy_, d_before_, image_bytes_, cudaMemcpyDeviceToDevice, stream_),
              "cudaMemcpyAsync");
        }));
    Add("fused", 2.0 * image_bytes_ + n_ * sizeof(uint16_t),
        EventMs(stream_, repeats_, [&] { FusedPass(); }));
    const int passes = 2 * ((mask_.open_radius > 0 ? 1 : 0) + (mask_.close_radius > 0 ? 1 : 0));
    // Each pass reads a byte mask (the first the uint16 scores) and writes one; then nodata clear.
    Add("threshold_morphology", n_ * (2.0 + 1.0 + 2.0 * std::max(passes - 1, 0) + 2.0 + 1.0),
        EventMs(stream_, repeats_, [&] {
          d_mask_ = cuda::LaunchThresholdMorphology(mask_buffers_, d_scores_, mask_, pair_.width,
                                                    pair_.height, sm_, stream_);
        }));
    // After the first run the mask holds only kept regions: later runs do the same labelling.
    Add("components_mmu", n_ * (1.0 + 4.0 + 1.0 + 4.0 * 3 + 4.0 + 1.0),
        EventMs(stream_, repeats_, [&] {
          cuda::LaunchComponentsFilter(mask_buffers_, d_mask_,
                                       std::max<int64_t>(mask_.min_area_px, 2), pair_.width,
                                       pair_.height, sm_, stream_);
        }));
  }

  // pipeline_resident: the device half of a task on the resident pair, by the host clock.
  void TimeResidentPipeline(const ThresholdChooser& choose_threshold) {
    std::vector<uint32_t> h32(kScoreBins);
    std::vector<uint64_t> h64(kScoreBins);
    Add("pipeline_resident", 2.0 * image_bytes_ + n_ * 3.0, WallMs(repeats_, [&] {
          FusedPass();
          CheckCuda(cudaMemcpyAsync(h32.data(), d_hist_, kScoreBins * sizeof(uint32_t),
                                    cudaMemcpyDeviceToHost, stream_),
                    "D2H histogram");
          CheckCuda(cudaMemcpyAsync(h_scores_, d_scores_, n_ * sizeof(uint16_t),
                                    cudaMemcpyDeviceToHost, stream_),
                    "D2H scores");
          CheckCuda(cudaStreamSynchronize(stream_), "fused");
          std::copy(h32.begin(), h32.end(), h64.begin());
          MaskParams m = mask_;
          m.threshold_bin = choose_threshold(h64);
          uint8_t* out = cuda::LaunchMask(mask_buffers_, d_scores_, m, pair_.width, pair_.height,
                                          sm_, stream_);
          CheckCuda(cudaMemcpyAsync(h_mask_, out, n_, cudaMemcpyDeviceToHost, stream_), "D2H mask");
          CheckCuda(cudaStreamSynchronize(stream_), "mask");
        }));
  }

  // h2d_pinned, h2d_pageable: what staging through pinned memory buys.
  void TimeUploads() {
    cuda::PinnedBuffer pinned;
    void* h_pinned = pinned.Ensure(image_bytes_);
    std::memcpy(h_pinned, pair_.before, image_bytes_);
    Add("h2d_pinned", static_cast<double>(image_bytes_), EventMs(stream_, repeats_, [&] {
          CheckCuda(
              cudaMemcpyAsync(d_copy_, h_pinned, image_bytes_, cudaMemcpyHostToDevice, stream_),
              "H2D pinned");
        }));
    Add("h2d_pageable", static_cast<double>(image_bytes_), EventMs(stream_, repeats_, [&] {
          CheckCuda(
              cudaMemcpyAsync(d_copy_, pair_.before, image_bytes_, cudaMemcpyHostToDevice, stream_),
              "H2D pageable");
        }));
  }

 private:
  void FusedPass() {
    CheckCuda(cudaMemsetAsync(d_hist_, 0, kScoreBins * sizeof(uint32_t), stream_), "memset");
    cuda::LaunchFused(fused_, d_before_, d_after_, n_, 0, d_scores_, d_hist_, sm_, stream_);
  }

  void Add(const char* kernel, double bytes, double ms) {
    report_.kernels.push_back({kernel, bytes, static_cast<double>(n_), ms});
  }

  const HostPair& pair_;
  const FusedParams& fused_;
  const MaskParams& mask_;
  const int sm_;
  const int repeats_;
  CudaKernelReport& report_;
  const size_t n_;
  const size_t image_bytes_;
  cudaStream_t stream_ = nullptr;
  cuda::DeviceBuffer before_, after_, copy_, scores_, histogram_;
  cuda::MaskBuffers mask_buffers_;
  cuda::PinnedBuffer host_scores_, host_mask_;
  uint16_t* d_before_ = nullptr;
  uint16_t* d_after_ = nullptr;
  void* d_copy_ = nullptr;
  uint16_t* d_scores_ = nullptr;
  uint32_t* d_hist_ = nullptr;
  uint8_t* d_mask_ = nullptr;
  uint16_t* h_scores_ = nullptr;
  uint8_t* h_mask_ = nullptr;
};

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

  ResidentBench bench(pair, fused, mask, sm, repeats, report);
  bench.TimeDeviceSteps();
  bench.TimeResidentPipeline(choose_threshold);
  bench.TimeUploads();
  return report;
}

}  // namespace warmpool::imagery::bench
