#pragma once

// Shared by the imagery benchmarks (imagery_bench, fused_pass_ab, sample_read_bench), so they
// measure the same pixels, the same fused-pass parameters and the same-run STREAM-like copy the
// same way.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "imagery/change_math.h"
#include "imagery/lane_buffer.h"
#include "imagery/parallel_slices.h"
#include "imagery/testing/synthetic_pair.h"

namespace warmpool::imagery::bench {

// STREAM-like copy arrays: 2 x 512 MiB of double; bytes = read + write.
inline constexpr size_t kCopyDoubles = (512ull << 20) / sizeof(double);

// The copy's source and destination, both starting on a page boundary (lane 0): the copy's fastest
// layout in a scratch comparison (1-5 % ahead of plain std::vectors; a 1 KiB stagger ranged from
// 2 % behind to 2 % ahead of them), so the pass's layout does not flatter the ratio.
struct CopyArrays {
  LaneVector<double> a{kCopyDoubles, 1.0, LaneAllocator<double>(PageLane::kBefore)};
  LaneVector<double> b{kCopyDoubles, 0.0, LaneAllocator<double>(PageLane::kBefore)};
};

// The median of `v` (the upper one for an even count), for per-round figures.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The copy's kernel: a plain loop, as STREAM's (GCC makes it a memmove call).
inline void CopyKernel(const double* __restrict__ a, double* __restrict__ b, size_t begin,
                       size_t end) {
  for (size_t i = begin; i < end; ++i) {
    b[i] = a[i];
  }
}

// The fused pass's input and output buffers, laid out as ComputeChange lays out its strips and
// scores (lane_buffer.h).
struct PassBuffers {
  LaneVector<uint16_t> before;
  LaneVector<uint16_t> after;
  LaneVector<uint16_t> scores;
};

// The benchmarks' pixels: a size x size 4-band BGRN synthetic pair with gain/offset, noise and
// changes.
inline SynthPair BenchPair(int size) {
  SynthOptions so;
  so.width = so.height = size;
  so.object_count = static_cast<int>(static_cast<size_t>(size) * size / 4096);
  return GenerateSyntheticPair(so);
}

// A copy of `pair`'s pixels in PassBuffers (the generator's planes are plain std::vectors), by
// default in the pipeline's lanes.
inline PassBuffers LanePassBuffers(const SynthPair& pair, PageLane before = PageLane::kBefore,
                                   PageLane after = PageLane::kAfter,
                                   PageLane scores = PageLane::kScores) {
  const std::vector<uint16_t>& b = pair.before.pixels;
  const std::vector<uint16_t>& a = pair.after.pixels;
  return {LaneVector<uint16_t>(b.begin(), b.end(), LaneAllocator<uint16_t>(before)),
          LaneVector<uint16_t>(a.begin(), a.end(), LaneAllocator<uint16_t>(after)),
          MakeLaneVector<uint16_t>(b.size() / pair.before.band_count, scores)};
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
