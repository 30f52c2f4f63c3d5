#include "imagery/change_detection.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "imagery/fused_pass.h"
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

// Smallest meaningful measure range for the quantisation scale, per method.
float MinimumRange(Method m) {
  switch (m) {
    case Method::kLogRatio:
      return 0.02f;
    case Method::kNdvi:
      return 0.05f;
    default:
      return 4.0f;
  }
}

}  // namespace

const char* MethodName(Method m) {
  switch (m) {
    case Method::kAbsDiff:
      return "absdiff";
    case Method::kLogRatio:
      return "logratio";
    case Method::kCva:
      return "cva";
    case Method::kNdvi:
      return "ndvi";
  }
  return "?";
}

const char* NormalizationName(Normalization n) {
  switch (n) {
    case Normalization::kNone:
      return "none";
    case Normalization::kPif:
      return "pif";
    case Normalization::kHistogram:
      return "histogram";
  }
  return "?";
}

const char* ThresholdName(ThresholdMethod t) {
  switch (t) {
    case ThresholdMethod::kOtsu:
      return "otsu";
    case ThresholdMethod::kKittlerIllingworth:
      return "kittler-illingworth";
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
  const auto [red_index, nir_index] = NdviIndices(o, bands);
  const size_t pixel_count = static_cast<size_t>(maps.width) * maps.height;

  // 1. Sample both dates on the same grid and fit the radiometric normalisation.
  auto t = Clock::now();
  PixelSample sample;
  sample.band_count = band_count;
  const int sw = std::min(maps.width, o.sample_side);
  const int sh = std::min(maps.height, o.sample_side);
  sample.count = static_cast<size_t>(sw) * sh;
  sample.before.resize(sample.count * band_count);
  sample.after.resize(sample.count * band_count);
  before.ReadSample(sw, sh, sample.before.data());
  after.ReadSample(sw, sh, sample.after.data());
  maps.timings.emplace_back("sample", Seconds(t));

  t = Clock::now();
  std::vector<std::vector<uint16_t>> luts;
  switch (o.normalization) {
    case Normalization::kNone:
      maps.fit = IdentityFit(band_count);
      break;
    case Normalization::kPif:
      maps.fit = FitPif(sample, before.nodata(), after.nodata());
      break;
    case Normalization::kHistogram:
      maps.fit = IdentityFit(band_count);
      luts = FitHistogramMatch(sample, before.nodata(), after.nodata());
      maps.after_sample = sample.after;  // the quick-look shows `after` as it is
      ApplyLookupTables(luts, sample.after.data(), sample.count);
      break;
  }
  FusedParams p;
  p.band_count = band_count;
  p.method = o.method;
  p.red_index = red_index;
  p.nir_index = nir_index;
  for (int b = 0; b < band_count; ++b) {
    p.gain[b] = maps.fit.gain[b];
    p.offset[b] = maps.fit.offset[b];
  }
  p.inv_band_count = 1.0f / static_cast<float>(band_count);
  p.nodata_before = before.nodata();
  p.nodata_after = after.nodata();
  p.histogram_stride = HistogramStride(pixel_count);
  // Quantisation: the 99.9th percentile of the sample's measure maps to bin 4000, so the change
  // tail keeps resolution; NDVI differences have a fixed range [0, 2].
  if (o.method == Method::kNdvi) {
    p.scale = 2000.0f;
  } else {
    std::vector<float> measures(sample.count);
    MeasureRangeCpu(p, sample.before.data(), sample.after.data(), sample.count, 0, sample.count,
                    measures.data());
    std::erase_if(measures, [](float v) { return v < 0.0f; });
    float range = MinimumRange(o.method);
    if (!measures.empty()) {
      const size_t k = std::min(measures.size() - 1, measures.size() * 999 / 1000);
      std::nth_element(measures.begin(), measures.begin() + k, measures.end());
      range = std::max(range, measures[k]);
    }
    p.scale = 4000.0f / range;
  }
  maps.scale = p.scale;
  maps.sample_width = sw;
  maps.sample_height = sh;
  if (maps.after_sample.empty()) {
    maps.after_sample = std::move(sample.after);
  }
  maps.timings.emplace_back("normalize_fit", Seconds(t));

  // 2. Strip-wise fused pass.
  maps.scores.resize(pixel_count);
  backend.Begin(p, maps.width, maps.height, maps.scores.data());
  const int strip_rows = std::min(o.strip_rows, maps.height);
  const size_t strip_size = static_cast<size_t>(strip_rows) * maps.width * band_count;
  LaneVector<uint16_t> before_strip = MakeLaneVector<uint16_t>(strip_size, PageLane::kBefore);
  LaneVector<uint16_t> after_strip = MakeLaneVector<uint16_t>(strip_size, PageLane::kAfter);
  double decode_s = 0, compute_s = 0;
  for (int row0 = 0; row0 < maps.height; row0 += strip_rows) {
    const int rows = std::min(strip_rows, maps.height - row0);
    t = Clock::now();
    before.ReadStrip(row0, rows, before_strip.data());
    after.ReadStrip(row0, rows, after_strip.data());
    decode_s += Seconds(t);
    t = Clock::now();
    if (!luts.empty()) {
      ApplyLookupTables(luts, after_strip.data(), static_cast<size_t>(rows) * maps.width);
    }
    backend.FusedStrip(row0, rows, before_strip.data(), after_strip.data());
    compute_s += Seconds(t);
  }
  t = Clock::now();
  maps.histogram.assign(kScoreBins, 0);
  backend.Histogram(maps.histogram.data());
  compute_s += Seconds(t);
  maps.timings.emplace_back("decode", decode_s);
  maps.timings.emplace_back("fused_pass", compute_s);

  // 3. Threshold on the host.
  t = Clock::now();
  ThresholdChoice& th = maps.threshold;
  th.method = ThresholdName(o.threshold);
  const std::span<const uint64_t> hist(maps.histogram);
  if (o.threshold == ThresholdMethod::kFixed) {
    const double bin = std::floor(o.fixed_threshold * p.scale);
    th.bin = static_cast<uint32_t>(std::clamp(bin, 0.0, static_cast<double>(kScoreMax)));
    th.auto_bin = th.bin;
  } else {
    th.auto_bin = o.threshold == ThresholdMethod::kOtsu ? OtsuThreshold(hist)
                                                        : KittlerIllingworthThreshold(hist);
    th.floor_bin = static_cast<uint32_t>(
        std::min<double>(kScoreMax, std::ceil(o.auto_floor_factor * QuantileBin(hist, 0.5))));
    th.bin = std::max(th.auto_bin, th.floor_bin);
  }
  th.value = (th.bin + 0.5) / p.scale;
  maps.timings.emplace_back("threshold", Seconds(t));

  // 4. Mask, morphology, MMU.
  t = Clock::now();
  maps.mask.resize(pixel_count);
  MaskParams mp;
  mp.threshold_bin = th.bin;
  mp.open_radius = o.open_radius;
  mp.close_radius = o.close_radius;
  mp.min_area_px = o.min_area_px;
  std::optional<std::vector<Region>> regions = backend.MaskAndFilter(mp, maps.mask.data());
  maps.timings.emplace_back("mask_filter", Seconds(t));

  t = Clock::now();
  if (regions) {
    maps.regions = std::move(*regions);
  } else {
    std::vector<uint8_t> copy = maps.mask;
    maps.regions = FilterComponents(copy.data(), maps.width, maps.height, 0);
  }
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
  maps.timings.emplace_back("regions", Seconds(t));
  maps.timings.emplace_back("compute_total", Seconds(start));
  return maps;
}

}  // namespace warmpool::imagery
