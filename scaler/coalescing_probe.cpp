#include "scaler/coalescing_probe.h"

#include <vector>

namespace warmpool::scaler {
namespace {

std::shared_future<CoalescingProbe::ReadingPtr> ReadNow(const CoalescingProbe::ReadFn& read,
                                                        const ProbeTarget& target) {
  std::promise<CoalescingProbe::ReadingPtr> promise;
  try {
    promise.set_value(std::make_shared<const BacklogReading>(read(target)));
  } catch (...) {
    promise.set_exception(std::current_exception());
  }
  return promise.get_future().share();
}

}  // namespace

CoalescingProbe::CoalescingProbe(ReadFn read, Options options, Clock clock)
    : read_(std::move(read)), options_(options), clock_(std::move(clock)) {
  if (options_.refresh_ahead) refresher_ = std::thread([this] { RefreshLoop(); });
}

CoalescingProbe::~CoalescingProbe() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (refresher_.joinable()) refresher_.join();
}

uint64_t CoalescingProbe::reads() const {
  std::lock_guard lock(mu_);
  return reads_;
}

CoalescingProbe::ReadingPtr CoalescingProbe::Get(const ProbeTarget& target,
                                                 const std::string& key) {
  const auto max_age = options_.refresh_ahead ? 2 * options_.window : options_.window;
  std::promise<ReadingPtr> promise;
  std::shared_future<ReadingPtr> shared;
  bool owner = false;
  {
    std::lock_guard lock(mu_);
    const auto now = clock_();
    if (now - last_sweep_ > options_.idle_expiry) {
      std::erase_if(entries_, [&](const auto& kv) {
        return !kv.second.refreshing && now - kv.second.last_requested > options_.idle_expiry;
      });
      last_sweep_ = now;
    }
    auto [it, inserted] = entries_.try_emplace(key);
    Entry& e = it->second;
    e.last_requested = now;
    if (!inserted && now - e.started < max_age) {
      shared = e.current;  // fresh, or the first read still in flight: share it
    } else {
      shared = promise.get_future().share();
      e.target = target;
      e.current = shared;
      e.started = now;
      ++reads_;
      owner = true;
    }
  }
  if (owner) {
    try {
      promise.set_value(std::make_shared<const BacklogReading>(read_(target)));
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  }
  return shared.get();
}

void CoalescingProbe::RefreshLoop() {
  const auto tick = std::max(options_.window / 8, std::chrono::milliseconds(5));
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, tick, [&] { return stop_; });
    const auto now = clock_();
    std::vector<std::pair<std::string, ProbeTarget>> due;
    for (auto& [key, e] : entries_) {
      bool stale = now - e.started >= options_.window;  // at most one read per window
      bool wanted = now - e.last_requested < options_.idle_expiry;
      bool ready = e.current.valid() &&
                   e.current.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
      if (stale && wanted && ready && !e.refreshing) {
        e.refreshing = true;
        due.emplace_back(key, e.target);
      }
    }
    for (auto& [key, target] : due) {
      if (stop_) break;
      const auto started = clock_();
      ++reads_;
      lock.unlock();
      auto result = ReadNow(read_, target);
      lock.lock();
      auto it = entries_.find(key);
      if (it == entries_.end()) continue;
      it->second.refreshing = false;
      if (started > it->second.started) {  // a caller may have read more recently
        it->second.current = std::move(result);
        it->second.started = started;
      }
    }
  }
}

}  // namespace warmpool::scaler
