#pragma once

// The mask stage on the device: threshold, opening/closing and nodata clear
// (morphology_kernels.cu), then 8-connected components and the minimum mapping unit
// (component_kernels.cu). Included by .cu files only.

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "imagery/compute_backend.h"
#include "imagery/cuda/device_buffer.h"

namespace warmpool::imagery::cuda {

// Scratch of the mask stage (grown on demand, reused).
struct MaskBuffers {
  DeviceBuffer mask_a, mask_b, labels, area;
};

// Threshold, opening/closing and nodata clear of the device scores (width x height) into a
// device mask; returns it (one of `buffers`' masks). Asynchronous on `stream`.
uint8_t* LaunchThresholdMorphology(MaskBuffers& buffers, const uint16_t* scores,
                                   const MaskParams& m, int width, int height, int sm_count,
                                   cudaStream_t stream);

// Union-find 8-connected components of the device `mask` and the minimum mapping unit
// (m.min_area_px > 1), in place. Asynchronous on `stream`.
void LaunchComponentsFilter(MaskBuffers& buffers, uint8_t* mask, int64_t min_area_px, int width,
                            int height, int sm_count, cudaStream_t stream);

// Both stages; returns the device mask.
inline uint8_t* LaunchMask(MaskBuffers& buffers, const uint16_t* scores, const MaskParams& m,
                           int width, int height, int sm_count, cudaStream_t stream) {
  uint8_t* mask = LaunchThresholdMorphology(buffers, scores, m, width, height, sm_count, stream);
  LaunchComponentsFilter(buffers, mask, m.min_area_px, width, height, sm_count, stream);
  return mask;
}

}  // namespace warmpool::imagery::cuda
