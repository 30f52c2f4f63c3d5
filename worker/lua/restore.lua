-- Re-queues one unacked message as kombu's restore_by_tag (Broker::Restore), only when the
-- stored value is still the one read (else someone else restored or acked it).
-- KEYS: unacked, unacked_index, inflight, target list   ARGV: tag, expected value, new envelope
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
