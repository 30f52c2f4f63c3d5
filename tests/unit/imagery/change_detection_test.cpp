#include "imagery/change_detection.h"

#include <catch2/catch.hpp>

#include "imagery/imagery_error.h"
#include "imagery/testing/quality_metrics.h"
#include "imagery/testing/synthetic_pair.h"

namespace warmpool::imagery {
namespace {

ChangeMaps Run(const PlanarImage& before, const PlanarImage& after, const ChangeOptions& o,
               uint16_t nodata = 0) {
  MemoryStripSource b(before, nodata), a(after, nodata);
  ComputeBackendPtr backend = MakeCpuBackend(2);
  return ComputeChange(b, a, o, *backend);
}

SynthOptions SmallScene(uint64_t seed) {
  SynthOptions s;
  s.width = 192;
  s.height = 160;
  s.seed = seed;
  s.object_count = 14;
  s.max_object_side = 30;
  return s;
}

// A flat 4-band scene with one bright 20x12 rectangle inserted in after.
std::pair<PlanarImage, PlanarImage> RectanglePair() {
  SynthOptions s = SmallScene(9);
  s.object_count = 0;
  s.radiometric_change = false;
  SynthPair p = GenerateSyntheticPair(s);
  for (int b = 0; b < 4; ++b) {
    for (int y = 40; y < 52; ++y) {
      for (int x = 60; x < 80; ++x) {
        p.after.at(b, y, x) = static_cast<uint16_t>(b == 3 ? 600 : 3200);  // bright, low NIR
      }
    }
  }
  return {p.before, p.after};
}

TEST_CASE("Every method finds an inserted rectangle with IoU >= 0.9", "[imagery][pipeline]") {
  const auto [before, after] = RectanglePair();
  std::vector<uint8_t> truth(static_cast<size_t>(before.width) * before.height, 0);
  for (int y = 40; y < 52; ++y) {
    for (int x = 60; x < 80; ++x) {
      truth[static_cast<size_t>(y) * before.width + x] = 1;
    }
  }
  for (Method m : {Method::kAbsDiff, Method::kLogRatio, Method::kCva, Method::kNdvi}) {
    for (ThresholdMethod t : {ThresholdMethod::kOtsu, ThresholdMethod::kKittlerIllingworth}) {
      DYNAMIC_SECTION(MethodName(m) << " + " << ThresholdName(t)) {
        ChangeOptions o;
        o.method = m;
        o.threshold = t;
        const ChangeMaps maps = Run(before, after, o);
        const Confusion c = CompareMasks(maps.mask.data(), truth.data(), truth.size());
        CHECK(c.IoU() >= 0.9);
        REQUIRE(maps.regions.size() == 1);
        CHECK(maps.regions[0].x_min == Approx(60).margin(1));
        CHECK(maps.regions[0].y_max == Approx(51).margin(1));
      }
    }
  }
}

TEST_CASE("Identical images give 0 changed pixels for every method and threshold",
          "[imagery][pipeline]") {
  SynthOptions s = SmallScene(2);
  s.identical = true;
  const SynthPair p = GenerateSyntheticPair(s);
  for (Method m : {Method::kAbsDiff, Method::kLogRatio, Method::kCva, Method::kNdvi}) {
    for (Normalization n : {Normalization::kNone, Normalization::kPif, Normalization::kHistogram}) {
      DYNAMIC_SECTION(MethodName(m) << " + " << NormalizationName(n)) {
        ChangeOptions o;
        o.method = m;
        o.normalization = n;
        o.open_radius = 0;
        o.min_area_px = 0;
        const ChangeMaps maps = Run(p.before, p.after, o);
        CHECK(maps.changed_pixels == 0);
        CHECK(maps.regions.empty());
        CHECK(maps.valid_pixels == p.truth.size());
      }
    }
  }
}

TEST_CASE("Gain/offset without change gives no change after PIF normalisation",
          "[imagery][pipeline]") {
  SynthOptions s = SmallScene(4);
  s.object_count = 0;
  s.noise_fraction = 0.01;
  const SynthPair p = GenerateSyntheticPair(s);
  ChangeOptions o;
  const ChangeMaps maps = Run(p.before, p.after, o);
  CHECK(maps.changed_pixels == 0);
  for (int b = 0; b < 4; ++b) {
    CHECK(maps.fit.gain[b] == Approx(1.0 / p.gain[b]).epsilon(0.03));
  }
  // Without normalisation a fixed threshold below the offsets flags most of the image.
  ChangeOptions plain;
  plain.normalization = Normalization::kNone;
  plain.threshold = ThresholdMethod::kFixed;
  plain.fixed_threshold = 100;
  CHECK(Run(p.before, p.after, plain).changed_pixels > p.truth.size() / 2);
}

TEST_CASE("Synthetic scene with gain/offset + noise: F1 >= 0.9 (cva, pif, otsu)",
          "[imagery][pipeline]") {
  const SynthPair p = GenerateSyntheticPair(SmallScene(5));
  const ChangeMaps maps = Run(p.before, p.after, ChangeOptions{});
  const Confusion c = CompareMasks(maps.mask.data(), p.truth.data(), p.truth.size());
  CHECK(c.F1() >= 0.9);
  CHECK(maps.threshold.method == "otsu");
  CHECK(maps.threshold.bin >= maps.threshold.floor_bin);
}

TEST_CASE("Threads splitting a strip do not change any output", "[imagery][pipeline]") {
  // 300 x 233 px: large enough for the CPU backend to split a strip across threads, and an odd
  // size, so the per-thread ranges (rounded to 32 px) do not divide it evenly.
  SynthOptions s = SmallScene(8);
  s.width = 300;
  s.height = 233;
  const SynthPair p = GenerateSyntheticPair(s);
  ChangeOptions o;
  o.strip_rows = 100000;
  std::vector<ChangeMaps> runs;
  for (int threads : {1, 2, 3}) {
    o.threads = threads;
    MemoryStripSource b(p.before, 0), a(p.after, 0);
    ComputeBackendPtr backend = MakeCpuBackend(threads);
    runs.push_back(ComputeChange(b, a, o, *backend));
  }
  REQUIRE(runs[0].changed_pixels > 0);
  // The pipeline's score buffer sits in its page lane (lane_buffer.h).
  CHECK(reinterpret_cast<uintptr_t>(runs[0].scores.data()) % kPageBytes == 2 * kLaneBytes);
  for (size_t k = 1; k < runs.size(); ++k) {
    CHECK(runs[k].scores == runs[0].scores);
    CHECK(runs[k].histogram == runs[0].histogram);
    CHECK(runs[k].mask == runs[0].mask);
  }
}

TEST_CASE("Strip height does not change any output (tile seams)", "[imagery][pipeline]") {
  SynthOptions s = SmallScene(6);
  s.misregistration_px = 1;
  const SynthPair p = GenerateSyntheticPair(s);
  ChangeOptions whole;
  whole.strip_rows = 100000;
  whole.close_radius = 1;
  const ChangeMaps reference = Run(p.before, p.after, whole);
  REQUIRE(reference.changed_pixels > 0);
  for (int rows : {1, 7, 64}) {
    for (int threads : {1, 2}) {
      DYNAMIC_SECTION("strip rows " << rows << " threads " << threads) {
        ChangeOptions o = whole;
        o.strip_rows = rows;
        o.threads = threads;
        MemoryStripSource b(p.before, 0), a(p.after, 0);
        ComputeBackendPtr backend = MakeCpuBackend(threads);
        const ChangeMaps maps = ComputeChange(b, a, o, *backend);
        CHECK(maps.scores == reference.scores);
        CHECK(maps.mask == reference.mask);
        CHECK(maps.regions.size() == reference.regions.size());
        CHECK(maps.threshold.bin == reference.threshold.bin);
      }
    }
  }
}

TEST_CASE("Nodata never counts as change", "[imagery][pipeline]") {
  SynthOptions s = SmallScene(7);
  s.nodata_border_px = 40;  // before is 0 on the left 40 columns, after has data (and changes)
  const SynthPair p = GenerateSyntheticPair(s);
  ChangeOptions o;
  o.close_radius = 2;  // closing must not leak change into nodata either
  const ChangeMaps maps = Run(p.before, p.after, o);
  for (int y = 0; y < p.before.height; ++y) {
    for (int x = 0; x < 40; ++x) {
      REQUIRE(maps.mask[static_cast<size_t>(y) * p.before.width + x] == 255);
    }
  }
  CHECK(maps.valid_pixels == static_cast<uint64_t>(p.before.height) * (p.before.width - 40));
  CHECK(maps.changed_pixels > 0);
}

TEST_CASE("The minimum mapping unit removes small changes", "[imagery][pipeline]") {
  auto [before, after] = RectanglePair();
  for (int b = 0; b < 4; ++b) {
    for (int y = 100; y < 104; ++y) {
      for (int x = 20; x < 24; ++x) {
        after.at(b, y, x) = 3200;  // a 4x4 = 16 px change
      }
    }
  }
  ChangeOptions o;
  o.min_area_px = 16;
  CHECK(Run(before, after, o).regions.size() == 2);
  o.min_area_px = 17;
  const ChangeMaps maps = Run(before, after, o);
  CHECK(maps.regions.size() == 1);
  CHECK(maps.changed_pixels == 240);
}

TEST_CASE("Swapping the dates gives the same CVA mask", "[imagery][pipeline]") {
  const auto [before, after] = RectanglePair();
  ChangeOptions o;
  o.normalization = Normalization::kNone;
  CHECK(Run(before, after, o).mask == Run(after, before, o).mask);
}

TEST_CASE("A fixed threshold is applied in measure units", "[imagery][pipeline]") {
  const auto [before, after] = RectanglePair();
  ChangeOptions o;
  o.threshold = ThresholdMethod::kFixed;
  o.fixed_threshold = 100000;  // above any CVA magnitude of uint16 data
  CHECK(Run(before, after, o).changed_pixels == 0);
  o.fixed_threshold = 500;
  const ChangeMaps maps = Run(before, after, o);
  CHECK(maps.changed_pixels == 240);
  CHECK(maps.threshold.value == Approx(500).margin(2.0 / maps.scale + 1));
}

TEST_CASE("Options are validated with messages that name the option", "[imagery][pipeline]") {
  const auto expect_invalid = [](const ChangeOptions& o, int bands) {
    try {
      ValidateOptions(o, bands);
      FAIL("no exception");
    } catch (const ImageryError& e) {
      CHECK(e.kind() == ImageryError::Kind::kInvalidArgument);
    }
  };
  ChangeOptions o;
  o.bands = {1, 5};
  expect_invalid(o, 4);
  o = ChangeOptions{};
  o.open_radius = -1;
  expect_invalid(o, 4);
  o = ChangeOptions{};
  o.method = Method::kNdvi;
  o.bands = {1, 2};  // red (3) and nir (4) not selected
  expect_invalid(o, 4);
  o = ChangeOptions{};
  CHECK_NOTHROW(ValidateOptions(o, 4));
}

}  // namespace
}  // namespace warmpool::imagery
