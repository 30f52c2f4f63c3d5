#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

namespace warmpool::scaler {

// Runs callbacks at their deadlines on one thread of its own: how a caller waiting for a Redis
// read is answered UNAVAILABLE on time without any thread sleeping for it. Callbacks must be
// short and never block. Thread-safe; callbacks still pending at destruction are dropped.
class DeadlineTimer {
 public:
  using Id = uint64_t;
  using TimePoint = std::chrono::steady_clock::time_point;

  DeadlineTimer();
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // Schedules `fn` to run at `when` (at once when it has passed).
  Id At(TimePoint when, std::function<void()> fn);
  // Forgets `id` if it has not run yet; a no-op otherwise.
  void Cancel(Id id);
  size_t pending() const;

 private:
  void Run();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::multimap<TimePoint, std::pair<Id, std::function<void()>>> queue_;  // guarded by mu_
  std::unordered_map<Id, decltype(queue_)::iterator> by_id_;              // guarded by mu_
  Id next_id_ = 1;                                                        // guarded by mu_
  bool stop_ = false;                                                     // guarded by mu_
  std::thread thread_;
};

}  // namespace warmpool::scaler
