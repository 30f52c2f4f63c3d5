-- redis-py Lock release: compare-and-delete (the visibility sweep's unacked_mutex).
-- KEYS: lock key   ARGV: token
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
