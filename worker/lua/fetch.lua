-- Takes up to ARGV[3] messages with their kombu bookkeeping (Broker::Fetch, worker/broker.h).
-- KEYS: unacked, unacked_index, inflight, deadletter, list1..listN
-- ARGV: now, hostname, max, queue1..queueN, in-flight set expiry (Unix ms)
-- Returns a flat array of 4-tuples: kind ('m'|'d'), list key, envelope, tag|reason.
-- The tag and delivery_info come from the envelope's top-level `properties` only, as kombu
-- reads them. A plain text search is not enough: kombu writes `headers` (which
-- apply_async(headers=...) fills) before `properties`, and a search met a header's
-- "delivery_tag"/"delivery_info" first (two messages shared one unacked entry and one was lost
-- at a restart; a restored message went to a queue a header named).
-- Fast path, without decoding: the envelope ends with the properties object exactly as kombu
-- (", " ": ") or our encoder (no spaces) writes it, matched to the end of the text, with
-- strings that hold no '"' or '\'. That match is provably the top-level "properties": its
-- opening '"' is not escaped, so if it were inside a string it would close it and leave
-- `properties` bare (invalid JSON); from there the pattern fixes every token, and its braces
-- (2 opened, 3 closed, the last one ending the text) put the key at depth 1, i.e. in the
-- top-level object, as its last (so winning) member. A text the match accepts but that is not
-- valid JSON is still recorded under that tag; the worker's decoder then dead-letters it (and
-- acks the tag). Anything else goes through cjson.decode, a few microseconds more of Redis CPU
-- per message (bench/worker/fetch_script_bench.py).
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
