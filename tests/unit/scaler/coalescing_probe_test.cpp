#include "scaler/coalescing_probe.h"

#include <atomic>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

namespace warmpool::scaler {
namespace {

using namespace std::chrono_literals;

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  CoalescingProbe::Clock fn() {
    return [this] { return now; };
  }
};

ProbeTarget Target(const std::string& queue) {
  return {"default", nullptr, "", {queue}, {0}, true};
}

TEST_CASE("Readings are shared within the window and refreshed after it", "[coalesce]") {
  FakeClock clock;
  int reads = 0;
  CoalescingProbe probe(
      [&](const ProbeTarget&) {
        BacklogReading r;
        r.per_queue["q"].pending = ++reads;
        return r;
      },
      CoalescingProbe::Options{200ms, false}, clock.fn());
  CHECK(probe.Get(Target("q"))->pending() == 1);
  clock.now += 100ms;
  CHECK(probe.Get(Target("q"))->pending() == 1);      // shared
  CHECK(probe.Get(Target("other"))->pending() == 2);  // another target reads
  clock.now += 150ms;
  CHECK(probe.Get(Target("q"))->pending() == 3);  // window passed
  CHECK(probe.reads() == 3);
}

TEST_CASE("A failed read reaches its waiters and is retried after the window", "[coalesce]") {
  FakeClock clock;
  bool fail = true;
  CoalescingProbe probe(
      [&](const ProbeTarget&) -> BacklogReading {
        if (fail) throw std::runtime_error("redis down");
        return BacklogReading{};
      },
      CoalescingProbe::Options{200ms, false}, clock.fn());
  CHECK_THROWS_WITH(probe.Get(Target("q")), "redis down");
  fail = false;
  CHECK_THROWS_WITH(probe.Get(Target("q")), "redis down");  // same window: same failure
  clock.now += 250ms;
  CHECK_NOTHROW(probe.Get(Target("q")));
}

TEST_CASE("Concurrent callers share one in-flight read", "[coalesce]") {
  std::atomic<int> reads{0};
  CoalescingProbe probe(
      [&](const ProbeTarget&) {
        ++reads;
        std::this_thread::sleep_for(100ms);
        BacklogReading r;
        r.per_queue["q"].pending = 7;
        return r;
      },
      CoalescingProbe::Options{5000ms, false});
  std::vector<std::thread> threads;
  std::atomic<int> sum{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] { sum += static_cast<int>(probe.Get(Target("q"))->pending()); });
  }
  for (auto& t : threads) t.join();
  CHECK(reads == 1);
  CHECK(sum == 16 * 7);
}

TEST_CASE("Refresh-ahead keeps readings fresh without callers waiting for Redis", "[coalesce]") {
  std::atomic<int> reads{0};
  CoalescingProbe probe(
      [&](const ProbeTarget&) {
        std::this_thread::sleep_for(40ms);
        BacklogReading r;
        r.per_queue["q"].pending = ++reads;
        return r;
      },
      CoalescingProbe::Options{100ms, true});
  CHECK(probe.Get(Target("q"))->pending() == 1);  // first read: the caller waits
  auto slowest = std::chrono::steady_clock::duration::zero();
  int64_t last = 1;
  const auto end = std::chrono::steady_clock::now() + 1s;
  while (std::chrono::steady_clock::now() < end) {
    const auto t0 = std::chrono::steady_clock::now();
    int64_t v = probe.Get(Target("q"))->pending();
    slowest = std::max(slowest, std::chrono::steady_clock::now() - t0);
    CHECK(v >= last);  // never goes back in time
    last = v;
    std::this_thread::sleep_for(5ms);
  }
  CHECK(slowest < 20ms);  // served from the refreshed cache, never a 40 ms read
  CHECK(last >= 7);       // refreshed about every 100 ms for a second
  CHECK(last <= 20);      // but not once per call
}

}  // namespace
}  // namespace warmpool::scaler
