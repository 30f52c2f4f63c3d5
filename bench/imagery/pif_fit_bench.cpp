// pif_fit_bench: FitPif (imagery/normalization.cpp) against the implementation it replaced,
// on the same pixel sample in the same process, alternated round by round.
//
// The reference below is FitPif as it was before its selections became radix selections on the
// residuals' bits: std::nth_element on double residuals and on (z, index) pairs, then a sort of
// the kept indices (moments and regression are the shared MomentsOver and OrthogonalFit). Both
// must give the same fit bit for bit; the bench checks that too, and exits 1 when they differ.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "imagery/normalization.h"
#include "imagery/testing/synthetic_pair.h"

namespace {

using namespace warmpool::imagery;
using Clock = std::chrono::steady_clock;

// The previous FitPif with its default parameters and nodata 0 on both dates.
RadiometricFit ReferenceFitPif(const PixelSample& s) {
  constexpr double kPifFraction = 0.4;
  constexpr int kIterations = 4;
  RadiometricFit fit = IdentityFit(s.band_count);
  std::vector<size_t> valid;
  for (size_t i = 0; i < s.count; ++i) {
    bool ok = true;
    for (int b = 0; b < s.band_count; ++b) {
      const size_t k = static_cast<size_t>(b) * s.count + i;
      ok = ok && s.before[k] != 0 && s.after[k] != 0;
    }
    if (ok) {
      valid.push_back(i);
    }
  }
  if (valid.size() < 16) {
    return fit;
  }
  std::vector<size_t> pif = valid;
  for (int b = 0; b < s.band_count; ++b) {
    const BandMoments m = MomentsOver(s, b, valid);
    const double g = m.syy > 0 ? std::sqrt(m.sxx / m.syy) : 1.0;
    fit.gain[b] = static_cast<float>(g);
    fit.offset[b] = static_cast<float>(m.mean_x - g * m.mean_y);
  }
  std::vector<std::pair<double, size_t>> residuals(valid.size());
  for (int iter = 0; iter < kIterations; ++iter) {
    std::vector<double> scale(static_cast<size_t>(s.band_count), 1.0);
    std::vector<double> abs_res(valid.size());
    for (int b = 0; b < s.band_count; ++b) {
      const uint16_t* x = s.before.data() + static_cast<size_t>(b) * s.count;
      const uint16_t* y = s.after.data() + static_cast<size_t>(b) * s.count;
      for (size_t k = 0; k < valid.size(); ++k) {
        abs_res[k] = std::fabs(fit.gain[b] * y[valid[k]] + fit.offset[b] - x[valid[k]]);
      }
      std::nth_element(abs_res.begin(), abs_res.begin() + abs_res.size() / 2, abs_res.end());
      scale[b] = std::max(abs_res[abs_res.size() / 2], 0.5);
    }
    for (size_t k = 0; k < valid.size(); ++k) {
      double z = 0;
      for (int b = 0; b < s.band_count; ++b) {
        const size_t idx = static_cast<size_t>(b) * s.count + valid[k];
        const double r = (fit.gain[b] * s.after[idx] + fit.offset[b] - s.before[idx]) / scale[b];
        z += r * r;
      }
      residuals[k] = {z, valid[k]};
    }
    const size_t keep = std::max<size_t>(
        16, static_cast<size_t>(kPifFraction * static_cast<double>(residuals.size())));
    std::nth_element(residuals.begin(), residuals.begin() + (keep - 1), residuals.end());
    pif.resize(keep);
    for (size_t k = 0; k < keep; ++k) {
      pif[k] = residuals[k].second;
    }
    std::sort(pif.begin(), pif.end());
    for (int b = 0; b < s.band_count; ++b) {
      std::tie(fit.gain[b], fit.offset[b]) = OrthogonalFit(MomentsOver(s, b, pif));
    }
  }
  fit.pif_count = pif.size();
  return fit;
}

bool SameFit(const RadiometricFit& a, const RadiometricFit& b) {
  return a.pif_count == b.pif_count && a.gain.size() == b.gain.size() &&
         std::memcmp(a.gain.data(), b.gain.data(), a.gain.size() * sizeof(float)) == 0 &&
         std::memcmp(a.offset.data(), b.offset.data(), a.offset.size() * sizeof(float)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  int side = 1024;  // ComputeChange's default sample_side
  int rounds = 7;
  CLI::App app{"pif_fit_bench: FitPif against the implementation it replaced, same sample"};
  app.add_option("--side", side, "sample side in pixels (4-band synthetic pair)")
      ->check(CLI::Range(64, 4096));
  app.add_option("--rounds", rounds, "rounds (best of)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  SynthOptions so;
  so.width = so.height = side;
  so.object_count = side * side / 4096;
  const SynthPair pair = GenerateSyntheticPair(so);
  PixelSample sample;
  sample.band_count = pair.before.band_count;
  sample.count = static_cast<size_t>(side) * side;
  sample.before = pair.before.pixels;
  sample.after = pair.after.pixels;

  double best_reference = 1e30, best_shipped = 1e30;
  bool identical = true;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    const RadiometricFit reference = ReferenceFitPif(sample);
    const auto t1 = Clock::now();
    const RadiometricFit shipped = FitPif(sample, 0, 0);
    const auto t2 = Clock::now();
    best_reference = std::min(best_reference, std::chrono::duration<double>(t1 - t0).count());
    best_shipped = std::min(best_shipped, std::chrono::duration<double>(t2 - t1).count());
    identical = identical && SameFit(reference, shipped);
  }
  const nlohmann::ordered_json report = {{"side", side},
                                         {"bands", sample.band_count},
                                         {"rounds", rounds},
                                         {"reference_ms", best_reference * 1e3},
                                         {"shipped_ms", best_shipped * 1e3},
                                         {"shipped_over_reference", best_shipped / best_reference},
                                         {"identical_fit", identical}};
  std::printf("%s\n", report.dump().c_str());
  return identical ? 0 : 1;
}
