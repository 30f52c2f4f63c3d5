#include "policy/idle_gap_histogram.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

IdleGapHistogram With(std::initializer_list<seconds> gaps) {
  IdleGapHistogram h;
  for (auto g : gaps) h = RecordGap(std::move(h), g);
  return h;
}

TEST_CASE("Gaps land in 1-minute bins with an out-of-range bin", "[histogram]") {
  IdleGapHistogram h = With({seconds(0), seconds(59), seconds(60), seconds(-5), minutes(300)});
  REQUIRE(h.bins.size() == IdleGapHistogram::kBins);
  CHECK(h.bins[0] == 3);
  CHECK(h.bins[1] == 1);
  CHECK(h.bins[IdleGapHistogram::kRangeBins] == 1);
  CHECK(GapSamples(h) == 5);
}

TEST_CASE("Summary: head is the 5th percentile's lower edge, tail the 99th's upper",
          "[histogram]") {
  IdleGapHistogram h;
  for (int i = 0; i < 100; ++i) h = RecordGap(std::move(h), minutes(50 + i % 10));
  GapSummary s = SummariseGaps(h);
  CHECK(s.representative);
  CHECK(s.head == minutes(50));
  CHECK(s.tail == minutes(66));
  CHECK_FALSE(s.tail_out_of_range);
}

TEST_CASE("Too few gaps, or mostly out of range, is not representative", "[histogram]") {
  CHECK_FALSE(SummariseGaps(With({minutes(1), minutes(1)})).representative);
  CHECK(SummariseGaps(With({minutes(1), minutes(1), minutes(1)})).representative);
  GapSummary s = SummariseGaps(
      With({minutes(1), minutes(1), minutes(500), minutes(500), minutes(500), minutes(500)}));
  CHECK_FALSE(s.representative);
  CHECK(s.tail_out_of_range);
  CHECK_FALSE(SummariseGaps(IdleGapHistogram{}).representative);
}

TEST_CASE("A summary from a length leaves the shorter gaps out", "[histogram]") {
  // An hourly pair of calls: the second one's own short gap whenever the first found a warm pod.
  const IdleGapHistogram h = With(
      {seconds(90), minutes(60), seconds(80), minutes(59), minutes(60), seconds(95), minutes(61)});
  CHECK(SummariseGaps(h).head == minutes(1));
  const GapSummary s = SummariseGaps(h, seconds(450));
  CHECK(s.representative);  // 4 gaps of an hour
  CHECK(s.head == minutes(59));
  CHECK(s.tail == seconds(62 * 66));
  CHECK(GapSamples(h) == 7);  // the histogram itself keeps them (keep-alive reads them)
  // The bin holding `from` counts; past the range nothing is left.
  CHECK(SummariseGaps(h, seconds(60 * 60 + 30)).head == minutes(60));
  CHECK_FALSE(SummariseGaps(h, hours(5)).representative);
  CHECK_FALSE(SummariseGaps(IdleGapHistogram{}, seconds(450)).representative);
}

TEST_CASE("Share within counts whole bins and the partial bin pro rata", "[histogram]") {
  IdleGapHistogram h = With({seconds(10), seconds(70), seconds(130), seconds(190)});
  CHECK(GapShareWithin(h, seconds(0)) == Approx(0));
  CHECK(GapShareWithin(h, seconds(60)) == Approx(0.25));
  CHECK(GapShareWithin(h, seconds(90)) == Approx(0.375));
  CHECK(GapShareWithin(h, seconds(240)) == Approx(1.0));
  CHECK(GapShareWithin(IdleGapHistogram{}, seconds(240)) == 0);
}

TEST_CASE("Old gaps fade: counts halve past the sample cap", "[histogram]") {
  IdleGapHistogram h;
  for (uint32_t i = 0; i < IdleGapHistogram::kMaxSamples; ++i)
    h = RecordGap(std::move(h), minutes(5));
  CHECK(GapSamples(h) == IdleGapHistogram::kMaxSamples);
  h = RecordGap(std::move(h), minutes(100));
  CHECK(GapSamples(h) <= IdleGapHistogram::kMaxSamples / 2 + 2);
  CHECK(h.bins[100] == 1);  // a single new gap is kept
}

}  // namespace
}  // namespace warmpool::policy
