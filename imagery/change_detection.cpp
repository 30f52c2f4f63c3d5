#include "imagery/change_detection.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "imagery/change_core.h"
#include "imagery/chi_square.h"
#include "imagery/imagery_error.h"
#include "imagery/threshold.h"

namespace warmpool::imagery {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

std::vector<int> EffectiveBands(const ChangeOptions& o, int band_count) {
  if (!o.bands.empty()) {
    return o.bands;
  }
  std::vector<int> all(static_cast<size_t>(band_count));
  std::iota(all.begin(), all.end(), 1);
  return all;
}

// Both dates resampled to the same sample_width x sample_height grid, for the radiometric fit
// and the quantisation scale.
PixelSample ReadPairSample(StripSource& before, StripSource& after, int sample_width,
                           int sample_height) {
  PixelSample sample;
  sample.band_count = before.band_count();
  sample.count = static_cast<size_t>(sample_width) * sample_height;
  sample.before.resize(sample.count * sample.band_count);
  sample.after.resize(sample.count * sample.band_count);
  before.ReadSample(sample_width, sample_height, sample.before.data());
  after.ReadSample(sample_width, sample_height, sample.after.data());
  return sample;
}

// Fits o.normalization on the sample into maps.fit. Histogram matching returns the lookup tables
// for `after`, applies them to sample.after and keeps the unmatched sample in maps.after_sample
// (the quick-look shows `after` as it is); the other methods return none.
std::vector<std::vector<uint16_t>> FitNormalization(const ChangeOptions& o, uint16_t nodata_before,
                                                    uint16_t nodata_after, PixelSample& sample,
                                                    ChangeMaps& maps) {
  std::vector<std::vector<uint16_t>> luts;
  if (o.method == Method::kIrMad) {  // affine-invariant: fits its own projections instead
    maps.fit = IdentityFit(sample.band_count);
    maps.irmad = FitIrMad(sample, nodata_before, nodata_after, o.irmad);
    return luts;
  }
  switch (o.normalization) {
    case Normalization::kStandardize:
      maps.fit = FitStandardize(sample, nodata_before, nodata_after);
      break;
    case Normalization::kNone:
      maps.fit = IdentityFit(sample.band_count);
      break;
    case Normalization::kPif:
      maps.fit = FitPif(sample, nodata_before, nodata_after);
      break;
    case Normalization::kHistogram:
      maps.fit = IdentityFit(sample.band_count);
      luts = FitHistogramMatch(sample, nodata_before, nodata_after);
      maps.after_sample = sample.after;
      ApplyLookupTables(luts, sample.after.data(), sample.count);
      break;
  }
  return luts;
}

// The fused pass's parameters, all but the quantisation scale.
FusedParams FusedParamsFor(const ChangeOptions& o, const ChangeMaps& maps, int band_count,
                           std::pair<int, int> ndvi_indices, const StripSource& before,
                           const StripSource& after, size_t pixel_count) {
  FusedParams p;
  p.band_count = band_count;
  p.method = o.method;
  p.red_index = ndvi_indices.first;
  p.nir_index = ndvi_indices.second;
  const RadiometricFit& fit = maps.fit;
  for (int b = 0; b < band_count; ++b) {
    p.gain[b] = fit.gain[b];
    p.offset[b] = fit.offset[b];
    p.weight[b] = fit.weight[b];
  }
  if (o.method == Method::kIrMad) {
    ApplyIrMad(maps.irmad, p);
  }
  p.smooth_radius = o.smooth_radius;
  p.inv_band_count = 1.0f / static_cast<float>(band_count);
  p.nodata_before = before.nodata();
  p.nodata_after = after.nodata();
  p.histogram_stride = HistogramStride(pixel_count);
  return p;
}

// The floor of an automatic threshold: IR-MAD's chi-square quantile, none for EM, else the
// median floor.
uint32_t FloorBin(const ChangeOptions& o, int band_count, float scale,
                  std::span<const uint64_t> hist) {
  double bin = 0;
  if (o.method == Method::kIrMad) {
    bin = std::ceil(std::sqrt(ChiSquareUpperQuantile(o.irmad_floor_p, band_count)) * scale);
  } else if (o.threshold != ThresholdMethod::kEm) {
    bin = std::ceil(o.auto_floor_factor * QuantileBin(hist, 0.5));
  }
  return static_cast<uint32_t>(std::min<double>(kScoreMax, bin));
}

uint32_t AutoBin(const ChangeOptions& o, std::span<const uint64_t> hist) {
  switch (o.threshold) {
    case ThresholdMethod::kOtsu:
      return OtsuThreshold(hist);
    case ThresholdMethod::kKittlerIllingworth:
      return KittlerIllingworthThreshold(hist);
    default:
      return EmThreshold(hist);
  }
}

// The fixed threshold, or the automatic one raised to its floor.
ThresholdChoice ChooseThreshold(const ChangeOptions& o, int band_count, float scale,
                                std::span<const uint64_t> hist) {
  ThresholdChoice th;
  th.method = ThresholdName(o.threshold);
  if (o.threshold == ThresholdMethod::kFixed) {
    const double bin = std::floor(o.fixed_threshold * scale);
    th.bin = static_cast<uint32_t>(std::clamp(bin, 0.0, static_cast<double>(kScoreMax)));
    th.auto_bin = th.bin;
  } else {
    th.auto_bin = AutoBin(o, hist);
    th.floor_bin = FloorBin(o, band_count, scale, hist);
    th.bin = std::max(th.auto_bin, th.floor_bin);
  }
  th.value = (th.bin + 0.5) / scale;
  return th;
}

// Marks nodata pixels 255 in the mask and counts valid and changed pixels, the latter per CVA
// direction sector.
void CountChanges(ChangeMaps& maps) {
  const size_t pixel_count = maps.scores.size();
  for (size_t i = 0; i < pixel_count; ++i) {
    const uint16_t s = maps.scores[i];
    if (s == kInvalidScore) {
      maps.mask[i] = 255;
      continue;
    }
    ++maps.valid_pixels;
    if (maps.mask[i] == 1) {
      ++maps.changed_pixels;
      ++maps.sector_counts[s >> kSectorShift];
    }
  }
}

}  // namespace

