#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "scaler/backlog.h"

namespace warmpool::scaler {

// Shares Redis reads between callers asking about the same ProbeTarget: a reading (or failure) is
// reused for `window`, and callers arriving while a read is in flight wait for it instead of
// starting another. So N ScaledObjects polling one queue set cost one read per window, not N.
//
// With refresh-ahead on, a background thread re-reads every target asked about in the last
// `idle_expiry` once its reading is a window old (at most one read per target per window), so
// callers find a fresh reading and never wait for Redis on the hot path; a reading older than 2
// windows (the refresher is stuck on a hung Redis) is never served: the caller reads itself and
// gets the failure. Thread-safe; reads run outside the lock.
class CoalescingProbe {
 public:
  // Performs the I/O for one target; throws on failure (the exception reaches every waiter).
  using ReadFn = std::function<BacklogReading(const ProbeTarget&)>;
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  struct Options {
    std::chrono::milliseconds window{200};
    bool refresh_ahead = false;
    std::chrono::seconds idle_expiry{30};  // forget targets nobody asked about for this long
  };

  CoalescingProbe(
      ReadFn read, Options options, Clock clock = [] { return std::chrono::steady_clock::now(); });
  ~CoalescingProbe();
  CoalescingProbe(const CoalescingProbe&) = delete;
  CoalescingProbe& operator=(const CoalescingProbe&) = delete;

  using ReadingPtr = std::shared_ptr<const BacklogReading>;

  // Returns a reading no older than the window (2 windows with refresh-ahead), or rethrows the
  // failure of the read that produced it. `key` is target.CacheKey() (callers cache it).
  ReadingPtr Get(const ProbeTarget& target, const std::string& key);
  ReadingPtr Get(const ProbeTarget& target) { return Get(target, target.CacheKey()); }

  // Number of reads actually performed (for tests and metrics).
  uint64_t reads() const;

 private:
  struct Entry {
    ProbeTarget target;
    std::shared_future<ReadingPtr> current;         // latest completed read, or the first in flight
    std::chrono::steady_clock::time_point started;  // when `current`'s read began
    std::chrono::steady_clock::time_point last_requested;  // last Get for this target
    bool refreshing = false;                               // a background read is running
  };
  void RefreshLoop();

  const ReadFn read_;
  const Options options_;
  const Clock clock_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Entry> entries_;      // guarded by mu_
  uint64_t reads_ = 0;                                  // guarded by mu_
  std::chrono::steady_clock::time_point last_sweep_{};  // guarded by mu_
  bool stop_ = false;                                   // guarded by mu_
  std::thread refresher_;
};

}  // namespace warmpool::scaler
