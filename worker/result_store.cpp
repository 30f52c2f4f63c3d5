#include "worker/result_store.h"

#include <hiredis/hiredis.h>

namespace warmpool::worker {
namespace {

// KEYS: result key   ARGV: json, expires (0 = no expiry)
constexpr const char* kStoreLua = R"lua(
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, meta = pcall(cjson.decode, cur)
  if ok and type(meta) == 'table' and meta.status == 'SUCCESS' then return 0 end
end
if tonumber(ARGV[2]) > 0 then
  redis.call('SETEX', KEYS[1], ARGV[2], ARGV[1])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('PUBLISH', KEYS[1], ARGV[1])
return 1
)lua";

}  // namespace

ResultStore::ResultStore(RedisEndpoint endpoint, std::chrono::seconds expires,
                         size_t max_connections)
    : pool_(std::move(endpoint), RedisPoolOptions{.max_connections = max_connections,
                                                  .wait_timeout = std::chrono::seconds(5),
                                                  .min_backoff = std::chrono::milliseconds(100),
                                                  .max_backoff = std::chrono::seconds(2)}),
      expires_(expires),
      store_script_(kStoreLua) {}

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
