#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "scaler/backlog.h"
#include "scaler/connection_readers.h"
#include "scaler/deadline_timer.h"

namespace warmpool::scaler {

// Shares Redis reads between callers asking about the same ProbeTarget: a reading (or failure) is
// reused while fresh, and callers arriving while a read is in flight join it instead of starting
// another. So N ScaledObjects polling one queue set cost one read per window, not N.
//
// Nobody waits for Redis on a thread of theirs: reads run on per-connection reader threads
// (ConnectionReaders), so a hung connection delays no other connection; a caller gets the fresh
// result at once, or a callback with the read's result, or a timeout error at its deadline
// (DeadlineTimer), whichever comes first.
//
// With refresh-ahead on, a background thread queues a re-read of every target asked about in the
// last `idle_expiry` once its reading is a window old, so callers find a fresh reading. A reading
// older than 2 windows (1 without refresh-ahead), or a failure older than 1 window, is never
// served. Thread-safe.
class CoalescingProbe {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  using Deadline = std::chrono::steady_clock::time_point;
  // Performs the I/O for one target, by `deadline`; throws on failure.
  using ReadFn = std::function<BacklogReading(const ProbeTarget&, Deadline deadline)>;
  using ReadingPtr = std::shared_ptr<const BacklogReading>;

  struct Options {
    std::chrono::milliseconds window{200};
    bool refresh_ahead = false;
    std::chrono::seconds idle_expiry{30};  // forget targets nobody asked about for this long
    std::chrono::milliseconds read_timeout{1000};  // each read's deadline (--redis-timeout-ms)
    size_t max_targets = 1024;                     // distinct queue sets tracked at once
    size_t readers_per_connection = 4;
  };

  // A reading, or the error that stands for it (never both).
  struct Result {
    ReadingPtr reading;
    std::string error;
    bool ok() const { return reading != nullptr; }
  };
  using Done = std::function<void(const Result&)>;

  CoalescingProbe(
      ReadFn read, Options options, Clock clock = [] { return std::chrono::steady_clock::now(); });
  ~CoalescingProbe();
  CoalescingProbe(const CoalescingProbe&) = delete;
  CoalescingProbe& operator=(const CoalescingProbe&) = delete;

  // Never blocks on Redis. Returns the target's result when it is fresh. Otherwise queues a read
  // (unless one is in flight) and returns nullopt; `done`, when given, is then called once, from
  // a reader or timer thread, with that read's result or, if none came by `deadline`, an error
  // saying so. `key` is target.CacheKey() (callers cache it). Too many distinct targets: an
  // error result at once.
  std::optional<Result> Get(const ProbeTarget& target, const std::string& key, Deadline deadline,
                            Done done = nullptr);

  // Called (on a reader thread) after every completed read, e.g. to re-poll streams that found
  // their reading not ready. Set before the first Get.
  void SetReadListener(std::function<void()> listener) { listener_ = std::move(listener); }

  // Number of reads started (for tests and metrics), and targets tracked.
  uint64_t reads() const;
  size_t targets() const;

 private:
  struct Waiter;
  struct Entry {
    ProbeTarget target;
    std::optional<Result> result;                   // latest completed read
    std::chrono::steady_clock::time_point started;  // when `result`'s read began
    std::chrono::steady_clock::time_point last_requested;
    bool in_flight = false;  // a read is queued or running
    std::vector<std::shared_ptr<Waiter>> waiters;
  };
  bool FreshLocked(const Entry& e, std::chrono::steady_clock::time_point now) const;
  void StartReadLocked(const std::string& key, Entry* e);
  void RunRead(const std::string& key);
  void SweepLocked(std::chrono::steady_clock::time_point now);
  void RefreshLoop();

  const ReadFn read_;
  const Options options_;
  const Clock clock_;
  std::function<void()> listener_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::string, Entry> entries_;      // guarded by mu_
  uint64_t reads_ = 0;                                  // guarded by mu_
  std::chrono::steady_clock::time_point last_sweep_{};  // guarded by mu_
  bool stop_ = false;                                   // guarded by mu_
  std::thread refresher_;
  DeadlineTimer timer_;
  // Last member: destroyed (joined) first, while everything its jobs touch still exists.
  ConnectionReaders readers_;
};

}  // namespace warmpool::scaler
