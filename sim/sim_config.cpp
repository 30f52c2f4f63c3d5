#include "sim/sim_config.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "sim/workload.h"

namespace warmpool::sim {

Status ApplyClusterOption(const std::string& key, const std::string& value, ClusterConfig* c) {
  // Upper bounds: counts the simulator and the policy's metadata can hold (maxNodes x
  // gpusPerNode and slotsPerPod become warmpool's maxReplicas and tasksPerReplica), and a year
  // for every time, as for a workload's.
  const std::map<std::string, double> most = {{"gpusPerNode", 64},
                                              {"maxNodes", 10'000},
                                              {"slotsPerPod", 10'000},
                                              {"pricePerNodeHour", 1e6}};
  const auto bound = most.find(key);
  const double max = bound != most.end() ? bound->second : kMaxWorkloadSeconds;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(v) || v < 0 ||
      v > max) {
    char text[32];
    std::snprintf(text, sizeof text, "%.10g", max);
    return Status::InvalidArgument("--cluster " + key + "=\"" + value +
                                   "\": must be a number from 0 to " + text);
  }
  const auto i = static_cast<int64_t>(std::llround(v));
  const std::map<std::string, double*> doubles = {{"pricePerNodeHour", &c->price_per_node_hour},
                                                  {"vmBootMedian", &c->vm_boot_median_s},
                                                  {"vmBootP95", &c->vm_boot_p95_s},
                                                  {"vmBootMax", &c->vm_boot_max_s},
                                                  {"driverMedian", &c->driver_median_s},
                                                  {"driverP95", &c->driver_p95_s},
                                                  {"imagePullSeconds", &c->image_pull_s},
                                                  {"modelLoadMin", &c->model_load_min_s},
                                                  {"modelLoadMax", &c->model_load_max_s}};
  const std::map<std::string, int64_t*> ints = {
      {"gpusPerNode", &c->gpus_per_node},
      {"maxNodes", &c->max_nodes},
      {"slotsPerPod", &c->slots_per_pod},
      {"billingMinimumSeconds", &c->billing_minimum_s},
      {"nodeDeleteSeconds", &c->node_delete_s},
      {"caScanSeconds", &c->ca_scan_s},
      {"caGpuBufferSeconds", &c->ca_gpu_buffer_s},
      {"caUnneededSeconds", &c->ca_unneeded_s},
      {"caDelayAfterAddSeconds", &c->ca_delay_after_add_s},
      {"visibilityTimeoutSeconds", &c->visibility_timeout_s}};
  if (auto it = doubles.find(key); it != doubles.end()) {
    *it->second = v;
  } else if (auto jt = ints.find(key); jt != ints.end()) {
    *jt->second = i;
  } else {
    return Status::InvalidArgument("--cluster " + key + "=\"" + value + "\": unknown setting");
  }
  if (c->gpus_per_node < 1 || c->max_nodes < 1 || c->slots_per_pod < 1 || c->ca_scan_s < 1 ||
      c->visibility_timeout_s < 1) {
    return Status::InvalidArgument("--cluster " + key + "=\"" + value +
                                   "\": gpusPerNode, maxNodes, slotsPerPod, caScanSeconds and "
                                   "visibilityTimeoutSeconds must be >= 1");
  }
  if (c->vm_boot_p95_s < c->vm_boot_median_s || c->driver_p95_s < c->driver_median_s ||
      c->model_load_max_s < c->model_load_min_s) {
    return Status::InvalidArgument("--cluster " + key + "=\"" + value +
                                   "\": a p95/max must not be below its median/min");
  }
  return Status::Ok();
}

}  // namespace warmpool::sim
