#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "policy/policy_state.h"
#include "policy/scaler_metadata.h"

namespace warmpool::policy {

// Decision.reason vocabulary: short, stable (logged on change and used as a Prometheus label).
inline constexpr std::string_view kReasonBacklog = "backlog";         // sized from the backlog
inline constexpr std::string_view kReasonCapped = "backlog-capped";   // capped at maxReplicas
inline constexpr std::string_view kReasonDrain = "drain";             // sized by drainSeconds
inline constexpr std::string_view kReasonInFlight = "in-flight";      // only running tasks left
inline constexpr std::string_view kReasonWarmFloor = "warm-floor";    // minWarmReplicas
inline constexpr std::string_view kReasonWarmWindow = "warm-window";  // a warmWindows floor
inline constexpr std::string_view kReasonEtaPrewarm = "eta-prewarm";  // scheduled task soon
inline constexpr std::string_view kReasonKeepAlive = "keep-alive";    // idle, within keep-alive
inline constexpr std::string_view kReasonPrewarm = "prewarm";         // histogram predicts work
inline constexpr std::string_view kReasonBelowActivation =
    "below-activation";                                  // work <= activationBacklog
inline constexpr std::string_view kReasonIdle = "idle";  // nothing to do: scale to 0

// What the scaler tells KEDA.
struct Decision {
  bool active = false;           // IsActive
  int64_t desired_replicas = 0;  // GetMetrics value (HPA AverageValue target 1)
  std::string reason;            // one of the kReason* values above
};

bool operator==(const Decision& a, const Decision& b);

// Break-even time of one cold start, in seconds (ski rental, shared/reference/scaling.md §4):
//   coldStartSeconds * (1 + waitCostPerHour / replicaCostPerHour * max(1, state.burst_work))
// i.e. the GPU time a cold start bills plus the price of the expected burst waiting for it.
double BreakEvenSeconds(const ScalerMetadata& spec, const PolicyState& state);

// The keep-alive after work ends, in seconds. `keepAlive: N` gives N. `auto`:
//   - if the gap histogram is representative and, given the time the last busy period already
//     took, the next burst is at least 50 % likely within the break-even time B: min(B, p99 gap
//     left) (the next arrival is likely soon: stay warm);
//   - otherwise max(0, B - nodeUnneededSeconds): the node the pod leaves stays billed for
//     nodeUnneededSeconds anyway, and a come-back within it costs only a pod start.
double KeepAliveSeconds(const ScalerMetadata& spec, const PolicyState& state);

// The pre-warm lead in seconds: max(coldStartSeconds, the measured cold start in `state`).
double PrewarmLeadSeconds(const ScalerMetadata& spec, const PolicyState& state);

// Policy v2 (pure, no I/O, no clock reads). Call Observe(state, ...) with the same observation
// first. Rules, in order (the desired count is the max of the rules that apply, capped at
// maxReplicas but never below what in-flight tasks need):
//   1. work = pending + in_flight > activationBacklog: active; desired = ceil(work /
//      tasksPerReplica), or with drainSeconds D (default coldStartSeconds / 2) and a duration S
//      (measured, else taskSeconds): ceil(max(in_flight, (in_flight * S / 2 + pending * S) / D) /
//      tasksPerReplica) (work left, running tasks half done), at least 1 and never more than
//      ceil(work / tasksPerReplica).
//   2. anything in flight: active (never inactive while tasks run); desired >= ceil(in_flight /
//      tasksPerReplica).
//   3. warm floor: max(minWarmReplicas, the warmWindows floor at `now`) > 0: active.
//   4. ETA pre-warm: the earliest scheduled eta is within the pre-warm lead: active, >= 1.
//   5. keep-alive: idle for less than KeepAliveSeconds since work ended: active, >= 1.
//   6. learned pre-warm: the histogram is representative, its 5th-99th percentile spread is sharp
//      (<= max(B, head / 2)) and now is in [busy_since + head - lead, busy_since + p99], lead =
//      PrewarmLeadSeconds: active with the replicas the expected burst needs (state.burst_work
//      tasks, drain-sized when a duration is known; >= 1).
//   7. otherwise inactive; desired = ceil(work / tasksPerReplica) (0 when idle), as v1.
Decision Decide(const ScalerMetadata& spec, const Observation& obs, const PolicyState& state,
                std::chrono::system_clock::time_point now);

}  // namespace warmpool::policy
