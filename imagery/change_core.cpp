#include "imagery/change_core.h"

#include <algorithm>
#include <chrono>

#include "imagery/fused_pass.h"
#include "imagery/lane_buffer.h"
#include "imagery/normalization.h"

namespace warmpool::imagery {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Smallest meaningful measure range for the quantisation scale, per method.
float MinimumRange(Method m) {
  switch (m) {
    case Method::kLogRatio:
      return 0.02f;
    case Method::kNdvi:
      return 0.05f;
    case Method::kIrMad:
      return 4.0f;  // sqrt(chi2): no-change pixels sit near sqrt(bands)
    default:
      return 4.0f;
  }
}

// Strip-wise fused pass into `scores` and `histogram`; the strips go through buffers laid out as
// lane_buffer.h explains.
void FusedPass(ComputeBackend& backend, const FusedParams& params, const CoreImage& image,
               uint16_t* scores, std::vector<uint64_t>& histogram, CoreTimings& timings) {
  backend.Begin(params, image.width, image.height, scores);
  const int strip_rows =
      image.strip_rows > 0 ? std::min(image.strip_rows, image.height) : image.height;
  const size_t strip_size = static_cast<size_t>(strip_rows) * image.width * params.band_count;
  LaneVector<uint16_t> before_strip = MakeLaneVector<uint16_t>(strip_size, PageLane::kBefore);
  LaneVector<uint16_t> after_strip = MakeLaneVector<uint16_t>(strip_size, PageLane::kAfter);
  for (int row0 = 0; row0 < image.height; row0 += strip_rows) {
    const int rows = std::min(strip_rows, image.height - row0);
    auto t = Clock::now();
    image.read(row0, rows, before_strip.data(), after_strip.data());
    timings.decode_s += Seconds(t);
    t = Clock::now();
    if (!image.after_luts.empty()) {
      ApplyLookupTables(image.after_luts, after_strip.data(),
                        static_cast<size_t>(rows) * image.width);
    }
    backend.FusedStrip(row0, rows, before_strip.data(), after_strip.data());
    timings.fused_pass_s += Seconds(t);
  }
  const auto t = Clock::now();
  histogram.assign(kScoreBins, 0);
  backend.Histogram(histogram.data());
  timings.fused_pass_s += Seconds(t);
  if (params.smooth_radius > 0) {
    const auto s = Clock::now();
    backend.Smooth(histogram.data());
    timings.smooth_s += Seconds(s);
  }
}

}  // namespace

CoreResult RunChangeCore(ComputeBackend& backend, const FusedParams& params, const CoreImage& image,
                         const ThresholdChooser& choose_threshold, MaskParams mask_params,
                         uint16_t* scores, uint8_t* mask) {
  CoreResult result;
  FusedPass(backend, params, image, scores, result.histogram, result.timings);

  auto t = Clock::now();
  result.threshold_bin = choose_threshold(result.histogram);
  result.timings.threshold_s = Seconds(t);

  t = Clock::now();
  mask_params.threshold_bin = result.threshold_bin;
  result.regions = backend.MaskAndFilter(mask_params, mask);
  result.timings.mask_filter_s = Seconds(t);
  return result;
}

float QuantisationScale(const FusedParams& params, const uint16_t* before, const uint16_t* after,
                        size_t count) {
  if (params.method == Method::kNdvi) {
    return 2000.0f;
  }
  std::vector<float> measures(count);
  MeasureRangeCpu(params, before, after, count, 0, count, measures.data());
  std::erase_if(measures, [](float v) { return v < 0.0f; });
  float range = MinimumRange(params.method);
  if (!measures.empty()) {
    const size_t k = std::min(measures.size() - 1, measures.size() * 999 / 1000);
    std::nth_element(measures.begin(), measures.begin() + k, measures.end());
    range = std::max(range, measures[k]);
  }
  return 4000.0f / range;
}

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
    case Method::kIrMad:
      return "irmad";
  }
  return "?";
}

}  // namespace warmpool::imagery
