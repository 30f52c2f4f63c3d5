#include "worker/imagery/normalization.h"

#include <algorithm>
#include <cmath>

namespace warmpool::imagery {
namespace {

std::vector<size_t> ValidIndices(const PixelSample& s, uint16_t nodata_before,
                                 uint16_t nodata_after) {
  std::vector<size_t> valid;
  valid.reserve(s.count);
  for (size_t i = 0; i < s.count; ++i) {
    bool ok = true;
    for (int b = 0; b < s.band_count; ++b) {
      const size_t k = static_cast<size_t>(b) * s.count + i;
      ok = ok && s.before[k] != nodata_before && s.after[k] != nodata_after;
    }
    if (ok) {
      valid.push_back(i);
    }
  }
  return valid;
}

struct Moments {
  double mean_x = 0, mean_y = 0, sxx = 0, syy = 0, sxy = 0;
};

// Moments of band b over `indices`; x = before, y = after.
Moments BandMoments(const PixelSample& s, int b, const std::vector<size_t>& indices) {
  Moments m;
  if (indices.empty()) {
    return m;
  }
  const uint16_t* x = s.before.data() + static_cast<size_t>(b) * s.count;
  const uint16_t* y = s.after.data() + static_cast<size_t>(b) * s.count;
  for (size_t i : indices) {
    m.mean_x += x[i];
    m.mean_y += y[i];
  }
  m.mean_x /= static_cast<double>(indices.size());
  m.mean_y /= static_cast<double>(indices.size());
  for (size_t i : indices) {
    const double dx = x[i] - m.mean_x;
    const double dy = y[i] - m.mean_y;
    m.sxx += dx * dx;
    m.syy += dy * dy;
    m.sxy += dx * dy;
  }
  m.sxx /= static_cast<double>(indices.size());
  m.syy /= static_cast<double>(indices.size());
  m.sxy /= static_cast<double>(indices.size());
  return m;
}

}  // namespace

RadiometricFit IdentityFit(int band_count) {
  RadiometricFit fit;
  fit.gain.assign(static_cast<size_t>(band_count), 1.0f);
  fit.offset.assign(static_cast<size_t>(band_count), 0.0f);
  return fit;
}

RadiometricFit FitPif(const PixelSample& s, uint16_t nodata_before, uint16_t nodata_after,
                      double pif_fraction, int iterations) {
  RadiometricFit fit = IdentityFit(s.band_count);
  std::vector<size_t> pif = ValidIndices(s, nodata_before, nodata_after);
  if (pif.size() < 16) {
    return fit;
  }
  const std::vector<size_t> valid = pif;
  // Mean/std matching as the starting point (robust to nothing, but unbiased by gain/offset).
  for (int b = 0; b < s.band_count; ++b) {
    const Moments m = BandMoments(s, b, valid);
    const double g = m.syy > 0 ? std::sqrt(m.sxx / m.syy) : 1.0;
    fit.gain[b] = static_cast<float>(g);
    fit.offset[b] = static_cast<float>(m.mean_x - g * m.mean_y);
  }
  std::vector<std::pair<double, size_t>> residuals(valid.size());
  for (int iter = 0; iter < iterations; ++iter) {
    // Robust residual scale per band: median absolute residual.
    std::vector<double> scale(static_cast<size_t>(s.band_count), 1.0);
    std::vector<double> abs_res(valid.size());
    for (int b = 0; b < s.band_count; ++b) {
      const uint16_t* x = s.before.data() + static_cast<size_t>(b) * s.count;
      const uint16_t* y = s.after.data() + static_cast<size_t>(b) * s.count;
      for (size_t k = 0; k < valid.size(); ++k) {
        const size_t i = valid[k];
        abs_res[k] = std::fabs(fit.gain[b] * y[i] + fit.offset[b] - x[i]);
      }
      std::nth_element(abs_res.begin(), abs_res.begin() + abs_res.size() / 2, abs_res.end());
      scale[b] = std::max(abs_res[abs_res.size() / 2], 0.5);
    }
    for (size_t k = 0; k < valid.size(); ++k) {
      const size_t i = valid[k];
      double z = 0;
      for (int b = 0; b < s.band_count; ++b) {
        const size_t idx = static_cast<size_t>(b) * s.count + i;
        const double r = (fit.gain[b] * s.after[idx] + fit.offset[b] - s.before[idx]) / scale[b];
        z += r * r;
      }
      residuals[k] = {z, i};
    }
    const size_t keep = std::max<size_t>(
        16, static_cast<size_t>(pif_fraction * static_cast<double>(residuals.size())));
    std::nth_element(residuals.begin(), residuals.begin() + (keep - 1), residuals.end());
    pif.resize(keep);
    for (size_t k = 0; k < keep; ++k) {
      pif[k] = residuals[k].second;
    }
    std::sort(pif.begin(), pif.end());
    for (int b = 0; b < s.band_count; ++b) {
      const Moments m = BandMoments(s, b, pif);
      // Orthogonal (total least squares) regression of before on after: x = g * y + o.
      double g;
      if (std::fabs(m.sxy) > 1e-12) {
        const double diff = m.sxx - m.syy;
        g = (diff + std::sqrt(diff * diff + 4.0 * m.sxy * m.sxy)) / (2.0 * m.sxy);
      } else {
        g = m.syy > 0 ? std::sqrt(m.sxx / m.syy) : 1.0;
      }
      if (!std::isfinite(g) || g <= 0) {
        g = 1.0;
      }
      fit.gain[b] = static_cast<float>(g);
      fit.offset[b] = static_cast<float>(m.mean_x - g * m.mean_y);
    }
  }
  fit.pif_count = pif.size();
  return fit;
}

std::vector<std::vector<uint16_t>> FitHistogramMatch(const PixelSample& s, uint16_t nodata_before,
                                                     uint16_t nodata_after) {
  const std::vector<size_t> valid = ValidIndices(s, nodata_before, nodata_after);
  std::vector<std::vector<uint16_t>> tables(static_cast<size_t>(s.band_count));
  for (int b = 0; b < s.band_count; ++b) {
    std::vector<uint16_t>& lut = tables[b];
    lut.resize(65536);
    for (size_t v = 0; v < lut.size(); ++v) {
      lut[v] = static_cast<uint16_t>(v);
    }
    if (valid.empty()) {
      continue;
    }
    std::vector<uint16_t> xs, ys;
    xs.reserve(valid.size());
    ys.reserve(valid.size());
    for (size_t i : valid) {
      xs.push_back(s.before[static_cast<size_t>(b) * s.count + i]);
      ys.push_back(s.after[static_cast<size_t>(b) * s.count + i]);
    }
    std::sort(xs.begin(), xs.end());
    std::sort(ys.begin(), ys.end());
    const double n = static_cast<double>(ys.size());
    size_t lower = 0;  // count of ys < v
    size_t upper = 0;  // count of ys <= v
    for (uint32_t v = 0; v < 65536; ++v) {
      while (lower < ys.size() && ys[lower] < v) {
        ++lower;
      }
      upper = std::max(upper, lower);
      while (upper < ys.size() && ys[upper] <= v) {
        ++upper;
      }
      const double quantile = (static_cast<double>(lower + upper) * 0.5) / n;
      const size_t k = std::min(xs.size() - 1, static_cast<size_t>(quantile * n));
      uint16_t mapped = xs[k];
      if (v != nodata_after && mapped == nodata_after) {
        mapped = static_cast<uint16_t>(nodata_after == 65535 ? 65534 : nodata_after + 1);
      }
      lut[v] = v == nodata_after ? static_cast<uint16_t>(v) : mapped;
    }
  }
  return tables;
}

void ApplyLookupTables(const std::vector<std::vector<uint16_t>>& tables, uint16_t* planar,
                       size_t plane) {
  for (size_t b = 0; b < tables.size(); ++b) {
    const uint16_t* lut = tables[b].data();
    uint16_t* p = planar + b * plane;
    for (size_t i = 0; i < plane; ++i) {
      p[i] = lut[p[i]];
    }
  }
}

}  // namespace warmpool::imagery
