#include "scaler/coalescing_probe.h"

namespace warmpool::scaler {
namespace {
constexpr auto kSweepEvery = std::chrono::seconds(30);
}

CoalescingProbe::CoalescingProbe(ReadFn read, std::chrono::milliseconds window, Clock clock)
    : read_(std::move(read)), window_(window), clock_(std::move(clock)) {}

uint64_t CoalescingProbe::reads() const {
  std::lock_guard lock(mu_);
  return reads_;
}

BacklogReading CoalescingProbe::Get(const ProbeTarget& target) {
  const std::string key = target.CacheKey();
  std::promise<BacklogReading> promise;
  std::shared_future<BacklogReading> shared;
  bool owner = false;
  {
    std::lock_guard lock(mu_);
    const auto now = clock_();
    if (now - last_sweep_ > kSweepEvery) {
      // Forget targets nobody asked about recently, so the map stays bounded.
      std::erase_if(entries_,
                    [&](const auto& kv) { return now - kv.second.started > kSweepEvery; });
      last_sweep_ = now;
    }
    auto it = entries_.find(key);
    if (it != entries_.end() && now - it->second.started < window_) {
      shared = it->second.result;  // fresh or still in flight: share it
    } else {
      shared = promise.get_future().share();
      entries_[key] = Entry{shared, now};
      ++reads_;
      owner = true;
    }
  }
  if (owner) {
    try {
      promise.set_value(read_(target));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return shared.get();
}

}  // namespace warmpool::scaler
