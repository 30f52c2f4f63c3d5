#include "imagery/normalization.h"

#include <random>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

// after = (before - offset) / gain + noise, with a fraction of "changed" pixels replaced.
PixelSample LinearSample(float gain, float offset, double changed_fraction, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(200, 4000);
  std::normal_distribution<float> noise(0.0f, 5.0f);
  std::uniform_real_distribution<double> u(0, 1);
  PixelSample s;
  s.band_count = 2;
  s.count = 20000;
  s.before.resize(s.count * 2);
  s.after.resize(s.count * 2);
  for (size_t i = 0; i < s.count; ++i) {
    const bool changed = u(rng) < changed_fraction;
    for (int b = 0; b < 2; ++b) {
      const int x = value(rng);
      s.before[b * s.count + i] = static_cast<uint16_t>(x);
      const float y = changed ? 6000.0f + noise(rng) : (x - offset) / gain + noise(rng);
      s.after[b * s.count + i] = static_cast<uint16_t>(std::max(1.0f, y));
    }
  }
  return s;
}

TEST_CASE("PIF recovers gain and offset despite 15 % changed pixels", "[imagery][normalization]") {
  const PixelSample s = LinearSample(1.08f, 150.0f, 0.15, 3);
  const RadiometricFit fit = FitPif(s, 0, 0);
  for (int b = 0; b < 2; ++b) {
    CHECK(fit.gain[b] == Approx(1.08).epsilon(0.01));
    CHECK(fit.offset[b] == Approx(150.0).margin(15.0));
  }
  CHECK(fit.pif_count > 1000);
}

TEST_CASE("PIF keeps exactly its fraction of valid pixels when residuals tie at the cut",
          "[imagery][normalization]") {
  // 800 pixels on x = 2y + 10 with only three distinct values (so residuals tie in large groups),
  // 190 identical outliers and 10 nodata pixels: the fit keeps 40 % of the 990 valid pixels.
  PixelSample s;
  s.band_count = 1;
  s.count = 1000;
  s.before.resize(s.count);
  s.after.resize(s.count);
  for (size_t i = 0; i < s.count; ++i) {
    const uint16_t y = static_cast<uint16_t>(100 * (1 + i % 3));
    const bool outlier = i % 5 == 4 && i < 950;
    const bool nodata = i >= 990;
    s.after[i] = outlier ? 3000 : y;
    s.before[i] = nodata ? 0 : outlier ? 50 : static_cast<uint16_t>(2 * y + 10);
  }
  const RadiometricFit fit = FitPif(s, 0, 0);
  CHECK(fit.pif_count == 396);
  CHECK(fit.gain[0] == Approx(2.0).epsilon(1e-6));
  CHECK(fit.offset[0] == Approx(10.0).margin(1e-3));
}

TEST_CASE("Orthogonal regression on band moments", "[imagery][normalization]") {
  PixelSample s;
  s.band_count = 1;
  s.count = 5;
  s.after = {100, 200, 300, 400, 500};
  s.before = {210, 410, 610, 810, 1010};  // x = 2y + 10
  const BandMoments m = MomentsOver(s, 0, {0, 1, 2, 3, 4});
  CHECK(m.mean_x == 610.0);
  CHECK(m.mean_y == 300.0);
  CHECK(m.sxy == 2.0 * m.syy);
  const auto [gain, offset] = OrthogonalFit(m);
  CHECK(gain == Approx(2.0f).epsilon(1e-6));
  CHECK(offset == Approx(10.0f).margin(1e-3));
  // No pixels: zero moments, and a degenerate fit falls back to gain 1.
  const BandMoments none = MomentsOver(s, 0, {});
  CHECK(none.sxx == 0.0);
  CHECK(OrthogonalFit(none).first == 1.0f);
}

TEST_CASE("PIF with no valid pixel is the identity", "[imagery][normalization]") {
  PixelSample s;
  s.band_count = 1;
  s.count = 4;
  s.before = {0, 0, 0, 0};
  s.after = {5, 6, 7, 8};
  const RadiometricFit fit = FitPif(s, 0, 0);
  CHECK(fit.gain[0] == 1.0f);
  CHECK(fit.offset[0] == 0.0f);
  CHECK(fit.pif_count == 0);
}

TEST_CASE("Histogram matching maps after's quantiles onto before's", "[imagery][normalization]") {
  const PixelSample s = LinearSample(2.0f, 0.0f, 0.0, 5);  // after = before / 2
  const auto luts = FitHistogramMatch(s, 0, 0);
  REQUIRE(luts.size() == 2);
  CHECK(luts[0][0] == 0);  // nodata maps to itself
  CHECK(luts[0][1000] == Approx(2000).margin(60));
  CHECK(luts[1][1500] == Approx(3000).margin(60));
  for (size_t v = 2; v < 65536; ++v) {
    REQUIRE(luts[0][v] >= luts[0][v - 1]);  // monotone
    REQUIRE(luts[0][v] != 0);               // never maps onto nodata
  }
  std::vector<uint16_t> strip = {0, 1000, 2000, 1500, 0, 3};
  ApplyLookupTables(luts, strip.data(), 3);
  CHECK(strip[0] == 0);
  CHECK(strip[1] == luts[0][1000]);
  CHECK(strip[4] == 0);
}

}  // namespace
}  // namespace warmpool::imagery
