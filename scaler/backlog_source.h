#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "policy/policy_state.h"
#include "scaler/backlog.h"

namespace warmpool::scaler {

// Where ScalerCore's I/O for one probe target goes: its backlog and its shared policy state. The
// real one is RedisBacklogSource (backlog_reader.h); tests give the core a fake, so the core's
// own logic (run-time measurement, policy state, decisions, errors) is tested without Redis.
// Implementations are called from the probe's reader threads, several at once: thread-safe.
class BacklogSource {
 public:
  using Deadline = std::chrono::steady_clock::time_point;
  using StateUpdate = std::function<policy::PolicyState(const policy::PolicyState&)>;

  // One visit to a target: one connection, held for the visit's round trips, which all end by
  // the deadline given to Open. Every call throws RedisError (RedisTimeoutError once the
  // deadline passed) rather than return a guessed value.
  class Session {
   public:
    virtual ~Session() = default;
    // The target's backlog now (ReadBacklog in backlog_reader.h); taken_at = `now`.
    virtual BacklogReading ReadBacklog(std::chrono::system_clock::time_point now) = 0;
    // Applies `update` to the shared policy state at `key`, kept for `ttl`; returns the stored
    // result (UpdatePolicyState in policy_state_store.h).
    virtual policy::PolicyState UpdatePolicyState(const std::string& key, std::chrono::seconds ttl,
                                                  const StateUpdate& update) = 0;
  };

  virtual ~BacklogSource() = default;
  // Starts a visit to `target` (its pool, resolved by ConnectionRegistry). Throws RedisError when
  // no connection is to be had by `deadline`.
  virtual std::unique_ptr<Session> Open(const ProbeTarget& target, Deadline deadline) = 0;
};

}  // namespace warmpool::scaler
