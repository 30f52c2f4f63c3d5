#pragma once

// Seeded generator of before/after image pairs with an exact ground-truth change mask (test data
// made here; see docs/QUALITY.md). Deterministic for a given seed on one standard library.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imagery/strip_source.h"

namespace warmpool::imagery {

struct SynthOptions {
  int width = 512;
  int height = 512;
  int band_count = 4;  // BGRN when 4
  uint64_t seed = 1;
  // Per-band gain in 1 +- gain_spread and offset in offset_center +- offset_spread (DN).
  bool radiometric_change = true;
  double gain_spread = 0.1;
  double offset_center = 0.0;
  double offset_spread = 300.0;
  double noise_fraction = 0.02;  // per-pixel Gaussian noise, sigma as a fraction of the signal
  int misregistration_px = 0;    // integer shift of `after` in x and y
  int object_count = 60;         // inserted changes ("buildings" and "clearings")
  int max_object_side = 48;      // largest object side in pixels (>= 6)
  double small_object_fraction = 0.2;  // share of 2-3 px objects (below any sensible MMU)
  int64_t truth_min_area_px = 16;  // objects smaller than this are inserted but not in the truth
  bool identical = false;          // after = before exactly (no change, no nuisance)
  int nodata_border_px = 0;        // this many columns on the left are nodata (0) in `before`
};

struct SynthPair {
  PlanarImage before;
  PlanarImage after;
  std::vector<uint8_t> truth;  // 0 no change, 1 change, 255 nodata; width*height
  int objects_inserted = 0;
  int objects_in_truth = 0;
  std::vector<float> gain;  // after = gain * scene + offset (+ noise)
  std::vector<float> offset;
};

// Generates one pair. Land cover is fBm value noise thresholded into water, vegetation, soil and
// urban classes with per-class BGRN reflectances (DN) and a smooth texture; changes are bright
// rectangular/rotated "buildings" and irregular bare-soil "clearings". REQUIRES: width, height >=
// 16; 1 <= band_count <= 8.
SynthPair GenerateSyntheticPair(const SynthOptions& options);

// Writes <dir>/<prefix>_before.tif, _after.tif (uint16, nodata 0, DEFLATE unless !compress) and
// _truth.tif (uint8, nodata 255), georeferenced in EPSG:32633 at 4.77 m. Returns the paths as
// {"before", "after", "truth"}. Throws ImageryError(kIo).
nlohmann::json WriteSyntheticPair(const SynthPair& pair, const std::string& dir,
                                  const std::string& prefix, bool compress = true);

}  // namespace warmpool::imagery
