#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "celery/result.h"
#include "redis/pool.h"
#include "redis/lua_script.h"

namespace warmpool::worker {

// Writes task results to the Redis result backend as Celery 5.2.6 does (celery/backends/
// base.py KeyValueStoreBackend._store_result, celery/backends/redis.py RedisBackend.set): GET celery-task-meta-<id>, and unless it already holds
// SUCCESS, SETEX <expires> + PUBLISH on the key's channel so a waiting AsyncResult.get()
// returns. The three commands run in one Lua script, so "never overwrite SUCCESS" holds even
// against another worker writing at the same moment. Thread-safe; throws RedisError.
class ResultStore {
 public:
  ResultStore(RedisEndpoint endpoint, std::chrono::seconds expires, size_t max_connections);

  // Returns false when nothing was written because SUCCESS was already stored.
  bool Store(const celery::ResultMeta& meta);
  // Many results in one round trip (same rule per result).
  void StoreMany(const std::vector<const celery::ResultMeta*>& metas);

  // The stored status ("SUCCESS", ...) or nullopt when there is no result.
  std::optional<std::string> Status(const std::string& task_id);

  const RedisEndpoint& endpoint() const { return pool_.endpoint(); }

 private:
  RedisPool pool_;
  const std::chrono::seconds expires_;
  LuaScript store_script_;
};

}  // namespace warmpool::worker
