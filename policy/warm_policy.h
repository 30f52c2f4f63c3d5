#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "policy/scaler_metadata.h"

namespace warmpool::policy {

// What the probe measured for one ScaledObject's queues at one instant.
struct Observation {
  int64_t pending = 0;    // messages waiting in the queues' lists (all priority sub-lists)
  int64_t in_flight = 0;  // delivered, unacked, not scheduled (0 when countInFlight=false)
  int64_t scheduled = 0;  // unacked with an eta in the future (countdown / retry)
};

// Per-ScaledObject memory the policy carries between decisions (persisted by the caller).
struct PolicyState {};

// What the scaler tells KEDA.
struct Decision {
  bool active = false;           // IsActive
  int64_t desired_replicas = 0;  // GetMetrics value (HPA AverageValue target 1)
  std::string reason;            // short, human-readable: why this decision
};

bool operator==(const Decision& a, const Decision& b);

// Policy v1 (pure, no I/O, no clock reads):
//   work    = pending + in_flight
//   desired = min(maxReplicas, max(minWarmReplicas, ceil(work / tasksPerReplica)))
//   active  = work > activationBacklog || minWarmReplicas > 0
Decision Decide(const ScalerMetadata& spec, const Observation& obs, const PolicyState& state,
                std::chrono::system_clock::time_point now);

}  // namespace warmpool::policy
