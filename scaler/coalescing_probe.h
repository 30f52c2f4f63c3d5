#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <unordered_map>

#include "scaler/backlog.h"

namespace warmpool::scaler {

// Shares Redis reads between callers asking about the same ProbeTarget: a reading (or failure) is
// reused for `window`, and callers arriving while a read is in flight wait for it instead of
// starting another. So N ScaledObjects polling one queue set cost one read per window, not N.
// Thread-safe; the read runs outside the lock.
class CoalescingProbe {
 public:
  // Performs the I/O for one target; throws on failure (the exception reaches every waiter).
  using ReadFn = std::function<BacklogReading(const ProbeTarget&)>;
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  CoalescingProbe(
      ReadFn read, std::chrono::milliseconds window,
      Clock clock = [] { return std::chrono::steady_clock::now(); });

  // Returns a reading no older than `window` (or rethrows the failure of the shared read).
  BacklogReading Get(const ProbeTarget& target);

  // Number of reads actually performed (for tests and metrics).
  uint64_t reads() const;

 private:
  struct Entry {
    std::shared_future<BacklogReading> result;
    std::chrono::steady_clock::time_point started;
  };

  const ReadFn read_;
  const std::chrono::milliseconds window_;
  const Clock clock_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;      // guarded by mu_
  uint64_t reads_ = 0;                                  // guarded by mu_
  std::chrono::steady_clock::time_point last_sweep_{};  // guarded by mu_
};

}  // namespace warmpool::scaler
