#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/sim_config.h"
#include "sim/workload.h"

namespace warmpool::sim {

enum class PolicyKind {
  kWarmpool,   // warmpool-scaler's policy (Observe + Decide) behind KEDA external(-push) + HPA
  kKedaRedis,  // KEDA's redis list scaler: LLEN only, listLength target, behind KEDA + HPA
  kAlwaysOn,   // a fixed Deployment of `replicas` pods, warm from t = 0
  kOracle,     // perfect foresight of arrivals and durations, same cluster (see docs)
};

// One policy of a run, with the Kubernetes objects it is deployed with.
struct PolicySpec {
  std::string name;
  PolicyKind kind = PolicyKind::kWarmpool;
  std::map<std::string, std::string> meta;  // warmpool: ScaledObject trigger metadata
  KedaConfig keda;
  HpaConfig hpa;
  int64_t grace_s = 30;               // pod terminationGracePeriodSeconds (then SIGKILL)
  int64_t worker_grace_s = -1;        // warmpool-worker --grace-seconds; -1: waits to SIGKILL
  int64_t visibility_timeout_s = -1;  // worker --visibility-timeout; -1: the cluster's
  // warmpool-worker --pod-deletion-cost: a task counts in its pod's deletion cost once it has run
  // this long (sim/shipped_settings.h); -1: the flag is off (Celery's own worker has none).
  int64_t deletion_cost_after_s = -1;
  int64_t list_length = 5;             // kKedaRedis: listLength
  int64_t activation_list_length = 0;  // kKedaRedis: activationListLength
  int64_t cron_replicas = 0;           // kKedaRedis: + office-hours cron trigger of N; 0 = none
  int64_t replicas = 0;                // kAlwaysOn: N
  bool measure_durations = true;       // kWarmpool: the scaler reports measured task durations
  int64_t keda_phase_s = -1;    // KEDA polls when (t + phase) % pollingInterval == 0; -1 = random
  int64_t hpa_phase_s = -1;     // likewise for the HPA sync; -1 = random
  int64_t oracle_lead_s = -1;   // kOracle: pre-start lead; -1 = the median cold start
  int64_t oracle_hold_s = 0;    // kOracle: keep what was needed in the last N seconds
  bool oracle_via_hpa = false;  // kOracle: feed its count to KEDA + HPA instead of the Deployment
  // kOracle: size like warmpool's cold-start-aware drain rule (bursts drained within a cold start
  // + drainSeconds on the pool ready for them; new replicas only for what the ready ones leave)
  // instead of draining every backlog within drainSeconds.
  bool oracle_lean = false;
};

// The policies `warmpool-sim run` compares, built from the warmpool metadata overrides:
// warmpool (as its manifests recommend), keda-redis-cd300, keda-redis-cd60, keepalive-600,
// warmpool-prewarm-off (the same without the learned pre-warm),
// always-on-1, always-on-peak (peak = the workload's ideal concurrency, capped at maxReplicas),
// oracle-durations and oracle (sim/oracle.h).
std::vector<PolicySpec> DefaultPolicies(const std::map<std::string, std::string>& meta,
                                        const Workload& workload, const ClusterConfig& cluster);

// Overrides one of warmpool's Kubernetes settings (what-if runs; baselines are never changed):
// pollingInterval, cooldownPeriod, initialCooldownPeriod, scaleDownStabilizationSeconds,
// terminationGracePeriodSeconds, graceSeconds (the worker's --grace-seconds) (integers >= 0),
// push, measureDurations (true/false: whether the scaler reports measured task durations) or
// podDeletionCost (true/false: the worker's --pod-deletion-cost). InvalidArgument names the key and
// value.
Status ApplyScaledObjectOption(const std::string& key, const std::string& value, PolicySpec* p);

// The settings `p` is simulated with, by their manifest names (ScaledObject, HPA behavior,
// `metadata.<key>`, pod and worker), for the report's `deployedWith`. Pure.
std::map<std::string, std::string> DeployedSettings(const PolicySpec& p,
                                                    const ClusterConfig& cluster);

// Highest ideal concurrency of a workload (every task started the moment it is runnable). Pure.
int64_t PeakConcurrency(const Workload& w);

}  // namespace warmpool::sim
