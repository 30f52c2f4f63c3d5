#pragma once

// The CPU fused pass's thread split, shared by the CPU backend and the benchmarks so both run it
// the same way.

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "imagery/lane_buffer.h"

namespace warmpool::imagery {

// Runs fn(thread, begin, end) on `threads` contiguous slices of [0, n), each on its own thread,
// and joins them. Slices start at multiples of 32 elements (LineAlignedSlice), so each thread's
// loads are as aligned as the buffer's.
template <typename Fn>
void ParallelSlices(int threads, size_t n, Fn&& fn) {
  std::vector<std::thread> pool;
  const size_t per = LineAlignedSlice(n, threads);
  for (int t = 0; t < threads; ++t) {
    const size_t begin = std::min(n, t * per);
    const size_t end = std::min(n, begin + per);
    pool.emplace_back([&fn, t, begin, end] { fn(t, begin, end); });
  }
  for (std::thread& th : pool) {
    th.join();
  }
}

}  // namespace warmpool::imagery
