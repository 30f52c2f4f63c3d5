#include "common/redis_pool.h"

#include <algorithm>

#include "common/redis_errors.h"

namespace warmpool {

RedisPool::RedisPool(RedisEndpoint endpoint, RedisPoolOptions options)
    : endpoint_(std::move(endpoint)), options_(options) {
  if (options_.max_connections == 0) {
    throw std::invalid_argument("RedisPoolOptions.max_connections must be > 0");
  }
}

RedisPool::Guard RedisPool::Acquire() {
  const auto now = std::chrono::steady_clock::now();
  {
    std::unique_lock lock(mu_);
    auto ready = [&] { return !idle_.empty() || in_use_ < options_.max_connections; };
    if (options_.wait_timeout.count() > 0) {
      if (!cv_.wait_for(lock, options_.wait_timeout, ready)) {
        throw RedisTimeoutError("redis " + endpoint_.Redacted() + ": no free connection within " +
                                std::to_string(options_.wait_timeout.count()) + " ms");
      }
    } else {
      cv_.wait(lock, ready);
    }
    while (!idle_.empty()) {
      Slot slot = std::move(idle_.back());
      idle_.pop_back();
      bool too_old =
          options_.max_lifetime.count() > 0 && now - slot.created > options_.max_lifetime;
      if (!too_old) {
        ++in_use_;
        return Guard(this, std::move(slot));
      }
    }
    if (now < retry_after_) {
      throw RedisIoError(last_error_ + " (reconnecting with backoff)");
    }
    ++in_use_;  // reserve the slot; connect outside the lock
  }
  try {
    return Guard(this, Connect());
  } catch (const RedisError& e) {
    std::lock_guard lock(mu_);
    --in_use_;
    backoff_ = std::clamp(backoff_ * 2, options_.min_backoff, options_.max_backoff);
    retry_after_ = std::chrono::steady_clock::now() + backoff_;
    last_error_ = e.what();
    cv_.notify_one();
    throw;
  }
}

RedisPool::Slot RedisPool::Connect() {
  Slot slot{std::make_unique<RedisConnection>(endpoint_), std::chrono::steady_clock::now()};
  std::lock_guard lock(mu_);
  backoff_ = std::chrono::milliseconds(0);
  retry_after_ = {};
  return slot;
}

void RedisPool::Release(Slot slot) {
  std::lock_guard lock(mu_);
  --in_use_;
  if (slot.conn && !slot.conn->broken()) idle_.push_back(std::move(slot));
  cv_.notify_one();
}

}  // namespace warmpool
