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
  int64_t grace_s = 30;                // pod terminationGracePeriodSeconds
  int64_t list_length = 5;             // kKedaRedis: listLength
  int64_t activation_list_length = 0;  // kKedaRedis: activationListLength
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

struct TimelineSample {
  int64_t t = 0;
  int64_t queue = 0;       // runnable tasks waiting (LLEN)
  int64_t replicas = 0;    // Deployment spec.replicas
  int64_t ready_pods = 0;  // ready, not terminating
  int64_t busy = 0;        // tasks running
  int64_t nodes = 0;       // nodes alive (booting, ready or deleting): what is billed
};

struct SimResult {
  std::string policy;
  std::string variant;  // kOracle: which clairvoyant strategy was cheaper ("prewarm"/"react")
  double billed_gpu_hours = 0;
  double billed_dollars = 0;
  double boot_gpu_hours = 0;    // VM create to GPU allocatable
  double busy_gpu_hours = 0;    // running tasks that completed
  double killed_gpu_hours = 0;  // partial runs of tasks killed at the grace deadline
  double delete_gpu_hours = 0;  // node deletion
  double idle_gpu_hours = 0;    // the rest: pod start, warm idle, empty nodes awaiting scale-down
  double wait_p50 = 0, wait_p95 = 0, wait_p99 = 0, wait_max = 0;  // runnable -> started, s
  int64_t tasks = 0;
  int64_t unfinished = 0;   // not started by the horizon (their wait counts up to the horizon)
  int64_t cold_starts = 0;  // times work became runnable while no worker was ready
  int64_t killed_tasks = 0;
  int64_t replica_changes = 0;
  double reversals_per_hour = 0;  // direction changes of spec.replicas per simulated hour
  int64_t nodes_created = 0;
  double makespan_s = 0;  // first arrival to last completion
  double horizon_hours = 0;
  std::vector<TimelineSample> timeline;
};

// Runs one policy over one workload on the given cluster, seeded (cluster randomness and
// controller phases). Deterministic for the same inputs. InvalidArgument when the warmpool
// metadata does not parse. timeline_step_s = 0 records no timeline.
Status Simulate(const Workload& workload, const PolicySpec& policy, const ClusterConfig& cluster,
                uint64_t seed, int64_t timeline_step_s, SimResult* out);

// The policies `warmpool-sim run` compares, built from the warmpool metadata overrides:
// warmpool (as its manifests recommend), keda-redis-cd300, keda-redis-cd60, keepalive-600,
// warmpool-prewarm-off (the same without the learned pre-warm),
// always-on-1, always-on-peak (peak = the workload's ideal concurrency, capped at maxReplicas) and
// oracle.
std::vector<PolicySpec> DefaultPolicies(const std::map<std::string, std::string>& meta,
                                        const Workload& workload, const ClusterConfig& cluster);

// Overrides one of warmpool's Kubernetes settings (what-if runs; baselines are never changed):
// pollingInterval, cooldownPeriod, scaleDownStabilizationSeconds, terminationGracePeriodSeconds
// (integers >= 0), push or measureDurations (true/false: whether the scaler reports measured
// task durations). InvalidArgument names the key and value.
Status ApplyScaledObjectOption(const std::string& key, const std::string& value, PolicySpec* p);

}  // namespace warmpool::sim