const char* NormalizationName(Normalization n) {
  switch (n) {
    case Normalization::kNone:
      return "none";
    case Normalization::kPif:
      return "pif";
    case Normalization::kHistogram:
      return "histogram";
    case Normalization::kStandardize:
      return "standardize";
  }
  return "?";
}

const char* ThresholdName(ThresholdMethod t) {
  switch (t) {
    case ThresholdMethod::kOtsu:
      return "otsu";
    case ThresholdMethod::kKittlerIllingworth:
      return "kittler-illingworth";
    case ThresholdMethod::kEm:
      return "em";
    case ThresholdMethod::kFixed:
      return "fixed";
  }
  return "?";
}

std::pair<int, int> NdviIndices(const ChangeOptions& o, const std::vector<int>& bands) {
  const auto index_of = [&](int band) {
    const auto it = std::find(bands.begin(), bands.end(), band);
    return it == bands.end() ? -1 : static_cast<int>(it - bands.begin());
  };
  const int red = index_of(o.red_band);
  const int nir = index_of(o.nir_band);
  if (o.method == Method::kNdvi && (red < 0 || nir < 0 || red == nir)) {
    throw ImageryError(ImageryError::Kind::kInvalidArgument,
                       "method 'ndvi' needs distinct red_band (" + std::to_string(o.red_band) +
                           ") and nir_band (" + std::to_string(o.nir_band) +
                           ") among the selected bands");
  }
  return {std::max(red, 0), std::max(nir, 0)};
}

void ValidateOptions(const ChangeOptions& o, int raster_band_count) {
  const auto fail = [](const std::string& msg) {
    throw ImageryError(ImageryError::Kind::kInvalidArgument, msg);
  };
  const std::vector<int> bands = EffectiveBands(o, raster_band_count);
  if (bands.empty() || static_cast<int>(bands.size()) > kMaxBands) {
    fail("bands: between 1 and " + std::to_string(kMaxBands) + " bands can be used, got " +
         std::to_string(bands.size()));
  }
  for (int b : bands) {
    if (b < 1 || b > raster_band_count) {
      fail("bands: band " + std::to_string(b) + " is out of range 1.." +
           std::to_string(raster_band_count));
    }
  }
  if (o.open_radius < 0 || o.open_radius > 16) {
    fail("open_radius must be in 0..16, got " + std::to_string(o.open_radius));
  }
  if (o.close_radius < 0 || o.close_radius > 16) {
    fail("close_radius must be in 0..16, got " + std::to_string(o.close_radius));
  }
  if (o.smooth_radius < 0 || o.smooth_radius > 8) {
    fail("smooth_radius must be in 0..8, got " + std::to_string(o.smooth_radius));
  }
  if (!(o.irmad_floor_p > 0 && o.irmad_floor_p < 1) || o.irmad.max_iterations < 1 ||
      o.irmad.max_iterations > 1000) {
    fail("irmad: floor p must be in (0, 1) and max_iterations in 1..1000");
  }
  if (o.min_area_px < 0) {
    fail("min_area_px must be >= 0, got " + std::to_string(o.min_area_px));
  }
  if (o.threshold == ThresholdMethod::kFixed &&
      !(std::isfinite(o.fixed_threshold) && o.fixed_threshold >= 0)) {
    fail("a fixed threshold must be a finite number >= 0");
  }
  if (o.strip_rows < 1 || o.threads < 1 || o.sample_side < 16) {
    fail("strip_rows and threads must be >= 1 and sample_side >= 16");
  }
  NdviIndices(o, bands);
}

