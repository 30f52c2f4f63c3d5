#pragma once

// The variant side of fused_pass_ab: the fused pass source named by the CMake cache variable
// WARMPOOL_FUSED_VARIANT (default: the shipped imagery/fused_pass.cpp, an A/A run),
// compiled again with its public functions renamed so both versions run in one process.

#include <cstddef>
#include <cstdint>

#include "imagery/change_math.h"

namespace warmpool::imagery {

void FusedPassCpuVariant(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                         size_t plane, size_t begin, size_t end, size_t global_offset,
                         uint16_t* scores, uint64_t* histogram);

}  // namespace warmpool::imagery
