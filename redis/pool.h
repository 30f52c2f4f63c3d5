#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "redis/connection.h"
#include "redis/url.h"

namespace warmpool {

struct RedisPoolOptions {
  size_t max_connections = 8;                    // upper bound; never 0
  std::chrono::milliseconds wait_timeout{1000};  // waiting for a free connection; 0 = forever
  std::chrono::milliseconds min_backoff{100};    // first pause after a failed connect
  std::chrono::milliseconds max_backoff{5000};   // backoff doubles up to this
  std::chrono::seconds max_lifetime{0};          // reconnect connections older; 0 = no limit
};

// A bounded pool of RedisConnections to one endpoint (redis-plus-plus discipline): connections are
// made lazily and outside the lock; a broken connection is dropped when returned; after a failed
// connect, new connects fail fast with RedisIoError until the backoff passes (so a dead Redis
// costs microseconds, not a connect timeout per call). Thread-safe.
class RedisPool {
 public:
  class Guard;

  RedisPool(RedisEndpoint endpoint, RedisPoolOptions options = {});
  RedisPool(const RedisPool&) = delete;
  RedisPool& operator=(const RedisPool&) = delete;

  // Returns a connection (RAII; goes back on destruction). Throws RedisIoError when Redis cannot
  // be reached or is in backoff, RedisTimeoutError when every connection stays busy.
  Guard Acquire();
  // As Acquire(), but waits for a free connection and connects only until `deadline`, and arms
  // the connection's command timeout with the time left (see ArmDeadline). RedisTimeoutError
  // once the deadline has passed.
  Guard Acquire(std::chrono::steady_clock::time_point deadline);

  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  struct Slot {
    std::unique_ptr<RedisConnection> conn;
    std::chrono::steady_clock::time_point created;
  };
  void Release(Slot slot);
  Slot Connect(const RedisEndpoint& endpoint);
  Guard AcquireUntil(std::chrono::steady_clock::time_point deadline, bool has_deadline);

  const RedisEndpoint endpoint_;
  const RedisPoolOptions options_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Slot> idle_;                               // guarded by mu_
  size_t in_use_ = 0;                                    // guarded by mu_ (includes connecting)
  std::chrono::steady_clock::time_point retry_after_{};  // guarded by mu_
  std::chrono::milliseconds backoff_{0};                 // guarded by mu_
  std::string last_error_;                               // guarded by mu_

 public:
  // Holds one connection; returns it to the pool (or drops it when broken) on destruction.
  class Guard {
   public:
    Guard(RedisPool* pool, Slot slot) : pool_(pool), slot_(std::move(slot)) {}
    Guard(Guard&& o) noexcept : pool_(o.pool_), slot_(std::move(o.slot_)) { o.pool_ = nullptr; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    Guard& operator=(Guard&&) = delete;
    ~Guard() {
      if (pool_) pool_->Release(std::move(slot_));
    }
    RedisConnection& operator*() { return *slot_.conn; }
    RedisConnection* operator->() { return slot_.conn.get(); }

   private:
    RedisPool* pool_;
    Slot slot_;
  };
};

// Sets `conn`'s command timeout to the time left before `deadline` (at least 1 ms), so a chain of
// round trips (a pipeline, then a transaction) ends by one deadline instead of one timeout each.
// Throws RedisTimeoutError when the deadline has passed.
void ArmDeadline(RedisConnection& conn, std::chrono::steady_clock::time_point deadline);

}  // namespace warmpool
