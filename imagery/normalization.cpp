#include "imagery/normalization.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <tuple>

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

// The k-th smallest (0-based) of `keys`, by radix selection, 16 bits at a time from the top: one
// counting scan per 16 bits instead of partitioning the keys. Used on the bits of non-negative
// floats and doubles, which order like the numbers. REQUIRES: k < keys.size().
template <typename Key>
Key KthSmallest(const std::vector<Key>& keys, size_t k) {
  constexpr int kDigitBits = 16;
  std::vector<size_t> counts(size_t{1} << kDigitBits);
  Key prefix = 0;
  Key decided = 0;  // the bits of prefix fixed so far
  for (int shift = static_cast<int>(sizeof(Key) * 8) - kDigitBits; shift >= 0;
       shift -= kDigitBits) {
    std::fill(counts.begin(), counts.end(), 0);
    for (const Key key : keys) {
      if ((key & decided) == prefix) {
        ++counts[(key >> shift) & 0xFFFF];
      }
    }
    size_t digit = 0;
    while (k >= counts[digit]) {
      k -= counts[digit];
      ++digit;
    }
    prefix |= static_cast<Key>(digit) << shift;
    decided |= static_cast<Key>(0xFFFF) << shift;
  }
  return prefix;
}

}  // namespace

BandMoments MomentsOver(const PixelSample& s, int band, const std::vector<size_t>& indices) {
  BandMoments m;
  if (indices.empty()) {
    return m;
  }
  const uint16_t* x = s.before.data() + static_cast<size_t>(band) * s.count;
  const uint16_t* y = s.after.data() + static_cast<size_t>(band) * s.count;
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

std::pair<float, float> OrthogonalFit(const BandMoments& m) {
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
  return {static_cast<float>(g), static_cast<float>(m.mean_x - g * m.mean_y)};
}

RadiometricFit IdentityFit(int band_count) {
  RadiometricFit fit;
  fit.gain.assign(static_cast<size_t>(band_count), 1.0f);
  fit.offset.assign(static_cast<size_t>(band_count), 0.0f);
  fit.weight.assign(static_cast<size_t>(band_count), 1.0f);
  return fit;
}

RadiometricFit FitStandardize(const PixelSample& s, uint16_t nodata_before, uint16_t nodata_after) {
  RadiometricFit fit = IdentityFit(s.band_count);
  const std::vector<size_t> valid = ValidIndices(s, nodata_before, nodata_after);
  if (valid.empty()) {
    return fit;
  }
  for (int b = 0; b < s.band_count; ++b) {
    const BandMoments m = MomentsOver(s, b, valid);
    const double gain = m.syy > 0 && m.sxx > 0 ? std::sqrt(m.sxx / m.syy) : 1.0;
    fit.gain[b] = static_cast<float>(gain);
    fit.offset[b] = static_cast<float>(m.mean_x - gain * m.mean_y);
    // A constant band carries no z-score; its raw difference still counts, in DN.
    fit.weight[b] = m.sxx > 0 ? static_cast<float>(1.0 / std::sqrt(m.sxx)) : 1.0f;
  }
  fit.pif_count = valid.size();
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
    const BandMoments m = MomentsOver(s, b, valid);
    const double g = m.syy > 0 ? std::sqrt(m.sxx / m.syy) : 1.0;
    fit.gain[b] = static_cast<float>(g);
    fit.offset[b] = static_cast<float>(m.mean_x - g * m.mean_y);
  }
  // Selections run on the residuals' bits (KthSmallest): |g * y + o - x| is computed in float
  // and z in double, both are >= 0, and for those IEEE bit order is number order.
  std::vector<uint32_t> abs_res(valid.size());
  std::vector<uint64_t> z_bits(valid.size());
  for (int iter = 0; iter < iterations; ++iter) {
    // Robust residual scale per band: median absolute residual.
    std::vector<double> scale(static_cast<size_t>(s.band_count), 1.0);
    for (int b = 0; b < s.band_count; ++b) {
      const uint16_t* x = s.before.data() + static_cast<size_t>(b) * s.count;
      const uint16_t* y = s.after.data() + static_cast<size_t>(b) * s.count;
      for (size_t k = 0; k < valid.size(); ++k) {
        const size_t i = valid[k];
        abs_res[k] = std::bit_cast<uint32_t>(std::fabs(fit.gain[b] * y[i] + fit.offset[b] - x[i]));
      }
      const float median = std::bit_cast<float>(KthSmallest(abs_res, abs_res.size() / 2));
      scale[b] = std::max(static_cast<double>(median), 0.5);
    }
    for (size_t k = 0; k < valid.size(); ++k) {
      const size_t i = valid[k];
      double z = 0;
      for (int b = 0; b < s.band_count; ++b) {
        const size_t idx = static_cast<size_t>(b) * s.count + i;
        const double r = (fit.gain[b] * s.after[idx] + fit.offset[b] - s.before[idx]) / scale[b];
        z += r * r;
      }
      z_bits[k] = std::bit_cast<uint64_t>(z);
    }
    // Keep the `keep` pixels with the smallest z, ties going to the lower index, in ascending
    // order (the moments then sum in memory order).
    const size_t wanted = static_cast<size_t>(pif_fraction * static_cast<double>(valid.size()));
    const size_t keep = std::clamp<size_t>(wanted, 16, valid.size());  // valid.size() >= 16
    const uint64_t cut = KthSmallest(z_bits, keep - 1);
    size_t at_cut = keep;  // how many of the pixels with z == cut are kept
    for (const uint64_t z : z_bits) {
      at_cut -= z < cut ? 1 : 0;
    }
    pif.clear();
    for (size_t k = 0; k < valid.size(); ++k) {
      if (z_bits[k] < cut) {
        pif.push_back(valid[k]);
      } else if (z_bits[k] == cut && at_cut > 0) {
        pif.push_back(valid[k]);
        --at_cut;
      }
    }
    for (int b = 0; b < s.band_count; ++b) {
      std::tie(fit.gain[b], fit.offset[b]) = OrthogonalFit(MomentsOver(s, b, pif));
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
