// The mask stage's first half on the device: threshold (fused into the first morphology pass)
// and erosion/dilation on shared-memory tiles, with the clipped-window definition of
// morphology.cpp, then the nodata clear.
#include <vector>

#include "imagery/cuda/cuda_error.h"
#include "imagery/cuda/grid_size.h"
#include "imagery/cuda/mask_kernels.h"

namespace warmpool::imagery::cuda {
namespace {

constexpr int kTileW = 32;
constexpr int kTileH = 8;
constexpr uint8_t kOutside = 2;  // tile value for pixels outside the image (ignored)

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

}  // namespace

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
    ThresholdKernel<<<GridStrideBlocks(n, sm_count, 16), kStrideThreads, 0, stream>>>(
        scores, m.threshold_bin, a, n);
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
  ClearNodataKernel<<<GridStrideBlocks(n, sm_count, 16), kStrideThreads, 0, stream>>>(scores,
                                                                                      current, n);
  CheckCuda(cudaGetLastError(), "ClearNodataKernel launch");
  return current;
}

}  // namespace warmpool::imagery::cuda
