#include "scaler/coalescing_probe.h"

#include <atomic>
#include <exception>

namespace warmpool::scaler {

// One caller waiting for a read: answered once, by the read or by its deadline.
struct CoalescingProbe::Waiter {
  Done done;
  std::chrono::steady_clock::time_point asked;  // when the caller asked (probe clock)
  DeadlineTimer::Id timer = 0;
  std::atomic<bool> answered{false};

  // True for the first caller of Answer.
  bool Claim() { return !answered.exchange(true); }
};

CoalescingProbe::CoalescingProbe(ReadFn read, Options options, Clock clock)
    : read_(std::move(read)),
      options_(options),
      clock_(std::move(clock)),
      readers_(options.readers_per_connection) {
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

size_t CoalescingProbe::targets() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

bool CoalescingProbe::FreshLocked(const Entry& e, std::chrono::steady_clock::time_point now) const {
  if (!e.result) return false;
  const auto max_age = !e.result->ok()          ? options_.window
                       : options_.refresh_ahead ? 2 * options_.window
                                                : options_.window;
  return now - e.started < max_age;
}

void CoalescingProbe::StartReadLocked(const std::string& key, Entry* e) {
  e->in_flight = true;
  ++reads_;
  readers_.Submit(e->target.connection, [this, key] { RunRead(key); });
}

void CoalescingProbe::SweepLocked(std::chrono::steady_clock::time_point now) {
  std::erase_if(entries_, [&](const auto& kv) {
    return !kv.second.in_flight && now - kv.second.last_requested > options_.idle_expiry;
  });
  last_sweep_ = now;
}

std::optional<CoalescingProbe::Result> CoalescingProbe::Get(const ProbeTarget& target,
                                                            const std::string& key,
                                                            Deadline deadline, Done done) {
  std::lock_guard lock(mu_);
  const auto now = clock_();
  if (now - last_sweep_ > options_.idle_expiry) SweepLocked(now);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= options_.max_targets) SweepLocked(now);
    if (entries_.size() >= options_.max_targets) {
      return Result{nullptr, "this scaler already polls " + std::to_string(options_.max_targets) +
                                 " distinct queue sets; not reading another"};
    }
    it = entries_.emplace(key, Entry{}).first;
    it->second.target = target;
  }
  Entry& e = it->second;
  e.last_requested = now;
  if (FreshLocked(e, now)) return *e.result;
  if (!e.in_flight) StartReadLocked(key, &e);
  if (done) {
    auto waiter = std::make_shared<Waiter>();
    waiter->done = std::move(done);
    waiter->asked = now;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    waiter->timer = timer_.At(deadline, [waiter, ms] {
      if (waiter->Claim()) {
        waiter->done(Result{nullptr, "no reply within " + std::to_string(ms.count()) +
                                         " ms (a read is still waiting for Redis)"});
      }
    });
    e.waiters.push_back(std::move(waiter));
  }
  return std::nullopt;
}

void CoalescingProbe::RunRead(const std::string& key) {
  ProbeTarget target;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return;  // unreachable: entries in flight are never swept
    target = it->second.target;
  }
  const auto started = clock_();
  Result result;
  try {
    result.reading = std::make_shared<const BacklogReading>(
        read_(target, std::chrono::steady_clock::now() + options_.read_timeout));
  } catch (const std::exception& e) {
    result.error = e.what();
  } catch (...) {
    result.error = "unknown error";
  }
  std::vector<std::shared_ptr<Waiter>> waiters;
  {
    std::lock_guard lock(mu_);
    Entry& e = entries_.at(key);
    e.in_flight = false;
    e.result = result;
    e.started = started;
    // A caller who asked more than a window after this read began would get a reading older
    // than promised (and, with a 0 window, one from before its own request): it waits for the
    // next read instead. A failure reaches everyone.
    std::vector<std::shared_ptr<Waiter>> later;
    for (auto& w : e.waiters) {
      const bool fresh_enough = !result.ok() || w->asked - started <= options_.window;
      (fresh_enough ? waiters : later).push_back(std::move(w));
    }
    e.waiters = std::move(later);
    if (!e.waiters.empty()) StartReadLocked(key, &e);
  }
  for (auto& w : waiters) {
    if (!w->Claim()) continue;  // its deadline answered it already
    timer_.Cancel(w->timer);
    w->done(result);
  }
  if (listener_) listener_();
}

void CoalescingProbe::RefreshLoop() {
  const auto tick = std::max(options_.window / 8, std::chrono::milliseconds(5));
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, tick, [&] { return stop_; });
    const auto now = clock_();
    for (auto& [key, e] : entries_) {
      bool stale = !e.result || now - e.started >= options_.window;  // one read per window
      bool wanted = now - e.last_requested < options_.idle_expiry;
      if (stale && wanted && !e.in_flight) StartReadLocked(key, &e);
    }
  }
}

}  // namespace warmpool::scaler
