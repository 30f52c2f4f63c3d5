#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/sim_config.h"

namespace warmpool::sim {

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
  double boot_gpu_hours = 0;      // VM create to GPU allocatable
  double busy_gpu_hours = 0;      // running tasks that completed
  double killed_gpu_hours = 0;    // partial runs of tasks SIGKILLed at the pod's grace deadline
  double requeued_gpu_hours = 0;  // partial runs of tasks the worker requeued at its own grace
  double delete_gpu_hours = 0;    // node deletion
  double idle_gpu_hours = 0;      // the rest: pod start, warm idle, empty nodes awaiting scale-down
  // Runnable -> started, s; a task that was killed or requeued adds the time from then to its
  // next start.
  double wait_p50 = 0, wait_p95 = 0, wait_p99 = 0, wait_max = 0;
  int64_t tasks = 0;
  int64_t unfinished = 0;      // not started by the horizon (their wait counts up to the horizon)
  int64_t cold_starts = 0;     // times work became runnable while no worker was ready
  int64_t killed_tasks = 0;    // SIGKILLed mid-run; back only after the visibility timeout
  int64_t requeued_tasks = 0;  // requeued by the worker at its --grace-seconds; back at once
  int64_t replica_changes = 0;
  double reversals_per_hour = 0;  // direction changes of spec.replicas per simulated hour
  int64_t nodes_created = 0;
  double makespan_s = 0;  // first arrival to last completion
  double horizon_hours = 0;
  // The Kubernetes settings the policy was simulated with (ScaledObject, HPA behavior, trigger
  // metadata as `metadata.<key>`, pod and worker), by their manifest names.
  std::map<std::string, std::string> deployed_with;
  std::vector<TimelineSample> timeline;
};

// The raw figures the models add to while a run goes (GPU-seconds, waits, counts), in the order
// events happen; Summarize turns them into a SimResult.
struct RunTally {
  double billed_gpu_s = 0;  // node lifetimes x GPUs per node (cluster_model's billing)
  double boot_gpu_s = 0;
  double delete_gpu_s = 0;
  double busy_gpu_s = 0;      // task run time / slots per pod (celery_model)
  double killed_gpu_s = 0;    // partial runs lost to SIGKILL
  double requeued_gpu_s = 0;  // partial runs lost to the worker's requeue at its grace
  std::vector<double> waits;  // one per task: runnable -> started, or -> horizon if never started
  int64_t unfinished = 0;
  int64_t last_completion = 0;
  int64_t nodes_created = 0;
  int64_t killed_tasks = 0;
  int64_t requeued_tasks = 0;
  int64_t cold_starts = 0;
  int64_t replica_changes = 0;
  int64_t reversals = 0;
};

// The q-quantile (0 <= q <= 1) of v by the nearest-rank rule; reorders v. 0 when v is empty.
double Percentile(std::vector<double>& v, double q);

// The per-run figures of one policy: GPU-hours by category, dollars at the cluster's price, wait
// percentiles, counts. first_arrival_s is the first task's arrival (for the makespan); tasks the
// workload's size. Consumes tally.waits and timeline. Pure.
SimResult Summarize(const std::string& policy, RunTally& tally, const ClusterConfig& cluster,
                    int64_t horizon_s, int64_t tasks, int64_t first_arrival_s,
                    std::vector<TimelineSample> timeline);

}  // namespace warmpool::sim
