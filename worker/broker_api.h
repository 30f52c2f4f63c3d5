#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/canvas.h"

namespace warmpool::worker {

// One message taken from a queue list. The take is atomic with its bookkeeping (see Fetch), so
// the message is never only in this process's memory.
struct Fetched {
  enum class Kind {
    kMessage,       // recorded in unacked/unacked_index/our in-flight set; we must ack or restore
    kDeadLettered,  // not JSON or without a delivery tag: already moved to the dead-letter list
  };
  Kind kind = Kind::kMessage;
  std::string list_key;  // the list it came from (prefixed)
  std::string queue;     // queue name (no prefix, no priority suffix)
  std::string envelope;  // raw JSON as published
  std::string tag;       // delivery tag (kMessage)
  std::string reason;    // why it was dead-lettered (kDeadLettered)
};

// A message to LPUSH in the script that acks (retry republish, chain step, link callbacks,
// errbacks, dead-letter entry).
struct BrokerPush {
  std::string key;  // full, prefixed key: KombuListKey() or the dead-letter key
  std::string value;
};

// One ack of many in a round trip. The pushes are done (in order) only when the tag was still
// unacked (or when `force_push`), so repeating an ack after a lost reply never pushes twice.
struct AckOp {
  std::string tag;
  std::vector<BrokerPush> pushes;
  bool force_push = false;  // push even if the tag was already acked (early-ack)
};

// What one finished task writes when the result backend is the broker's own Redis server.
struct FinishOp {
  AckOp ack;
  std::string result_key;  // celery-task-meta-<id>
  std::string result;      // result JSON, or empty for none (ignore_result, skip)
  // Further results stored with the same rule (chain steps failed with this task):
  // (key, JSON) pairs.
  std::vector<std::pair<std::string, std::string>> extra_results;
  // The chord step (Redis backend protocol of Celery 5.2.6), done with the pushes: only when
  // the tag was still unacked or `force_push`.
  std::optional<ChordPart> chord;
};

// The list kombu's Redis transport keeps a queue's messages of `priority` in (prefixed).
std::string KombuListKey(const std::string& prefix, const std::string& queue, int priority);

// The kombu Redis transport as the worker's consumer and finisher use it. Broker (worker/
// broker.h) is the Redis implementation; tests drive the worker's parts with a fake. Methods
// may throw RedisError (the caller retries); implementations are thread-safe. See Broker for
// what each one does in Redis.
class BrokerApi {
 public:
  virtual ~BrokerApi() = default;

  // Takes up to `max` messages from the first non-empty of `list_keys` (consume order), with
  // their bookkeeping; `queues[i]` is the queue of `list_keys[i]`.
  virtual std::vector<Fetched> Fetch(const std::vector<std::string>& list_keys,
                                     const std::vector<std::string>& queues, int max,
                                     double now) = 0;
  // Acks `tag`; with `push_key`, LPUSHes `push_value` to it in the same step (dead-letter).
  virtual void Ack(const std::string& tag, const std::string& push_key = {},
                   const std::string& push_value = {}) = 0;
  virtual void AckMany(const std::vector<AckOp>& ops) = 0;
  // Stores results, acks, pushes and runs chord steps, one round trip; idempotent.
  virtual void FinishMany(const std::vector<FinishOp>& ops, int backend_db, long expires) = 0;
  // FinishMany, then Fetch in the same round trip. `fetched` is filled even when a finish reply
  // was an error, which is thrown afterwards; the caller then repeats the finish.
  virtual void FinishManyThenFetch(const std::vector<FinishOp>& ops, int backend_db, long expires,
                                   const std::vector<std::string>& list_keys,
                                   const std::vector<std::string>& queues, int max, double now,
                                   std::vector<Fetched>* fetched) = 0;

  enum class RestoreResult { kRestored, kGone };
  // Puts unacked message `tag` back at the head of its queue (redelivered=true).
  virtual RestoreResult Restore(const std::string& tag) = 0;
  // Keeps the visibility sweep off the `tags` we still hold.
  virtual void RefreshScores(const std::vector<std::string>& tags, double now) = 0;
  // kombu's restore_visible for tags not `held`; returns the number restored.
  virtual int SweepStale(double now, double visibility_timeout,
                         const std::function<bool(const std::string&)>& held) = 0;
  // Restores our in-flight tags not `held`; returns the number restored.
  virtual int RecoverOwn(const std::function<bool(const std::string&)>& held) = 0;
  virtual void Publish(const std::string& channel, const std::string& payload) = 0;
  virtual void DeclareQueues(const std::vector<std::string>& queues) = 0;
  virtual const std::string& deadletter_key() const = 0;  // prefixed
};

}  // namespace warmpool::worker
