#include "worker/broker.h"

#include <random>

#include <hiredis/hiredis.h>

#include "celery/message.h"
#include "celery/result.h"
#include "celery/kombu_keys.h"
#include "celery/unacked.h"
#include "common/logging.h"
#include "redis/errors.h"

namespace warmpool::worker {
namespace {

// KEYS: unacked, unacked_index, inflight, deadletter, list1..listN
// ARGV: now, hostname, max, queue1..queueN, in-flight set expiry (Unix ms)
// Returns a flat array of 4-tuples: kind ('m'|'d'), list key, envelope, tag|reason.
// The tag and delivery_info come from the envelope's top-level `properties` only, as kombu
// reads them. A plain text search is not enough: kombu writes `headers` (which
// apply_async(headers=...) fills) before `properties`, and a search met a header's
// "delivery_tag"/"delivery_info" first (two messages shared one unacked entry and one was lost
// at a restart; a restored message went to a queue a header named).
// Fast path, without decoding: the envelope ends with the properties object exactly as kombu
// (", " ": ") or our encoder (no spaces) writes it, matched to the end of the text, with
// strings that hold no '"' or '\'. That match is provably the top-level "properties": its
// opening '"' is not escaped, so if it were inside a string it would close it and leave
// `properties` bare (invalid JSON); from there the pattern fixes every token, and its braces
// (2 opened, 3 closed, the last one ending the text) put the key at depth 1, i.e. in the
// top-level object, as its last (so winning) member. A text the match accepts but that is not
// valid JSON is still recorded under that tag; the worker's decoder then dead-letters it (and
// acks the tag). Anything else goes through cjson.decode, a few microseconds more of Redis CPU
// per message (bench/worker/fetch_script_bench.py).
constexpr const char* kFetchLua = R"lua(
local PROPS_HEAD = '^"properties"%s*:%s*{%s*"correlation_id"%s*:%s*"[^"\\]*"%s*,%s*' ..
  '"reply_to"%s*:%s*'
local PROPS_TAIL = '%s*,%s*"delivery_mode"%s*:%s*%d+%s*,%s*"delivery_info"%s*:%s*{%s*' ..
  '"exchange"%s*:%s*"([^"\\]*)"%s*,%s*"routing_key"%s*:%s*"([^"\\]*)"%s*}%s*,%s*' ..
  '"priority"%s*:%s*%d+%s*,%s*"body_encoding"%s*:%s*"base64"%s*,%s*' ..
  '"delivery_tag"%s*:%s*"([^"\\]*)"%s*}%s*}%s*$'
local PROPS_REPLY_TO_STRING = PROPS_HEAD .. '"[^"\\]*"' .. PROPS_TAIL
local PROPS_REPLY_TO_NULL = PROPS_HEAD .. 'null' .. PROPS_TAIL
-- kombu's properties are about 300 bytes: look for them in the last 1 KiB only, so the cost
-- stays bounded whatever the message holds.
local function tail_properties(msg)
  local from = #msg - 1024
  if from < 2 then from = 2 end
  local p = string.find(msg, '"properties"', from, true)
  while p do
    if string.byte(msg, p - 1) ~= 92 then
      local ex, rk, tag = string.match(msg, PROPS_REPLY_TO_STRING, p)
      if not tag then ex, rk, tag = string.match(msg, PROPS_REPLY_TO_NULL, p) end
      if tag and tag ~= '' then return tag, ex, rk end
    end
    p = string.find(msg, '"properties"', p + 1, true)
  end
  return nil
end
local out = {}
local taken = false
local max = tonumber(ARGV[3])
local n = 0
local i = 5
while i <= #KEYS and n < max do
  local msg = redis.call('RPOP', KEYS[i])
  if not msg then
    i = i + 1
  else
    n = n + 1
    local tag, ex, rk = tail_properties(msg)
    local reason = nil
    if not tag then
      ex, rk = '', ''
      local ok, env = pcall(cjson.decode, msg)
      if not ok then
        reason = 'envelope is not valid JSON (' .. tostring(env) .. ')'
      elseif type(env) ~= 'table' then
        reason = 'envelope is not valid JSON (not an object)'
      elseif type(env.properties) ~= 'table' or type(env.properties.delivery_tag) ~= 'string'
          or env.properties.delivery_tag == '' then
        reason = 'envelope has no properties.delivery_tag'
      else
        tag = env.properties.delivery_tag
        local di = env.properties.delivery_info
        if type(di) == 'table' then
          if type(di.exchange) == 'string' then ex = di.exchange end
          if type(di.routing_key) == 'string' then rk = di.routing_key end
        end
      end
    end
    if ex == '' and rk == '' then rk = ARGV[3 + i - 4] end
    local value
    if not reason then
      value = '[' .. msg .. ', ' .. cjson.encode(ex) .. ', ' .. cjson.encode(rk) .. ']'
      -- Two messages under one tag would share one unacked entry: one of them would be lost at
      -- a crash. kombu's tags are uuid4s, so only a hand-made message gets here.
      if redis.call('HSETNX', KEYS[1], tag, value) == 0 then
        reason = 'delivery tag ' .. tag .. ' is already held by another message in unacked'
      end
    end
    if reason then
      redis.call('LPUSH', KEYS[4], cjson.encode({reason = reason, queue = ARGV[3 + i - 4],
        worker = ARGV[2], time = tonumber(ARGV[1]), message = msg}))
      table.insert(out, 'd'); table.insert(out, KEYS[i]); table.insert(out, msg)
      table.insert(out, reason)
    else
      redis.call('ZADD', KEYS[2], ARGV[1], tag)
      redis.call('SADD', KEYS[3], tag)
      table.insert(out, 'm'); table.insert(out, KEYS[i]); table.insert(out, msg)
      table.insert(out, tag)
      taken = true
    end
  end
end
if taken then redis.call('PEXPIREAT', KEYS[3], ARGV[#ARGV]) end
return out
)lua";

// KEYS: unacked, unacked_index, inflight, push keys...
// ARGV: tag, force ('1' pushes even when the tag was already acked), push values...
constexpr const char* kAckLua = R"lua(
redis.call('ZREM', KEYS[2], ARGV[1])
local had = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
if had == 1 or ARGV[2] == '1' then
  for i = 4, #KEYS do redis.call('LPUSH', KEYS[i], ARGV[i - 1]) end
end
return had
)lua";

// Result(s) + ack + pushes + chord step in one script, for a result backend on the broker's
// server (maybe another DB).
// KEYS: unacked, unacked_index, inflight, result key, extra result keys (ARGV[8] of them),
//       push keys (ARGV[9]); with a chord step: .j, .t, .s, body list, body result key, then
//       the body's errback lists.
// ARGV: tag, result json ('' = none), expires, backend db, broker db, force push, chord '0'|'1',
//       n extra, n push, extra result values..., push values...; with a chord step: score,
//       member, body head, body tail, immutable, envelope head, envelope tail, error meta head,
//       error meta tail, errback values...
// The chord step is Celery 5.2.6's RedisBackend.on_chord_part_return (result_chord_ordered):
// ZADD .j, ZCOUNT, GET .t/.s, EXPIRE; the last part sends the body with the results in order
// (assembled here: the body JSON is base64-encoded into the envelope) and deletes the keys, or
// stores FAILURE ChordError for the body and sends its errbacks when a part failed.
constexpr const char* kFinishLua = R"lua(
local function store(key, value, expires)
  local cur = redis.call('GET', key)
  if cur then
    local ok, meta = pcall(cjson.decode, cur)
    if ok and type(meta) == 'table' and meta.status == 'SUCCESS' then return end
  end
  if tonumber(expires) > 0 then
    redis.call('SETEX', key, expires, value)
  else
    redis.call('SET', key, value)
  end
  redis.call('PUBLISH', key, value)
end
local b64chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
local function b64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = string.byte(s, i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local c1 = math.floor(n / 262144) % 64 + 1
    local c2 = math.floor(n / 4096) % 64 + 1
    local c3 = math.floor(n / 64) % 64 + 1
    local c4 = n % 64 + 1
    out[#out + 1] = string.sub(b64chars, c1, c1) .. string.sub(b64chars, c2, c2) ..
      (b and string.sub(b64chars, c3, c3) or '=') .. (c and string.sub(b64chars, c4, c4) or '=')
  end
  return table.concat(out)
end
local function exc_repr(raw)
  local ok, e = pcall(cjson.decode, raw)
  if not ok or type(e) ~= 'table' or type(e.exc_type) ~= 'string' then return raw end
  local args = {}
  local msg = e.exc_message
  if type(msg) ~= 'table' then msg = {msg} end
  for _, v in ipairs(msg) do
    if type(v) == 'string' then
      local q = string.gsub(v, '\\', '\\\\')
      q = string.gsub(q, "'", "\\'")
      args[#args + 1] = "'" .. q .. "'"
    else
      args[#args + 1] = cjson.encode(v)
    end
  end
  return e.exc_type .. '(' .. table.concat(args, ', ') .. ')'
end
local function chord_part(k, a, nerr)
  local jkey, tkey, skey = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  redis.call('SELECT', ARGV[4])
  redis.call('ZADD', jkey, ARGV[a], ARGV[a + 1])
  local ready = redis.call('ZCOUNT', jkey, '-inf', '+inf')
  local t = redis.call('GET', tkey)
  local size = redis.call('GET', skey)
  if tonumber(ARGV[3]) > 0 then
    redis.call('EXPIRE', jkey, ARGV[3])
    redis.call('EXPIRE', tkey, ARGV[3])
    redis.call('EXPIRE', skey, ARGV[3])
  end
  if not size or ready ~= tonumber(size) + (t and tonumber(t) or 0) then return end
  local values = {}
  for _, m in ipairs(redis.call('ZRANGE', jkey, 0, -1)) do
    local tid, state, raw =
      string.match(m, '^%[%s*1%s*,%s*"([^"]*)"%s*,%s*"(%u+)"%s*,%s*(.*)%]%s*$')
    if not tid or state == 'FAILURE' or state == 'REVOKED' then
      local text = 'Dependency ' .. (tid or '?') .. ' raised ' .. (raw and exc_repr(raw) or m)
      store(KEYS[k + 4], ARGV[a + 7] .. cjson.encode(text) .. ARGV[a + 8], ARGV[3])
      redis.call('SELECT', ARGV[5])
      for i = 1, nerr do redis.call('LPUSH', KEYS[k + 4 + i], ARGV[a + 8 + i]) end
      return
    end
    values[#values + 1] = raw
  end
  local body = ARGV[a + 2]
  if ARGV[a + 4] ~= '1' then
    body = body .. '[' .. table.concat(values, ', ') .. ']' .. ARGV[a + 3]
  end
  redis.call('DEL', jkey, tkey, skey)
  redis.call('SELECT', ARGV[5])
  redis.call('LPUSH', KEYS[k + 3], ARGV[a + 5] .. '"' .. b64(body) .. '"' .. ARGV[a + 6])
end
local nres, npush = tonumber(ARGV[8]), tonumber(ARGV[9])
if ARGV[2] ~= '' or nres > 0 then
  redis.call('SELECT', ARGV[4])
  if ARGV[2] ~= '' then store(KEYS[4], ARGV[2], ARGV[3]) end
  for i = 1, nres do store(KEYS[4 + i], ARGV[9 + i], ARGV[3]) end
  redis.call('SELECT', ARGV[5])
end
redis.call('ZREM', KEYS[2], ARGV[1])
local had = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
if had == 1 or ARGV[6] == '1' then
  for i = 1, npush do redis.call('LPUSH', KEYS[4 + nres + i], ARGV[9 + nres + i]) end
  if ARGV[7] == '1' then
    local k = 5 + nres + npush
    chord_part(k, 10 + nres + npush, #KEYS - (k + 4))
    redis.call('SELECT', ARGV[5])
  end
end
return had
)lua";

// KEYS: unacked, unacked_index, inflight, target list   ARGV: tag, expected value, new envelope
constexpr const char* kRestoreLua = R"lua(
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur ~= ARGV[2] then
  if not cur then redis.call('SREM', KEYS[3], ARGV[1]) end
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
redis.call('RPUSH', KEYS[4], ARGV[3])
return 1
)lua";

// redis-py Lock release: compare-and-delete.
constexpr const char* kUnlockLua = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
)lua";

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
      fetch_script_(kFetchLua),
      ack_script_(kAckLua),
      finish_script_(kFinishLua),
      restore_script_(kRestoreLua),
      unlock_script_(kUnlockLua) {}

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

std::string Broker::ListKey(const std::string& queue, int priority) const {
  return kombu::PriorityListKey(prefix_, queue, kombu::PriorityStep(priority, {0, 3, 6, 9}));
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
