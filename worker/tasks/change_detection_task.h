#pragma once

// The Celery task `imagery.change_detection` as a plain function the worker registers.
//
//   imagery.change_detection(before, after, output_dir=None, method="cva", bands=None,
//                            normalize="pif", threshold="otsu", open_radius=1, min_area_px=16,
//                            quicklook=True)
//   keyword-only extras: close_radius=0, red_band=3, nir_band=4, magnitude=False
//
// Arguments come positional (`args`, a JSON array) or by keyword (`kwargs`, a JSON object), as in
// a Celery protocol-2 message body. The worker maps exceptions to a FAILURE result:
//   ImageryError (and TaskArgumentError, a subclass) -> exc_type = PythonExceptionFor(e)
//   (worker/tasks/imagery_exceptions.h), exc_message = e.what(); anything else is an internal
//   error.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "imagery/change_job.h"
#include "imagery/compute_backend.h"
#include "imagery/imagery_error.h"

namespace warmpool::imagery {

inline constexpr const char* kChangeDetectionTaskName = "imagery.change_detection";
// Hard time limit (s) of an imagery task whose message sets none (--imagery-time-limit).
inline constexpr double kDefaultImageryTimeLimitS = 1800;

// Worker-level configuration of the imagery task (from the worker's command line).
struct ImageryConfig {
  // --data-root: local input rasters (and the files a VRT names) must resolve inside it;
  // output directories must be real directories inside it (data_root.h). Empty disables the
  // check (tests only; the worker must set it).
  std::string data_root;
  // --output-root: where outputs go when output_dir is None (a sub-folder per before/after pair);
  // also accepted as a parent of an explicit output_dir. Empty = "<data_root>/changes".
  std::string output_root;
  // --imagery-allow-remote (ParseRemotePrefixes): the only /vsi paths read; empty = none.
  std::vector<std::string> allow_remote_prefixes;
  // --imagery-time-limit: the worker's hard limit for a message without time_limit; 0 = none
  // (then --time-limit applies).
  double time_limit_s = kDefaultImageryTimeLimitS;
  // --device: "auto" (first CUDA device when one is usable, else CPU), "cpu", "cuda" or "cuda:N".
  std::string device = "auto";
  int threads = 2;       // CPU threads (fused pass, morphology, GDAL decode)
  int strip_rows = 256;  // rows per strip: memory is O(strip_rows * width * bands) + 3 B/px
  // --imagery-decode-budget-mb: pairs up to this many MiB decoded are decoded once, whole
  // (ChangeJob::whole_decode_max_mb); 0 = always read in strips.
  size_t whole_decode_max_mb = kDefaultWholeDecodeMaxMb;
};

// Wrong argument type (exc_type "TypeError": not a string, list, int or bool where one is
// needed; unknown keyword; too many positionals; missing before/after) or value (exc_type
// "ValueError": unknown method, negative radius, ...). Messages name the argument.
class TaskArgumentError : public ImageryError {
 public:
  enum class Type { kTypeError, kValueError };
  TaskArgumentError(Type type, const std::string& message)
      : ImageryError(Kind::kInvalidArgument, message), type_(type) {}
  Type type() const { return type_; }

 private:
  Type type_;
};

// Runs one task. Returns the result document:
//   {method, normalize, bands, device, before, after, width, height, crs, geotransform,
//    threshold {method, value, bin, auto_bin, floor_bin, bins_per_unit},
//    normalization {gain[], offset[], pif_pixels}, morphology {...},
//    valid_pixels, changed_pixels, changed_fraction, changed_area_map, [direction_sectors[16]],
//    region_count, regions [{id, area_px, area_map, pixel_bbox, map_bbox, centroid_px}],
//    regions_truncated, outputs {mask, regions_geojson, result_json, [quicklook], [magnitude]},
//    decoded_whole (the pair was decoded once into memory, not read in strips),
//    timings_s {open, decode_whole, sample, normalize_fit, decode, fused_pass, threshold,
//               mask_filter, regions, compute_total, encode, quicklook, total}}
// Throws TaskArgumentError for bad arguments, ImageryError for bad data (missing or corrupt
// raster: FileNotFoundError/ValueError; not a regular file (FIFO, device, directory): ValueError;
// outside the data root, through a symlink, a refused VRT or a /vsi path not allowed:
// PermissionError; size, CRS or band mismatch and band out of range: ValueError; CUDA failure:
// RuntimeError). Thread-safe: each
// call has its own state (a CUDA device serves one call at a time).
nlohmann::json RunChangeDetectionTask(const nlohmann::json& args, const nlohmann::json& kwargs,
                                      const ImageryConfig& config);

// Checks a --device value ("auto", "cpu", "cuda", "cuda:N"); throws
// ImageryError(kInvalidArgument) naming the allowed forms. For start-up validation.
void ValidateDeviceSpec(const std::string& device);

// The backend for `device`, logging the choice (event "imagery_device"). "auto" falls back to the
// CPU with a warning when CUDA is unusable; an explicit "cuda:N" that is unusable throws
// ImageryError(kDevice).
ComputeBackendPtr SelectBackend(const std::string& device, int threads);

}  // namespace warmpool::imagery
