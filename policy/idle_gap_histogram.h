#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

namespace warmpool::policy {

// The hybrid-histogram policy's memory (Shahrad et al., USENIX ATC 2020): gaps between bursts in
// 1-minute bins over 4 hours, plus one out-of-range bin. (Shahrad bins idle times, end of work to
// next arrival; warmpool records start to start, see PolicyState::gaps.)
// Plain data; copyable; an empty `bins` means no gap seen yet.
struct IdleGapHistogram {
  static constexpr int64_t kBinSeconds = 60;
  static constexpr int kRangeBins = 240;         // 4 h
  static constexpr int kBins = kRangeBins + 1;   // last = gaps >= 4 h
  static constexpr uint32_t kMaxSamples = 2000;  // above this all counts are halved (forgetting)
  // Fewer gaps: not representative. Three suffice because the policy also needs the gaps to be
  // sharp (warm_policy.h); on the hourly W4 in warmpool-sim, 3 instead of 5 starts the pre-warm
  // two batches earlier and left the heavy-tailed W2 unchanged (docs/SCALING.md).
  static constexpr uint32_t kMinSamples = 3;
  std::vector<uint32_t> bins;

  friend bool operator==(const IdleGapHistogram&, const IdleGapHistogram&) = default;
};

// Returns `h` with one more gap of `gap` (negative gaps count as 0). Halves every bin (rounding
// up non-zero counts) once the total exceeds kMaxSamples, so old behaviour fades. Pure.
IdleGapHistogram RecordGap(IdleGapHistogram h, std::chrono::seconds gap);

// Total number of gaps recorded (after forgetting).
uint32_t GapSamples(const IdleGapHistogram& h);

// What the decision needs from the histogram.
struct GapSummary {
  bool representative = false;     // >= kMinSamples gaps and at most half of them out of range
  std::chrono::seconds head{0};    // 5th percentile, rounded down to its bin's lower edge
  std::chrono::seconds tail{0};    // 99th percentile, rounded up to its bin's upper edge
  bool tail_out_of_range = false;  // the 99th percentile falls in the >= 4 h bin
};
// Over the gaps of at least `from` only (whole bins: the bins below the one holding `from` are
// left out), so a caller that cannot act on short gaps is not blurred by them.
GapSummary SummariseGaps(const IdleGapHistogram& h,
                         std::chrono::seconds from = std::chrono::seconds(0));

// Share of recorded gaps no longer than `t` (bins whose upper edge is <= t, plus the bin that
// contains t pro rata). 0 when empty.
double GapShareWithin(const IdleGapHistogram& h, std::chrono::seconds t);

}  // namespace warmpool::policy
