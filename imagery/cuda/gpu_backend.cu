// CUDA backend: the ComputeBackend over the fused and mask kernels. Strips are staged
// through pinned buffers and alternate between two streams so the copy of one strip overlaps the
// kernel of the previous one; device buffers are cached per device and reused.
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "imagery/cuda/cuda_error.h"
#include "imagery/cuda/device_buffer.h"
#include "imagery/cuda/fused_kernels.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/cuda/mask_kernels.h"
#include "imagery/cuda/smoothing_kernels.h"

namespace warmpool::imagery {
namespace {

using cuda::CheckCuda;
using cuda::DeviceBuffer;
using cuda::LaunchFused;
using cuda::LaunchMask;
using cuda::MaskBuffers;
using cuda::PinnedBuffer;

// Per-device resources, created on first use and kept for the process (reused across tasks).
struct DeviceContext {
  explicit DeviceContext(int ordinal_in) : ordinal(ordinal_in) {
    CheckCuda(cudaSetDevice(ordinal), "cudaSetDevice");
    cudaDeviceProp prop{};
    CheckCuda(cudaGetDeviceProperties(&prop, ordinal), "cudaGetDeviceProperties");
    name = prop.name;
    for (cudaStream_t& s : streams) {
      CheckCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    }
  }
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  std::mutex mu;  // held by one backend (one task) at a time
  const int ordinal;
  std::string name;
  cudaStream_t streams[2] = {nullptr, nullptr};
  DeviceBuffer scores, histogram, smooth_scratch;
  MaskBuffers mask;
  DeviceBuffer strip_before[2], strip_after[2];
  PinnedBuffer staging_before[2], staging_after[2];
};

DeviceContext& ContextFor(int ordinal) {
  static std::mutex mu;
  // Leaked on purpose: freeing CUDA resources after the runtime shut down at exit is an error.
  static auto* contexts = new std::map<int, std::unique_ptr<DeviceContext>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<DeviceContext>& ctx = (*contexts)[ordinal];
  if (!ctx) {
    ctx = std::make_unique<DeviceContext>(ordinal);
  }
  return *ctx;
}

class CudaBackend final : public ComputeBackend {
 public:
  explicit CudaBackend(DeviceContext& ctx) : ctx_(ctx), lock_(ctx.mu) {
    CheckCuda(cudaSetDevice(ctx_.ordinal), "cudaSetDevice");
    CheckCuda(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, ctx_.ordinal),
              "cudaDeviceGetAttribute");
  }

  std::string Name() const override {
    return "cuda:" + std::to_string(ctx_.ordinal) + " (" + ctx_.name + ")";
  }

  void Begin(const FusedParams& params, int width, int height, uint16_t* scores) override {
    CheckCuda(cudaSetDevice(ctx_.ordinal), "cudaSetDevice");
    params_ = params;
    width_ = width;
    height_ = height;
    host_scores_ = scores;
    strips_ = 0;
    const size_t n = static_cast<size_t>(width) * height;
    ctx_.scores.Ensure(n * sizeof(uint16_t));
    ctx_.histogram.Ensure(kScoreBins * sizeof(uint32_t));
    CheckCuda(cudaMemsetAsync(ctx_.histogram.as<uint32_t>(), 0, kScoreBins * sizeof(uint32_t),
                              ctx_.streams[0]),
              "cudaMemsetAsync");
    CheckCuda(cudaStreamSynchronize(ctx_.streams[0]), "cudaStreamSynchronize");
  }

