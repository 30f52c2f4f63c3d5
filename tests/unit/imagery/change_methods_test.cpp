// IR-MAD, band standardisation, the EM threshold, magnitude smoothing and the data-driven default.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "imagery/change_detection.h"
#include "imagery/chi_square.h"
#include "imagery/fused_pass.h"
#include "imagery/irmad.h"
#include "imagery/method_selection.h"
#include "imagery/smoothing.h"
#include "imagery/smoothing_math.h"
#include "imagery/testing/quality_metrics.h"
#include "imagery/testing/synthetic_pair.h"
#include "imagery/threshold.h"

namespace warmpool::imagery {
namespace {

ChangeMaps Run(const PlanarImage& before, const PlanarImage& after, const ChangeOptions& o) {
  MemoryStripSource b(before, 0), a(after, 0);
  ComputeBackendPtr backend = MakeCpuBackend(2);
  return ComputeChange(b, a, o, *backend);
}

SynthOptions Scene(uint64_t seed) {
  SynthOptions s;
  s.width = 192;
  s.height = 160;
  s.seed = seed;
  s.object_count = 14;
  s.max_object_side = 30;
  return s;
}

ChangeOptions IrMadKi() {
  ChangeOptions o;
  o.method = Method::kIrMad;
  o.normalization = Normalization::kNone;
  o.threshold = ThresholdMethod::kKittlerIllingworth;
  return o;
}

PixelSample SampleOf(const SynthPair& p) {
  PixelSample s;
  s.band_count = p.before.band_count;
  s.count = static_cast<size_t>(p.before.width) * p.before.height;
  s.before = p.before.pixels;
  s.after = p.after.pixels;
  return s;
}

TEST_CASE("Chi-square survival and quantile match tabulated values", "[imagery][irmad]") {
  CHECK(ChiSquareSurvival(3.841459, 1) == Approx(0.05).margin(1e-6));
  CHECK(ChiSquareSurvival(16.811894, 6) == Approx(0.01).margin(1e-7));
  CHECK(ChiSquareSurvival(2.0, 2) == Approx(std::exp(-1.0)).epsilon(1e-12));  // exponential
  CHECK(ChiSquareSurvival(0.0, 4) == 1.0);
  CHECK(ChiSquareSurvival(200.0, 4) < 1e-40);
  CHECK(ChiSquareUpperQuantile(0.01, 6) == Approx(16.811894).epsilon(1e-7));
  CHECK(ChiSquareUpperQuantile(0.05, 3) == Approx(7.814728).epsilon(1e-7));
}

TEST_CASE("IR-MAD finds the changes of a synthetic scene and converges", "[imagery][irmad]") {
  const SynthPair p = GenerateSyntheticPair(Scene(5));
  const ChangeMaps maps = Run(p.before, p.after, IrMadKi());
  const Confusion c = CompareMasks(maps.mask.data(), p.truth.data(), p.truth.size());
  CHECK(c.F1() >= 0.9);
  CHECK(maps.irmad.converged);
  CHECK(maps.irmad.iterations >= 2);
  CHECK(maps.irmad.iterations <= IrMadOptions{}.max_iterations);
  REQUIRE(maps.irmad.rho.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(maps.irmad.rho[i] > 0.0);
    CHECK(maps.irmad.rho[i] < 1.0);
    if (i > 0) CHECK(maps.irmad.rho[i] >= maps.irmad.rho[i - 1]);  // ascending
  }
}

TEST_CASE("IR-MAD is invariant to a gain and offset on either date", "[imagery][irmad]") {
  SynthOptions s = Scene(6);
  s.radiometric_change = false;
  const SynthPair p = GenerateSyntheticPair(s);
  PlanarImage hazy = p.after;
  for (uint16_t& v : hazy.pixels) v = static_cast<uint16_t>(std::min(65000.0, 0.8 * v + 700.0));
  const ChangeMaps a = Run(p.before, p.after, IrMadKi());
  const ChangeMaps b = Run(p.before, hazy, IrMadKi());
  REQUIRE(a.changed_pixels > 0);
  size_t differ = 0;
  for (size_t i = 0; i < a.mask.size(); ++i) differ += a.mask[i] != b.mask[i];
  CHECK(differ <= a.mask.size() / 200);  // <= 0.5 %: rounding of the uint16 haze only
  for (size_t v = 0; v < 4; ++v) CHECK(a.irmad.rho[v] == Approx(b.irmad.rho[v]).margin(0.01));
}

TEST_CASE("IR-MAD's iterations are bounded", "[imagery][irmad]") {
  const SynthPair p = GenerateSyntheticPair(Scene(7));
  IrMadOptions one;
  one.max_iterations = 1;
  const IrMadFit fit = FitIrMad(SampleOf(p), 0, 0, one);
  CHECK(fit.iterations == 1);
  CHECK_FALSE(fit.converged);
  IrMadOptions few;
  few.max_pixels = 1000;
  CHECK(FitIrMad(SampleOf(p), 0, 0, few).pixels <= 1000);
}

TEST_CASE("IR-MAD on too few pixels changes nothing", "[imagery][irmad]") {
  PixelSample s;
  s.band_count = 4;
  s.count = 5;
  s.before.assign(20, 100);
  s.after.assign(20, 200);
  const IrMadFit fit = FitIrMad(s, 0, 0);
  CHECK(fit.iterations == 0);
  CHECK(fit.rho.empty());
  FusedParams p;
  p.band_count = 4;
  ApplyIrMad(fit, p);
  float measure = -1;
  MeasureRangeCpu(p, s.before.data(), s.after.data(), s.count, 0, 1, &measure);
  CHECK(measure == 0.0f);
}

TEST_CASE("Standardisation maps after onto before's moments and weighs bands by 1/sd",
          "[imagery][normalization]") {
  PixelSample s;
  s.band_count = 2;
  s.count = 4;
  s.before = {100, 200, 300, 400, 10, 10, 10, 10};  // band 2 constant
  s.after = {1000, 1200, 1400, 1600, 50, 60, 70, 80};
  const RadiometricFit fit = FitStandardize(s, 65535, 65535);
  const double sd_x = std::sqrt(12500.0);  // population sd of 100..400
  CHECK(fit.gain[0] == Approx(0.5));
  CHECK(fit.offset[0] == Approx(250.0 - 0.5 * 1300.0));
  CHECK(fit.weight[0] == Approx(1.0 / sd_x));
  CHECK(fit.weight[1] == 1.0f);  // a constant band keeps its difference in DN
  CHECK(fit.pif_count == 4);
}

TEST_CASE("Identical images give 0 changed pixels with the new methods", "[imagery][pipeline]") {
  SynthOptions s = Scene(2);
  s.identical = true;
  const SynthPair p = GenerateSyntheticPair(s);
  for (ThresholdMethod t :
       {ThresholdMethod::kOtsu, ThresholdMethod::kKittlerIllingworth, ThresholdMethod::kEm}) {
    for (int smooth : {0, 1}) {
      DYNAMIC_SECTION(ThresholdName(t) << " smooth " << smooth) {
        ChangeOptions irmad = IrMadKi();
        irmad.threshold = t;
        irmad.smooth_radius = smooth;
        irmad.min_area_px = 0;
        CHECK(Run(p.before, p.after, irmad).changed_pixels == 0);
        ChangeOptions cva;
        cva.normalization = Normalization::kStandardize;
        cva.threshold = t;
        cva.smooth_radius = smooth;
        cva.min_area_px = 0;
        CHECK(Run(p.before, p.after, cva).changed_pixels == 0);
      }
    }
  }
}

TEST_CASE("Standardised CVA and EM find the changes of a synthetic scene", "[imagery][pipeline]") {
  SynthOptions three = Scene(3);
  three.band_count = 3;
  const SynthPair rgb = GenerateSyntheticPair(three);
  ChangeOptions o;
  o.normalization = Normalization::kStandardize;
  o.smooth_radius = 1;
  o.auto_floor_factor = 0;
  const ChangeMaps otsu = Run(rgb.before, rgb.after, o);
  // 192x160 with objects up to 30 px; the 512x512 suite figure is in docs/QUALITY.md.
  CHECK(CompareMasks(otsu.mask.data(), rgb.truth.data(), rgb.truth.size()).F1() >= 0.7);
  const SynthPair p = GenerateSyntheticPair(Scene(3));
  o.method = Method::kIrMad;
  o.threshold = ThresholdMethod::kEm;
  o.smooth_radius = 0;
  const ChangeMaps em = Run(p.before, p.after, o);
  CHECK(CompareMasks(em.mask.data(), p.truth.data(), p.truth.size()).F1() >= 0.9);
  CHECK(em.threshold.method == "em");
}

// Histogram of two Gaussians in sqrt(bin): no change around bin 100, change around bin 1600.
std::vector<uint64_t> BimodalHistogram(double changed_fraction) {
  std::vector<uint64_t> h(kScoreBins, 0);
  for (int k = 0; k < kScoreBins; ++k) {
    const double r = std::sqrt(static_cast<double>(k));
    const double a = std::exp(-0.5 * std::pow((r - 10) / 1.5, 2)) * (1 - changed_fraction);
    const double b = std::exp(-0.5 * std::pow((r - 40) / 4.0, 2)) * changed_fraction / (4 / 1.5);
    h[k] = static_cast<uint64_t>(1e6 * (a + b));
  }
  return h;
}

TEST_CASE("EM puts the threshold between the two classes", "[imagery][threshold]") {
  for (double f : {0.05, 0.3, 0.6}) {
    const uint32_t t = EmThreshold(BimodalHistogram(f));
    INFO("changed fraction " << f << " threshold bin " << t);
    CHECK(t > 15 * 15);  // beyond 3 sd of the no-change class
    CHECK(t < 30 * 30);  // below the change class
  }
  std::vector<uint64_t> single(kScoreBins, 0);
  single[7] = 100;
  CHECK(EmThreshold(single) == 7);  // one occupied bin: nothing changes
  CHECK(EmThreshold(std::vector<uint64_t>(kScoreBins, 0)) == 0);
}

TEST_CASE("Smoothing averages valid neighbours, keeps sectors and nodata", "[imagery][smooth]") {
  // 3 x 3, centre is 90 with sector bit 12; one corner is nodata.
  std::vector<uint16_t> s = {10, 10, kInvalidScore, 10, uint16_t(90 | (1u << 12)), 10, 10, 10, 10};
  CHECK(BoxMeanScore(s.data(), 3, 3, 1, 1, 1) == uint16_t(20 | (1u << 12)));  // 170 / 8, rounded
  CHECK(BoxMeanScore(s.data(), 3, 3, 2, 0, 1) == kInvalidScore);
  CHECK(BoxMeanScore(s.data(), 3, 3, 0, 0, 1) == 30);  // (10 + 10 + 10 + 90) / 4
  std::vector<uint64_t> h(kScoreBins, 0);
  std::vector<uint16_t> work;
  SmoothScoresCpu(s.data(), 3, 3, 1, 1, 2, h.data(), work);
  uint64_t counted = 0;
  for (uint64_t c : h) counted += c;
  CHECK(counted == 8);  // every valid pixel once, nodata never
  CHECK(s[2] == kInvalidScore);
  CHECK((s[4] & kScoreMask) == 20);
}

TEST_CASE("The default is chosen from the band count and bit depth", "[imagery][auto]") {
  AutoChoices all;
  all.enabled = true;
  ChangeOptions six;
  CHECK_THAT(SelectByData(all, {6, true}, six), Catch::Contains("IR-MAD"));
  CHECK(six.method == Method::kIrMad);
  CHECK(six.threshold == ThresholdMethod::kKittlerIllingworth);
  CHECK(six.smooth_radius == 0);
  ChangeOptions rgb;
  SelectByData(all, {3, true}, rgb);
  CHECK(rgb.method == Method::kCva);
  CHECK(rgb.normalization == Normalization::kStandardize);
  CHECK(rgb.threshold == ThresholdMethod::kEm);
  CHECK(rgb.smooth_radius == 1);
  CHECK(rgb.auto_floor_factor == 0);
  ChangeOptions rgb16;  // 16-bit: IR-MAD holds (the synthetic suite's 3-band case)
  SelectByData(all, {3, false}, rgb16);
  CHECK(rgb16.method == Method::kIrMad);
  ChangeOptions tm;  // Landsat TM delivered as 8-bit: still multispectral
  SelectByData(all, {6, true}, tm);
  CHECK(tm.method == Method::kIrMad);
  // What the caller named stays.
  AutoChoices named = all;
  named.threshold = false;
  ChangeOptions fixed;
  fixed.threshold = ThresholdMethod::kFixed;
  SelectByData(named, {3, true}, fixed);
  CHECK(fixed.threshold == ThresholdMethod::kFixed);
  ChangeOptions untouched;
  CHECK(SelectByData(AutoChoices{}, {6, false}, untouched).empty());
  CHECK(untouched.method == Method::kCva);
}

}  // namespace
}  // namespace warmpool::imagery
