#include "gpu-check/core_run.h"

#include <algorithm>
#include <sstream>

#include "imagery/change_core.h"
#include "imagery/components.h"
#include "imagery/irmad.h"
#include "imagery/normalization.h"
#include "imagery/threshold.h"

namespace warmpool::gpucheck {

using imagery::Method;

namespace {

const char* NormName(Norm n) {
  switch (n) {
    case Norm::kNone:
      return "none";
    case Norm::kGainOffset:
      return "pif";
    case Norm::kHistogramMatch:
      return "histmatch";
    case Norm::kStandardize:
      return "standardize";
    case Norm::kIrMad:
      return "irmad-fit";
  }
  return "?";
}

const char* ThresholdName(Threshold t) {
  switch (t) {
    case Threshold::kOtsu:
      return "otsu";
    case Threshold::kKittlerIllingworth:
      return "ki";
    case Threshold::kEm:
      return "em";
    case Threshold::kQuantile95:
      return "q95";
    case Threshold::kFixedBin:
      return "fixed";
  }
  return "?";
}

uint32_t ChooseThreshold(Threshold t, const std::vector<uint64_t>& h) {
  switch (t) {
    case Threshold::kOtsu:
      return imagery::OtsuThreshold(h);
    case Threshold::kKittlerIllingworth:
      return imagery::KittlerIllingworthThreshold(h);
    case Threshold::kEm:
      return imagery::EmThreshold(h);
    case Threshold::kQuantile95:
      return imagery::QuantileBin(h, 0.95);
    case Threshold::kFixedBin:
      return 700;
  }
  return 0;
}

// Every `step`-th pixel of both images, planar (the fit's sample).
imagery::PixelSample Sample(const Prepared& in, int bands, size_t step) {
  const size_t n = static_cast<size_t>(in.width) * in.height;
  imagery::PixelSample s;
  s.band_count = bands;
  s.count = (n + step - 1) / step;
  s.before.resize(s.count * bands);
  s.after.resize(s.count * bands);
  for (int b = 0; b < bands; ++b) {
    for (size_t k = 0; k < s.count; ++k) {
      s.before[b * s.count + k] = in.before[b * n + k * step];
      s.after[b * s.count + k] = in.after[b * n + k * step];
    }
  }
  return s;
}

template <typename T>
bool Report(std::ostringstream& out, const char* what, const std::vector<T>& a,
            const std::vector<T>& b) {
  if (a.size() != b.size()) {
    out << what << ": size " << a.size() << " vs " << b.size();
    return true;
  }
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin());
  if (ia == a.end()) {
    return false;
  }
  out << what << "[" << (ia - a.begin()) << "]: " << +*ia << " vs " << +*ib;
  return true;
}

}  // namespace

std::string CoreCase::Name() const {
  std::ostringstream s;
  s << imagery::MethodName(method) << " bands=" << band_count << " norm=" << NormName(norm)
    << " threshold=" << ThresholdName(threshold) << " open=" << open_radius
    << " close=" << close_radius << " mmu=" << min_area_px << " strip=" << strip_rows
    << " hist_stride=" << histogram_stride << " smooth=" << smooth_radius;
  return s.str();
}