  void FusedStrip(int row0, int rows, const uint16_t* before, const uint16_t* after) override {
    const int slot = strips_++ % 2;
    cudaStream_t stream = ctx_.streams[slot];
    // The slot's staging buffers are free once its previous copy has finished.
    CheckCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    const size_t plane = static_cast<size_t>(rows) * width_;
    const size_t bytes = plane * params_.band_count * sizeof(uint16_t);
    void* hb = ctx_.staging_before[slot].Ensure(bytes);
    void* ha = ctx_.staging_after[slot].Ensure(bytes);
    void* db = ctx_.strip_before[slot].Ensure(bytes);
    void* da = ctx_.strip_after[slot].Ensure(bytes);
    std::memcpy(hb, before, bytes);
    std::memcpy(ha, after, bytes);
    CheckCuda(cudaMemcpyAsync(db, hb, bytes, cudaMemcpyHostToDevice, stream), "H2D before");
    CheckCuda(cudaMemcpyAsync(da, ha, bytes, cudaMemcpyHostToDevice, stream), "H2D after");
    const size_t offset = static_cast<size_t>(row0) * width_;
    LaunchFused(params_, static_cast<const uint16_t*>(db), static_cast<const uint16_t*>(da), plane,
                offset, ctx_.scores.as<uint16_t>() + offset, ctx_.histogram.as<uint32_t>(),
                sm_count_, stream);
  }

  void Histogram(uint64_t* histogram) override {
    for (cudaStream_t s : ctx_.streams) {
      CheckCuda(cudaStreamSynchronize(s), "fused pass");
    }
    std::vector<uint32_t> h32(kScoreBins);
    CheckCuda(cudaMemcpy(h32.data(), ctx_.histogram.as<uint32_t>(), kScoreBins * sizeof(uint32_t),
                         cudaMemcpyDeviceToHost),
              "D2H histogram");
    std::copy(h32.begin(), h32.end(), histogram);
    CheckCuda(cudaMemcpy(host_scores_, ctx_.scores.as<uint16_t>(),
                         static_cast<size_t>(width_) * height_ * sizeof(uint16_t),
                         cudaMemcpyDeviceToHost),
              "D2H scores");
  }

  void Smooth(uint64_t* histogram) override {
    cudaStream_t stream = ctx_.streams[0];
    const size_t n = static_cast<size_t>(width_) * height_;
    auto* scratch = static_cast<uint16_t*>(ctx_.smooth_scratch.Ensure(n * sizeof(uint16_t)));
    CheckCuda(cudaMemcpyAsync(scratch, ctx_.scores.as<uint16_t>(), n * sizeof(uint16_t),
                              cudaMemcpyDeviceToDevice, stream),
              "D2D scores");
    CheckCuda(
        cudaMemsetAsync(ctx_.histogram.as<uint32_t>(), 0, kScoreBins * sizeof(uint32_t), stream),
        "cudaMemsetAsync");
    cuda::LaunchSmooth(scratch, ctx_.scores.as<uint16_t>(), width_, height_, params_.smooth_radius,
                       params_.histogram_stride, ctx_.histogram.as<uint32_t>(), sm_count_, stream);
    Histogram(histogram);
  }

  std::optional<std::vector<Region>> MaskAndFilter(const MaskParams& m, uint8_t* mask) override {
    cudaStream_t stream = ctx_.streams[0];
    const uint8_t* result =
        LaunchMask(ctx_.mask, ctx_.scores.as<uint16_t>(), m, width_, height_, sm_count_, stream);
    CheckCuda(cudaMemcpyAsync(mask, result, static_cast<size_t>(width_) * height_,
                              cudaMemcpyDeviceToHost, stream),
              "D2H mask");
    CheckCuda(cudaStreamSynchronize(stream), "mask kernels");
    return std::nullopt;
  }

 private:
  DeviceContext& ctx_;
  std::unique_lock<std::mutex> lock_;
  int sm_count_ = 1;
  FusedParams params_;
  int width_ = 0;
  int height_ = 0;
  uint16_t* host_scores_ = nullptr;
  int strips_ = 0;
};

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return count;
}

bool CudaCompiledIn() { return true; }

ComputeBackendPtr MakeCudaBackend(int ordinal) {
  const int count = CudaDeviceCount();
  if (ordinal < 0 || ordinal >= count) {
    throw ImageryError(ImageryError::Kind::kDevice, "device cuda:" + std::to_string(ordinal) +
                                                        " requested but " + std::to_string(count) +
                                                        " CUDA device(s) are usable");
  }
  return std::make_unique<CudaBackend>(ContextFor(ordinal));
}

}  // namespace warmpool::imagery
