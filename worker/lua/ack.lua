-- Acks one message (Broker::Ack / AckMany): ZREM unacked_index, HDEL unacked, SREM in-flight;
-- the pushes (dead-letter entry, retry republish, callbacks) only when the tag was still unacked
-- or `force`, so a repeated ack after a lost reply never pushes twice.
-- KEYS: unacked, unacked_index, inflight, push keys...
-- ARGV: tag, force ('1' pushes even when the tag was already acked), push values...
redis.call('ZREM', KEYS[2], ARGV[1])
local had = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[3], ARGV[1])
if had == 1 or ARGV[2] == '1' then
  for i = 4, #KEYS do redis.call('LPUSH', KEYS[i], ARGV[i - 1]) end
end
return had
