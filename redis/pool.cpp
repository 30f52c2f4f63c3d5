#include "redis/pool.h"

#include <algorithm>

#include "redis/errors.h"

namespace warmpool {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::chrono::milliseconds TimeLeft(SteadyClock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
}

}  // namespace

void ArmDeadline(RedisConnection& conn, SteadyClock::time_point deadline) {
  const auto left = TimeLeft(deadline);
  if (left.count() < 1) {
    throw RedisTimeoutError("redis " + conn.endpoint().Redacted() +
                            ": deadline passed before the next round trip");
  }
  conn.SetCommandTimeout(left);  // never 0: hiredis reads 0 as "wait forever"
}

RedisPool::RedisPool(RedisEndpoint endpoint, RedisPoolOptions options)
    : endpoint_(std::move(endpoint)), options_(options) {
  if (options_.max_connections == 0) {
    throw std::invalid_argument("RedisPoolOptions.max_connections must be > 0");
  }
}

RedisPool::Guard RedisPool::Acquire() { return AcquireUntil({}, false); }

RedisPool::Guard RedisPool::Acquire(SteadyClock::time_point deadline) {
  Guard guard = AcquireUntil(deadline, true);
  ArmDeadline(*guard, deadline);
  return guard;
}

RedisPool::Guard RedisPool::AcquireUntil(SteadyClock::time_point deadline, bool has_deadline) {
  const auto now = SteadyClock::now();
  RedisEndpoint endpoint = endpoint_;
  {
    std::unique_lock lock(mu_);
    auto ready = [&] { return !idle_.empty() || in_use_ < options_.max_connections; };
    if (has_deadline) {
      if (!cv_.wait_until(lock, deadline, ready)) {
        throw RedisTimeoutError("redis " + endpoint_.Redacted() +
                                ": no free connection before the deadline");
      }
    } else if (options_.wait_timeout.count() > 0) {
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
    if (has_deadline) {
      // Connect, AUTH and SELECT within the time left, not a full timeout each.
      const auto left = TimeLeft(deadline);
      if (left.count() < 1) {
        throw RedisTimeoutError("redis " + endpoint_.Redacted() +
                                ": deadline passed before connecting");
      }
      endpoint.connect_timeout = std::min(endpoint.connect_timeout, left);
      endpoint.command_timeout = std::min(endpoint.command_timeout, left);
      if (endpoint.connect_timeout.count() == 0) endpoint.connect_timeout = left;
      if (endpoint.command_timeout.count() == 0) endpoint.command_timeout = left;
    }
    ++in_use_;  // reserve the slot; connect outside the lock
  }
  try {
    return Guard(this, Connect(endpoint));
  } catch (const RedisError& e) {
    std::lock_guard lock(mu_);
    --in_use_;
    backoff_ = std::clamp(backoff_ * 2, options_.min_backoff, options_.max_backoff);
    retry_after_ = SteadyClock::now() + backoff_;
    last_error_ = e.what();
    cv_.notify_one();
    throw;
  }
}

RedisPool::Slot RedisPool::Connect(const RedisEndpoint& endpoint) {
  Slot slot{std::make_unique<RedisConnection>(endpoint), SteadyClock::now()};
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
