-- Result(s) + ack + pushes + chord step in one script, for a result backend on the broker's
-- server (maybe another DB) (Broker::FinishMany).
-- KEYS: unacked, unacked_index, inflight, result key, extra result keys (ARGV[8] of them),
--       push keys (ARGV[9]); with a chord step: .j, .t, .s, body list, body result key, then
--       the body's errback lists.
-- ARGV: tag, result json ('' = none), expires, backend db, broker db, force push, chord '0'|'1',
--       n extra, n push, extra result values..., push values...; with a chord step: score,
--       member, body head, body tail, immutable, envelope head, envelope tail, error meta head,
--       error meta tail, errback values...
-- The chord step is Celery 5.2.6's RedisBackend.on_chord_part_return (result_chord_ordered):
-- ZADD .j, ZCOUNT, GET .t/.s, EXPIRE; the last part sends the body with the results in order
-- (assembled here: the body JSON is base64-encoded into the envelope) and deletes the keys, or
-- stores FAILURE ChordError for the body and sends its errbacks when a part failed.
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
