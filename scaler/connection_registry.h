#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "redis/pool.h"
#include "redis/url.h"

namespace warmpool::scaler {

// The Redis connections a scaler may use: named ones from `--redis NAME=URL` (credentials live
// only here, from the scaler's own flags/env), plus pools for `redisAddress` metadata made on
// first use (no credentials, bounded in number). Thread-safe.
class ConnectionRegistry {
 public:
  ConnectionRegistry(std::map<std::string, RedisEndpoint> named, RedisPoolOptions options,
                     size_t max_address_pools = 64);

  // Resolves metadata's `redis` name or `redisAddress` to a pool. Sets *identity to a stable
  // string for coalescing and metrics (the name, or "addr:<host:port/db>"). Returns
  // InvalidArgument naming the key when the name is unknown or the address is bad.
  Status Resolve(const std::string& name, const std::string& address, RedisPool** pool,
                 std::string* identity);

  // Named pools, for readiness checks.
  std::vector<std::pair<std::string, RedisPool*>> Named() const;

 private:
  const RedisPoolOptions options_;
  const size_t max_address_pools_;
  std::map<std::string, std::unique_ptr<RedisPool>> named_;  // constant after construction

  std::mutex mu_;
  std::map<std::string, std::unique_ptr<RedisPool>> by_address_;  // guarded by mu_
};

}  // namespace warmpool::scaler
