#pragma once

// The change-detection core on planar strips, free of GDAL: the fused pass with histogram over
// the strips a reader supplies, the threshold a chooser picks from that histogram, then mask,
// morphology and the minimum mapping unit on the backend. ComputeChange (change_detection.cpp)
// runs it on two StripSources, gpu-check/ on in-memory pairs. C++17, so .cu files may include it.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "imagery/change_math.h"
#include "imagery/components.h"
#include "imagery/compute_backend.h"

namespace warmpool::imagery {

// Fills rows [row0, row0 + rows) of both dates into `before` and `after`, planar (band b at
// [b * rows * width]).
using StripReader = std::function<void(int row0, int rows, uint16_t* before, uint16_t* after)>;

// The threshold bin (change when bin > it) for a histogram of kScoreBins bins.
using ThresholdChooser = std::function<uint32_t(const std::vector<uint64_t>& histogram)>;

struct CoreImage {
  int width = 0;
  int height = 0;
  int strip_rows = 0;  // rows per strip; <= 0: the whole image in one strip
  StripReader read;
  // Lookup tables applied to each `after` strip once read (histogram matching); empty: none.
  std::vector<std::vector<uint16_t>> after_luts;
};

// Seconds per stage, as ComputeChange reports them.
struct CoreTimings {
  double decode_s = 0;       // the reader
  double fused_pass_s = 0;   // lookup tables, fused strips, histogram (device half)
  double threshold_s = 0;    // the chooser
  double smooth_s = 0;       // magnitude smoothing and recount (smooth_radius > 0)
  double mask_filter_s = 0;  // mask, morphology, nodata clear, MMU
};

struct CoreResult {
  std::vector<uint64_t> histogram;  // kScoreBins bins of valid, counted scores
  uint32_t threshold_bin = 0;
  std::optional<std::vector<Region>> regions;  // kept regions, when the backend computed them
  CoreTimings timings;
};

// Runs the core on `backend`. `mask_params` gives the morphology and MMU; its threshold_bin is
// the chooser's. `scores` and `mask` (host, width * height each) receive the packed scores and
// the 0/1 mask (nodata cleared to 0). Throws what the reader, chooser or backend throw.
CoreResult RunChangeCore(ComputeBackend& backend, const FusedParams& params, const CoreImage& image,
                         const ThresholdChooser& choose_threshold, MaskParams mask_params,
                         uint16_t* scores, uint8_t* mask);

// The quantisation scale (bins per measure unit) of `params.method` for `count` sample pixels of
// both dates (planar, params.band_count planes): the 99.9th percentile of the sample's measure
// maps to bin 4000, so the change tail keeps resolution; NDVI differences have a fixed range
// [0, 2].
float QuantisationScale(const FusedParams& params, const uint16_t* before, const uint16_t* after,
                        size_t count);

// The name used in task arguments, the result JSON and reports: absdiff, logratio, cva, ndvi.
const char* MethodName(Method m);

}  // namespace warmpool::imagery
