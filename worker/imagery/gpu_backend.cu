// CUDA backend: thin launchers over the per-pixel maths of change_math.h.
//   1. FusedKernel: normalise + measure + quantise + shared-memory histogram, one pass per strip.
//   2. MorphTileKernel: threshold (fused into the first pass) and erosion/dilation on
//      shared-memory tiles, same clipped-window definition as morphology.cpp.
//   3. Union-find CCL (Playne & Hawick 2018 style, atomicMin unions), per-root area, MMU filter.
// Strips are staged through pinned buffers and alternate between two streams so the copy of one
// strip overlaps the kernel of the previous one; device buffers are cached per device and reused.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <cuda_runtime.h>

#include "worker/imagery/change_math.h"
#include "worker/imagery/gpu_backend.h"
#include "worker/imagery/gpu_benchmark.h"
#include "worker/imagery/imagery_error.h"

namespace warmpool::imagery {
namespace {

constexpr uint32_t kBackground = 0xFFFFFFFFu;
constexpr int kTileW = 32;
constexpr int kTileH = 8;
constexpr uint8_t kOutside = 2;  // tile value for pixels outside the image (ignored)

void CheckCuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw ImageryError(ImageryError::Kind::kDevice,
                       std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
  }
}

struct CudaFreeDeleter {
  void operator()(void* p) const { cudaFree(p); }
};
struct PinnedFreeDeleter {
  void operator()(void* p) const { cudaFreeHost(p); }
};

// A grow-only buffer (device or pinned host).
template <typename Deleter, bool kPinned>
class GrowBuffer {
 public:
  void* Ensure(size_t bytes) {
    if (bytes > bytes_) {
      ptr_.reset();
      void* p = nullptr;
      CheckCuda(kPinned ? cudaMallocHost(&p, bytes) : cudaMalloc(&p, bytes),
                kPinned ? "cudaMallocHost" : "cudaMalloc");
      ptr_.reset(p);
      bytes_ = bytes;
    }
    return ptr_.get();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_.get());
  }

 private:
  std::unique_ptr<void, Deleter> ptr_;
  size_t bytes_ = 0;
};
using DeviceBuffer = GrowBuffer<CudaFreeDeleter, false>;
using PinnedBuffer = GrowBuffer<PinnedFreeDeleter, true>;

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
  DeviceBuffer scores, mask_a, mask_b, labels, area, histogram;
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

// ---- kernels -------------------------------------------------------------------------------

template <Method kMethod, int kBands>
__global__ void FusedKernel(FusedParams p, const uint16_t* __restrict__ before,
                            const uint16_t* __restrict__ after, size_t plane, size_t global_offset,
                            uint16_t* __restrict__ scores, uint32_t* __restrict__ histogram) {
  __shared__ uint32_t local[kScoreBins];
  for (int k = threadIdx.x; k < kScoreBins; k += blockDim.x) {
    local[k] = 0;
  }
  __syncthreads();
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < plane;
       i += stride) {
    const uint16_t s = ScorePixel<kMethod, kBands>(p, before, after, plane, i);
    scores[i] = s;
    const int bin = ScoreBin(s);
    if (bin >= 0 && CountedInHistogram(global_offset + i, p.histogram_stride)) {
      atomicAdd(&local[bin], 1u);
    }
  }
  __syncthreads();
  for (int k = threadIdx.x; k < kScoreBins; k += blockDim.x) {
    if (local[k] != 0) {
      atomicAdd(&histogram[k], local[k]);
    }
  }
}

template <Method kMethod>
void LaunchFusedBands(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                      size_t plane, size_t global_offset, uint16_t* scores, uint32_t* histogram,
                      int blocks, cudaStream_t stream) {
  constexpr int kThreads = 256;
  switch (p.band_count) {
    case 1:
      FusedKernel<kMethod, 1><<<blocks, kThreads, 0, stream>>>(p, before, after, plane,
                                                               global_offset, scores, histogram);
      break;
    case 2:
      FusedKernel<kMethod, 2><<<blocks, kThreads, 0, stream>>>(p, before, after, plane,
                                                               global_offset, scores, histogram);
      break;
    case 3:
      FusedKernel<kMethod, 3><<<blocks, kThreads, 0, stream>>>(p, before, after, plane,
                                                               global_offset, scores, histogram);
      break;
    case 4:
      FusedKernel<kMethod, 4><<<blocks, kThreads, 0, stream>>>(p, before, after, plane,
                                                               global_offset, scores, histogram);
      break;
    default:
      FusedKernel<kMethod, 0><<<blocks, kThreads, 0, stream>>>(p, before, after, plane,
                                                               global_offset, scores, histogram);
      break;
  }
}

