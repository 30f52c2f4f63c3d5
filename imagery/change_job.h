#pragma once

// One change-detection job on files: open and validate both rasters, run the pipeline, write the
// products and return the result document.

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imagery/change_detection.h"
#include "imagery/compute_backend.h"
#include "imagery/data_root.h"
#include "imagery/method_selection.h"

namespace warmpool::imagery {

inline constexpr size_t kDefaultWholeDecodeMaxMb = 384;

struct ChangeJob {
  std::string before_path;  // opened under `inputs` (RasterReader::Open)
  std::string after_path;
  PathPolicy inputs;       // empty data_root: unconfined (library and test use)
  std::string output_dir;  // created when missing, inside one of output_roots (OutputDir::Open)
  std::vector<std::string> output_roots;  // empty: unconfined (library and test use)
  std::string output_prefix = "change";
  ChangeOptions options;
  AutoChoices auto_choices;      // options chosen from the data (method_selection.h)
  bool quicklook = true;         // <prefix>_quicklook.png
  bool write_magnitude = false;  // <prefix>_magnitude.tif (uint16 bins, band scale = 1/scale)
  size_t max_regions_in_result = 1000;  // the GeoJSON always has every region
  int quicklook_max_side = 1024;
  // Pairs whose selected bands decode to at most this many MiB (both dates, uint16) are decoded
  // whole, once (a 4096^2 4-band pair: 256 MiB); larger ones are read in strips, which decodes
  // every block twice but keeps memory bounded (a 10980^2 4-band pair: 1.8 GiB). 0 = always strips.
  size_t whole_decode_max_mb = kDefaultWholeDecodeMaxMb;
};

// Runs `job` on `backend`. Writes <prefix>_mask.tif (uint8: 0 no change, 1 change, 255 nodata;
// tiled, DEFLATE; geotransform and CRS of `before`), <prefix>_regions.geojson,
// <prefix>_result.json and, as requested, the quick-look and magnitude rasters; each to a fresh
// file renamed over its name once every product is written (OutputFile), so a planted symlink is
// replaced, never written through, and a failed job leaves no partial product.
// Returns the result document (see docs in change_detection_task.h). Throws ImageryError:
// kNotFound/kCorrupt/kUnsupported for unreadable inputs, kMismatch when size, band count,
// geotransform or CRS differ, kInvalidArgument for bad options, kIo for output failures.
nlohmann::json RunChangeJob(const ChangeJob& job, ComputeBackend& backend);

}  // namespace warmpool::imagery
