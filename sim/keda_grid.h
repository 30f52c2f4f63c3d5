#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/policy_spec.h"
#include "sim/sim_config.h"
#include "sim/workload.h"

namespace warmpool::sim {

// The settings an SRE tunes on KEDA's redis list scaler (HPA behavior left at the Kubernetes
// defaults: Celery's workers behind the HPA KEDA generates).
struct KedaGridPoint {
  int64_t list_length = 5;    // listLength
  int64_t cooldown_s = 300;   // cooldownPeriod
  int64_t polling_s = 30;     // pollingInterval
  int64_t grace_s = 30;       // terminationGracePeriodSeconds
  int64_t cron_replicas = 0;  // desiredReplicas of an office-hours cron trigger; 0 = none
};

// `keda-ll5-cd300-pi30-g30`, with `-cron<N>` when it has a cron floor. Pure.
std::string KedaGridName(const KedaGridPoint& point);

// The ScaledObject + Deployment of one grid point (kKedaRedis, activationListLength 0). Pure.
PolicySpec KedaGridPolicy(const KedaGridPoint& point);

// The longest task of a workload, in whole seconds rounded up. Pure.
int64_t LongestTaskSeconds(const Workload& w);

// The cron floor an SRE would set for office hours (Mon-Fri 09:00-17:00 on the simulated clock):
// the workload's mean ideal concurrency over those hours in pods, rounded, at least 1; 0 when
// the horizon has no office hours (W1's 4 hours from Monday 00:00). Pure.
int64_t OfficeHoursFloor(const Workload& w, const ClusterConfig& cluster);

// The grid: listLength 1/2/5/10 x cooldownPeriod 60/300/900 x pollingInterval 10/30 x grace 30 s
// (Kubernetes' default) and the longest task rounded up to a whole minute (when longer than
// 30 s) x without and with the office-hours cron floor (where the horizon has office hours).
// Pure.
std::vector<PolicySpec> KedaGrid(const Workload& w, const ClusterConfig& cluster);

}  // namespace warmpool::sim
