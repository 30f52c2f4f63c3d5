#include "imagery/change_job.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <numeric>

#include "imagery/change_outputs.h"
#include "imagery/imagery_error.h"
#include "imagery/raster_io.h"
#include "imagery/strip_source.h"

namespace warmpool::imagery {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

void CheckSameGrid(const RasterInfo& a, const RasterInfo& b, const std::string& pa,
                   const std::string& pb) {
  const auto fail = [](const std::string& msg) {
    throw ImageryError(ImageryError::Kind::kMismatch, msg);
  };
  if (a.width != b.width || a.height != b.height) {
    fail("size mismatch: '" + pa + "' is " + std::to_string(a.width) + "x" +
         std::to_string(a.height) + " but '" + pb + "' is " + std::to_string(b.width) + "x" +
         std::to_string(b.height) + "; co-register and resample to one grid first");
  }
  if (!SameCrs(a.geo.crs_wkt, b.geo.crs_wkt)) {
    fail("CRS mismatch: '" + pa + "' is " +
         (a.geo.crs_wkt.empty() ? "without CRS" : DescribeCrs(a.geo.crs_wkt)) + " but '" + pb +
         "' is " + (b.geo.crs_wkt.empty() ? "without CRS" : DescribeCrs(b.geo.crs_wkt)) +
         "; reproject one of them (gdalwarp -t_srs)");
  }
  if (a.geo.has_geotransform && b.geo.has_geotransform) {
    const double pixel = std::max(std::fabs(a.geo.geotransform[1]), 1e-12);
    for (int i = 0; i < 6; ++i) {
      const double tol = (i == 0 || i == 3) ? 0.01 * pixel : 1e-6 * pixel + 1e-12;
      if (std::fabs(a.geo.geotransform[i] - b.geo.geotransform[i]) > tol) {
        fail("grid mismatch: the geotransforms of '" + pa + "' and '" + pb +
             "' differ (origin or pixel size); resample to one grid first");
      }
    }
  }
}

// The quick-look's bands of `after` on its grid, one plane each. When they are among the
// selected bands they come from the source: from the fit's sample when the grids match (any square
// raster at the default sizes: the same nearest-neighbour read), else from a sample on the
// quick-look's grid (from memory when the pair was decoded whole). Otherwise `after` is read
// again. `storage` holds what was read.
std::vector<const uint16_t*> QuicklookPlanes(const ChangeMaps& maps,
                                             const std::vector<int>& sample_bands,
                                             StripSource& after_src, const RasterReader& after,
                                             const std::vector<int>& rgb, const QuicklookGrid& grid,
                                             std::vector<uint16_t>& storage) {
  const size_t plane = static_cast<size_t>(grid.width) * grid.height;
  std::vector<size_t> index;  // each quick-look band's place among the selected bands
  for (const int band : rgb) {
    const auto at = std::find(sample_bands.begin(), sample_bands.end(), band);
    if (at == sample_bands.end()) {
      break;
    }
    index.push_back(static_cast<size_t>(at - sample_bands.begin()));
  }
  std::vector<const uint16_t*> planes;
  if (index.size() < rgb.size()) {
    storage.resize(plane * rgb.size());
    after.ReadDecimated(rgb, grid.width, grid.height, storage.data());
    for (size_t c = 0; c < rgb.size(); ++c) {
      planes.push_back(storage.data() + c * plane);
    }
    return planes;
  }
  const uint16_t* source = maps.after_sample.data();
  if (grid.width != maps.sample_width || grid.height != maps.sample_height) {
    storage.resize(plane * sample_bands.size());
    after_src.ReadSample(grid.width, grid.height, storage.data());
    source = storage.data();
  }
  for (const size_t k : index) {
    planes.push_back(source + k * plane);
  }
  return planes;
}

// The job's options with the default bands filled in (every band, when both rasters have the
// same count) and validated. Throws ImageryError (kMismatch, kInvalidArgument).
ChangeOptions ResolveOptions(const ChangeJob& job, const RasterInfo& bi, const RasterInfo& ai,
                             std::string* selection) {
  ChangeOptions options = job.options;
  if (options.bands.empty()) {
    if (bi.band_count != ai.band_count) {
      throw ImageryError(ImageryError::Kind::kMismatch,
                         "band count mismatch: '" + job.before_path + "' has " +
                             std::to_string(bi.band_count) + " bands but '" + job.after_path +
                             "' has " + std::to_string(ai.band_count) + "; pass bands=[...]");
    }
    options.bands.resize(static_cast<size_t>(std::min(bi.band_count, kMaxBands)));
    std::iota(options.bands.begin(), options.bands.end(), 1);
  }
  const DataTraits traits{static_cast<int>(options.bands.size()),
                          bi.data_type == "Byte" && ai.data_type == "Byte"};
  *selection = SelectByData(job.auto_choices, traits, options);
  if (options.method == Method::kIrMad) {
    // IR-MAD fits its own projections; a normalisation would be applied to nothing.
    if (!job.auto_choices.normalization && options.normalization != Normalization::kNone) {
      throw ImageryError(ImageryError::Kind::kInvalidArgument,
                         std::string("normalize: method 'irmad'") +
                             (job.auto_choices.enabled ? " (chosen for this data by 'auto')" : "") +
                             " is invariant to each date's gain and offset and fits its own "
                             "projections; omit normalize, pass None, or name a CVA-family method");
    }
    options.normalization = Normalization::kNone;
  }
  ValidateOptions(options, std::min(bi.band_count, ai.band_count));
  return options;
}

struct PairSources {
  std::unique_ptr<StripSource> before;
  std::unique_ptr<StripSource> after;
  bool decoded_whole = false;
};

// A pair within the budget is decoded whole, once; a larger one is read in strips, and then
// every block is decoded twice (the sample, the strips) but memory stays bounded.
PairSources OpenSources(const RasterReader& before, const RasterReader& after,
                        const std::vector<int>& bands, size_t whole_decode_max_mb) {
  const RasterInfo& info = before.info();
  const size_t pair_bytes =
      2 * sizeof(uint16_t) * static_cast<size_t>(info.width) * info.height * bands.size();
  PairSources sources;
  sources.decoded_whole = pair_bytes <= whole_decode_max_mb * (size_t{1} << 20);
  if (sources.decoded_whole) {
    sources.before = std::make_unique<DecodedStripSource>(before, bands);
    sources.after = std::make_unique<DecodedStripSource>(after, bands);
  } else {
    sources.before = std::make_unique<GdalStripSource>(before, bands);
    sources.after = std::make_unique<GdalStripSource>(after, bands);
  }
  return sources;
}

// The job's product files, written under temporary names and committed together at the end;
// `paths` is the result document's "outputs".
class JobFiles {
 public:
  JobFiles(const OutputDir& dir, std::string prefix) : dir_(dir), prefix_(std::move(prefix)) {}

