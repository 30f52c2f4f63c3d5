#include "worker/broker.h"

#include <random>

#include <hiredis/hiredis.h>

#include "celery/kombu_keys.h"
#include "celery/message.h"
#include "celery/result.h"
#include "celery/unacked.h"
#include "common/logging.h"
#include "redis/errors.h"
#include "worker/lua/scripts.h"

namespace warmpool::worker {
namespace {

std::string RandomToken() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) out.push_back(kHex[rng() & 15]);
  return out;
}

std::string FormatScore(double t) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6f", t);
  return buf;
}

}  // namespace

Broker::Broker(RedisEndpoint endpoint, std::string key_prefix, std::string hostname,
               std::string deadletter_key, size_t max_connections,
               std::chrono::milliseconds inflight_ttl)
    : pool_(std::move(endpoint), RedisPoolOptions{.max_connections = max_connections,
                                                  .wait_timeout = std::chrono::seconds(5),
                                                  .min_backoff = std::chrono::milliseconds(100),
                                                  .max_backoff = std::chrono::seconds(2)}),
      prefix_(std::move(key_prefix)),
      hostname_(std::move(hostname)),
      unacked_(kombu::PrefixedKey(prefix_, kombu::kUnackedKey)),
      unacked_index_(kombu::PrefixedKey(prefix_, kombu::kUnackedIndexKey)),
      unacked_mutex_(kombu::PrefixedKey(prefix_, kombu::kUnackedMutexKey)),
      inflight_key_(kombu::PrefixedKey(prefix_, "warmpool.inflight." + hostname_)),
      deadletter_key_(kombu::PrefixedKey(prefix_, deadletter_key)),
      inflight_ttl_(inflight_ttl),
      fetch_script_(lua::kLuaFetch),
      ack_script_(lua::kLuaAck),
      finish_script_(lua::kLuaFinish),
      restore_script_(lua::kLuaRestore),
      unlock_script_(lua::kLuaUnlock) {}

std::string Broker::InflightExpiry(double now) const {
  return std::to_string(static_cast<int64_t>(now * 1000) + inflight_ttl_.count());
}

LuaScript::Call Broker::FetchCall(const std::vector<std::string>& list_keys,
                                  const std::vector<std::string>& queues, int max,
                                  double now) const {
  LuaScript::Call c{{unacked_, unacked_index_, inflight_key_, deadletter_key_},
                    {FormatScore(now), hostname_, std::to_string(max)}};
  c.keys.insert(c.keys.end(), list_keys.begin(), list_keys.end());
  c.args.insert(c.args.end(), queues.begin(), queues.end());
  c.args.push_back(InflightExpiry(now));
  return c;
}