Prepared Prepare(const CorePair& pair, const CoreCase& c) {
  Prepared in;
  in.width = pair.width;
  in.height = pair.height;
  const size_t n = static_cast<size_t>(pair.width) * pair.height;
  in.before.assign(pair.before.begin(), pair.before.begin() + n * c.band_count);
  in.after.assign(pair.after.begin(), pair.after.begin() + n * c.band_count);
  imagery::FusedParams& p = in.params;
  p.band_count = c.band_count;
  p.method = c.method;
  p.red_index = std::max(0, c.band_count - 2);
  p.nir_index = c.band_count - 1;
  p.inv_band_count = 1.0f / static_cast<float>(c.band_count);
  p.nodata_before = 0;
  p.nodata_after = 0;
  p.histogram_stride = c.histogram_stride;
  p.smooth_radius = c.smooth_radius;
  const size_t step = std::max<size_t>(1, n / 65536);
  if (c.norm == Norm::kGainOffset) {
    const imagery::RadiometricFit fit = imagery::FitPif(Sample(in, c.band_count, step), 0, 0);
    for (int b = 0; b < c.band_count; ++b) {
      p.gain[b] = fit.gain[b];
      p.offset[b] = fit.offset[b];
    }
  } else if (c.norm == Norm::kStandardize) {
    const imagery::RadiometricFit fit =
        imagery::FitStandardize(Sample(in, c.band_count, step), 0, 0);
    for (int b = 0; b < c.band_count; ++b) {
      p.gain[b] = fit.gain[b];
      p.offset[b] = fit.offset[b];
      p.weight[b] = fit.weight[b];
    }
  } else if (c.norm == Norm::kIrMad) {  // fitted once on the host; every backend gets it
    imagery::ApplyIrMad(imagery::FitIrMad(Sample(in, c.band_count, step), 0, 0), p);
  } else if (c.norm == Norm::kHistogramMatch) {
    const auto tables = imagery::FitHistogramMatch(Sample(in, c.band_count, step), 0, 0);
    imagery::ApplyLookupTables(tables, in.after.data(), n);
  }
  // Quantisation as ComputeChange does it (QuantisationScale), on this sample.
  const imagery::PixelSample s = Sample(in, c.band_count, step);
  p.scale = imagery::QuantisationScale(p, s.before.data(), s.after.data(), s.count);
  return in;
}

CoreResult RunCore(imagery::ComputeBackend& backend, const Prepared& in, const CoreCase& c,
                   bool count_regions) {
  const int w = in.width, h = in.height, bands = in.params.band_count;
  const size_t n = static_cast<size_t>(w) * h;
  CoreResult r;
  r.device = backend.Name();
  r.scores.resize(n);
  r.mask.resize(n);
  imagery::CoreImage image;
  image.width = w;
  image.height = h;
  image.strip_rows = c.strip_rows;
  image.read = [&](int row0, int rows, uint16_t* before, uint16_t* after) {
    const size_t plane = static_cast<size_t>(rows) * w;
    for (int b = 0; b < bands; ++b) {  // planar strip: band b at [b * plane]
      const size_t from = b * n + static_cast<size_t>(row0) * w;
      std::copy_n(in.before.begin() + from, plane, before + b * plane);
      std::copy_n(in.after.begin() + from, plane, after + b * plane);
    }
  };
  imagery::MaskParams m;
  m.open_radius = c.open_radius;
  m.close_radius = c.close_radius;
  m.min_area_px = c.min_area_px;
  imagery::FusedParams params = in.params;
  params.smooth_radius = c.smooth_radius;  // so one Prepared serves a case with and without
  imagery::CoreResult core = imagery::RunChangeCore(
      backend, params, image,
      [&](const std::vector<uint64_t>& histogram) {
        return ChooseThreshold(c.threshold, histogram);
      },
      m, r.scores.data(), r.mask.data());
  r.histogram = std::move(core.histogram);
  r.threshold_bin = core.threshold_bin;
  if (count_regions) {
    std::vector<uint8_t> copy = r.mask;
    r.regions = imagery::FilterComponents(copy.data(), w, h, 0).size();
  }
  return r;
}

std::string FirstDifference(const CoreResult& expect, const CoreResult& got) {
  std::ostringstream out;
  if (Report(out, "histogram", expect.histogram, got.histogram) ||
      Report(out, "scores", expect.scores, got.scores)) {
    return out.str();
  }
  if (expect.threshold_bin != got.threshold_bin) {
    out << "threshold_bin: " << expect.threshold_bin << " vs " << got.threshold_bin;
    return out.str();
  }
  if (Report(out, "mask", expect.mask, got.mask)) {
    return out.str();
  }
  if (expect.regions != got.regions) {
    out << "regions: " << expect.regions << " vs " << got.regions;
  }
  return out.str();
}

}  // namespace warmpool::gpucheck
