#include "imagery/smoothing.h"

#include <algorithm>
#include <cstring>

#include "imagery/parallel_slices.h"
#include "imagery/smoothing_math.h"

namespace warmpool::imagery {

void SmoothScoresCpu(uint16_t* scores, int width, int height, int radius, uint32_t stride,
                     int threads, uint64_t* histogram, std::vector<uint16_t>& work) {
  const size_t n = static_cast<size_t>(width) * height;
  work.assign(scores, scores + n);
  const uint16_t* in = work.data();
  std::vector<std::vector<uint64_t>> partial(static_cast<size_t>(std::max(1, threads)),
                                             std::vector<uint64_t>(kScoreBins, 0));
  const int used = n < 65536 ? 1 : std::max(1, threads);
  ParallelSlices(used, n, [&](int t, size_t begin, size_t end) {
    std::vector<uint64_t>& h = partial[t];
    for (size_t i = begin; i < end; ++i) {
      const int y = static_cast<int>(i / width);
      const int x = static_cast<int>(i % width);
      const uint16_t s = BoxMeanScore(in, width, height, x, y, radius);
      scores[i] = s;
      if (s != kInvalidScore && CountedInHistogram(i, stride)) ++h[s & kScoreMask];
    }
  });
  std::fill_n(histogram, kScoreBins, 0);
  for (const auto& h : partial) {
    for (int k = 0; k < kScoreBins; ++k) histogram[k] += h[k];
  }
}

}  // namespace warmpool::imagery
