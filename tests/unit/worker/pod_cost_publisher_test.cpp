// PodCostPublisher against a fake API: what it writes, how rarely, and how it stops. Timings are
// scaled down (ms instead of s); the checks bound counts and gaps, never exact instants.
#include "worker/pod_cost_publisher.h"

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/support/process.h"

namespace warmpool::worker {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Running tasks the test controls, and the writes the publisher made.
struct FakePod {
  std::mutex mu;
  std::vector<Clock::time_point> running;
  std::vector<std::pair<Clock::time_point, std::string>> writes;  // when, cost
  int fail_next = 0;                                              // answer 403 this many times

  PodCostPublisher::RunningSince Running() {
    return [this] {
      std::lock_guard lock(mu);
      return running;
    };
  }
  PodCostPublisher::Send Send() {
    return [this](const std::string& patch, const std::atomic<bool>&) {
      std::lock_guard lock(mu);
      auto cost =
          nlohmann::json::parse(patch)["metadata"]["annotations"][kPodDeletionCostAnnotation];
      writes.emplace_back(Clock::now(), cost.get<std::string>());
      if (fail_next > 0) {
        --fail_next;
        return ApiResult{false, 403, "forbidden"};
      }
      return ApiResult{true, 200, ""};
    };
  }
  std::vector<std::string> Costs() {
    std::lock_guard lock(mu);
    std::vector<std::string> out;
    for (const auto& w : writes) out.push_back(w.second);
    return out;
  }
  size_t Count() {
    std::lock_guard lock(mu);
    return writes.size();
  }
  // The shortest gap between two writes.
  Clock::duration MinGap() {
    std::lock_guard lock(mu);
    Clock::duration gap = Clock::duration::max();
    for (size_t i = 1; i < writes.size(); ++i) {
      gap = std::min(gap, writes[i].first - writes[i - 1].first);
    }
    return gap;
  }
};

// The interval is long against the test's own steps (a 50 ms flip must fall inside it even on a
// loaded sanitizer run); the waits are longer still, since they only bound a failure's time.
const PodCostTiming kFast{milliseconds(100), milliseconds(1000), milliseconds(5)};
// The fake stamps a write when it receives it, a call's latency after the publisher read its clock
// (a sanitizer run measured gaps 25 us short): gaps are checked with this slack, still far above
// the 5 ms poll a missing rate limit would show.
constexpr auto kGapSlack = milliseconds(50);

TEST_CASE("The publisher writes at start, on a change, and no more than once per interval",
          "[worker][pod_cost]") {
  FakePod pod;
  PodCostPublisher publisher("ns/p", pod.Running(), pod.Send(), kFast);
  publisher.Start();
  REQUIRE(testing::WaitFor([&] { return pod.Count() == 1; }, milliseconds(10000)));
  CHECK(pod.Costs() == std::vector<std::string>{"0"});  // a previous container may have left one

  {
    std::lock_guard lock(pod.mu);
    pod.running = {Clock::now()};
  }
  REQUIRE(testing::WaitFor([&] { return pod.Count() == 2; }, milliseconds(10000)));
  CHECK(pod.Costs() == std::vector<std::string>{"0", "1"});

  // The task ends and another long one is running again before the interval is over: the value
  // coalesces back to what the API server has, so nothing is written.
  {
    std::lock_guard lock(pod.mu);
    pod.running.clear();
  }
  std::this_thread::sleep_for(milliseconds(50));
  {
    std::lock_guard lock(pod.mu);
    pod.running = {Clock::now() - std::chrono::hours(1)};
  }
  std::this_thread::sleep_for(milliseconds(1000));
  CHECK(pod.Count() == 2);

  {
    std::lock_guard lock(pod.mu);
    pod.running.clear();
  }
  REQUIRE(testing::WaitFor([&] { return pod.Count() == 3; }, milliseconds(10000)));
  CHECK(pod.Costs() == std::vector<std::string>{"0", "1", "0"});
  CHECK(pod.MinGap() >= kFast.min_interval - kGapSlack);
  publisher.Stop();
}

TEST_CASE("A refused write is retried after the interval until it is accepted",
          "[worker][pod_cost]") {
  FakePod pod;
  pod.fail_next = 2;
  PodCostPublisher publisher("ns/p", pod.Running(), pod.Send(), kFast);
  publisher.Start();
  REQUIRE(testing::WaitFor([&] { return pod.Count() == 3; }, milliseconds(10000)));
  std::this_thread::sleep_for(milliseconds(1000));
  CHECK(pod.Costs() == std::vector<std::string>{"0", "0", "0"});  // then accepted: no more
  CHECK(pod.MinGap() >= kFast.min_interval - kGapSlack);
}

TEST_CASE("Stop aborts a write in flight at once", "[worker][pod_cost]") {
  std::atomic<bool> in_flight{false};
  PodCostPublisher publisher(
      "ns/p", [] { return std::vector<Clock::time_point>{}; },
      [&](const std::string&, const std::atomic<bool>& cancel) {
        in_flight = true;
        // A hung API server: only the cancel flag ends the wait.
        testing::WaitFor([&] { return cancel.load(); }, milliseconds(30000));
        return ApiResult{false, 0, "cancelled"};
      },
      kFast);
  publisher.Start();
  REQUIRE(testing::WaitFor([&] { return in_flight.load(); }, milliseconds(2000)));
  const auto start = Clock::now();
  publisher.Stop();
  CHECK(Clock::now() - start < milliseconds(1000));
}

}  // namespace
}  // namespace warmpool::worker
