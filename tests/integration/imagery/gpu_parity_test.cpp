// CPU/GPU parity through the whole pipeline (ComputeChange): integer outputs (packed scores,
// histogram, final mask) must be identical, for every method (IR-MAD included), normalisation
// (standardisation included), threshold (EM included) and with magnitude smoothing. Reports Skipped
// when no CUDA device is usable (CI has none); scripts/gpu-check.sh checks the same on a GPU
// machine without the Debian packages.
#include <catch2/catch.hpp>

#include "imagery/change_detection.h"
#include "imagery/cuda/gpu_backend.h"
#include "imagery/testing/synthetic_pair.h"
#include "tests/support/skip_test.h"

namespace warmpool::imagery {
namespace {

void RequireGpu() {
  if (CudaDeviceCount() == 0) {
    ::warmpool::testing::SkipTest(std::string("no CUDA device (compiled in: ") +
                                  (CudaCompiledIn() ? "yes" : "no") + ")");
  }
}

TEST_CASE("GPU and CPU give identical scores, histograms and masks", "[imagery][gpu]") {
  RequireGpu();
  SynthOptions s;
  s.width = 523;  // not a multiple of any tile size
  s.height = 389;
  s.misregistration_px = 1;
  s.nodata_border_px = 17;
  const SynthPair pair4 = GenerateSyntheticPair(s);
  s.band_count = 3;
  const SynthPair pair3 = GenerateSyntheticPair(s);
  struct Case {
    const char* name;
    Method method;
    Normalization norm;
    ThresholdMethod threshold;
    int smooth, open, close, mmu, strip_rows;
    int band_count;  // of the synthetic pair: 4 (BGRN) or 3
  };
  using N = Normalization;
  using T = ThresholdMethod;
  // IR-MAD is fitted on the host (both runs fit the same sample); its scores, the smoothing and
  // the recounted histogram are computed on each device.
  // clang-format off
  const std::vector<Case> cases = {
      {"cva pif open1 mmu16",          Method::kCva,      N::kPif,         T::kOtsu, 0, 1, 0, 16, 64,  4},
      {"absdiff none open2 close1",    Method::kAbsDiff,  N::kNone,        T::kOtsu, 0, 2, 1, 0,  100, 4},
      {"logratio histogram",           Method::kLogRatio, N::kHistogram,   T::kOtsu, 0, 1, 1, 30, 37,  4},
      {"ndvi pif no morphology",       Method::kNdvi,     N::kPif,         T::kOtsu, 0, 0, 0, 5,  389, 4},
      {"irmad ki mmu16",               Method::kIrMad,    N::kNone,        T::kKittlerIllingworth, 0, 0, 0, 16, 64, 4},
      {"irmad em smooth2 3 bands",     Method::kIrMad,    N::kNone,        T::kEm,   2, 1, 0, 0,  50,  3},
      {"cva standardize em smooth1 3b", Method::kCva,      N::kStandardize, T::kEm,   1, 0, 0, 16, 64,  3},
      {"absdiff standardize otsu smooth3", Method::kAbsDiff, N::kStandardize, T::kOtsu, 3, 1, 1, 8, 389, 4},
  };
  // clang-format on
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ChangeOptions o;
      o.method = c.method;
      o.normalization = c.norm;
      o.threshold = c.threshold;
      o.smooth_radius = c.smooth;
      o.open_radius = c.open;
      o.close_radius = c.close;
      o.min_area_px = c.mmu;
      o.strip_rows = c.strip_rows;
      const SynthPair& pair = c.band_count == 3 ? pair3 : pair4;
      MemoryStripSource b1(pair.before, 0), a1(pair.after, 0);
      ComputeBackendPtr cpu = MakeCpuBackend(2);
      const ChangeMaps expect = ComputeChange(b1, a1, o, *cpu);
      MemoryStripSource b2(pair.before, 0), a2(pair.after, 0);
      ComputeBackendPtr gpu = MakeCudaBackend(0);
      const ChangeMaps got = ComputeChange(b2, a2, o, *gpu);
      CHECK(got.device.rfind("cuda:0", 0) == 0);
      CHECK(got.histogram == expect.histogram);
      CHECK(got.threshold.bin == expect.threshold.bin);
      size_t score_mismatch = 0, mask_mismatch = 0;
      for (size_t i = 0; i < expect.scores.size(); ++i) {
        score_mismatch += got.scores[i] != expect.scores[i];
        mask_mismatch += got.mask[i] != expect.mask[i];
      }
      CHECK(score_mismatch == 0);
      CHECK(mask_mismatch == 0);
      CHECK(got.changed_pixels == expect.changed_pixels);
      CHECK(expect.changed_pixels > 0);  // a case where nothing changes would prove little
      CHECK(got.regions.size() == expect.regions.size());
      if (c.method == Method::kIrMad) {
        CHECK(got.irmad.iterations == expect.irmad.iterations);
        CHECK(got.irmad.iterations > 0);
      }
    }
  }
}

TEST_CASE("Device buffers are reused across backends (second run same result)", "[imagery][gpu]") {
  RequireGpu();
  SynthOptions s;
  s.width = 300;
  s.height = 200;
  const SynthPair pair = GenerateSyntheticPair(s);
  ChangeOptions o;
  MemoryStripSource b(pair.before, 0), a(pair.after, 0);
  ChangeMaps first, second;
  {
    ComputeBackendPtr gpu = MakeCudaBackend(0);
    first = ComputeChange(b, a, o, *gpu);
  }
  {
    ComputeBackendPtr gpu = MakeCudaBackend(0);
    second = ComputeChange(b, a, o, *gpu);
  }
  CHECK(first.mask == second.mask);
  CHECK(first.changed_pixels > 0);
}

}  // namespace
}  // namespace warmpool::imagery
