-- Stores one Celery result unless SUCCESS is already stored, and PUBLISHes it on the key's
-- channel (ResultStore::Store, worker/result_store.h).
-- KEYS: result key   ARGV: json, expires (0 = no expiry)
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
