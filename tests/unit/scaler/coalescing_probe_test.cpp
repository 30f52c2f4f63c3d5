#include "scaler/coalescing_probe.h"

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

namespace warmpool::scaler {
namespace {

// "q<i>" built with append: GCC 12 at -O3 misreads "lit" + std::string (-Werror=restrict).
std::string QueueName(int i) {
  std::string name = "q";
  return name.append(std::to_string(i));
}

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;
using Result = CoalescingProbe::Result;

struct FakeClock {
  std::atomic<Steady::time_point> now{Steady::time_point{}};
  CoalescingProbe::Clock fn() {
    return [this] { return now.load(); };
  }
  void Advance(std::chrono::milliseconds d) { now = now.load() + d; }
};

ProbeTarget Target(const std::string& queue, const std::string& connection = "default") {
  ProbeTarget t;
  t.connection = connection;
  t.queues = {queue};
  t.priority_levels = {0};
  return t;
}

// The result now, or the callback's (test helper: the probe itself never blocks).
Result GetAndWait(CoalescingProbe& probe, const ProbeTarget& t,
                  std::chrono::milliseconds deadline = 5s) {
  auto promise = std::make_shared<std::promise<Result>>();
  auto future = promise->get_future();
  auto now = probe.Get(t, t.CacheKey(), Steady::now() + deadline,
                       [promise](const Result& r) { promise->set_value(r); });
  if (now) return *now;
  return future.get();
}

int64_t Pending(const Result& r) {
  REQUIRE(r.ok());
  return r.reading->pending();
}

TEST_CASE("Readings are shared within the window and refreshed after it", "[coalesce]") {
  FakeClock clock;
  std::atomic<int> reads{0};
  CoalescingProbe probe(
      [&](const ProbeTarget&, CoalescingProbe::Deadline) {
        BacklogReading r;
        r.per_queue["q"].pending = ++reads;
        return r;
      },
      CoalescingProbe::Options{.window = 200ms}, clock.fn());
  CHECK(Pending(GetAndWait(probe, Target("q"))) == 1);
  clock.Advance(100ms);
  CHECK(Pending(GetAndWait(probe, Target("q"))) == 1);      // shared
  CHECK(Pending(GetAndWait(probe, Target("other"))) == 2);  // another target reads
  clock.Advance(150ms);
  CHECK(Pending(GetAndWait(probe, Target("q"))) == 3);  // window passed
  CHECK(probe.reads() == 3);
}

TEST_CASE("A caller arriving during a read older than the window waits for the next read",
          "[coalesce]") {
  // The fault suite's finding: with a 0 window, a GetMetrics that joined a read begun before it
  // answered from before its own request (6 replicas with 7 tasks in flight).
  FakeClock clock;
  std::atomic<int> reads{0};
  std::promise<void> first_started, release_first;
  auto release = release_first.get_future().share();
  CoalescingProbe probe(
      [&](const ProbeTarget&, CoalescingProbe::Deadline) {
        BacklogReading r;
        r.per_queue["q"].pending = ++reads;
        if (r.per_queue["q"].pending == 1) {
          first_started.set_value();
          release.wait();
        }
        return r;
      },
      CoalescingProbe::Options{.window = 0ms}, clock.fn());
  auto first = std::async(std::launch::async, [&] { return GetAndWait(probe, Target("q")); });
  first_started.get_future().wait();
  clock.Advance(5ms);  // the second caller asks after the first read began
  auto second = std::async(std::launch::async, [&] { return GetAndWait(probe, Target("q")); });
  std::this_thread::sleep_for(50ms);  // let it join the read in flight
  release_first.set_value();
  CHECK(Pending(first.get()) == 1);
  CHECK(Pending(second.get()) == 2);  // a read that began after it asked
}

TEST_CASE("A failed read reaches its waiters and is retried after the window", "[coalesce]") {
  FakeClock clock;
  std::atomic<bool> fail{true};
  CoalescingProbe probe(
      [&](const ProbeTarget&, CoalescingProbe::Deadline) -> BacklogReading {
        if (fail) throw std::runtime_error("redis down");
        return BacklogReading{};
      },
      CoalescingProbe::Options{.window = 200ms}, clock.fn());
  CHECK(GetAndWait(probe, Target("q")).error == "redis down");
  fail = false;
  CHECK(GetAndWait(probe, Target("q")).error == "redis down");  // same window: same failure
  clock.Advance(250ms);
  CHECK(GetAndWait(probe, Target("q")).ok());
}

TEST_CASE("Concurrent callers share one in-flight read", "[coalesce]") {
  std::atomic<int> reads{0};
  CoalescingProbe probe(
      [&](const ProbeTarget&, CoalescingProbe::Deadline) {
        ++reads;
        std::this_thread::sleep_for(100ms);
        BacklogReading r;
        r.per_queue["q"].pending = 7;
        return r;
      },
      CoalescingProbe::Options{.window = 5000ms});
  std::vector<std::thread> threads;
  std::atomic<int> sum{0};
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&] {
      // No Catch2 assertion off the main thread (Catch2 is not thread-safe; TSan says so).
      const Result r = GetAndWait(probe, Target("q"));
      sum += r.ok() ? static_cast<int>(r.reading->pending()) : -1000;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(reads == 1);
  CHECK(sum == 16 * 7);
}

TEST_CASE("Refresh-ahead keeps readings fresh without callers waiting for Redis", "[coalesce]") {
  std::atomic<int> reads{0};
  CoalescingProbe probe(
      [&](const ProbeTarget&, CoalescingProbe::Deadline) {
        std::this_thread::sleep_for(40ms);
        BacklogReading r;
        r.per_queue["q"].pending = ++reads;
        return r;
      },
      CoalescingProbe::Options{.window = 100ms, .refresh_ahead = true});
  CHECK(Pending(GetAndWait(probe, Target("q"))) == 1);  // first read: the caller waits
  auto slowest = Steady::duration::zero();
  int64_t last = 1;
  int served_at_once = 0, calls = 0;
  const ProbeTarget target = Target("q");
  const std::string key = target.CacheKey();
  const auto end = Steady::now() + 1s;
  while (Steady::now() < end) {
    const auto t0 = Steady::now();
    auto r = probe.Get(target, key, Steady::now() + 1s);
    slowest = std::max(slowest, Steady::now() - t0);
    ++calls;
    if (r) {
      ++served_at_once;
      CHECK(Pending(*r) >= last);  // never goes back in time
      last = Pending(*r);
    }
    std::this_thread::sleep_for(5ms);
  }
  // Get never waits for the 40 ms read (the margin is for sanitizer builds on a loaded machine,
  // where one call measured 5.2 ms).
  CHECK(slowest < 20ms);
  CHECK(served_at_once == calls);  // always a fresh reading at hand
  CHECK(last >= 7);                // refreshed about every 100 ms for a second
  CHECK(last <= 20);               // but not once per call
}

TEST_CASE("A hung connection delays no other connection, and callers get its deadline",
          "[coalesce][hang]") {
  std::atomic<bool> hung{true};
  CoalescingProbe probe(
      [&](const ProbeTarget& t, CoalescingProbe::Deadline deadline) {
        if (t.connection == "frozen") {
          while (hung && Steady::now() < deadline) std::this_thread::sleep_for(1ms);
          if (hung) throw std::runtime_error("timed out");
        }
        BacklogReading r;
        r.per_queue[t.queues[0]].pending = 1;
        return r;
      },
      CoalescingProbe::Options{
          .window = 50ms, .read_timeout = 1000ms, .readers_per_connection = 2});
  // More hung targets than the frozen connection has reader threads.
  std::vector<std::future<Result>> frozen;
  std::vector<std::shared_ptr<std::promise<Result>>> promises;
  const auto t0 = Steady::now();
  for (int i = 0; i < 8; ++i) {
    auto p = std::make_shared<std::promise<Result>>();
    frozen.push_back(p->get_future());
    auto t = Target(QueueName(i), "frozen");
    auto got = probe.Get(t, t.CacheKey(), Steady::now() + 200ms,
                         [p](const Result& r) { p->set_value(r); });
    CHECK_FALSE(got);  // no reading yet; Get returned at once
  }
  CHECK(Steady::now() - t0 < 20ms);
  const auto h0 = Steady::now();
  CHECK(Pending(GetAndWait(probe, Target("q", "healthy"))) == 1);
  CHECK(Steady::now() - h0 < 50ms);
  for (auto& f : frozen) {
    Result r = f.get();
    CHECK_FALSE(r.ok());
    CHECK_THAT(r.error, Catch::Contains("no reply within"));
  }
  const auto waited = Steady::now() - t0;
  CHECK(waited >= 190ms);
  CHECK(waited < 300ms);  // each caller's own deadline, not the 1 s read timeout
  hung = false;           // Redis answers again: the next read succeeds
  bool recovered = false;
  for (int i = 0; i < 100 && !recovered; ++i) {
    recovered = GetAndWait(probe, Target("q0", "frozen")).ok();
    if (!recovered) std::this_thread::sleep_for(10ms);
  }
  CHECK(recovered);
}

TEST_CASE("A reading past its freshness bound is never served", "[coalesce]") {
  FakeClock clock;
  std::atomic<bool> hang{false};
  CoalescingProbe probe(
      [&](const ProbeTarget&, CoalescingProbe::Deadline deadline) {
        while (hang && Steady::now() < deadline) std::this_thread::sleep_for(1ms);
        if (hang) throw std::runtime_error("timed out");
        return BacklogReading{};
      },
      CoalescingProbe::Options{.window = 100ms, .read_timeout = 300ms}, clock.fn());
  REQUIRE(GetAndWait(probe, Target("q")).ok());
  hang = true;
  clock.Advance(99ms);
  CHECK(probe.Get(Target("q"), Target("q").CacheKey(), Steady::now() + 1s));  // still fresh
  clock.Advance(2ms);
  CHECK_FALSE(probe.Get(Target("q"), Target("q").CacheKey(), Steady::now() + 1s));
  CHECK_FALSE(GetAndWait(probe, Target("q")).ok());
}

TEST_CASE("Distinct targets are bounded", "[coalesce][hostile]") {
  CoalescingProbe probe(
      [](const ProbeTarget&, CoalescingProbe::Deadline) { return BacklogReading{}; },
      CoalescingProbe::Options{.max_targets = 3});
  for (int i = 0; i < 3; ++i) CHECK(GetAndWait(probe, Target(QueueName(i))).ok());
  Result over = GetAndWait(probe, Target("q3"));
  CHECK_FALSE(over.ok());
  CHECK_THAT(over.error, Catch::Contains("3 distinct queue sets"));
  CHECK(probe.targets() == 3);
  CHECK(GetAndWait(probe, Target("q1")).ok());  // known ones still served
}

}  // namespace
}  // namespace warmpool::scaler
