#include "imagery/change_math.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::imagery {
namespace {

// One pixel, planar with plane = 1.
struct OnePixel {
  std::vector<uint16_t> before, after;
};

FusedParams Params(Method m, int bands) {
  FusedParams p;
  p.band_count = bands;
  p.method = m;
  p.inv_band_count = 1.0f / static_cast<float>(bands);
  p.scale = 1.0f;
  return p;
}

TEST_CASE("PortableLn matches std::log to 2e-7 absolute on [1, 65536]", "[imagery][math]") {
  double worst = 0;
  for (float x = 1.0f; x < 65536.0f; x = x * 1.0137f + 0.01f) {
    worst = std::max(worst, std::fabs(double(PortableLn(x)) - std::log(double(x))));
  }
  CHECK(worst < 2e-6);
  CHECK(PortableLn(1.0f) == 0.0f);
  CHECK(PortableLn(2.0f) == Approx(0.693147).epsilon(1e-6));
}

TEST_CASE("MeasurePixel computes each method on a hand-checked pixel", "[imagery][math]") {
  // before (100, 200, 300, 400), after (130, 160, 300, 500); d = (30, -40, 0, 100).
  OnePixel px{{100, 200, 300, 400}, {130, 160, 300, 500}};
  SECTION("absdiff: mean |d| = 170 / 4") {
    const auto m = MeasurePixel<Method::kAbsDiff, 4>(Params(Method::kAbsDiff, 4), px.before.data(),
                                                     px.after.data(), 1, 0);
    CHECK(m.valid);
    CHECK(m.measure == Approx(42.5f));
    CHECK(m.sector == 0b1001u << kSectorShift);  // bands 0 and 3 increased
  }
  SECTION("cva: sqrt(900 + 1600 + 0 + 10000)") {
    const auto m = MeasurePixel<Method::kCva, 0>(Params(Method::kCva, 4), px.before.data(),
                                                 px.after.data(), 1, 0);
    CHECK(m.measure == Approx(std::sqrt(12500.0)));
  }
  SECTION("logratio: mean |ln((a+1)/(b+1))|") {
    const auto m = MeasurePixel<Method::kLogRatio, 4>(Params(Method::kLogRatio, 4),
                                                      px.before.data(), px.after.data(), 1, 0);
    const double expect = (std::fabs(std::log(131.0 / 101)) + std::fabs(std::log(161.0 / 201)) +
                           0.0 + std::fabs(std::log(501.0 / 401))) /
                          4;
    CHECK(m.measure == Approx(expect).epsilon(1e-5));
  }
  SECTION("ndvi: red index 2, nir index 3") {
    FusedParams p = Params(Method::kNdvi, 4);
    p.red_index = 2;
    p.nir_index = 3;
    const auto m = MeasurePixel<Method::kNdvi, 4>(p, px.before.data(), px.after.data(), 1, 0);
    const double expect = std::fabs((500.0 - 300) / 800 - (400.0 - 300) / 700);
    CHECK(m.measure == Approx(expect).epsilon(1e-6));
  }
  SECTION("gain and offset apply to after before differencing") {
    FusedParams p = Params(Method::kAbsDiff, 4);
    for (int b = 0; b < 4; ++b) {
      p.gain[b] = 0.5f;
      p.offset[b] = 50.0f;
    }
    OnePixel same{{100, 200, 300, 400}, {100, 300, 500, 700}};  // 0.5 a + 50 = b
    const auto m =
        MeasurePixel<Method::kAbsDiff, 4>(p, same.before.data(), same.after.data(), 1, 0);
    CHECK(m.measure == 0.0f);
  }
}

TEST_CASE("ScorePixel marks nodata in either date and packs the sector", "[imagery][math]") {
  FusedParams p = Params(Method::kCva, 2);
  p.scale = 10.0f;
  std::vector<uint16_t> before = {10, 0, 10, 10};  // planar, 2 pixels: band0 {10, 0}
  std::vector<uint16_t> after = {13, 5, 14, 10};   // band0 {13, 5}, band1 {14, 10}
  // pixel 0: d = (3, 4) -> 5 -> 50 bins, sector 0b11
  CHECK(ScorePixel<Method::kCva, 2>(p, before.data(), after.data(), 2, 0) ==
        static_cast<uint16_t>(50 | (3u << kSectorShift)));
  CHECK(ScorePixel<Method::kCva, 2>(p, before.data(), after.data(), 2, 1) == kInvalidScore);
  p.nodata_after = 14;
  CHECK(ScorePixel<Method::kCva, 2>(p, before.data(), after.data(), 2, 0) == kInvalidScore);
}

TEST_CASE("The sector bit is set only where after' exceeds before", "[imagery][math]") {
  // Band 0 ties, band 1 rises, band 2 is normalised below 0 (clamped to 0 < before), band 3 ties
  // after normalisation; bands 4 and 5 rise but only the first four bands have sector bits.
  FusedParams p = Params(Method::kCva, 6);
  p.offset[2] = -20.0f;
  p.gain[3] = 0.5f;
  const OnePixel px{{10, 10, 5, 7, 1, 1}, {10, 11, 12, 14, 9, 9}};
  for (const auto& m :
       {MeasurePixel<Method::kCva, 6>(p, px.before.data(), px.after.data(), 1, 0),
        MeasurePixel<Method::kCva, 0>(p, px.before.data(), px.after.data(), 1, 0)}) {
    CHECK(m.sector == 0b0010u << kSectorShift);
    CHECK(m.measure == Approx(std::sqrt(0.0 + 1 + 25 + 0 + 64 + 64)));
  }
  CHECK(ClampNegativeToZero(-0.0f) == 0.0f);
  CHECK_FALSE(std::signbit(ClampNegativeToZero(-0.0f)));
  CHECK(ClampNegativeToZero(-3.5f) == 0.0f);
  CHECK(ClampNegativeToZero(2.25f) == 2.25f);
}

TEST_CASE("QuantiseScore rounds and saturates below the nodata code", "[imagery][math]") {
  CHECK(QuantiseScore(0.0f, 1.0f) == 0u);
  CHECK(QuantiseScore(2.49f, 1.0f) == 2u);
  CHECK(QuantiseScore(2.5f, 1.0f) == 3u);
  CHECK(QuantiseScore(1e9f, 1.0f) == kScoreMax);
  // The largest packed valid score never equals kInvalidScore.
  CHECK(static_cast<uint16_t>(kScoreMax | (15u << kSectorShift)) != kInvalidScore);
  CHECK(IsChange(static_cast<uint16_t>(5 | (15u << kSectorShift)), 4));
  CHECK_FALSE(IsChange(5, 5));
  CHECK_FALSE(IsChange(kInvalidScore, 0));
}

}  // namespace
}  // namespace warmpool::imagery
