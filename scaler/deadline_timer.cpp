#include "scaler/deadline_timer.h"

namespace warmpool::scaler {

DeadlineTimer::DeadlineTimer() : thread_([this] { Run(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

DeadlineTimer::Id DeadlineTimer::At(TimePoint when, std::function<void()> fn) {
  std::lock_guard lock(mu_);
  const Id id = next_id_++;
  auto it = queue_.emplace(when, std::make_pair(id, std::move(fn)));
  by_id_.emplace(id, it);
  if (it == queue_.begin()) cv_.notify_all();  // earlier than what the thread waits for
  return id;
}

void DeadlineTimer::Cancel(Id id) {
  std::lock_guard lock(mu_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  queue_.erase(it->second);
  by_id_.erase(it);
}

size_t DeadlineTimer::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void DeadlineTimer::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (queue_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto first = queue_.begin();
    if (first->first > std::chrono::steady_clock::now()) {
      // A copy: wait_until re-reads its argument after waking, and Cancel may have erased the
      // node meanwhile (ASan: heap-use-after-free).
      const TimePoint when = first->first;
      cv_.wait_until(lock, when);
      continue;
    }
    std::function<void()> fn = std::move(first->second.second);
    by_id_.erase(first->second.first);
    queue_.erase(first);
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace warmpool::scaler
