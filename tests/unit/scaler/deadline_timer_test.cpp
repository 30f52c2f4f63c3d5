#include "scaler/deadline_timer.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::scaler {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

TEST_CASE("Callbacks run at their deadlines, in order, cancelled ones never", "[timer]") {
  DeadlineTimer timer;
  std::mutex mu;
  std::vector<int> order;
  const auto t0 = Steady::now();
  auto add = [&](int v) {
    std::lock_guard lock(mu);
    order.push_back(v);
  };
  timer.At(t0 + 60ms, [&] { add(3); });
  timer.At(t0 + 20ms, [&] { add(1); });
  auto cancelled = timer.At(t0 + 40ms, [&] { add(2); });
  timer.Cancel(cancelled);
  std::atomic<Steady::time_point> ran{};
  timer.At(t0 + 80ms, [&] { ran = Steady::now(); });
  while (ran.load() == Steady::time_point{}) std::this_thread::sleep_for(1ms);
  CHECK(ran.load() - t0 >= 80ms);
  CHECK(ran.load() - t0 < 150ms);
  std::lock_guard lock(mu);
  CHECK(order == std::vector<int>{1, 3});
  CHECK(timer.pending() == 0);
}

}  // namespace
}  // namespace warmpool::scaler
