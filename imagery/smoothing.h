#pragma once

// CPU half of the magnitude smoothing (smoothing_math.h).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace warmpool::imagery {

// Replaces `scores` (width x height packed scores) by their box mean of radius `radius` and
// recounts `histogram` (kScoreBins) over the pixels whose index is a multiple of `stride`, on
// `threads` threads. `work` is scratch, resized as needed.
void SmoothScoresCpu(uint16_t* scores, int width, int height, int radius, uint32_t stride,
                     int threads, uint64_t* histogram, std::vector<uint16_t>& work);

}  // namespace warmpool::imagery
