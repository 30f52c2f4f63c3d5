// fused_pass_ab: the shipped CPU fused pass against a variant of it, paired in one process.
//
// On a shared VM the ratio of the fused pass to a STREAM-like copy moves by +-0.1 between
// processes (docs/benchmarks/imagery.md), far more than most changes to the pass. Here both
// versions run on the same pixels in the same process: each round times the copy, then the two
// passes in alternating order; the report is the best round of each and the median of the
// per-round ratios. Build a variant with
//   cmake -S . -B build -DWARMPOOL_FUSED_VARIANT=/path/to/fused_pass_variant_source.cpp
// (it must define FusedPassCpu like imagery/fused_pass.cpp does). Without it the variant is
// the shipped source itself, which measures the noise floor of the comparison. With
// --variant-layout page-aligned or std-vector the variant runs on other buffer layouts than the
// page lanes the pipeline uses (lane_buffer.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/imagery/bench_common.h"
#include "bench/imagery/fused_pass_variant.h"
#include "imagery/fused_pass.h"

namespace {

using namespace warmpool::imagery;
using namespace warmpool::imagery::bench;
using Clock = std::chrono::steady_clock;

// Seconds taken by ParallelSlices(threads, n, fn).
template <typename Fn>
double TimedParallel(int threads, size_t n, Fn&& fn) {
  const auto t0 = Clock::now();
  ParallelSlices(threads, n, fn);
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int size = 4096;
  int threads = 2;
  int rounds = 15;
  std::string variant_layout = "lanes";
  CLI::App app{"fused_pass_ab: shipped fused pass vs a variant, paired in one process"};
  app.add_option("--size", size, "image side in pixels (4-band uint16 pair)")
      ->check(CLI::Range(64, 32768));
  app.add_option("--threads", threads, "CPU threads")->check(CLI::Range(1, 64));
  app.add_option("--rounds", rounds, "rounds (best of and median of)")->check(CLI::PositiveNumber);
  app.add_option("--variant-layout", variant_layout,
                 "the variant's buffers: lanes (as the pipeline's), page-aligned or std-vector")
      ->check(CLI::IsMember({"lanes", "page-aligned", "std-vector"}));
  CLI11_PARSE(app, argc, argv);

  const size_t n = static_cast<size_t>(size) * size;
  const SynthPair pair = BenchPair(size);
  const FusedParams p = CvaParamsFor(pair, n);
  PassBuffers shipped_buffers = LanePassBuffers(pair);
  // The variant's pixels: the same layout as the shipped pass's (lanes), every buffer on a page
  // boundary (page-aligned), or the generator's plain std::vectors (std-vector). With the shipped
  // code on both sides, the last two measure what the page lanes are worth.
  std::vector<uint16_t> plain_scores(variant_layout == "std-vector" ? n : 0);
  PassBuffers variant_buffers;
  const uint16_t* variant_before = pair.before.pixels.data();
  const uint16_t* variant_after = pair.after.pixels.data();
  uint16_t* variant_scores = plain_scores.data();
  if (variant_layout != "std-vector") {
    variant_buffers =
        variant_layout == "lanes"
            ? LanePassBuffers(pair)
            : LanePassBuffers(pair, PageLane::kBefore, PageLane::kBefore, PageLane::kBefore);
    variant_before = variant_buffers.before.data();
    variant_after = variant_buffers.after.data();
    variant_scores = variant_buffers.scores.data();
  }

  std::vector<uint64_t> shipped_hist(threads * kScoreBins), variant_hist(threads * kScoreBins);
  CopyArrays arrays;
  const size_t copy_n = kCopyDoubles;

  const auto copy = [&] {
    return TimedParallel(threads, copy_n, [&](int, size_t s, size_t e) {
      CopyKernel(arrays.a.data(), arrays.b.data(), s, e);
    });
  };
  const auto shipped = [&] {
    return TimedParallel(threads, n, [&](int t, size_t s, size_t e) {
      FusedPassCpu(p, shipped_buffers.before.data(), shipped_buffers.after.data(), n, s, e, 0,
                   shipped_buffers.scores.data(), shipped_hist.data() + t * kScoreBins);
    });
  };
  const auto variant = [&] {
    return TimedParallel(threads, n, [&](int t, size_t s, size_t e) {
      FusedPassCpuVariant(p, variant_before, variant_after, n, s, e, 0, variant_scores,
                          variant_hist.data() + t * kScoreBins);
    });
  };
  double best_copy = 1e30, best_shipped = 1e30, best_variant = 1e30;
  std::vector<double> shipped_ratio, variant_ratio, time_ratio;
  const double fused_bytes = 18.0 * n, copy_bytes = 2.0 * copy_n * sizeof(double);
  for (int r = 0; r < rounds; ++r) {
    const double c = std::min(copy(), copy());
    double ts, tv;
    if (r % 2 == 0) {
      ts = shipped();
      tv = variant();
    } else {
      tv = variant();
      ts = shipped();
    }
    best_copy = std::min(best_copy, c);
    best_shipped = std::min(best_shipped, ts);
    best_variant = std::min(best_variant, tv);
    shipped_ratio.push_back((fused_bytes / ts) / (copy_bytes / c));
    variant_ratio.push_back((fused_bytes / tv) / (copy_bytes / c));
    time_ratio.push_back(tv / ts);
  }
  const bool same_scores =
      std::equal(shipped_buffers.scores.begin(), shipped_buffers.scores.end(), variant_scores);
  const bool same_hist = shipped_hist == variant_hist;  // same slices, same rounds
  const double copy_gbps = copy_bytes / best_copy / 1e9;
  const nlohmann::ordered_json report = {
      {"size", size},
      {"threads", threads},
      {"rounds", rounds},
      {"variant", WARMPOOL_FUSED_VARIANT_SOURCE},
      {"variant_layout", variant_layout},
      {"copy_gbps", copy_gbps},
      {"shipped_of_copy", fused_bytes / best_shipped / 1e9 / copy_gbps},
      {"variant_of_copy", fused_bytes / best_variant / 1e9 / copy_gbps},
      {"shipped_of_copy_median", Median(shipped_ratio)},
      {"variant_of_copy_median", Median(variant_ratio)},
      {"variant_time_ratio_best", best_variant / best_shipped},
      {"variant_time_ratio_median", Median(time_ratio)},
      {"same_scores", same_scores},
      {"same_histogram", same_hist},
  };
  std::printf("%s\n", report.dump().c_str());
  return 0;
}
