#pragma once

#include <chrono>
#include <memory>

#include "scaler/backlog.h"
#include "scaler/backlog_source.h"

namespace warmpool {
class RedisConnection;
}

namespace warmpool::scaler {

// Measures `target` with one pipelined round trip: LLEN of every queue's priority sub-lists and,
// when target.read_unacked, HVALS of kombu's `unacked` hash and LRANGE of every sub-list's last
// policy::kPendingSample messages (BacklogReading.pending_sample). Throws RedisError subclasses on
// any Redis failure (never returns a guessed 0), RedisTimeoutError when `deadline` passes.
BacklogReading ReadBacklog(RedisConnection& conn, const ProbeTarget& target,
                           std::chrono::system_clock::time_point now,
                           std::chrono::steady_clock::time_point deadline);

// The scaler's BacklogSource: a session holds one connection from target.pool, reads with
// ReadBacklog and updates the state with UpdatePolicyState (policy_state_store.h). Stateless.
class RedisBacklogSource final : public BacklogSource {
 public:
  std::unique_ptr<Session> Open(const ProbeTarget& target, Deadline deadline) override;
};

}  // namespace warmpool::scaler
