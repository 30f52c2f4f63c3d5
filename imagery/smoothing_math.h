#pragma once

// Spatial context for the change magnitude, shared by the CPU path (smoothing.cpp) and the CUDA
// kernel (cuda/smoothing_kernels.cu): the mean magnitude of a pixel's square neighbourhood. At
// sub-metre resolution a changed object spans many pixels while speckle and shadows do not;
// averaging before the threshold is the cheapest form of the contextual step of Bruzzone &
// Prieto (2000, doi:10.1109/36.843009). It does not help misregistration: it widens the edge
// differences of a shifted pair (docs/QUALITY.md, the 1-px misregistration rows).

#include <cstddef>
#include <cstdint>

#include "imagery/change_math.h"

namespace warmpool::imagery {

// Packed score of pixel (x, y) after smoothing `in` (width x height packed scores) with a
// (2r+1)^2 box: the rounded mean magnitude bin of the valid neighbours inside the image, with the
// pixel's own direction sector; a nodata pixel stays kInvalidScore. Integer maths only, so host
// and device agree exactly.
WARMPOOL_HOST_DEVICE inline uint16_t BoxMeanScore(const uint16_t* in, int width, int height, int x,
                                                  int y, int radius) {
  const uint16_t self = in[static_cast<size_t>(y) * width + x];
  if (self == kInvalidScore) return kInvalidScore;
  uint32_t sum = 0;
  uint32_t count = 0;
  const int y0 = y - radius < 0 ? 0 : y - radius;
  const int y1 = y + radius >= height ? height - 1 : y + radius;
  const int x0 = x - radius < 0 ? 0 : x - radius;
  const int x1 = x + radius >= width ? width - 1 : x + radius;
  for (int yy = y0; yy <= y1; ++yy) {
    const uint16_t* row = in + static_cast<size_t>(yy) * width;
    for (int xx = x0; xx <= x1; ++xx) {
      const uint16_t s = row[xx];
      const bool valid = s != kInvalidScore;
      sum += valid ? (s & kScoreMask) : 0u;
      count += valid ? 1u : 0u;
    }
  }
  const uint32_t mean = (sum + count / 2) / count;  // count >= 1: the pixel itself is valid
  return static_cast<uint16_t>(mean | (self & ~kScoreMask));
}

}  // namespace warmpool::imagery
