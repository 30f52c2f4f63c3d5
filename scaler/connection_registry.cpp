#include "scaler/connection_registry.h"

#include "policy/scaler_metadata.h"

namespace warmpool::scaler {

ConnectionRegistry::ConnectionRegistry(std::map<std::string, RedisEndpoint> named,
                                       RedisPoolOptions options, size_t max_address_pools)
    : options_(options), max_address_pools_(max_address_pools) {
  for (auto& [name, endpoint] : named) {
    named_[name] = std::make_unique<RedisPool>(std::move(endpoint), options_);
  }
}

Status ConnectionRegistry::Resolve(const std::string& name, const std::string& address,
                                   RedisPool** pool, std::string* identity) {
  if (address.empty()) {
    auto it = named_.find(name);
    if (it == named_.end()) {
      std::string known;
      for (const auto& [n, p] : named_) known += (known.empty() ? "" : ", ") + n;
      return Status::InvalidArgument("redis=\"" + policy::Abbreviate(name) +
                                     "\": no such connection on this scaler (configured: " +
                                     (known.empty() ? "none" : known) + ")");
    }
    *pool = it->second.get();
    *identity = name;
    return Status::Ok();
  }
  std::string error;
  auto endpoint = ParseRedisAddress(address, &error);
  if (!endpoint) {
    return Status::InvalidArgument("redisAddress=\"" + policy::Abbreviate(address) +
                                   "\": " + policy::Abbreviate(error, 400));
  }
  endpoint->connect_timeout = options_.wait_timeout;  // --redis-timeout-ms, as named ones
  endpoint->command_timeout = options_.wait_timeout;
  std::string canonical =
      endpoint->host + ":" + std::to_string(endpoint->port) + "/" + std::to_string(endpoint->db);
  std::lock_guard lock(mu_);
  auto it = by_address_.find(canonical);
  if (it == by_address_.end()) {
    if (by_address_.size() >= max_address_pools_) {
      return Status::InvalidArgument("redisAddress=\"" + policy::Abbreviate(address) +
                                     "\": more than " + std::to_string(max_address_pools_) +
                                     " distinct addresses in use; configure --redis instead");
    }
    it = by_address_.emplace(canonical, std::make_unique<RedisPool>(*endpoint, options_)).first;
  }
  *pool = it->second.get();
  *identity = "addr:" + canonical;
  return Status::Ok();
}

std::vector<std::pair<std::string, RedisPool*>> ConnectionRegistry::Named() const {
  std::vector<std::pair<std::string, RedisPool*>> out;
  for (const auto& [name, pool] : named_) out.emplace_back(name, pool.get());
  return out;
}

}  // namespace warmpool::scaler
