#pragma once

#include "redis/url.h"

namespace warmpool {

// Asks each of endpoint.sentinels in order `SENTINEL get-master-addr-by-name master_name` (as
// redis-py's Sentinel.discover_master does) and returns the first answer. A Sentinel that is
// down, or does not know the master, is skipped. Throws RedisIoError naming every Sentinel's
// failure when none answers. The Sentinels are reached over TCP without credentials, with the
// endpoint's timeouts.
RedisHostPort ResolveSentinelMaster(const RedisEndpoint& endpoint);

}  // namespace warmpool
