#pragma once

// The device half of a change-detection task on an in-memory pair, through a ComputeBackend:
// host-side normalisation and quantisation scale (shared by every backend), then the core of
// imagery/change_core.h that ComputeChange runs too: strips -> fused pass + histogram ->
// threshold -> morphology + MMU. The cases add thresholds the task does not offer (q95, a fixed
// bin) to exercise the mask stage.

#include <cstdint>
#include <string>
#include <vector>

#include "gpu-check/core_pair.h"
#include "imagery/compute_backend.h"

namespace warmpool::gpucheck {

// kIrMad fits IR-MAD's projections on the host sample (imagery/irmad.h); method kIrMad needs it.
enum class Norm { kNone, kGainOffset, kHistogramMatch, kStandardize, kIrMad };
enum class Threshold { kOtsu, kKittlerIllingworth, kEm, kQuantile95, kFixedBin };

struct CoreCase {
  imagery::Method method = imagery::Method::kCva;
  int band_count = 4;  // the first band_count bands of the pair
  Norm norm = Norm::kGainOffset;
  Threshold threshold = Threshold::kOtsu;
  int open_radius = 1;
  int close_radius = 0;
  int64_t min_area_px = 16;
  int strip_rows = 64;
  uint32_t histogram_stride = 1;  // power of two (1 = every pixel)
  int smooth_radius = 0;          // box mean of the magnitude before the threshold, 0 = none

  std::string Name() const;
};

// Inputs every backend gets for one case: the selected bands (after histogram matching when
// asked) and the fused parameters (gain/offset from the PIF fit, per-band weights of the
// standardisation or IR-MAD's projections, quantisation scale).
struct Prepared {
  int width = 0;
  int height = 0;
  std::vector<uint16_t> before;
  std::vector<uint16_t> after;
  imagery::FusedParams params;
};

Prepared Prepare(const CorePair& pair, const CoreCase& c);

struct CoreResult {
  std::string device;
  std::vector<uint16_t> scores;
  std::vector<uint64_t> histogram;
  uint32_t threshold_bin = 0;
  std::vector<uint8_t> mask;
  size_t regions = 0;  // 8-connected regions of the final mask
};

// Runs the case on `backend` with in.params but c.smooth_radius; strips of c.strip_rows rows
// (the whole image when <= 0). With
// count_regions, labels the final mask once more on the CPU to fill `regions`.
CoreResult RunCore(imagery::ComputeBackend& backend, const Prepared& in, const CoreCase& c,
                   bool count_regions = true);

// "" when equal, else what differs first (array, index, both values).
std::string FirstDifference(const CoreResult& expect, const CoreResult& got);

}  // namespace warmpool::gpucheck
