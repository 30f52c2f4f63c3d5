#include "sim/results.h"

#include <algorithm>
#include <cmath>

namespace warmpool::sim {

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

SimResult Summarize(const std::string& policy, RunTally& tally, const ClusterConfig& cluster,
                    int64_t horizon_s, int64_t tasks, int64_t first_arrival_s,
                    std::vector<TimelineSample> timeline) {
  SimResult r;
  r.policy = policy;
  r.horizon_hours = static_cast<double>(horizon_s) / 3600;
  r.billed_gpu_hours = tally.billed_gpu_s / 3600;
  r.billed_dollars = tally.billed_gpu_s / 3600 / static_cast<double>(cluster.gpus_per_node) *
                     cluster.price_per_node_hour;
  r.boot_gpu_hours = tally.boot_gpu_s / 3600;
  r.busy_gpu_hours = tally.busy_gpu_s / 3600;
  r.killed_gpu_hours = tally.killed_gpu_s / 3600;
  r.requeued_gpu_hours = tally.requeued_gpu_s / 3600;
  r.delete_gpu_hours = tally.delete_gpu_s / 3600;
  r.idle_gpu_hours =
      std::max(0.0, r.billed_gpu_hours - r.boot_gpu_hours - r.busy_gpu_hours - r.killed_gpu_hours -
                        r.requeued_gpu_hours - r.delete_gpu_hours);
  r.tasks = tasks;
  r.unfinished = tally.unfinished;
  std::vector<double>& waits = tally.waits;
  r.wait_p50 = Percentile(waits, 0.50);
  r.wait_p95 = Percentile(waits, 0.95);
  r.wait_p99 = Percentile(waits, 0.99);
  r.wait_max = waits.empty() ? 0 : *std::max_element(waits.begin(), waits.end());
  r.cold_starts = tally.cold_starts;
  r.killed_tasks = tally.killed_tasks;
  r.requeued_tasks = tally.requeued_tasks;
  r.replica_changes = tally.replica_changes;
  r.reversals_per_hour = static_cast<double>(tally.reversals) / r.horizon_hours;
  r.nodes_created = tally.nodes_created;
  if (tasks > 0 && tally.last_completion > 0) {
    r.makespan_s = static_cast<double>(tally.last_completion - first_arrival_s);
  }
  r.timeline = std::move(timeline);
  return r;
}

}  // namespace warmpool::sim