  OutputFile& Add(const char* key, const char* suffix) {
    files_.push_back(std::make_unique<OutputFile>(dir_, prefix_ + suffix));
    paths[key] = files_.back()->path();
    return *files_.back();
  }

  void CommitAll() {
    for (const auto& file : files_) {
      file->Commit();
    }
  }

  nlohmann::json paths;

 private:
  const OutputDir& dir_;
  const std::string prefix_;
  std::vector<std::unique_ptr<OutputFile>> files_;
};

// The mask, the magnitude raster when asked, and the regions GeoJSON.
void WriteMaps(const ChangeJob& job, const ChangeOptions& options, const ChangeMaps& maps,
               const GeoInfo& geo, const std::string& crs_name, JobFiles& files) {
  OutputFile& mask_file = files.Add("mask", "_mask.tif");
  WriteGeoTiffU8(mask_file.WritePath(), maps.mask.data(), maps.width, maps.height, geo, 255.0,
                 std::string("change mask (") + MethodName(options.method) + ")");
  if (job.write_magnitude) {
    OutputFile& magnitude_file = files.Add("magnitude", "_magnitude.tif");
    const uint16_t* scores = maps.scores.data();
    const size_t width = static_cast<size_t>(maps.width);
    WriteGeoTiffU16Strips(
        magnitude_file.WritePath(), maps.width, maps.height, geo, 1.0 / maps.scale, 65535.0,
        std::string(MethodName(options.method)) + " magnitude",
        [&](int row0, int rows, uint16_t* out) {
          const uint16_t* in = scores + static_cast<size_t>(row0) * width;
          for (size_t i = 0; i < static_cast<size_t>(rows) * width; ++i) {
            out[i] = in[i] == kInvalidScore ? uint16_t{65535} : uint16_t(in[i] & kScoreMask);
          }
        });
  }
  OutputFile& regions_file = files.Add("regions_geojson", "_regions.geojson");
  regions_file.Write(RegionsGeoJson(maps.regions, geo, crs_name));
}

// The quick-look PNG: `after` in true colour (or its first selected band) under the mask.
void WriteQuicklook(const ChangeJob& job, const ChangeOptions& options, const ChangeMaps& maps,
                    StripSource& after_src, const RasterReader& after, JobFiles& files) {
  const int band_count = after.info().band_count;
  std::vector<int> rgb;
  if (band_count >= 3 && options.red_band >= 3 && options.red_band <= band_count) {
    rgb = {options.red_band, options.red_band - 1, options.red_band - 2};
  } else {
    rgb = {options.bands.front()};
  }
  OutputFile& quicklook_file = files.Add("quicklook", "_quicklook.png");
  const QuicklookGrid grid = QuicklookSize(maps.width, maps.height, job.quicklook_max_side);
  std::vector<uint16_t> storage;
  const std::vector<const uint16_t*> planes =
      QuicklookPlanes(maps, options.bands, after_src, after, rgb, grid, storage);
  quicklook_file.Write(EncodeQuicklook(planes, grid, maps.mask.data(), maps.width, maps.height));
}

// The result document without its outputs and timings.
nlohmann::json ResultDocument(const ChangeJob& job, const ChangeOptions& options,
                              const ChangeMaps& maps, const RasterReader& before,
                              const RasterReader& after, bool decoded_whole,
                              const std::string& crs_name) {
  const GeoInfo& geo = before.info().geo;
  nlohmann::json result;
  result["method"] = MethodName(options.method);
  result["normalize"] = NormalizationName(options.normalization);
  result["bands"] = options.bands;
  result["device"] = maps.device;
  result["decoded_whole"] = decoded_whole;
  result["before"] = before.path();
  result["after"] = after.path();
  result["width"] = maps.width;
  result["height"] = maps.height;
  result["crs"] = crs_name;
  result["geotransform"] = geo.geotransform;
  result["threshold"] = {{"method", maps.threshold.method},
                         {"value", maps.threshold.value},
                         {"bin", maps.threshold.bin},
                         {"auto_bin", maps.threshold.auto_bin},
                         {"floor_bin", maps.threshold.floor_bin},
                         {"bins_per_unit", maps.scale}};
  result["normalization"] = {{"gain", maps.fit.gain},
                             {"offset", maps.fit.offset},
                             {"weight", maps.fit.weight},
                             {"pif_pixels", maps.fit.pif_count}};
  if (options.method == Method::kIrMad) {
    result["irmad"] = {{"iterations", maps.irmad.iterations},
                       {"converged", maps.irmad.converged},
                       {"max_iterations", options.irmad.max_iterations},
                       {"canonical_correlations", maps.irmad.rho},
                       {"fit_pixels", maps.irmad.pixels},
                       {"floor_no_change_p", options.irmad_floor_p}};
  }
  result["morphology"] = {{"smooth_radius", options.smooth_radius},
                          {"open_radius", options.open_radius},
                          {"close_radius", options.close_radius},
                          {"min_area_px", options.min_area_px}};
  result["valid_pixels"] = maps.valid_pixels;
  result["changed_pixels"] = maps.changed_pixels;
  result["changed_fraction"] =
      maps.valid_pixels ? static_cast<double>(maps.changed_pixels) / maps.valid_pixels : 0.0;
  result["changed_area_map"] = static_cast<double>(maps.changed_pixels) * PixelArea(geo);
  if (options.method == Method::kCva) {
    result["direction_sectors"] = maps.sector_counts;
  }
  result["region_count"] = maps.regions.size();
  result["regions"] = RegionsJson(maps.regions, geo, job.max_regions_in_result);
  result["regions_truncated"] = maps.regions.size() > job.max_regions_in_result;
  return result;
}

}  // namespace

