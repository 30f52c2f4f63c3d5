#include "sim/sim_report.h"

#include <cstdio>

#include <nlohmann/json.hpp>

namespace warmpool::sim {

std::string RunReportJson(const std::string& workload, uint64_t seed, const ClusterConfig& c,
                          const std::vector<SimResult>& results, bool with_timeline) {
  nlohmann::json j;
  j["workload"] = workload;
  j["seed"] = seed;
  j["cluster"] = {{"gpusPerNode", c.gpus_per_node},
                  {"maxNodes", c.max_nodes},
                  {"slotsPerPod", c.slots_per_pod},
                  {"pricePerNodeHour", c.price_per_node_hour},
                  {"vmBootMedian", c.vm_boot_median_s},
                  {"vmBootP95", c.vm_boot_p95_s},
                  {"driverMedian", c.driver_median_s},
                  {"caUnneededSeconds", c.ca_unneeded_s},
                  {"caDelayAfterAddSeconds", c.ca_delay_after_add_s},
                  {"caGpuBufferSeconds", c.ca_gpu_buffer_s},
                  {"imagePullSeconds", c.image_pull_s},
                  {"visibilityTimeoutSeconds", c.visibility_timeout_s}};
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json p = {{"policy", r.policy},
                        {"billedGpuHours", r.billed_gpu_hours},
                        {"billedDollars", r.billed_dollars},
                        {"bootGpuHours", r.boot_gpu_hours},
                        {"busyGpuHours", r.busy_gpu_hours},
                        {"idleGpuHours", r.idle_gpu_hours},
                        {"deleteGpuHours", r.delete_gpu_hours},
                        {"killedGpuHours", r.killed_gpu_hours},
                        {"requeuedGpuHours", r.requeued_gpu_hours},
                        {"waitP50", r.wait_p50},
                        {"waitP95", r.wait_p95},
                        {"waitP99", r.wait_p99},
                        {"waitMax", r.wait_max},
                        {"coldStarts", r.cold_starts},
                        {"killedTasks", r.killed_tasks},
                        {"requeuedTasks", r.requeued_tasks},
                        {"reversalsPerHour", r.reversals_per_hour},
                        {"replicaChanges", r.replica_changes},
                        {"nodesCreated", r.nodes_created},
                        {"tasks", r.tasks},
                        {"unfinished", r.unfinished},
                        {"makespanSeconds", r.makespan_s},
                        {"horizonHours", r.horizon_hours}};
    if (!r.variant.empty()) p["variant"] = r.variant;
    if (!r.deployed_with.empty()) p["deployedWith"] = r.deployed_with;
    if (with_timeline) {
      nlohmann::json t = nlohmann::json::array();
      for (const auto& s : r.timeline) {
        t.push_back({s.t, s.queue, s.replicas, s.ready_pods, s.busy, s.nodes});
      }
      p["timelineColumns"] = {"t", "queue", "replicas", "readyPods", "busy", "nodes"};
      p["timeline"] = std::move(t);
    }
    policies.push_back(std::move(p));
  }
  j["policies"] = std::move(policies);
  return j.dump(with_timeline ? -1 : 2);
}

std::string RunReportTable(const std::string& workload, uint64_t seed,
                           const std::vector<SimResult>& results) {
  std::string out = "workload " + workload + ", seed " + std::to_string(seed) + "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-18s %10s %9s %8s %8s %8s %6s %7s %8s %8s\n", "policy",
                "GPU-h", "$", "waitP50", "waitP95", "waitP99", "cold", "killed", "requeued",
                "rev/h");
  out += line;
  for (const auto& r : results) {
    std::snprintf(
        line, sizeof line, "%-18s %10.2f %9.2f %8.0f %8.0f %8.0f %6lld %7lld %8lld %8.2f\n",
        r.policy.c_str(), r.billed_gpu_hours, r.billed_dollars, r.wait_p50, r.wait_p95, r.wait_p99,
        static_cast<long long>(r.cold_starts), static_cast<long long>(r.killed_tasks),
        static_cast<long long>(r.requeued_tasks), r.reversals_per_hour);
    out += line;
  }
  return out;
}

}  // namespace warmpool::sim
