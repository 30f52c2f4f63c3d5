#include "scaler/stream_hub.h"

#include <vector>

#include "scaler/is_active_stream.h"

namespace warmpool::scaler {

StreamHub::StreamHub(std::chrono::milliseconds interval)
    : interval_(interval), thread_([this] { Run(); }) {}

StreamHub::~StreamHub() { Stop(); }

void StreamHub::Register(IsActiveStream* stream) {
  std::lock_guard lock(mu_);
  streams_.insert(stream);
  waiting_.insert(stream);  // poll the new stream at once: it sends its state on open
  added_ = true;
  cv_.notify_all();
}

void StreamHub::Unregister(IsActiveStream* stream) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return polling_ != stream; });
  streams_.erase(stream);
  waiting_.erase(stream);
  cv_.notify_all();  // FinishAll waits for the last one
}

void StreamHub::Wake() {
  std::lock_guard lock(mu_);
  woken_ = true;  // even with none waiting: a stream may be about to be marked waiting
  cv_.notify_all();
}

bool StreamHub::FinishAll(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  finishing_ = true;
  cv_.notify_all();
  return cv_.wait_for(lock, timeout, [&] { return streams_.empty(); });
}

void StreamHub::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StreamHub::Run() {
  std::unique_lock lock(mu_);
  auto next_tick = std::chrono::steady_clock::now();
  while (!stop_) {
    const bool tick = std::chrono::steady_clock::now() >= next_tick;
    if (tick) next_tick = std::chrono::steady_clock::now() + interval_;
    // On a tick every stream; otherwise only those waiting for a reading (or new). When
    // finishing, every stream (FinishForShutdown is idempotent).
    const bool all = tick || finishing_;
    std::vector<IsActiveStream*> batch(all ? streams_.begin() : waiting_.begin(),
                                       all ? streams_.end() : waiting_.end());
    woken_ = false;
    added_ = false;
    const bool finishing = finishing_;
    for (IsActiveStream* s : batch) {
      if (stop_) break;
      if (!streams_.count(s)) continue;  // finished meanwhile
      polling_ = s;
      lock.unlock();
      bool ready = true;
      if (finishing) {
        s->FinishForShutdown();
      } else {
        ready = s->Poll();
      }
      lock.lock();
      polling_ = nullptr;
      if (streams_.count(s)) {
        if (ready) {
          waiting_.erase(s);
        } else {
          waiting_.insert(s);
        }
      }
      cv_.notify_all();
    }
    cv_.wait_until(lock, next_tick,
                   [&] { return stop_ || woken_ || added_ || finishing_ != finishing; });
  }
}

}  // namespace warmpool::scaler