std::vector<Fetched> Broker::ParseFetchReply(const redisReply* reply) const {
  std::vector<Fetched> out;
  auto elems = ReplyElements(reply);
  for (size_t i = 0; i + 3 < elems.size(); i += 4) {
    Fetched f;
    std::string kind = ReplyString(elems[i]);
    f.kind = kind == "m" ? Fetched::Kind::kMessage : Fetched::Kind::kDeadLettered;
    f.list_key = ReplyString(elems[i + 1]);
    f.queue = kombu::QueueFromListKey(prefix_, f.list_key);
    f.envelope = ReplyString(elems[i + 2]);
    if (f.kind == Fetched::Kind::kMessage) {
      f.tag = ReplyString(elems[i + 3]);
    } else {
      f.reason = ReplyString(elems[i + 3]);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Fetched> Broker::Fetch(const std::vector<std::string>& list_keys,
                                   const std::vector<std::string>& queues, int max, double now) {
  LuaScript::Call c = FetchCall(list_keys, queues, max, now);
  auto conn = pool_.Acquire();
  RedisReplyPtr reply = fetch_script_.Run(*conn, c.keys, c.args);
  return ParseFetchReply(reply.get());
}

void Broker::Ack(const std::string& tag, const std::string& push_key,
                 const std::string& push_value) {
  std::vector<std::string> keys = {unacked_, unacked_index_, inflight_key_};
  std::vector<std::string> args = {tag, "0"};
  if (!push_key.empty()) {
    keys.push_back(push_key);
    args.push_back(push_value);
  }
  auto conn = pool_.Acquire();
  ack_script_.Run(*conn, keys, args);
}

void Broker::AckMany(const std::vector<AckOp>& ops) {
  if (ops.empty()) return;
  std::vector<LuaScript::Call> calls;
  calls.reserve(ops.size());
  for (const auto& op : ops) {
    LuaScript::Call c{{unacked_, unacked_index_, inflight_key_},
                      {op.tag, op.force_push ? "1" : "0"}};
    for (const auto& p : op.pushes) {
      c.keys.push_back(p.key);
      c.args.push_back(p.value);
    }
    calls.push_back(std::move(c));
  }
  auto conn = pool_.Acquire();
  ack_script_.RunMany(*conn, calls);
}

std::vector<LuaScript::Call> Broker::FinishCalls(const std::vector<FinishOp>& ops, int backend_db,
                                                 long expires) const {
  std::vector<LuaScript::Call> calls;
  calls.reserve(ops.size());
  const std::string backend = std::to_string(backend_db);
  const std::string broker = std::to_string(pool_.endpoint().db);
  const std::string exp = std::to_string(expires);
  for (const FinishOp& op : ops) {
    LuaScript::Call c{{unacked_, unacked_index_, inflight_key_, op.result_key},
                      {op.ack.tag, op.result, exp, backend, broker, op.ack.force_push ? "1" : "0",
                       op.chord ? "1" : "0", std::to_string(op.extra_results.size()),
                       std::to_string(op.ack.pushes.size())}};
    for (const auto& [key, value] : op.extra_results) {
      c.keys.push_back(key);
      c.args.push_back(value);
    }
    for (const auto& p : op.ack.pushes) {
      c.keys.push_back(p.key);
      c.args.push_back(p.value);
    }
    if (op.chord) {
      const ChordPart& ch = *op.chord;
      const std::string group_key = "celery-taskset-meta-" + ch.group_id;
      c.keys.insert(c.keys.end(), {group_key + ".j", group_key + ".t", group_key + ".s",
                                   ListKey(ch.callback_queue, ch.callback_priority),
                                   celery::ResultKey(ch.callback_id)});
      c.args.insert(c.args.end(), {ch.score, ch.member, ch.body_head, ch.body_tail,
                                   ch.callback_immutable ? "1" : "0", ch.envelope_head,
                                   ch.envelope_tail, ch.error_meta_head, ch.error_meta_tail});
      for (const auto& m : ch.errbacks) {
        c.keys.push_back(ListKey(m.queue, m.priority));
        c.args.push_back(m.envelope);
      }
    }
    calls.push_back(std::move(c));
  }
  return calls;
}

void Broker::FinishMany(const std::vector<FinishOp>& ops, int backend_db, long expires) {
  if (ops.empty()) return;
  auto calls = FinishCalls(ops, backend_db, expires);
  auto conn = pool_.Acquire();
  finish_script_.RunMany(*conn, calls);
}

void Broker::FinishManyThenFetch(const std::vector<FinishOp>& ops, int backend_db, long expires,
                                 const std::vector<std::string>& list_keys,
                                 const std::vector<std::string>& queues, int max, double now,
                                 std::vector<Fetched>* fetched) {
  auto calls = FinishCalls(ops, backend_db, expires);
  auto conn = pool_.Acquire();
  std::string finish_sha = finish_script_.Sha(*conn);
  std::string fetch_sha = fetch_script_.Sha(*conn);
  std::vector<RedisArgs> cmds;
  cmds.reserve(calls.size() + 1);
  for (const auto& c : calls) cmds.push_back(LuaScript::EvalShaCommand(finish_sha, c));
  cmds.push_back(LuaScript::EvalShaCommand(fetch_sha, FetchCall(list_keys, queues, max, now)));
  auto replies = conn->Pipeline(cmds);
  const redisReply* fetch_reply = replies.back().get();
  std::string error;
  if (ReplyIsError(fetch_reply)) {
    error = std::string(fetch_reply->str, fetch_reply->len);
  } else {
    *fetched = ParseFetchReply(fetch_reply);
  }
  for (size_t i = 0; i + 1 < replies.size() && error.empty(); ++i) {
    if (ReplyIsError(replies[i].get())) error = std::string(replies[i]->str, replies[i]->len);
  }
  if (error.empty()) return;
  if (error.rfind("NOSCRIPT", 0) == 0) {
    finish_script_.Reload(*conn);
    fetch_script_.Reload(*conn);
  }
  throw RedisReplyError("redis " + conn->endpoint().Redacted() + ": EVALSHA: " + error);
}

std::string KombuListKey(const std::string& prefix, const std::string& queue, int priority) {
  return kombu::PriorityListKey(prefix, queue, kombu::PriorityStep(priority, {0, 3, 6, 9}));
}

std::string Broker::ListKey(const std::string& queue, int priority) const {
  return KombuListKey(prefix_, queue, priority);
}

std::string Broker::TargetList(RedisConnection& conn, const std::string& exchange,
                               const std::string& routing_key, int priority) {
  std::string queue = routing_key;
  if (!exchange.empty()) {
    // Named exchange: kombu's _lookup through the binding set (direct: routing key match).
    auto members =
        conn.Command({"SMEMBERS", kombu::PrefixedKey(prefix_, "_kombu.binding." + exchange)});
    std::vector<std::string> bound;
    for (const auto* m : ReplyElements(members.get())) bound.push_back(ReplyString(m));
    if (auto q = kombu::QueueForRoutingKey(bound, routing_key)) queue = *q;
  }
  return ListKey(queue, priority);
}

Broker::RestoreResult Broker::RestoreOn(RedisConnection& conn, const std::string& tag) {
  auto cur = conn.Command({"HGET", unacked_, tag});
  if (ReplyIsNil(cur.get())) {
    conn.Command({"SREM", inflight_key_, tag});
    return RestoreResult::kGone;
  }
  std::string value = ReplyString(cur.get());
  auto entry = celery::ParseUnackedValue(value);
  if (!entry) {
    // Not kombu's format: leave it for a human; dead-letter a copy and drop the entry.
    LogEvent(spdlog::level::err, "unacked_entry_invalid", {{"tag", tag}});
    nlohmann::json dead = {{"reason", "unacked entry is not [envelope, exchange, routing_key]"},
                           {"worker", hostname_},
                           {"message", value}};
    Ack(tag, deadletter_key_, dead.dump());
    return RestoreResult::kGone;
  }
  auto marked = celery::MarkRedelivered(entry->envelope);
  std::string target = TargetList(conn, entry->exchange, entry->routing_key, entry->priority);
  auto r = restore_script_.Run(conn, {unacked_, unacked_index_, inflight_key_, target},
                               {tag, value, marked ? *marked : entry->envelope});
  return ReplyInteger(r.get()) == 1 ? RestoreResult::kRestored : RestoreResult::kGone;
}

Broker::RestoreResult Broker::Restore(const std::string& tag) {
  auto conn = pool_.Acquire();
  return RestoreOn(*conn, tag);
}

void Broker::RefreshScores(const std::vector<std::string>& tags, double now) {
  if (tags.empty()) return;
  RedisArgs cmd = {"ZADD", unacked_index_, "XX"};
  std::string score = FormatScore(now);
  for (const auto& t : tags) {
    cmd.push_back(score);
    cmd.push_back(t);
  }
  auto conn = pool_.Acquire();
  conn->Command(cmd);
  // Our in-flight set lives exactly as long as our scores stay fresh (see the constructor).
  conn->Command({"PEXPIREAT", inflight_key_, InflightExpiry(now)});
}

int Broker::SweepStale(double now, double visibility_timeout,
                       const std::function<bool(const std::string&)>& held) {
  auto conn = pool_.Acquire();
  std::string token = RandomToken();
  auto lock = conn->Command({"SET", unacked_mutex_, token, "PX", "300000", "NX"});
  if (ReplyIsNil(lock.get())) return 0;  // another process sweeps
  int restored = 0;
  try {
    auto stale = conn->Command({"ZREVRANGEBYSCORE", unacked_index_,
                                FormatScore(now - visibility_timeout), "0", "LIMIT", "0", "1000"});
    for (const auto* e : ReplyElements(stale.get())) {
      std::string tag = ReplyString(e);
      if (held(tag)) continue;
      if (RestoreOn(*conn, tag) == RestoreResult::kRestored) {
        ++restored;
        LogEvent(spdlog::level::warn, "unacked_restored", {{"tag", tag}, {"reason", "stale"}});
      }
    }
  } catch (...) {
    unlock_script_.Run(*conn, {unacked_mutex_}, {token});
    throw;
  }
  unlock_script_.Run(*conn, {unacked_mutex_}, {token});
  return restored;
}

int Broker::RecoverOwn(const std::function<bool(const std::string&)>& held) {
  auto conn = pool_.Acquire();
  auto members = conn->Command({"SMEMBERS", inflight_key_});
  int restored = 0;
  for (const auto* e : ReplyElements(members.get())) {
    std::string tag = ReplyString(e);
    if (held(tag)) continue;
    if (RestoreOn(*conn, tag) == RestoreResult::kRestored) {
      ++restored;
      LogEvent(spdlog::level::warn, "unacked_restored", {{"tag", tag}, {"reason", "own"}});
    }
  }
  return restored;
}

void Broker::Publish(const std::string& channel, const std::string& payload) {
  auto conn = pool_.Acquire();
  conn->Command({"PUBLISH", channel, payload});
}

void Broker::DeclareQueues(const std::vector<std::string>& queues) {
  auto conn = pool_.Acquire();
  for (const auto& q : queues) {
    std::string member = q;
    member.append(kombu::kPrioritySep).append(kombu::kPrioritySep).append(q);
    conn->Command({"SADD", kombu::PrefixedKey(prefix_, "_kombu.binding." + q), member});
  }
}

bool Broker::Ping() {
  try {
    auto conn = pool_.Acquire();
    return ReplyString(conn->Command({"PING"}).get()) == "PONG";
  } catch (const RedisError&) {
    return false;
  }
}

}  // namespace warmpool::worker
