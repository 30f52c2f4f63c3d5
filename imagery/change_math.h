#pragma once

// Per-pixel change-detection maths, shared verbatim by the CPU path (fused_pass.cpp) and the CUDA
// kernels (cuda/*_kernels.cu). Everything here is a pure inline function of its arguments.
//
// Determinism contract: CPU and GPU produce bit-identical scores because (1) only IEEE-754
// correctly rounded operations are used (+, -, *, /, sqrt, compare/select, abs; no libm log/exp
// whose accuracy differs between glibc and CUDA), (2) the CPU path is compiled with
// -ffp-contract=off and the CUDA path with -fmad=false, so no fused multiply-add changes rounding,
// and (3) bands are always accumulated in the same order.

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "imagery/host_device.h"

namespace warmpool::imagery {

// Change measure computed per pixel.
enum class Method : int32_t {
  kAbsDiff = 0,   // mean over bands of |after' - before| (DN)
  kLogRatio = 1,  // mean over bands of |ln(after'+1) - ln(before+1)|
  kCva = 2,       // change vector magnitude sqrt(sum_b (after'_b - before_b)^2) (DN)
  kNdvi = 3,      // |NDVI(after') - NDVI(before)|
  kIrMad = 4,     // sqrt(chi2) of the IR-MAD variates (irmad.h): Mahalanobis-like, unitless
};

inline constexpr int kMaxBands = 8;
// A packed score is a uint16: bits 0..11 are the quantised change magnitude (0..kScoreMax) and
// bits 12..15 the CVA direction sector (sign pattern of the first four band differences: bit b is
// set when after'_b > before_b). kInvalidScore marks nodata; it can never be a valid packed score
// because kScoreMax < 0xFFF.
inline constexpr int kScoreBins = 4096;
inline constexpr uint32_t kScoreMax = 4094;
inline constexpr uint16_t kScoreMask = 0x0FFF;
inline constexpr int kSectorShift = 12;
inline constexpr uint16_t kInvalidScore = 0xFFFF;

// Parameters of the fused normalise + difference pass. Plain data: copied by value to kernels.
struct FusedParams {
  int32_t band_count = 1;  // bands per image, 1..kMaxBands
  Method method = Method::kCva;
  int32_t red_index = 2;  // 0-based index (into the selected bands) of red, for kNdvi
  int32_t nir_index = 3;  // 0-based index of near infrared, for kNdvi
  float gain[kMaxBands] = {1, 1, 1, 1, 1, 1, 1, 1};  // after' = gain * after + offset
  float offset[kMaxBands] = {};
  // Per-band weight of the difference for kCva and kAbsDiff (1 / sd of `before` when the bands
  // are standardised; 1 otherwise, which leaves every score bit-identical).
  float weight[kMaxBands] = {1, 1, 1, 1, 1, 1, 1, 1};
  // kIrMad: variate v = sum_b mad_before[v][b] x_b - mad_after[v][b] y_b - mad_center[v], each
  // already divided by its standard deviation (irmad.h).
  float mad_before[kMaxBands][kMaxBands] = {};
  float mad_after[kMaxBands][kMaxBands] = {};
  float mad_center[kMaxBands] = {};
  float inv_band_count = 1.0f;  // 1 / band_count (precomputed: identical on both devices)
  float scale = 1.0f;           // quantisation: bins per measure unit
  uint16_t nodata_before = 0;   // a pixel with any band equal to this is invalid
  uint16_t nodata_after = 0;
  // Power of two: the histogram counts the valid pixels whose global index (row * width + col) is
  // a multiple of it (HistogramStride). Scores and masks still cover every pixel.
  uint32_t histogram_stride = 1;
  // After the pass, each magnitude becomes the mean over its (2r+1)^2 valid neighbours
  // (smoothing_math.h) and the histogram is recounted; 0 = off.
  int32_t smooth_radius = 0;
};

// Kernels take FusedParams by value: it must fit CUDA's 4 KiB kernel-parameter space (with the
// other arguments) on every architecture CI builds.
static_assert(sizeof(FusedParams) <= 3584, "FusedParams outgrew CUDA's kernel parameter space");

// The histogram stride for an image of `pixels`: 1 below 4 Mpx, else the largest power of two
// <= 16 that still counts >= 2^21 pixels. Threshold statistics from >= 2 M pixels are as good as
// from all of them, and counting fewer keeps the fused pass memory-bound on the CPU.
inline uint32_t HistogramStride(size_t pixels) {
  uint32_t stride = 1;
  while (stride < 16 && pixels / (2 * stride) >= (size_t{1} << 21) && pixels >= (size_t{1} << 22)) {
    stride *= 2;
  }
  return stride;
}

// True when the pixel with global index `index` is counted in the histogram.
WARMPOOL_HOST_DEVICE inline bool CountedInHistogram(size_t index, uint32_t stride) {
  return (index & (stride - 1)) == 0;
}

// y > 0 ? y : 0 for finite y (+0 for -0), as an integer max of its bits: a negative float's bits
// are a negative int32. One integer op where the float select took a compare and a masked move
// (and the sign-mask form two). (A NaN with the sign bit clear would pass through; y is finite.)
WARMPOOL_HOST_DEVICE inline float ClampNegativeToZero(float y) {
  const auto bits = static_cast<int32_t>(FloatBits(y));
  return BitsToFloat(static_cast<uint32_t>(bits > 0 ? bits : 0));
}

// min as a plain select: identical to fminf for the non-NaN values used here, and, unlike the
// libm call, if-convertible so the CPU loop vectorises.
WARMPOOL_HOST_DEVICE inline float MinF(float a, float b) { return a < b ? a : b; }

// Natural logarithm for x >= 1 built from correctly rounded operations only, so host and device
// agree bit for bit. Absolute error < 2e-7 on [1, 65536].
WARMPOOL_HOST_DEVICE inline float PortableLn(float x) {
  uint32_t bits = FloatBits(x);
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xFFu) - 127;
  float m = BitsToFloat((bits & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
  // Branch-free (selects) so the CPU loop vectorises.
  const bool upper = m > 1.41421356f;
  m = upper ? m * 0.5f : m;
  exponent = exponent + (upper ? 1 : 0);
  const float f = m - 1.0f;
  const float s = f / (2.0f + f);
  const float s2 = s * s;
  float poly = 1.0f / 11.0f;
  poly = poly * s2 + 1.0f / 9.0f;
  poly = poly * s2 + 1.0f / 7.0f;
  poly = poly * s2 + 1.0f / 5.0f;
  poly = poly * s2 + 1.0f / 3.0f;
  poly = poly * s2 + 1.0f;
  const float ln_m = 2.0f * s * poly;
  return static_cast<float>(exponent) * 0.693147180559945f + ln_m;
}

// NDVI of one pixel, 0 when red + nir is not positive.
WARMPOOL_HOST_DEVICE inline float Ndvi(float red, float nir) {
  const float sum = nir + red;
  const bool positive = sum > 0.0f;
  const float ratio = (nir - red) / (positive ? sum : 1.0f);
  return positive ? ratio : 0.0f;
}

// Quantises a non-negative measure to 0..kScoreMax bins (round half up, saturating).
WARMPOOL_HOST_DEVICE inline uint32_t QuantiseScore(float measure, float scale) {
  float q = measure * scale;
  q = q + 0.5f;
  q = MinF(q, static_cast<float>(kScoreMax));
  // Through int32 (q is in [0.5, kScoreMax]): a direct float -> uint32 conversion is a branch on
  // x86 without AVX-512 and would stop the CPU loop from vectorising.
  return static_cast<uint32_t>(static_cast<int32_t>(q));
}

// Un-quantised result for one pixel.
struct PixelMeasure {
  float measure;    // method value, >= 0
  uint32_t sector;  // sign pattern of the first four band differences, at bits 12..15 (packed)
  bool valid;       // false when any band of either date equals its nodata value
};

// Measure of pixel `i` of a strip. `before`/`after` are planar strips: band b of pixel i is at
// [b * plane + i]. kBands > 0 fixes the band count at compile time (unrolled, vectorisable);
// kBands == 0 reads p.band_count. p.scale is not used.
template <Method kMethod, int kBands>
WARMPOOL_HOST_DEVICE inline PixelMeasure MeasurePixel(const FusedParams& p,
                                                      const uint16_t* __restrict__ before,
                                                      const uint16_t* __restrict__ after,
                                                      size_t plane, size_t i) {
  const int n = kBands > 0 ? kBands : p.band_count;
  bool valid = true;
  float acc = 0.0f;
  uint32_t sector = 0;
  float ndvi_x_red = 0.0f, ndvi_x_nir = 0.0f, ndvi_y_red = 0.0f, ndvi_y_nir = 0.0f;
  float mad[kMaxBands] = {};  // kIrMad only
  // Written without branches (selects only) so the CPU loop over pixels vectorises.
  for (int b = 0; b < n; ++b) {
    const uint16_t raw_x = before[static_cast<size_t>(b) * plane + i];
    const uint16_t raw_y = after[static_cast<size_t>(b) * plane + i];
    valid = valid & (raw_x != p.nodata_before) & (raw_y != p.nodata_after);
    const float x = static_cast<float>(raw_x);
    float y = p.gain[b] * static_cast<float>(raw_y);
    y = y + p.offset[b];
    y = ClampNegativeToZero(y);
    // e = -(after' - before), exactly. x and y are >= +0, so e is never -0: its sign bit is set
    // exactly when after' > before, and a shift puts it at the sector's bit of the packed score
    // (cheaper than a float compare and a masked add per band: docs/benchmarks/imagery.md).
    const float e = x - y;
    const uint32_t sign_to_bit = FloatBits(e) >> (31 - kSectorShift - b);
    sector = sector | (b < 4 ? sign_to_bit & (1u << (kSectorShift + b)) : 0u);
    float term = 0.0f;
    if constexpr (kMethod == Method::kAbsDiff) {
      term = fabsf(e) * p.weight[b];
    } else if constexpr (kMethod == Method::kLogRatio) {
      term = fabsf(PortableLn(y + 1.0f) - PortableLn(x + 1.0f));
    } else if constexpr (kMethod == Method::kCva) {
      const float weighted = e * p.weight[b];
      term = weighted * weighted;
    } else if constexpr (kMethod == Method::kIrMad) {
      for (int v = 0; v < n; ++v) {
        const float px = p.mad_before[v][b] * x;
        const float py = p.mad_after[v][b] * y;
        mad[v] = mad[v] + (px - py);
      }
    } else {
      const bool is_red = b == p.red_index;
      const bool is_nir = b == p.nir_index;
      ndvi_x_red = is_red ? x : ndvi_x_red;
      ndvi_y_red = is_red ? y : ndvi_y_red;
      ndvi_x_nir = is_nir ? x : ndvi_x_nir;
      ndvi_y_nir = is_nir ? y : ndvi_y_nir;
    }
    // Band 0 starts the sum (0 + term == term for term >= +0; saves an add per pixel).
    acc = b == 0 ? term : acc + term;
  }
  float measure;
  if constexpr (kMethod == Method::kIrMad) {
    float chi2 = 0.0f;
    for (int v = 0; v < n; ++v) {
      const float d = mad[v] - p.mad_center[v];
      chi2 = chi2 + d * d;
    }
    measure = sqrtf(chi2);
  } else if constexpr (kMethod == Method::kCva) {
    measure = sqrtf(acc);
  } else if constexpr (kMethod == Method::kNdvi) {
    measure = fabsf(Ndvi(ndvi_y_red, ndvi_y_nir) - Ndvi(ndvi_x_red, ndvi_x_nir));
  } else {
    measure = acc * p.inv_band_count;
  }
  return PixelMeasure{measure, sector, valid};
}

// Packed score of pixel `i` (see MeasurePixel): quantised measure | sector (already shifted), or
// kInvalidScore when the pixel is nodata.
template <Method kMethod, int kBands>
WARMPOOL_HOST_DEVICE inline uint16_t ScorePixel(const FusedParams& p,
                                                const uint16_t* __restrict__ before,
                                                const uint16_t* __restrict__ after, size_t plane,
                                                size_t i) {
  const PixelMeasure m = MeasurePixel<kMethod, kBands>(p, before, after, plane, i);
  const uint32_t q = QuantiseScore(m.measure, p.scale);
  const uint16_t packed = static_cast<uint16_t>(q | m.sector);
  // packed | 0xFFFF == kInvalidScore; arithmetic instead of a select keeps the loop vectorisable.
  return static_cast<uint16_t>(packed | (static_cast<uint32_t>(!m.valid) * 0xFFFFu));
}

// True when packed score `s` is a valid pixel whose magnitude bin exceeds `threshold_bin`.
WARMPOOL_HOST_DEVICE inline bool IsChange(uint16_t s, uint32_t threshold_bin) {
  return s != kInvalidScore && (static_cast<uint32_t>(s) & kScoreMask) > threshold_bin;
}

// Histogram bin of a packed score, or -1 for nodata.
WARMPOOL_HOST_DEVICE inline int ScoreBin(uint16_t s) {
  return s == kInvalidScore ? -1 : static_cast<int>(s & kScoreMask);
}

}  // namespace warmpool::imagery
