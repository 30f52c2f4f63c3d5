// The mask stage's second half on the device: union-find 8-connected components (Playne &
// Hawick 2018 style, atomicMin unions), the area of each root, and the minimum mapping unit.
#include "imagery/cuda/cuda_error.h"
#include "imagery/cuda/grid_size.h"
#include "imagery/cuda/mask_kernels.h"

namespace warmpool::imagery::cuda {
namespace {

constexpr uint32_t kBackground = 0xFFFFFFFFu;

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

}  // namespace

void LaunchComponentsFilter(MaskBuffers& buffers, uint8_t* mask, int64_t min_area_px, int width,
                            int height, int sm_count, cudaStream_t stream) {
  if (min_area_px <= 1) {
    return;
  }
  const size_t n = static_cast<size_t>(width) * height;
  uint32_t* labels = static_cast<uint32_t*>(buffers.labels.Ensure(n * sizeof(uint32_t)));
  uint32_t* area = static_cast<uint32_t*>(buffers.area.Ensure(n * sizeof(uint32_t)));
  CheckCuda(cudaMemsetAsync(area, 0, n * sizeof(uint32_t), stream), "cudaMemsetAsync");
  InitLabelsKernel<<<GridStrideBlocks(n, sm_count, 16), kStrideThreads, 0, stream>>>(mask, labels,
                                                                                     n);
  const dim3 block(32, 8);
  const dim3 grid((width + 31) / 32, (height + 7) / 8);
  MergeKernel<<<grid, block, 0, stream>>>(mask, labels, width, height);
  CompressAreaKernel<<<GridStrideBlocks(n, sm_count, 16), kStrideThreads, 0, stream>>>(labels, area,
                                                                                       n);
  MmuFilterKernel<<<GridStrideBlocks(n, sm_count, 16), kStrideThreads, 0, stream>>>(
      labels, area, min_area_px, mask, n);
  CheckCuda(cudaGetLastError(), "CCL launch");
}

}  // namespace warmpool::imagery::cuda