void LaunchFused(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                 size_t global_offset, uint16_t* scores, uint32_t* histogram, int sm_count,
                 cudaStream_t stream) {
  const int blocks = static_cast<int>(std::max<size_t>(
      1, std::min<size_t>((plane + 255) / 256, static_cast<size_t>(sm_count) * 8)));
  switch (p.method) {
    case Method::kAbsDiff:
      LaunchFusedBands<Method::kAbsDiff>(p, before, after, plane, global_offset, scores, histogram,
                                         blocks, stream);
      break;
    case Method::kLogRatio:
      LaunchFusedBands<Method::kLogRatio>(p, before, after, plane, global_offset, scores, histogram,
                                          blocks, stream);
      break;
    case Method::kCva:
      LaunchFusedBands<Method::kCva>(p, before, after, plane, global_offset, scores, histogram,
                                     blocks, stream);
      break;
    case Method::kNdvi:
      LaunchFusedBands<Method::kNdvi>(p, before, after, plane, global_offset, scores, histogram,
                                      blocks, stream);
      break;
  }
  CheckCuda(cudaGetLastError(), "FusedKernel launch");
}

// Erosion (kDilate false) or dilation over the clipped (2r+1)^2 window, on a shared-memory tile.
// With kFromScores the input is thresholded packed scores (threshold fused into the first pass).
template <bool kDilate, bool kFromScores>
__global__ void MorphTileKernel(const uint8_t* __restrict__ in, const uint16_t* __restrict__ scores,
                                uint32_t threshold_bin, uint8_t* __restrict__ out, int width,
                                int height, int r) {
  extern __shared__ uint8_t tile[];
  const int tw = kTileW + 2 * r, th = kTileH + 2 * r;
  const int x0 = blockIdx.x * kTileW - r, y0 = blockIdx.y * kTileH - r;
  for (int ty = threadIdx.y; ty < th; ty += kTileH) {
    for (int tx = threadIdx.x; tx < tw; tx += kTileW) {
      const int gx = x0 + tx, gy = y0 + ty;
      uint8_t v = kOutside;
      if (gx >= 0 && gy >= 0 && gx < width && gy < height) {
        const size_t idx = static_cast<size_t>(gy) * width + gx;
        if constexpr (kFromScores) {
          v = IsChange(scores[idx], threshold_bin) ? 1 : 0;
        } else {
          v = in[idx];
        }
      }
      tile[ty * tw + tx] = v;
    }
  }
  __syncthreads();
  const int x = blockIdx.x * kTileW + threadIdx.x, y = blockIdx.y * kTileH + threadIdx.y;
  if (x >= width || y >= height) {
    return;
  }
  uint8_t acc = kDilate ? 0 : 1;
  for (int dy = -r; dy <= r; ++dy) {
    const uint8_t* row = tile + (threadIdx.y + r + dy) * tw + threadIdx.x + r;
    for (int dx = -r; dx <= r; ++dx) {
      const uint8_t v = row[dx];
      if (v != kOutside) {
        acc = kDilate ? (v > acc ? v : acc) : (v < acc ? v : acc);
      }
    }
  }
  out[static_cast<size_t>(y) * width + x] = acc;
}

__global__ void ThresholdKernel(const uint16_t* __restrict__ scores, uint32_t threshold_bin,
                                uint8_t* __restrict__ mask, size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    mask[i] = IsChange(scores[i], threshold_bin) ? 1 : 0;
  }
}

__global__ void ClearNodataKernel(const uint16_t* __restrict__ scores, uint8_t* __restrict__ mask,
                                  size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (scores[i] == kInvalidScore) {
      mask[i] = 0;
    }
  }
}

