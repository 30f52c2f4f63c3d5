#pragma once

// The change-detection pipeline: sample -> radiometric fit -> then the core of change_core.h:
// strip-wise fused pass with histogram -> automatic or fixed threshold -> morphology -> minimum
// mapping unit. Reads pixels
// through a StripSource and computes through a ComputeBackend, so memory stays bounded by the
// strip size plus 3 bytes per pixel (packed scores and the mask).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "imagery/change_core.h"
#include "imagery/change_math.h"
#include "imagery/components.h"
#include "imagery/compute_backend.h"
#include "imagery/irmad.h"
#include "imagery/lane_buffer.h"
#include "imagery/normalization.h"
#include "imagery/strip_source.h"

namespace warmpool::imagery {

enum class Normalization { kNone, kPif, kHistogram, kStandardize };
enum class ThresholdMethod { kOtsu, kKittlerIllingworth, kEm, kFixed };

struct ChangeOptions {
  Method method = Method::kCva;
  // 1-based raster bands used by both dates; empty = all bands (both rasters must then have the
  // same band count). At most kMaxBands.
  std::vector<int> bands;
  Normalization normalization = Normalization::kPif;
  ThresholdMethod threshold = ThresholdMethod::kOtsu;
  // For kFixed: change when the measure exceeds this value, in the method's unit (DN for
  // absdiff/cva, natural-log units for logratio, NDVI units for ndvi).
  double fixed_threshold = 0.0;
  // Otsu and KI thresholds are raised to at least this multiple of the median magnitude, so an
  // image pair without change does not get half its pixels flagged. 0 disables the floor. (EM
  // has none: where change covers half the scene the median is change. IR-MAD's floor is the
  // chi-square quantile of irmad_floor_p instead.)
  double auto_floor_factor = 3.0;
  // IR-MAD: a pixel is change only if its no-change probability P(chi2_k > chi2) is below this.
  double irmad_floor_p = 0.01;
  IrMadOptions irmad;
  int smooth_radius = 0;     // mean of the magnitude over (2r+1)^2 before the threshold, 0 = none
  int open_radius = 0;       // opening radius in pixels (square 2r+1), 0 = none
  int close_radius = 0;      // closing radius in pixels, 0 = none
  int64_t min_area_px = 16;  // minimum mapping unit (8-connected), 0 = keep all
  int red_band = 3;          // 1-based raster band of red (NDVI); default BGRN (Planet)
  int nir_band = 4;          // 1-based raster band of near infrared (NDVI)
  int strip_rows = 256;      // rows per strip (bounded memory); results do not depend on it
  int threads = 2;           // CPU threads for the CPU backend and GDAL
  int sample_side = 1024;    // the radiometric fit uses at most sample_side^2 pixels
};

struct ThresholdChoice {
  std::string method;      // "otsu", "kittler-illingworth" or "fixed"
  uint32_t bin = 0;        // change when bin > this
  uint32_t auto_bin = 0;   // what the automatic method chose (== bin for fixed)
  uint32_t floor_bin = 0;  // auto_floor_factor * median bin
  double value = 0.0;      // the threshold in measure units: (bin + 0.5) / scale
};

struct ChangeMaps {
  int width = 0;
  int height = 0;
  // Packed scores (change_math.h), width*height.
  LaneVector<uint16_t> scores{LaneAllocator<uint16_t>(PageLane::kScores)};
  std::vector<uint8_t> mask;    // 0 no change, 1 change, 255 nodata
  std::vector<Region> regions;  // kept components, raster order
  RadiometricFit fit;
  IrMadFit irmad;  // method irmad only
  ThresholdChoice threshold;
  float scale = 1.0f;  // bins per measure unit
  uint64_t valid_pixels = 0;
  uint64_t changed_pixels = 0;
  std::array<uint64_t, 16> sector_counts{};  // changed pixels per CVA direction sector
  std::vector<uint64_t> histogram;           // kScoreBins bins of valid magnitudes
  std::string device;
  std::vector<std::pair<std::string, double>> timings;  // stage -> seconds, in order
  // `after` as the fit sampled it (after.ReadSample), before any normalisation: planar, one
  // sample_width x sample_height plane per selected band. The quick-look reuses it when its grid
  // is the same, instead of decoding `after` again.
  std::vector<uint16_t> after_sample;
  int sample_width = 0;
  int sample_height = 0;
};

// Runs the pipeline. REQUIRES: both sources have the same size and band count; options
// validated (ValidateOptions). Throws ImageryError from the sources or the backend.
ChangeMaps ComputeChange(StripSource& before, StripSource& after, const ChangeOptions& options,
                         ComputeBackend& backend);

// Checks option ranges against a band count (after band selection). Throws
// ImageryError(kInvalidArgument) naming the option.
void ValidateOptions(const ChangeOptions& options, int raster_band_count);

// 0-based indices of the red and NIR bands within the selected bands; throws
// ImageryError(kInvalidArgument) when method is NDVI and either is not selected.
std::pair<int, int> NdviIndices(const ChangeOptions& options, const std::vector<int>& bands);

// Names used in the task arguments and the result JSON (MethodName: change_core.h).
const char* NormalizationName(Normalization n);
const char* ThresholdName(ThresholdMethod t);

}  // namespace warmpool::imagery
