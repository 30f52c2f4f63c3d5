#include "policy/warm_policy.h"

#include <algorithm>

namespace warmpool::policy {

bool operator==(const Decision& a, const Decision& b) {
  return a.active == b.active && a.desired_replicas == b.desired_replicas && a.reason == b.reason;
}

Decision Decide(const ScalerMetadata& spec, const Observation& obs, const PolicyState& /*state*/,
                std::chrono::system_clock::time_point /*now*/) {
  const int64_t work = obs.pending + obs.in_flight;
  const int64_t for_work = (work + spec.tasks_per_replica - 1) / spec.tasks_per_replica;
  Decision d;
  d.desired_replicas = std::min(spec.max_replicas, std::max(spec.min_warm_replicas, for_work));
  d.active = work > spec.activation_backlog || spec.min_warm_replicas > 0;
  if (for_work > spec.max_replicas) {
    d.reason = "backlog capped at maxReplicas";
  } else if (work > spec.activation_backlog) {
    d.reason = obs.in_flight > 0 && obs.pending == 0 ? "tasks in flight" : "backlog";
  } else if (spec.min_warm_replicas > 0) {
    d.reason = "warm floor (minWarmReplicas)";
  } else if (work > 0) {
    d.reason = "backlog at or below activationBacklog";
  } else {
    d.reason = "idle";
  }
  return d;
}

}  // namespace warmpool::policy