__device__ uint32_t FindRoot(const uint32_t* labels, uint32_t x) {
  uint32_t next = labels[x];
  while (next != x) {
    x = next;
    next = labels[x];
  }
  return x;
}

__device__ void UnionRoots(uint32_t* labels, uint32_t a, uint32_t b) {
  bool done = false;
  while (!done) {
    a = FindRoot(labels, a);
    b = FindRoot(labels, b);
    if (a < b) {
      const uint32_t old = atomicMin(&labels[b], a);
      done = old == b;
      b = old;
    } else if (b < a) {
      const uint32_t old = atomicMin(&labels[a], b);
      done = old == a;
      a = old;
    } else {
      done = true;
    }
  }
}

__global__ void InitLabelsKernel(const uint8_t* __restrict__ mask, uint32_t* __restrict__ labels,
                                 size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    labels[i] = mask[i] == 1 ? static_cast<uint32_t>(i) : kBackground;
  }
}

__global__ void MergeKernel(const uint8_t* __restrict__ mask, uint32_t* labels, int width,
                            int height) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) {
    return;
  }
  const uint32_t i = static_cast<uint32_t>(y) * width + x;
  if (mask[i] != 1) {
    return;
  }
  // 8-connectivity: W, NW, N, NE cover every neighbour pair once.
  if (x > 0 && mask[i - 1] == 1) {
    UnionRoots(labels, i, i - 1);
  }
  if (y > 0) {
    const uint32_t up = i - width;
    if (x > 0 && mask[up - 1] == 1) {
      UnionRoots(labels, i, up - 1);
    }
    if (mask[up] == 1) {
      UnionRoots(labels, i, up);
    }
    if (x + 1 < width && mask[up + 1] == 1) {
      UnionRoots(labels, i, up + 1);
    }
  }
}

__global__ void CompressAreaKernel(uint32_t* labels, uint32_t* __restrict__ area, size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (labels[i] != kBackground) {
      const uint32_t root = FindRoot(labels, static_cast<uint32_t>(i));
      labels[i] = root;
      atomicAdd(&area[root], 1u);
    }
  }
}

__global__ void MmuFilterKernel(const uint32_t* __restrict__ labels,
                                const uint32_t* __restrict__ area, int64_t min_area,
                                uint8_t* __restrict__ mask, size_t n) {
  const size_t stride = static_cast<size_t>(blockDim.x) * gridDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (labels[i] != kBackground && static_cast<int64_t>(area[labels[i]]) < min_area) {
      mask[i] = 0;
    }
  }
}

int Blocks1D(size_t n, int sm_count) {
  return static_cast<int>(
      std::max<size_t>(1, std::min<size_t>((n + 255) / 256, static_cast<size_t>(sm_count) * 16)));
}

// One morphology pass; `from_scores` reads thresholded scores instead of `in`.
void LaunchMorph(bool dilate, bool from_scores, const uint8_t* in, const uint16_t* scores,
                 uint32_t bin, uint8_t* out, int width, int height, int r, cudaStream_t stream) {
  const dim3 block(kTileW, kTileH);
  const dim3 grid((width + kTileW - 1) / kTileW, (height + kTileH - 1) / kTileH);
  const size_t shared = static_cast<size_t>(kTileW + 2 * r) * (kTileH + 2 * r);
  if (dilate) {
    if (from_scores) {
      MorphTileKernel<true, true>
          <<<grid, block, shared, stream>>>(in, scores, bin, out, width, height, r);
    } else {
      MorphTileKernel<true, false>
          <<<grid, block, shared, stream>>>(in, scores, bin, out, width, height, r);
    }
  } else {
    if (from_scores) {
      MorphTileKernel<false, true>
          <<<grid, block, shared, stream>>>(in, scores, bin, out, width, height, r);
    } else {
      MorphTileKernel<false, false>
          <<<grid, block, shared, stream>>>(in, scores, bin, out, width, height, r);
    }
  }
  CheckCuda(cudaGetLastError(), "MorphTileKernel launch");
}

