#include "worker/result_store.h"

#include <hiredis/hiredis.h>

#include "worker/lua/scripts.h"

namespace warmpool::worker {

ResultStore::ResultStore(RedisEndpoint endpoint, std::chrono::seconds expires,
                         size_t max_connections)
    : pool_(std::move(endpoint), RedisPoolOptions{.max_connections = max_connections,
                                                  .wait_timeout = std::chrono::seconds(5),
                                                  .min_backoff = std::chrono::milliseconds(100),
                                                  .max_backoff = std::chrono::seconds(2)}),
      expires_(expires),
      store_script_(lua::kLuaStoreResult) {}

bool ResultStore::Store(const celery::ResultMeta& meta) {
  auto conn = pool_.Acquire();
  auto reply =
      store_script_.Run(*conn, {celery::ResultKey(meta.task_id)},
                        {celery::EncodeResultMeta(meta), std::to_string(expires_.count())});
  return ReplyInteger(reply.get()) == 1;
}

void ResultStore::StoreMany(const std::vector<const celery::ResultMeta*>& metas) {
  if (metas.empty()) return;
  std::vector<LuaScript::Call> calls;
  calls.reserve(metas.size());
  std::string expires = std::to_string(expires_.count());
  for (const auto* m : metas) {
    calls.push_back({{celery::ResultKey(m->task_id)}, {celery::EncodeResultMeta(*m), expires}});
  }
  auto conn = pool_.Acquire();
  store_script_.RunMany(*conn, calls);
}

std::optional<std::string> ResultStore::Status(const std::string& task_id) {
  auto conn = pool_.Acquire();
  auto reply = conn->Command({"GET", celery::ResultKey(task_id)});
  if (ReplyIsNil(reply.get())) return std::nullopt;
  return celery::StoredStatus(ReplyString(reply.get()));
}

}  // namespace warmpool::worker
