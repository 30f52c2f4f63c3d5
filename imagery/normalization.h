#pragma once

// Relative radiometric normalisation of `after` to `before` (pure functions on a pixel sample).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace warmpool::imagery {

// A planar sample of co-located pixels of both dates: band b of pixel i at [b * count + i].
struct PixelSample {
  int band_count = 0;
  size_t count = 0;
  std::vector<uint16_t> before;
  std::vector<uint16_t> after;
};

// after' = gain[b] * after + offset[b], per band; the difference after' - before is then
// multiplied by weight[b] (1 except for band standardisation).
struct RadiometricFit {
  std::vector<float> gain;
  std::vector<float> offset;
  std::vector<float> weight;
  size_t pif_count = 0;  // pixels the last fit used (0 for the identity)
};

// gain 1, offset 0.
RadiometricFit IdentityFit(int band_count);

// Means, variances and covariance of band `band` of before (x) and after (y) over the sample
// pixels `indices`, summed in their order; all 0 when `indices` is empty.
struct BandMoments {
  double mean_x = 0, mean_y = 0, sxx = 0, syy = 0, sxy = 0;
};
BandMoments MomentsOver(const PixelSample& s, int band, const std::vector<size_t>& indices);

// Gain and offset of x = gain * y + offset by orthogonal (total least squares) regression on `m`
// (mean/std matching when x and y do not covary); gain 1 when that is not finite and positive.
std::pair<float, float> OrthogonalFit(const BandMoments& m);

// Per-band gain/offset fitted on pseudo-invariant pixels: starts from mean/std matching, then
// `iterations` times keeps the `pif_fraction` of valid pixels with the smallest standardised
// residual (summed over bands) and refits each band by orthogonal regression on them. Pixels with
// any band equal to a nodata value are ignored. With no valid pixel, returns the identity.
RadiometricFit FitPif(const PixelSample& sample, uint16_t nodata_before, uint16_t nodata_after,
                      double pif_fraction = 0.4, int iterations = 4);

// Per-band standardisation: after is mapped onto before's mean and standard deviation and each
// band's difference is divided by before's standard deviation, so the change vector is the
// difference of the two dates' z-scores and every band weighs the same (the CVA of
// Malila 1980 on standardised bands). With no valid pixel, returns the identity.
RadiometricFit FitStandardize(const PixelSample& sample, uint16_t nodata_before,
                              uint16_t nodata_after);

// Histogram matching of after to before: per band a 65536-entry table mapping an `after` DN to
// the `before` DN of the same quantile. nodata_after maps to itself and nothing else maps to it.
std::vector<std::vector<uint16_t>> FitHistogramMatch(const PixelSample& sample,
                                                     uint16_t nodata_before, uint16_t nodata_after);

// Applies per-band tables in place to a planar strip (plane = pixels per band).
void ApplyLookupTables(const std::vector<std::vector<uint16_t>>& tables, uint16_t* planar,
                       size_t plane);

}  // namespace warmpool::imagery
