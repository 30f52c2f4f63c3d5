#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "celery/result.h"
#include "redis/lua_script.h"
#include "redis/pool.h"

namespace warmpool::worker {

// Where the worker's parts write task results (ResultStore below; a fake in tests). Methods may
// throw RedisError; implementations are thread-safe.
class ResultStoreApi {
 public:
  virtual ~ResultStoreApi() = default;
  // Returns false when nothing was written because SUCCESS was already stored.
  virtual bool Store(const celery::ResultMeta& meta) = 0;
  // Many results in one round trip (same rule per result).
  virtual void StoreMany(const std::vector<const celery::ResultMeta*>& metas) = 0;
  // The stored status ("SUCCESS", ...) or nullopt when there is no result.
  virtual std::optional<std::string> Status(const std::string& task_id) = 0;
};

// Writes task results to the Redis result backend as Celery 5.2.6 does (celery/backends/
// base.py KeyValueStoreBackend._store_result, celery/backends/redis.py RedisBackend.set): GET
// celery-task-meta-<id>, and unless it already holds SUCCESS, SETEX <expires> + PUBLISH on the
// key's channel so a waiting AsyncResult.get() returns. The three commands run in one Lua script,
// so "never overwrite SUCCESS" holds even against another worker writing at the same moment.
// Thread-safe; throws RedisError.
class ResultStore : public ResultStoreApi {
 public:
  ResultStore(RedisEndpoint endpoint, std::chrono::seconds expires, size_t max_connections);

  bool Store(const celery::ResultMeta& meta) override;
  void StoreMany(const std::vector<const celery::ResultMeta*>& metas) override;
  std::optional<std::string> Status(const std::string& task_id) override;

  const RedisEndpoint& endpoint() const { return pool_.endpoint(); }

 private:
  RedisPool pool_;
  const std::chrono::seconds expires_;
  LuaScript store_script_;
};

}  // namespace warmpool::worker
