#include "imagery/fused_pass.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace warmpool::imagery {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WARMPOOL_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define WARMPOOL_CPU_CLONES
#endif

template <Method kMethod, int kBands>
[[gnu::always_inline]] inline void ScoreSpan(const FusedParams& p,
                                             const uint16_t* __restrict__ before,
                                             const uint16_t* __restrict__ after, size_t plane,
                                             size_t begin, size_t end,
                                             uint16_t* __restrict__ scores) {
  for (size_t i = begin; i < end; ++i) {
    scores[i] = ScorePixel<kMethod, kBands>(p, before, after, plane, i);
  }
}

template <Method kMethod>
[[gnu::always_inline]] inline void ScoreSpanBands(const FusedParams& p, const uint16_t* before,
                                                  const uint16_t* after, size_t plane, size_t begin,
                                                  size_t end, uint16_t* scores) {
  switch (p.band_count) {
    case 1:
      return ScoreSpan<kMethod, 1>(p, before, after, plane, begin, end, scores);
    case 2:
      return ScoreSpan<kMethod, 2>(p, before, after, plane, begin, end, scores);
    case 3:
      return ScoreSpan<kMethod, 3>(p, before, after, plane, begin, end, scores);
    case 4:
      return ScoreSpan<kMethod, 4>(p, before, after, plane, begin, end, scores);
    default:
      return ScoreSpan<kMethod, 0>(p, before, after, plane, begin, end, scores);
  }
}

WARMPOOL_CPU_CLONES
void ScoreDispatch(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                   size_t plane, size_t begin, size_t end, uint16_t* scores) {
  switch (p.method) {
    case Method::kAbsDiff:
      return ScoreSpanBands<Method::kAbsDiff>(p, before, after, plane, begin, end, scores);
    case Method::kLogRatio:
      return ScoreSpanBands<Method::kLogRatio>(p, before, after, plane, begin, end, scores);
    case Method::kCva:
      return ScoreSpanBands<Method::kCva>(p, before, after, plane, begin, end, scores);
    case Method::kNdvi:
      return ScoreSpanBands<Method::kNdvi>(p, before, after, plane, begin, end, scores);
    case Method::kIrMad:
      return ScoreSpanBands<Method::kIrMad>(p, before, after, plane, begin, end, scores);
  }
}

template <Method kMethod>
void MeasureSpan(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                 size_t begin, size_t end, float* out) {
  for (size_t i = begin; i < end; ++i) {
    const PixelMeasure m = MeasurePixel<kMethod, 0>(p, before, after, plane, i);
    out[i] = m.valid ? m.measure : -1.0f;
  }
}

}  // namespace

void ScoreRangeCpu(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                   size_t plane, size_t begin, size_t end, uint16_t* scores) {
  ScoreDispatch(p, before, after, plane, begin, end, scores);
}

void FusedPassCpu(const FusedParams& p, const uint16_t* before, const uint16_t* after, size_t plane,
                  size_t begin, size_t end, size_t global_offset, uint16_t* scores,
                  uint64_t* histogram) {
  // Chunks of 64 Ki pixels: their 128 KiB of scores are still in L2 when the histogram loop reads
  // them, and few chunk switches leave memory idle. With 8 Ki chunks and the eight sub-histograms
  // below, bench/imagery measured 0.46 of copy; with this layout 0.50-0.70 (docs/benchmarks).
  constexpr size_t kChunk = size_t{1} << 16;
  // One 16 KiB uint32 histogram stays in L1. Eight interleaved copies (against store-forwarding
  // stalls on runs of equal bins) were slower on Zen 5: 128 KiB spill out of L1. Bin 4095
  // is never a valid magnitude (kScoreMax = 4094), so nodata (0xFFFF & kScoreMask = 4095) lands
  // there without a branch and is dropped when the counts are folded.
  static_assert(kScoreMax < kScoreBins - 1);
  std::array<uint32_t, kScoreBins> counts{};
  const auto fold = [&] {
    for (int k = 0; k < kScoreBins - 1; ++k) {
      histogram[k] += counts[k];
    }
    counts.fill(0);
  };
  const size_t stride = p.histogram_stride;
  size_t since_fold = 0;
  for (size_t c = begin; c < end; c += kChunk) {
    const size_t stop = std::min(end, c + kChunk);
    ScoreDispatch(p, before, after, plane, c, stop, scores);
    // First i >= c with global_offset + i a multiple of the stride (a power of two).
    for (size_t i = c + ((stride - ((global_offset + c) & (stride - 1))) & (stride - 1)); i < stop;
         i += stride) {
      ++counts[scores[i] & kScoreMask];
    }
    since_fold += stop - c;
    if (since_fold >= (size_t{1} << 30)) {  // fold long before a uint32 count can overflow
      fold();
      since_fold = 0;
    }
  }
  fold();
}

void MeasureRangeCpu(const FusedParams& p, const uint16_t* before, const uint16_t* after,
                     size_t plane, size_t begin, size_t end, float* measures) {
  switch (p.method) {
    case Method::kAbsDiff:
      return MeasureSpan<Method::kAbsDiff>(p, before, after, plane, begin, end, measures);
    case Method::kLogRatio:
      return MeasureSpan<Method::kLogRatio>(p, before, after, plane, begin, end, measures);
    case Method::kCva:
      return MeasureSpan<Method::kCva>(p, before, after, plane, begin, end, measures);
    case Method::kNdvi:
      return MeasureSpan<Method::kNdvi>(p, before, after, plane, begin, end, measures);
    case Method::kIrMad:
      return MeasureSpan<Method::kIrMad>(p, before, after, plane, begin, end, measures);
  }
}

}  // namespace warmpool::imagery
