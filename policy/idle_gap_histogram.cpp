#include "policy/idle_gap_histogram.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace warmpool::policy {
namespace {

using Seconds = std::chrono::seconds;

// Indexes of the bins holding the `head` and `tail` quantiles (0 < head <= tail <= 1) of the
// bins from `first` on, whose sum is `total` (> 0): the first non-empty bin where the running
// count reaches q x total. One pass over the bins in place: the policy asks this on every poll.
std::pair<int, int> QuantileBins(const IdleGapHistogram& h, size_t first, uint32_t total,
                                 double head, double tail) {
  // Counts are whole, so "count >= q x total" is "count >= ceil(q x total)".
  const auto head_rank = static_cast<uint64_t>(std::ceil(head * total));
  const auto tail_rank = static_cast<uint64_t>(std::ceil(tail * total));
  std::pair<int, int> out{IdleGapHistogram::kBins - 1, IdleGapHistogram::kBins - 1};
  bool head_found = false;
  uint64_t seen = 0;
  for (size_t i = first; i < h.bins.size(); ++i) {
    if (h.bins[i] == 0) continue;
    seen += h.bins[i];
    if (!head_found && seen >= head_rank) {
      out.first = static_cast<int>(i);
      head_found = true;
    }
    if (seen >= tail_rank) {
      out.second = static_cast<int>(i);
      break;
    }
  }
  return out;
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

GapSummary SummariseGaps(const IdleGapHistogram& h, Seconds from) {
  const auto first = static_cast<size_t>(
      std::min<int64_t>(std::max<int64_t>(0, from.count()) / IdleGapHistogram::kBinSeconds,
                        static_cast<int64_t>(h.bins.size())));
  GapSummary out;
  const uint32_t total = std::accumulate(h.bins.begin() + first, h.bins.end(), uint32_t{0});
  if (total == 0) return out;
  const uint32_t overflow = h.bins.back();
  out.representative = total >= IdleGapHistogram::kMinSamples && 2 * overflow <= total;
  const auto [head_bin, tail_bin] = QuantileBins(h, first, total, 0.05, 0.99);
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
  const int range = std::min<int>(IdleGapHistogram::kRangeBins, static_cast<int>(h.bins.size()));
  for (int i = 0; i < range; ++i) {
    const int64_t lo = i * IdleGapHistogram::kBinSeconds;
    const int64_t hi = lo + IdleGapHistogram::kBinSeconds;
    if (lo >= t.count()) break;  // this bin and the ones above lie past t
    if (hi <= t.count()) {
      within += h.bins[i];
    } else if (lo < t.count()) {
      within += h.bins[i] * static_cast<double>(t.count() - lo) / IdleGapHistogram::kBinSeconds;
    }
  }
  return within / total;
}

}  // namespace warmpool::policy