// Threshold + open + close + nodata clear + MMU on device buffers; the result is in `*result`.
void MaskOnDevice(DeviceContext& ctx, const MaskParams& m, int width, int height, int sm_count,
                  cudaStream_t stream, uint8_t** result) {
  const size_t n = static_cast<size_t>(width) * height;
  const uint16_t* scores = ctx.scores.as<uint16_t>();
  uint8_t* a = static_cast<uint8_t*>(ctx.mask_a.Ensure(n));
  uint8_t* b = static_cast<uint8_t*>(ctx.mask_b.Ensure(n));
  // Passes alternate between a and b; the first pass thresholds the scores.
  struct Pass {
    bool dilate;
    int radius;
  };
  std::vector<Pass> passes;
  if (m.open_radius > 0) {
    passes.push_back({false, m.open_radius});
    passes.push_back({true, m.open_radius});
  }
  if (m.close_radius > 0) {
    passes.push_back({true, m.close_radius});
    passes.push_back({false, m.close_radius});
  }
  uint8_t* current = a;
  if (passes.empty()) {
    ThresholdKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(scores, m.threshold_bin, a, n);
    CheckCuda(cudaGetLastError(), "ThresholdKernel launch");
  } else {
    uint8_t* src = nullptr;
    uint8_t* dst = a;
    for (size_t k = 0; k < passes.size(); ++k) {
      LaunchMorph(passes[k].dilate, k == 0, src, scores, m.threshold_bin, dst, width, height,
                  passes[k].radius, stream);
      src = dst;
      dst = dst == a ? b : a;
    }
    current = src;
  }
  ClearNodataKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(scores, current, n);
  CheckCuda(cudaGetLastError(), "ClearNodataKernel launch");
  if (m.min_area_px > 1) {
    uint32_t* labels = static_cast<uint32_t*>(ctx.labels.Ensure(n * sizeof(uint32_t)));
    uint32_t* area = static_cast<uint32_t*>(ctx.area.Ensure(n * sizeof(uint32_t)));
    CheckCuda(cudaMemsetAsync(area, 0, n * sizeof(uint32_t), stream), "cudaMemsetAsync");
    InitLabelsKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(current, labels, n);
    const dim3 block(32, 8);
    const dim3 grid((width + 31) / 32, (height + 7) / 8);
    MergeKernel<<<grid, block, 0, stream>>>(current, labels, width, height);
    CompressAreaKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(labels, area, n);
    MmuFilterKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(labels, area, m.min_area_px, current,
                                                               n);
    CheckCuda(cudaGetLastError(), "CCL launch");
  }
  *result = current;
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

  std::optional<std::vector<Region>> MaskAndFilter(const MaskParams& m, uint8_t* mask) override {
    cudaStream_t stream = ctx_.streams[0];
    uint8_t* result = nullptr;
    MaskOnDevice(ctx_, m, width_, height_, sm_count_, stream, &result);
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

nlohmann::json BenchmarkCudaKernels(int ordinal, int width, int height, int repeats) {
  const int count = CudaDeviceCount();
  if (ordinal < 0 || ordinal >= count) {
    throw ImageryError(ImageryError::Kind::kDevice, "no CUDA device " + std::to_string(ordinal));
  }
  DeviceContext& ctx = ContextFor(ordinal);
  std::lock_guard<std::mutex> lock(ctx.mu);
  CheckCuda(cudaSetDevice(ordinal), "cudaSetDevice");
  int sm = 1, mem_khz = 0, bus_bits = 0;
  cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, ordinal);
  cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ordinal);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal);
  const double peak_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  const size_t n = static_cast<size_t>(width) * height;
  constexpr int kBands = 4;
  cudaStream_t stream = ctx.streams[0];

  // Synthetic inputs: a smooth pattern with a few bright blocks, uploaded once.
  std::vector<uint16_t> host_before(n * kBands), host_after(n * kBands);
  for (int b = 0; b < kBands; ++b) {
    for (size_t i = 0; i < n; ++i) {
      const size_t x = i % width, y = i / width;
      const uint16_t v = static_cast<uint16_t>(800 + 400 * b + (x * 7 + y * 13) % 251);
      host_before[b * n + i] = v;
      const bool block = (x / 64 + y / 64) % 17 == 0;
      host_after[b * n + i] = static_cast<uint16_t>(block ? v + 1500 : v + (i % 5));
    }
  }
  uint16_t* d_before = static_cast<uint16_t*>(ctx.strip_before[0].Ensure(n * kBands * 2));
  uint16_t* d_after = static_cast<uint16_t*>(ctx.strip_after[0].Ensure(n * kBands * 2));
  CheckCuda(cudaMemcpy(d_before, host_before.data(), n * kBands * 2, cudaMemcpyHostToDevice),
            "upload");
  CheckCuda(cudaMemcpy(d_after, host_after.data(), n * kBands * 2, cudaMemcpyHostToDevice),
            "upload");
  uint16_t* d_scores = static_cast<uint16_t*>(ctx.scores.Ensure(n * 2));
  uint32_t* d_hist = static_cast<uint32_t*>(ctx.histogram.Ensure(kScoreBins * 4));

  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  const auto time_ms = [&](auto&& launch) {
    launch();  // warm-up
    CheckCuda(cudaStreamSynchronize(stream), "warm-up");
    cudaEventRecord(start, stream);
    for (int r = 0; r < repeats; ++r) {
      launch();
    }
    cudaEventRecord(stop, stream);
    CheckCuda(cudaEventSynchronize(stop), "benchmark");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    return static_cast<double>(ms) / repeats;
  };
  nlohmann::json rows = nlohmann::json::array();
  const auto add = [&](const char* kernel, double bytes, double ms) {
    const double gbps = bytes / (ms * 1e-3) / 1e9;
    rows.push_back({{"kernel", kernel},
                    {"bytes", bytes},
                    {"ms", ms},
                    {"gbps", gbps},
                    {"gpx_per_s", n / (ms * 1e-3) / 1e9},
                    {"pct_peak", peak_gbps > 0 ? 100.0 * gbps / peak_gbps : 0.0}});
  };
  // Copy probe: device-to-device memcpy of the 4-band input (read + write).
  add("copy_d2d", 2.0 * n * kBands * 2, time_ms([&] {
        cudaMemcpyAsync(d_after, d_before, n * kBands * 2, cudaMemcpyDeviceToDevice, stream);
      }));
  CheckCuda(cudaMemcpy(d_after, host_after.data(), n * kBands * 2, cudaMemcpyHostToDevice),
            "restore");
  FusedParams p;
  p.band_count = kBands;
  p.method = Method::kCva;
  p.inv_band_count = 0.25f;
  p.scale = 2.0f;
  add("fused_cva_4band_u16_hist", n * (2.0 * kBands * 2 + 2), time_ms([&] {
        cudaMemsetAsync(d_hist, 0, kScoreBins * 4, stream);
        LaunchFused(p, d_before, d_after, n, 0, d_scores, d_hist, sm, stream);
      }));
  MaskParams m;
  m.threshold_bin = 200;
  m.open_radius = 1;
  m.min_area_px = 0;
  uint8_t* result = nullptr;
  add("threshold_open3x3 (2 passes)", n * (2.0 + 1 + 1 + 1) + n * 2.0,
      time_ms([&] { MaskOnDevice(ctx, m, width, height, sm, stream, &result); }));
  m.open_radius = 0;
  m.min_area_px = 16;
  add("threshold_ccl_mmu", n * (2.0 + 1 + 4 * 4 + 1),
      time_ms([&] { MaskOnDevice(ctx, m, width, height, sm, stream, &result); }));

  // Pinned vs pageable H2D.
  const size_t bytes = n * kBands * 2;
  void* pinned = ctx.staging_before[0].Ensure(bytes);
  std::memcpy(pinned, host_before.data(), bytes);
  add("h2d_pinned", static_cast<double>(bytes),
      time_ms([&] { cudaMemcpyAsync(d_before, pinned, bytes, cudaMemcpyHostToDevice, stream); }));
  add("h2d_pageable", static_cast<double>(bytes), time_ms([&] {
        cudaMemcpyAsync(d_before, host_before.data(), bytes, cudaMemcpyHostToDevice, stream);
      }));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, ordinal);
  return {{"device", prop.name},
          {"peak_gbps", peak_gbps},
          {"width", width},
          {"height", height},
          {"kernels", rows}};
}

}  // namespace warmpool::imagery
