// CUDA kernels of the change-detection core: thin launchers over the per-pixel maths of
// change_math.h.
//   1. FusedKernel: normalise + measure + quantise + shared-memory histogram, one pass per strip.
//   2. MorphTileKernel: threshold (fused into the first pass) and erosion/dilation on
//      shared-memory tiles, same clipped-window definition as morphology.cpp.
//   3. Union-find CCL (Playne & Hawick 2018 style, atomicMin unions), per-root area, MMU filter.
#include <algorithm>
#include <vector>

#include "imagery/cuda/gpu_backend_kernels.h"

namespace warmpool::imagery::cuda {
namespace {

constexpr uint32_t kBackground = 0xFFFFFFFFu;
constexpr int kTileW = 32;
constexpr int kTileH = 8;
constexpr uint8_t kOutside = 2;  // tile value for pixels outside the image (ignored)

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

}  // namespace

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

uint8_t* LaunchThresholdMorphology(MaskBuffers& buffers, const uint16_t* scores,
                                   const MaskParams& m, int width, int height, int sm_count,
                                   cudaStream_t stream) {
  const size_t n = static_cast<size_t>(width) * height;
  uint8_t* a = static_cast<uint8_t*>(buffers.mask_a.Ensure(n));
  uint8_t* b = static_cast<uint8_t*>(buffers.mask_b.Ensure(n));
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
  return current;
}

void LaunchComponentsFilter(MaskBuffers& buffers, uint8_t* mask, int64_t min_area_px, int width,
                            int height, int sm_count, cudaStream_t stream) {
  if (min_area_px <= 1) {
    return;
  }
  const size_t n = static_cast<size_t>(width) * height;
  uint32_t* labels = static_cast<uint32_t*>(buffers.labels.Ensure(n * sizeof(uint32_t)));
  uint32_t* area = static_cast<uint32_t*>(buffers.area.Ensure(n * sizeof(uint32_t)));
  CheckCuda(cudaMemsetAsync(area, 0, n * sizeof(uint32_t), stream), "cudaMemsetAsync");
  InitLabelsKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(mask, labels, n);
  const dim3 block(32, 8);
  const dim3 grid((width + 31) / 32, (height + 7) / 8);
  MergeKernel<<<grid, block, 0, stream>>>(mask, labels, width, height);
  CompressAreaKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(labels, area, n);
  MmuFilterKernel<<<Blocks1D(n, sm_count), 256, 0, stream>>>(labels, area, min_area_px, mask, n);
  CheckCuda(cudaGetLastError(), "CCL launch");
}

uint8_t* LaunchMask(MaskBuffers& buffers, const uint16_t* scores, const MaskParams& m, int width,
                    int height, int sm_count, cudaStream_t stream) {
  uint8_t* mask = LaunchThresholdMorphology(buffers, scores, m, width, height, sm_count, stream);
  LaunchComponentsFilter(buffers, mask, m.min_area_px, width, height, sm_count, stream);
  return mask;
}

}  // namespace warmpool::imagery::cuda
