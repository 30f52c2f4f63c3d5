#pragma once

// Grid sizes of the grid-stride kernels (256 threads a block), shared by the kernel families.

#include <algorithm>
#include <cstddef>

namespace warmpool::imagery::cuda {

inline constexpr int kStrideThreads = 256;

// Blocks for a grid-stride loop over `n` items: one item per thread up to `blocks_per_sm`
// blocks on each of `sm_count` multiprocessors, at least one block.
inline int GridStrideBlocks(size_t n, int sm_count, int blocks_per_sm) {
  return static_cast<int>(
      std::max<size_t>(1, std::min<size_t>((n + kStrideThreads - 1) / kStrideThreads,
                                           static_cast<size_t>(sm_count) * blocks_per_sm)));
}

}  // namespace warmpool::imagery::cuda
