// The expected-cost keep-alive: rent (keep the idle pod) or buy (start again) against the learned
// gap distribution, where a node outlives its last pod by the cluster autoscaler's linger.
#include "policy/keep_alive_cost.h"

#include <limits>

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

using std::chrono::hours;
using std::chrono::minutes;

IdleGapHistogram Gaps(std::initializer_list<std::chrono::seconds> gaps) {
  IdleGapHistogram h;
  for (const auto g : gaps) h = RecordGap(std::move(h), g);
  return h;
}

// The shipped settings: KEDA at zero 90 s after the policy goes inactive, the node 600 s after
// that; a cold start is worth 300 node-seconds.
KeepAliveCosts Shipped(double elapsed, double pod_start, double cap) {
  KeepAliveCosts c;
  c.elapsed = elapsed;
  c.to_zero = 90;
  c.linger = 600;
  c.cold_start = 300;
  c.pod_start = pod_start;
  c.cap = cap;
  return c;
}

TEST_CASE("Nothing learned, or every gap already over: nothing to keep", "[policy][keepalive]") {
  CHECK(ExpectedCostKeepAlive({}, Shipped(0, 300, 3600)) == 0);
  const IdleGapHistogram gaps = Gaps({minutes(2), minutes(3), minutes(4)});
  CHECK(ExpectedCostKeepAlive(gaps, Shipped(600, 300, 3600)) == 0);
}

TEST_CASE("A cap past the histogram's range or not a number is bounded", "[policy][keepalive]") {
  IdleGapHistogram gaps;
  for (int i = 0; i < 50; ++i) gaps = RecordGap(std::move(gaps), hours(3) + minutes(i));
  // Gaps of about 3 h with a cold start priced at a day: keep, but never past 4 h.
  KeepAliveCosts dear = Shipped(0, 86400, 1e12);
  dear.cold_start = 86400;
  const double k = ExpectedCostKeepAlive(gaps, dear);
  CHECK(k > 0);
  CHECK(k <= 4 * 3600);
  dear.cap = std::numeric_limits<double>::infinity();
  CHECK(ExpectedCostKeepAlive(gaps, dear) == 0);
  dear.cap = std::numeric_limits<double>::quiet_NaN();
  CHECK(ExpectedCostKeepAlive(gaps, dear) == 0);
}

TEST_CASE("A come-back while the node lingers costs no node time: keep till the pod outlasts it",
          "[policy][keepalive]") {
  // Next start 5-9 minutes after the last one; released 30 s after that start, the pod would go
  // at 2 minutes and the node at 12.
  IdleGapHistogram gaps;
  for (int i = 0; i < 10; ++i) {
    for (int m : {5, 6, 7, 8}) gaps = RecordGap(std::move(gaps), minutes(m));
  }
  // Kept 7 minutes, the pod (gone 90 s later) outlasts the longest gap: a pod start saved at
  // the price of node time only in the 1 case of 41 where no start comes at all.
  CHECK(ExpectedCostKeepAlive(gaps, Shipped(30, 40, 1800)) == 7 * 60);
  // A free pod start buys nothing that node time should pay for.
  CHECK(ExpectedCostKeepAlive(gaps, Shipped(30, 0, 1800)) == 0);
  // Four gaps tell too little: 1 case in 5 no start comes, and the pod would wait in vain.
  const IdleGapHistogram few = Gaps({minutes(5), minutes(6), minutes(7), minutes(8)});
  CHECK(ExpectedCostKeepAlive(few, Shipped(30, 40, 1800)) == 0);
}

TEST_CASE("Past the linger, keep while the node time costs less than the start it saves",
          "[policy][keepalive]") {
  // Next start 15-16 minutes after the last one: 2.5-3.5 minutes after the node would go.
  const IdleGapHistogram gaps = Gaps({minutes(15), minutes(15), minutes(15), minutes(15)});
  // Keeping ~3.5 minutes of node time saves a cold start worth 5: keep.
  CHECK(ExpectedCostKeepAlive(gaps, Shipped(60, 40, 1000)) >= 180);
  // A cold start worth 2 minutes is cheaper than the node time: release.
  KeepAliveCosts cheap_start = Shipped(60, 40, 1000);
  cheap_start.cold_start = 120;
  CHECK(ExpectedCostKeepAlive(gaps, cheap_start) == 0);
}

TEST_CASE("Half the gaps short, half hours long: the pod start's price decides",
          "[policy][keepalive]") {
  const IdleGapHistogram gaps = Gaps(
      {minutes(5), minutes(5), minutes(5), minutes(5), hours(3), hours(3), hours(3), hours(3)});
  // Keeping through the short gaps (4 minutes) bills the node 4 more minutes half the time,
  // past its linger before the long gaps; it saves a pod start the other half.
  const double cap = 3 * 3600;
  CHECK(ExpectedCostKeepAlive(gaps, Shipped(30, 30, cap)) == 0);  // a 30-s pod start: release
  const double k = ExpectedCostKeepAlive(gaps, Shipped(30, 300, cap));
  CHECK(k >= 240);  // a pod start as dear as a cold start: keep past the short gaps
  CHECK(k < 600);   // but not into the long ones
}

}  // namespace
}  // namespace warmpool::policy
