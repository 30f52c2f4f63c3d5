#pragma once

// CPU fused pass: normalise `after`, compute the change measure, quantise and histogram, in one
// sweep over the strip (per-pixel maths from change_math.h).

#include <cstddef>
#include <cstdint>

#include "imagery/change_math.h"

namespace warmpool::imagery {

// Scores pixels [begin, end) of a planar strip (band b of pixel i at [b * plane + i]) into
// scores[i] and adds their magnitude bins to histogram[kScoreBins] (nodata pixels are not counted;
// with p.histogram_stride > 1 only pixels whose global index global_offset + i is a multiple of
// it are). global_offset is the global index of the strip's first pixel (row0 * width).
// REQUIRES: 1 <= p.band_count <= kMaxBands. Single-threaded; callers split ranges across threads
// with separate histograms. Vectorised (AVX2/AVX-512 clones chosen at run time on x86-64).
void FusedPassCpu(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                  size_t begin, size_t end, size_t global_offset, uint16_t* scores,
                  uint64_t* histogram);

// Same as FusedPassCpu without the histogram (for benchmarks that separate the two costs).
void ScoreRangeCpu(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                   size_t plane, size_t begin, size_t end, uint16_t* scores);

// Float measures (un-quantised) of pixels [begin, end); nodata pixels get -1. Used to choose the
// quantisation scale from a sample.
void MeasureRangeCpu(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                     size_t plane, size_t begin, size_t end, float* measures);

}  // namespace warmpool::imagery
