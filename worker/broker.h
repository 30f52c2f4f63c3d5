#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "redis/lua_script.h"
#include "redis/pool.h"
#include "worker/broker_api.h"
#include "worker/canvas.h"

namespace warmpool::worker {

// The kombu Redis transport as a worker needs it, over a pool of connections to the broker:
// take with bookkeeping, ack, restore (re-queue), visibility sweep, events. Keys carry the
// global key prefix. Every method may throw RedisError (the caller retries); all are
// thread-safe. Key layout (kombu 5.2.4 + ours):
//   <p>unacked            HASH  tag -> '[envelope, exchange, routing_key]'   (kombu)
//   <p>unacked_index      ZSET  tag -> time taken (refreshed while we hold it)   (kombu)
//   <p>unacked_mutex      lock for the visibility sweep                       (kombu)
//   <p>warmpool.inflight.<hostname>  SET of tags this worker took (for restart recovery);
//                         expires when our scores turn stale (last take/refresh + ttl)
//   <p><deadletter_key>   LIST  JSON {reason, queue, worker, time, message}
class Broker : public BrokerApi {
 public:
  // `inflight_ttl` is the visibility timeout: once a dead worker's scores are that old, a sweep
  // may restore its messages and another worker take them, so its in-flight set must be gone
  // by then (a same-hostname restart would otherwise restore messages others now run).
  Broker(RedisEndpoint endpoint, std::string key_prefix, std::string hostname,
         std::string deadletter_key, size_t max_connections,
         std::chrono::milliseconds inflight_ttl);
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;

  // Takes up to `max` messages: RPOP from the first non-empty key of `list_keys` (kombu consume
  // order), and in the same Lua script HSET unacked, ZADD unacked_index `now`, SADD our
  // in-flight set. `queues[i]` is the queue of `list_keys[i]` (used as routing key when the
  // envelope has none). Messages that are not JSON, have no properties.delivery_tag, or whose
  // tag is already in unacked (a hand-made duplicate) are LPUSHed to the
  // dead-letter list in the same script.
  std::vector<Fetched> Fetch(const std::vector<std::string>& list_keys,
                             const std::vector<std::string>& queues, int max, double now) override;

  // Acks: ZREM unacked_index, HDEL unacked, SREM in-flight, atomically. When `push_key` (a full,
  // prefixed key: ListKey() or deadletter_key()) is not empty, LPUSHes `push_value` to it in the
  // same script (dead-letter), so the message is never in neither place.
  void Ack(const std::string& tag, const std::string& push_key = {},
           const std::string& push_value = {}) override;

  // Many acks in one round trip (see AckOp).
  void AckMany(const std::vector<AckOp>& ops) override;

  // Stores each result (GET; unless SUCCESS is stored, SETEX + PUBLISH, in `backend_db`), acks,
  // pushes and runs the chord step in ONE script per task, all in one round trip. A repeated
  // call (after a lost reply) neither pushes nor counts a chord part again.
  void FinishMany(const std::vector<FinishOp>& ops, int backend_db, long expires) override;

  // FinishMany and then Fetch in the same pipeline (one round trip for "finish this task, take
  // the next"). `fetched` is filled from the fetch reply even when a finish reply was an error,
  // which is thrown afterwards (RedisError); the caller then repeats the finish (idempotent).
  void FinishManyThenFetch(const std::vector<FinishOp>& ops, int backend_db, long expires,
                           const std::vector<std::string>& list_keys,
                           const std::vector<std::string>& queues, int max, double now,
                           std::vector<Fetched>* fetched) override;

  // Re-queues the unacked message `tag` as kombu's restore_by_tag: RPUSH (next to be consumed)
  // to its queue's priority list with redelivered=true, and removes it from unacked,
  // unacked_index and our in-flight set, in one script that first checks the stored value is
  // still there (kGone when someone else restored or acked it; then only SREM).
  RestoreResult Restore(const std::string& tag) override;

  // ZADD XX unacked_index now for `tags` we still hold, so no visibility sweep (ours or
  // Python's) restores a task we are running or holding for its ETA.
  void RefreshScores(const std::vector<std::string>& tags, double now) override;

  // kombu's restore_visible: under unacked_mutex (SET NX PX 300000; skipped when held), restores
  // every tag whose unacked_index score is older than now - visibility_timeout and for which
  // `held(tag)` is false. Returns the number restored.
  int SweepStale(double now, double visibility_timeout,
                 const std::function<bool(const std::string&)>& held) override;

  // Restores every tag in our in-flight set not `held` (left by a previous incarnation with the
  // same hostname, or taken by a script whose reply was lost). Returns the number restored.
  int RecoverOwn(const std::function<bool(const std::string&)>& held) override;

  // PUBLISH on the broker (events).
  void Publish(const std::string& channel, const std::string& payload) override;

  // The list a queue's message of `priority` goes to (prefixed).
  std::string ListKey(const std::string& queue, int priority) const;

  // SADD _kombu.binding.<q> "<q>\x06\x16\x06\x16<q>" for each queue (as a Python consumer does,
  // so clients publishing through the named direct exchange reach it).
  void DeclareQueues(const std::vector<std::string>& queues) override;

  bool Ping();
  const std::string& deadletter_key() const override { return deadletter_key_; }
  const std::string& inflight_key() const { return inflight_key_; }
  const RedisEndpoint& endpoint() const { return pool_.endpoint(); }

 private:
  std::vector<LuaScript::Call> FinishCalls(const std::vector<FinishOp>& ops, int backend_db,
                                           long expires) const;
  // When our in-flight set expires if our scores, set to `now`, are not refreshed: Unix ms.
  std::string InflightExpiry(double now) const;
  LuaScript::Call FetchCall(const std::vector<std::string>& list_keys,
                            const std::vector<std::string>& queues, int max, double now) const;
  std::vector<Fetched> ParseFetchReply(const redisReply* reply) const;
  std::string TargetList(RedisConnection& conn, const std::string& exchange,
                         const std::string& routing_key, int priority);
  RestoreResult RestoreOn(RedisConnection& conn, const std::string& tag);

  RedisPool pool_;
  const std::string prefix_;
  const std::string hostname_;
  const std::string unacked_;
  const std::string unacked_index_;
  const std::string unacked_mutex_;
  const std::string inflight_key_;
  const std::string deadletter_key_;
  const std::chrono::milliseconds inflight_ttl_;
  LuaScript fetch_script_;
  LuaScript ack_script_;
  LuaScript finish_script_;
  LuaScript restore_script_;
  LuaScript unlock_script_;
};

}  // namespace warmpool::worker
