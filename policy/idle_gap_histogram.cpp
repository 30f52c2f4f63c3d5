#include "policy/idle_gap_histogram.h"

#include <algorithm>
#include <numeric>

namespace warmpool::policy {
namespace {

using Seconds = std::chrono::seconds;

// Index of the bin holding the q-quantile (0 < q <= 1) of a non-empty histogram.
int QuantileBin(const IdleGapHistogram& h, double q) {
  const uint32_t total = GapSamples(h);
  const double rank = q * total;
  double seen = 0;
  for (int i = 0; i < IdleGapHistogram::kBins; ++i) {
    seen += h.bins[i];
    if (seen >= rank && h.bins[i] > 0) return i;
  }
  return IdleGapHistogram::kBins - 1;
}

}  // namespace

IdleGapHistogram RecordGap(IdleGapHistogram h, Seconds gap) {
  if (h.bins.size() != static_cast<size_t>(IdleGapHistogram::kBins)) {
    h.bins.assign(IdleGapHistogram::kBins, 0);
  }
  const int64_t s = std::max<int64_t>(0, gap.count());
  const int bin = static_cast<int>(
      std::min<int64_t>(s / IdleGapHistogram::kBinSeconds, IdleGapHistogram::kRangeBins));
  h.bins[bin] += 1;
  if (GapSamples(h) > IdleGapHistogram::kMaxSamples) {
    for (auto& c : h.bins) c = (c + 1) / 2;
  }
  return h;
}

uint32_t GapSamples(const IdleGapHistogram& h) {
  return std::accumulate(h.bins.begin(), h.bins.end(), uint32_t{0});
}

GapSummary SummariseGaps(const IdleGapHistogram& all, Seconds from) {
  IdleGapHistogram h = all;
  const auto first =
      std::min<int64_t>(std::max<int64_t>(0, from.count()) / IdleGapHistogram::kBinSeconds,
                        static_cast<int64_t>(h.bins.size()));
  std::fill(h.bins.begin(), h.bins.begin() + first, 0);
  GapSummary out;
  const uint32_t total = GapSamples(h);
  if (total == 0) return out;
  const uint32_t overflow = h.bins.back();
  out.representative = total >= IdleGapHistogram::kMinSamples && 2 * overflow <= total;
  const int head_bin = QuantileBin(h, 0.05);
  const int tail_bin = QuantileBin(h, 0.99);
  out.head = Seconds(head_bin * IdleGapHistogram::kBinSeconds);
  out.tail_out_of_range = tail_bin == IdleGapHistogram::kRangeBins;
  // Rounded up to the bin's upper edge, plus Shahrad et al.'s 10 % margin.
  out.tail = Seconds((tail_bin + 1) * IdleGapHistogram::kBinSeconds * 11 / 10);
  return out;
}

double GapShareWithin(const IdleGapHistogram& h, Seconds t) {
  const uint32_t total = GapSamples(h);
  if (total == 0) return 0;
  double within = 0;
  for (int i = 0; i < IdleGapHistogram::kRangeBins; ++i) {
    const int64_t lo = i * IdleGapHistogram::kBinSeconds;
    const int64_t hi = lo + IdleGapHistogram::kBinSeconds;
    if (hi <= t.count()) {
      within += h.bins[i];
    } else if (lo < t.count()) {
      within += h.bins[i] * static_cast<double>(t.count() - lo) / IdleGapHistogram::kBinSeconds;
    }
  }
  return within / total;
}

}  // namespace warmpool::policy
