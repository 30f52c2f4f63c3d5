#pragma once

// WARMPOOL_HOST_DEVICE marks per-pixel maths that both the CPU path (.cpp) and the CUDA kernels
// (.cu) call. Under nvcc it is `__host__ __device__`; in plain C++ it is empty. This header holds
// the only CUDA/host #ifdefs of the imagery library.

#include <cstdint>

#if defined(__CUDACC__)
#define WARMPOOL_HOST_DEVICE __host__ __device__
#else
#define WARMPOOL_HOST_DEVICE
#endif

namespace warmpool::imagery {

// The IEEE-754 bits of `x` (bit cast that compiles on host and device).
WARMPOOL_HOST_DEVICE inline uint32_t FloatBits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  return __builtin_bit_cast(uint32_t, x);
#endif
}

// The float whose IEEE-754 bits are `bits`.
WARMPOOL_HOST_DEVICE inline float BitsToFloat(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  return __builtin_bit_cast(float, bits);
#endif
}

}  // namespace warmpool::imagery
