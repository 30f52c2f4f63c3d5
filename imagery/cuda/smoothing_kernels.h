#pragma once

// The magnitude smoothing on the device (smoothing_math.h). Included by .cu files only.

#include <cstdint>

#include <cuda_runtime.h>

namespace warmpool::imagery::cuda {

// out = box mean of radius `radius` of `in` (device, width x height packed scores), and
// histogram[kScoreBins] (device, zeroed by the caller) counts the pixels whose index is a
// multiple of `stride`. Asynchronous on `stream`.
void LaunchSmooth(const uint16_t* in, uint16_t* out, int width, int height, int radius,
                  uint32_t stride, uint32_t* histogram, int sm_count, cudaStream_t stream);

}  // namespace warmpool::imagery::cuda
