#include "scaler/policy_state_store.h"

#include <cstdio>

#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include "common/fnv1a.h"
#include "common/logging.h"
#include "redis/connection.h"
#include "redis/errors.h"
#include "redis/pool.h"

namespace warmpool::scaler {
namespace {

constexpr int kMaxAttempts = 5;

}  // namespace

std::string PolicyStateKey(const std::string& state_prefix, const std::string& key_prefix,
                           const std::string& queues_joined, const std::string& identity) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(Fnv1a64(identity)));
  return state_prefix + "state:" + key_prefix + queues_joined + ":" + hash;
}

policy::PolicyState UpdatePolicyState(
    RedisConnection& conn, const std::string& key, std::chrono::seconds ttl,
    const std::function<policy::PolicyState(const policy::PolicyState&)>& update,
    std::chrono::steady_clock::time_point deadline) {
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    ArmDeadline(conn, deadline);
    auto replies = conn.Pipeline({{"WATCH", key}, {"GET", key}});
    for (const auto& r : replies) {
      if (ReplyIsError(r.get())) {
        throw RedisReplyError("redis " + conn.endpoint().Redacted() + ": policy state " + key +
                              ": " + ReplyString(r.get()));
      }
    }
    policy::PolicyState current;
    if (!ReplyIsNil(replies[1].get())) {
      std::string stored = ReplyString(replies[1].get());
      if (Status s = policy::DecodeState(stored, &current); !s.ok()) {
        LogEvent(
            spdlog::level::warn, "policy_state_unreadable",
            {{"key", key}, {"reason", s.message()}, {"action", "starting from an empty state"}});
        current = policy::PolicyState{};
      }
    }
    policy::PolicyState next = update(current);
    ArmDeadline(conn, deadline);
    auto exec =
        conn.Pipeline({{"MULTI"},
                       {"SET", key, policy::EncodeState(next), "EX", std::to_string(ttl.count())},
                       {"EXEC"}});
    const redisReply* result = exec.back().get();
    if (ReplyIsError(result)) {
      throw RedisReplyError("redis " + conn.endpoint().Redacted() + ": policy state " + key + ": " +
                            ReplyString(result));
    }
    if (!ReplyIsNil(result)) return next;  // committed
    // Another replica wrote meanwhile: apply our observation to its state.
  }
  throw RedisIoError("redis " + conn.endpoint().Redacted() + ": policy state " + key +
                     ": too many concurrent updates");
}

}  // namespace warmpool::scaler
