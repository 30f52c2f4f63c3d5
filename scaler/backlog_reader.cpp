#include "scaler/backlog_reader.h"

#include <hiredis/hiredis.h>

#include "celery/kombu_keys.h"
#include "redis/connection.h"
#include "redis/errors.h"
#include "redis/pool.h"
#include "scaler/policy_state_store.h"

namespace warmpool::scaler {
namespace {

class RedisSession final : public BacklogSource::Session {
 public:
  RedisSession(const ProbeTarget& target, BacklogSource::Deadline deadline)
      : target_(target), deadline_(deadline), conn_(target.pool->Acquire(deadline)) {}

  BacklogReading ReadBacklog(std::chrono::system_clock::time_point now) override {
    return scaler::ReadBacklog(*conn_, target_, now, deadline_);
  }
  policy::PolicyState UpdatePolicyState(const std::string& key, std::chrono::seconds ttl,
                                        const BacklogSource::StateUpdate& update) override {
    return scaler::UpdatePolicyState(*conn_, key, ttl, update, deadline_);
  }

 private:
  const ProbeTarget target_;
  const BacklogSource::Deadline deadline_;
  RedisPool::Guard conn_;
};

}  // namespace

std::unique_ptr<BacklogSource::Session> RedisBacklogSource::Open(const ProbeTarget& target,
                                                                 Deadline deadline) {
  return std::make_unique<RedisSession>(target, deadline);
}

BacklogReading ReadBacklog(RedisConnection& conn, const ProbeTarget& target,
                           std::chrono::system_clock::time_point now,
                           std::chrono::steady_clock::time_point deadline) {
  std::vector<RedisArgs> commands;
  for (const auto& queue : target.queues) {
    for (const auto& key :
         kombu::PriorityListKeys(target.key_prefix, queue, target.priority_levels)) {
      commands.push_back({"LLEN", key});
    }
  }
  if (target.read_unacked) {
    commands.push_back({"HVALS", kombu::PrefixedKey(target.key_prefix, kombu::kUnackedKey)});
    // The sub-lists' tails, which BRPOP delivers next: their task names size the pending work.
    const std::string tail = std::to_string(-policy::kPendingSample);
    for (const auto& queue : target.queues) {
      for (const auto& key :
           kombu::PriorityListKeys(target.key_prefix, queue, target.priority_levels)) {
        commands.push_back({"LRANGE", key, tail, "-1"});
      }
    }
  }
  ArmDeadline(conn, deadline);
  auto replies = conn.Pipeline(commands);

  BacklogReading reading;
  reading.taken_at = now;
  size_t i = 0;
  for (const auto& queue : target.queues) {
    QueueBacklog& b = reading.per_queue[queue];
    for (size_t s = 0; s < target.priority_levels.size(); ++s, ++i) {
      if (ReplyIsError(replies[i].get())) {
        throw RedisReplyError("redis " + conn.endpoint().Redacted() + ": LLEN " + commands[i][1] +
                              ": " + ReplyString(replies[i].get()));
      }
      b.pending += ReplyInteger(replies[i].get());
    }
  }
  if (target.read_unacked) {
    const redisReply* hvals = replies[i].get();
    if (ReplyIsError(hvals)) {
      throw RedisReplyError("redis " + conn.endpoint().Redacted() +
                            ": HVALS unacked: " + ReplyString(hvals));
    }
    for (const redisReply* element : ReplyElements(hvals)) {
      std::optional<celery::UnackedEntry> entry;
      if (element->type == REDIS_REPLY_STRING) {
        entry = celery::ParseUnackedValue(std::string_view(element->str, element->len));
      }
      if (entry) {
        CountUnackedEntry(*entry, now, &reading);
      } else {
        ++reading.unparsable_unacked;
      }
    }
    ++i;
    for (size_t q = 0; q < target.queues.size(); ++q) {
      std::vector<std::vector<std::string_view>> tails;
      for (size_t s = 0; s < target.priority_levels.size(); ++s, ++i) {
        const redisReply* lrange = replies[i].get();
        if (ReplyIsError(lrange)) {
          throw RedisReplyError(std::string("redis ") + conn.endpoint().Redacted() + ": LRANGE " +
                                commands[i][1] + ": " + ReplyString(lrange));
        }
        std::vector<std::string_view>& tail = tails.emplace_back();
        for (const redisReply* element : ReplyElements(lrange)) {
          // Anything but a string is no kombu message: nameless, it still fills its place.
          tail.push_back(element->type == REDIS_REPLY_STRING
                             ? std::string_view(element->str, element->len)
                             : std::string_view());
        }
      }
      AddPendingSample(tails, now, &reading);
    }
  }
  return reading;
}

}  // namespace warmpool::scaler