nlohmann::json RunChangeJob(const ChangeJob& job, ComputeBackend& backend) {
  const auto start = Clock::now();
  auto t = Clock::now();
  // Every read takes whole block rows once (strips, and the sample's windows), so the block
  // cache only needs one: 64 MB holds a 256-row tile row of a 4-band image up to 32,000 px wide.
  // 128 MB added 60 MB of peak RSS at 10980^2 for no speed (docs/benchmarks/imagery.md).
  ConfigureGdal(job.options.threads, 64);
  RasterReader before = RasterReader::Open(job.before_path, job.inputs);
  RasterReader after = RasterReader::Open(job.after_path, job.inputs);
  const RasterInfo bi = before.info();
  const RasterInfo ai = after.info();
  CheckSameGrid(bi, ai, before.path(), after.path());
  // Checked before any work: a refused output_dir costs no decode.
  const OutputDir out_dir = OutputDir::Open(job.output_dir, job.output_roots);
  std::string selection;
  const ChangeOptions options = ResolveOptions(job, bi, ai, &selection);
  const double open_s = Seconds(t);

  t = Clock::now();
  PairSources sources = OpenSources(before, after, options.bands, job.whole_decode_max_mb);
  const double decode_whole_s = Seconds(t);
  ChangeMaps maps = ComputeChange(*sources.before, *sources.after, options, backend);

  t = Clock::now();
  JobFiles files(out_dir, job.output_prefix);
  const std::string crs_name = DescribeCrs(bi.geo.crs_wkt);
  WriteMaps(job, options, maps, bi.geo, crs_name, files);
  const double encode_s = Seconds(t);

  double quicklook_s = 0;
  if (job.quicklook) {
    t = Clock::now();
    WriteQuicklook(job, options, maps, *sources.after, after, files);
    quicklook_s = Seconds(t);
  }
  OutputFile& result_file = files.Add("result_json", "_result.json");

  nlohmann::json result =
      ResultDocument(job, options, maps, before, after, sources.decoded_whole, crs_name);
  result["selected_by_data"] = job.auto_choices.enabled;
  if (job.auto_choices.enabled) result["selection_reason"] = selection;
  result["outputs"] = files.paths;
  nlohmann::json timings;
  timings["open"] = open_s;
  timings["decode_whole"] = decode_whole_s;
  for (const auto& [stage, seconds] : maps.timings) {
    timings[stage] = seconds;
  }
  timings["encode"] = encode_s;
  timings["quicklook"] = quicklook_s;
  timings["total"] = Seconds(start);
  result["timings_s"] = timings;

  result_file.Write(result.dump(2) + '\n');
  files.CommitAll();
  return result;
}

}  // namespace warmpool::imagery
