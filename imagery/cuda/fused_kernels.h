#pragma once

// The fused pass on the device: normalise + measure + quantise + histogram, one kernel per strip
// (fused_kernels.cu; included by .cu files only).

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "imagery/change_math.h"

namespace warmpool::imagery::cuda {

// Fused normalise + measure + quantise of `plane` pixels into scores, adding the counted bins
// (global index global_offset + i) to the device histogram[kScoreBins].
void LaunchFused(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                 size_t global_offset, uint16_t* scores, uint32_t* histogram, int sm_count,
                 cudaStream_t stream);

}  // namespace warmpool::imagery::cuda
