#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "policy/policy_state.h"

namespace warmpool {
class RedisConnection;
}

namespace warmpool::scaler {

// Applies `update` to the policy state stored at `key` as one optimistic transaction
// (WATCH/GET, update, MULTI/SET EX/EXEC, retried on conflict), so scaler replicas sharing a Redis
// apply observations to one history and decide the same. A missing or unreadable stored state
// starts from a default state (logged). Returns the stored result. Throws RedisError on failure;
// every round trip shares one `deadline` (RedisTimeoutError once it passed), so the whole
// transaction, retries included, ends by it.
policy::PolicyState UpdatePolicyState(
    RedisConnection& conn, const std::string& key, std::chrono::seconds ttl,
    const std::function<policy::PolicyState(const policy::PolicyState&)>& update,
    std::chrono::steady_clock::time_point deadline);

// "<state_prefix>state:<keyPrefix><queues>:<fnv1a of the rest of the identity>". Pure.
std::string PolicyStateKey(const std::string& state_prefix, const std::string& key_prefix,
                           const std::string& queues_joined, const std::string& identity);

}  // namespace warmpool::scaler
