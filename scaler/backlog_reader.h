#pragma once

#include <chrono>

#include "scaler/backlog.h"

namespace warmpool {
class RedisConnection;
}

namespace warmpool::scaler {

// Measures `target` with one pipelined round trip: LLEN of every queue's priority sub-lists and,
// when target.read_unacked, HVALS of kombu's `unacked` hash. Throws RedisError subclasses on any
// Redis failure (never returns a guessed 0), RedisTimeoutError when `deadline` passes.
BacklogReading ReadBacklog(RedisConnection& conn, const ProbeTarget& target,
                           std::chrono::system_clock::time_point now,
                           std::chrono::steady_clock::time_point deadline);

}  // namespace warmpool::scaler
