// Observations for the policy's tests: what the scaler reads from Redis, reduced to the counts.
#pragma once

#include <cstdint>

#include "policy/policy_state.h"

namespace warmpool::policy::test {

// `pending` tasks queued and `in_flight` running; nothing else measured.
inline Observation Work(int64_t pending, int64_t in_flight = 0) {
  Observation o;
  o.pending = pending;
  o.in_flight = in_flight;
  return o;
}

}  // namespace warmpool::policy::test