ChangeMaps ComputeChange(StripSource& before, StripSource& after, const ChangeOptions& o,
                         ComputeBackend& backend) {
  const auto start = Clock::now();
  ChangeMaps maps;
  maps.width = before.width();
  maps.height = before.height();
  maps.device = backend.Name();
  const int band_count = before.band_count();
  const std::vector<int> bands = EffectiveBands(o, band_count);
  const std::pair<int, int> ndvi_indices = NdviIndices(o, bands);
  const size_t pixel_count = static_cast<size_t>(maps.width) * maps.height;

  // 1. Sample both dates on the same grid and fit the radiometric normalisation.
  auto t = Clock::now();
  maps.sample_width = std::min(maps.width, o.sample_side);
  maps.sample_height = std::min(maps.height, o.sample_side);
  PixelSample sample = ReadPairSample(before, after, maps.sample_width, maps.sample_height);
  maps.timings.emplace_back("sample", Seconds(t));

  t = Clock::now();
  CoreImage image;
  image.after_luts = FitNormalization(o, before.nodata(), after.nodata(), sample, maps);
  FusedParams p = FusedParamsFor(o, maps, band_count, ndvi_indices, before, after, pixel_count);
  p.scale = QuantisationScale(p, sample.before.data(), sample.after.data(), sample.count);
  maps.scale = p.scale;
  if (maps.after_sample.empty()) {
    maps.after_sample = std::move(sample.after);
  }
  maps.timings.emplace_back("normalize_fit", Seconds(t));

  // 2.-4. Strip-wise fused pass, threshold on the host, mask, morphology and MMU.
  image.width = maps.width;
  image.height = maps.height;
  image.strip_rows = o.strip_rows;
  image.read = [&](int row0, int rows, uint16_t* before_strip, uint16_t* after_strip) {
    before.ReadStrip(row0, rows, before_strip);
    after.ReadStrip(row0, rows, after_strip);
  };
  MaskParams mp;
  mp.open_radius = o.open_radius;
  mp.close_radius = o.close_radius;
  mp.min_area_px = o.min_area_px;
  maps.scores.resize(pixel_count);
  maps.mask.resize(pixel_count);
  const auto choose = [&](const std::vector<uint64_t>& histogram) {
    maps.threshold = ChooseThreshold(o, band_count, p.scale, histogram);
    return maps.threshold.bin;
  };
  CoreResult core =
      RunChangeCore(backend, p, image, choose, mp, maps.scores.data(), maps.mask.data());
  maps.histogram = std::move(core.histogram);
  maps.timings.emplace_back("decode", core.timings.decode_s);
  maps.timings.emplace_back("fused_pass", core.timings.fused_pass_s);
  maps.timings.emplace_back("smooth", core.timings.smooth_s);
  maps.timings.emplace_back("threshold", core.timings.threshold_s);
  maps.timings.emplace_back("mask_filter", core.timings.mask_filter_s);

  t = Clock::now();
  if (core.regions) {
    maps.regions = std::move(*core.regions);
  } else {
    std::vector<uint8_t> copy = maps.mask;
    maps.regions = FilterComponents(copy.data(), maps.width, maps.height, 0);
  }
  CountChanges(maps);
  maps.timings.emplace_back("regions", Seconds(t));
  maps.timings.emplace_back("compute_total", Seconds(start));
  return maps;
}

}  // namespace warmpool::imagery
