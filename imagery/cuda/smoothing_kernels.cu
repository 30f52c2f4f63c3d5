// Thin launcher over BoxMeanScore (smoothing_math.h), the same function the CPU path runs.
#include "imagery/cuda/cuda_error.h"
#include "imagery/cuda/grid_size.h"
#include "imagery/cuda/smoothing_kernels.h"
#include "imagery/smoothing_math.h"

namespace warmpool::imagery::cuda {
namespace {

__global__ void SmoothKernel(const uint16_t* __restrict__ in, uint16_t* __restrict__ out, int width,
                             int height, int radius, uint32_t stride, uint32_t* histogram) {
  const size_t n = static_cast<size_t>(width) * height;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int y = static_cast<int>(i / width);
    const int x = static_cast<int>(i % width);
    const uint16_t s = BoxMeanScore(in, width, height, x, y, radius);
    out[i] = s;
    if (s != kInvalidScore && CountedInHistogram(i, stride)) {
      atomicAdd(&histogram[s & kScoreMask], 1u);
    }
  }
}

}  // namespace

void LaunchSmooth(const uint16_t* in, uint16_t* out, int width, int height, int radius,
                  uint32_t stride, uint32_t* histogram, int sm_count, cudaStream_t stream) {
  const size_t n = static_cast<size_t>(width) * height;
  SmoothKernel<<<GridStrideBlocks(n, sm_count, 8), kStrideThreads, 0, stream>>>(
      in, out, width, height, radius, stride, histogram);
  CheckCuda(cudaGetLastError(), "SmoothKernel launch");
}

}  // namespace warmpool::imagery::cuda
