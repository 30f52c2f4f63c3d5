#pragma once

// Shared by imagery_bench and fused_pass_ab, so both measure the same pixels, the same fused-pass
// parameters and the same-run STREAM-like copy the same way.

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

#include "worker/imagery/change_math.h"
#include "worker/imagery/synthetic_pair.h"

namespace warmpool::imagery::bench {

// STREAM-like copy arrays: 2 x 512 MiB of double; bytes = read + write.
inline constexpr size_t kCopyDoubles = (512ull << 20) / sizeof(double);

// Runs fn(thread, begin, end) on `threads` contiguous slices of [0, n) and joins them.
template <typename Fn>
void Parallel(int threads, size_t n, Fn&& fn) {
  std::vector<std::thread> pool;
  const size_t per = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    const size_t begin = std::min(n, t * per), end = std::min(n, begin + per);
    pool.emplace_back([&fn, t, begin, end] { fn(t, begin, end); });
  }
  for (auto& th : pool) {
    th.join();
  }
}

// The copy's kernel: a plain loop, as STREAM's (GCC makes it a memmove call).
inline void CopyKernel(const double* __restrict__ a, double* __restrict__ b, size_t begin,
                       size_t end) {
  for (size_t i = begin; i < end; ++i) {
    b[i] = a[i];
  }
}

// The benchmarks' pixels: a size x size 4-band BGRN synthetic pair with gain/offset, noise and
// changes.
inline SynthPair BenchPair(int size) {
  SynthOptions so;
  so.width = so.height = size;
  so.object_count = static_cast<int>(static_cast<size_t>(size) * size / 4096);
  return GenerateSyntheticPair(so);
}

// 4-band CVA normalised with the pair's true gain/offset, with the histogram stride ComputeChange
// uses for `pixels`.
inline FusedParams CvaParamsFor(const SynthPair& pair, size_t pixels) {
  constexpr int kBands = 4;
  FusedParams p;
  p.band_count = kBands;
  p.method = Method::kCva;
  p.inv_band_count = 1.0f / kBands;
  for (int k = 0; k < kBands; ++k) {
    p.gain[k] = 1.0f / pair.gain[k];
    p.offset[k] = -pair.offset[k] / pair.gain[k];
  }
  p.scale = 1.0f;
  p.histogram_stride = HistogramStride(pixels);
  return p;
}

}  // namespace warmpool::imagery::bench
