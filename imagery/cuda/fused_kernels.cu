// The fused pass kernel: normalise + measure + quantise of change_math.h per pixel, with a
// shared-memory histogram flushed once per block; one launch per strip.
#include "imagery/cuda/cuda_error.h"
#include "imagery/cuda/fused_kernels.h"
#include "imagery/cuda/grid_size.h"

namespace warmpool::imagery::cuda {
namespace {

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
  constexpr int kThreads = kStrideThreads;
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

}  // namespace

void LaunchFused(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                 size_t global_offset, uint16_t* scores, uint32_t* histogram, int sm_count,
                 cudaStream_t stream) {
  const int blocks = GridStrideBlocks(plane, sm_count, 8);
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
    case Method::kIrMad:
      LaunchFusedBands<Method::kIrMad>(p, before, after, plane, global_offset, scores, histogram,
                                       blocks, stream);
      break;
  }
  CheckCuda(cudaGetLastError(), "FusedKernel launch");
}

}  // namespace warmpool::imagery::cuda
