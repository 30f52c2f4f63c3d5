#include "sim/policy_spec.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "sim/shipped_settings.h"
#include "sim/workload.h"

namespace warmpool::sim {

int64_t PeakConcurrency(const Workload& w) {
  std::vector<std::pair<double, int>> events;
  events.reserve(w.tasks.size() * 2);
  for (const auto& t : w.tasks) {
    const double due = std::max(t.arrival_s, t.eta_s);
    events.emplace_back(due, 1);
    events.emplace_back(due + t.duration_s, -1);
  }
  std::sort(events.begin(), events.end());
  int64_t cur = 0, peak = 0;
  for (const auto& e : events) peak = std::max(peak, cur += e.second);
  return peak;
}

namespace {

// warmpool as manifests/base ships it (sim/shipped_settings.h): external-push, its
// pollingInterval, cooldownPeriod and initialCooldownPeriod, its HPA behavior, its trigger
// metadata under the user's --meta, its pod grace, the worker's --grace-seconds and
// --pod-deletion-cost. maxReplicas
// is the cluster's, as for every policy.
PolicySpec WarmpoolAsRecommended(const std::map<std::string, std::string>& wp_meta,
                                 int64_t max_replicas) {
  PolicySpec wp;
  wp.name = "warmpool";
  wp.kind = PolicyKind::kWarmpool;
  wp.meta = wp_meta;
  wp.keda.push = shipped::kPush;
  wp.keda.polling_s = shipped::kPollingIntervalS;
  wp.keda.cooldown_s = shipped::kCooldownPeriodS;
  wp.keda.initial_cooldown_s = shipped::kInitialCooldownPeriodS;
  wp.keda.min_replicas = shipped::kMinReplicaCount;
  wp.keda.max_replicas = max_replicas;
  wp.hpa.down_stabilization_s = shipped::kScaleDownStabilizationS;
  wp.hpa.down_percent = shipped::kScaleDownPercent;
  wp.hpa.up_stabilization_s = shipped::kScaleUpStabilizationS;
  wp.hpa.up_percent = shipped::kScaleUpPercent;
  wp.hpa.up_pods = shipped::kScaleUpPods;
  wp.hpa.period_s = shipped::kPolicyPeriodS;
  wp.grace_s = shipped::kTerminationGracePeriodS;
  wp.worker_grace_s = shipped::kWorkerGraceS;
  wp.visibility_timeout_s = shipped::kWorkerVisibilityTimeoutS;
  wp.deletion_cost_after_s = shipped::kPodDeletionCostAfterS;
  return wp;
}

}  // namespace

std::vector<PolicySpec> DefaultPolicies(const std::map<std::string, std::string>& meta,
                                        const Workload& workload, const ClusterConfig& cluster) {
  std::vector<PolicySpec> out;
  std::map<std::string, std::string> wp_meta = shipped::TriggerMetadata();
  for (const auto& [k, v] : meta) wp_meta[k] = v;
  if (!wp_meta.count("tasksPerReplica")) {
    wp_meta["tasksPerReplica"] = std::to_string(cluster.slots_per_pod);
  }
  // A deployment mirrors the autoscaler's scale-down-unneeded-time in this key (manifests/base),
  // so unless --meta says otherwise the policy knows the simulated cluster's.
  if (!meta.count("nodeUnneededSeconds")) {
    wp_meta["nodeUnneededSeconds"] = std::to_string(cluster.ca_unneeded_s);
  }
  int64_t max_replicas = 100;
  if (auto it = wp_meta.find("maxReplicas"); it != wp_meta.end()) {
    max_replicas = std::max<int64_t>(1, std::atoll(it->second.c_str()));
  }
  const PolicySpec wp = WarmpoolAsRecommended(wp_meta, max_replicas);
  out.push_back(wp);

  for (int64_t cooldown : {300, 60}) {
    PolicySpec k;
    k.name = "keda-redis-cd" + std::to_string(cooldown);
    k.kind = PolicyKind::kKedaRedis;
    k.keda.cooldown_s = cooldown;  // polling 30, listLength 5, HPA and grace defaults
    out.push_back(k);
  }

  PolicySpec ka = wp;
  ka.name = "keepalive-600";
  ka.meta["keepAlive"] = "600";
  ka.meta["prewarm"] = "off";
  ka.meta["etaPrewarm"] = "false";
  out.push_back(ka);

  PolicySpec off = wp;
  off.name = "warmpool-prewarm-off";
  off.meta["prewarm"] = "off";
  out.push_back(off);

  PolicySpec on1;
  on1.name = "always-on-1";
  on1.kind = PolicyKind::kAlwaysOn;
  on1.replicas = 1;
  on1.grace_s = wp.grace_s;
  out.push_back(on1);

  PolicySpec peak = on1;
  const int64_t peak_pods =
      (PeakConcurrency(workload) + cluster.slots_per_pod - 1) / cluster.slots_per_pod;
  peak.replicas = std::clamp<int64_t>(
      peak_pods, 1, std::min(max_replicas, cluster.max_nodes * cluster.gpus_per_node));
  peak.name = "always-on-peak";
  out.push_back(peak);

  PolicySpec oracle;
  oracle.name = "oracle";
  oracle.kind = PolicyKind::kOracle;
  oracle.meta = wp_meta;  // the same sizing rule (tasksPerReplica, drainSeconds, maxReplicas)
  oracle.keda = wp.keda;  // used by its "+hpa" strategies: the same KEDA + HPA as warmpool
  oracle.hpa = wp.hpa;
  oracle.grace_s = wp.grace_s;  // the same worker Deployment
  oracle.worker_grace_s = wp.worker_grace_s;
  oracle.visibility_timeout_s = wp.visibility_timeout_s;
  oracle.deletion_cost_after_s = wp.deletion_cost_after_s;
  PolicySpec blind = oracle;  // before `oracle`, which stays last
  blind.name = "oracle-durations";
  blind.oracle_lead_s = 0;  // knows durations on arrival, no future arrivals (sim/oracle.h)
  out.push_back(blind);
  out.push_back(oracle);
  return out;
}

Status ApplyScaledObjectOption(const std::string& key, const std::string& value, PolicySpec* p) {
  if (key == "push" || key == "measureDurations" || key == "podDeletionCost") {
    if (value != "true" && value != "false") {
      return Status::InvalidArgument("--scaledobject " + key + "=\"" + value + "\": true or false");
    }
    const bool on = value == "true";
    if (key == "podDeletionCost") {
      p->deletion_cost_after_s = on ? shipped::kPodDeletionCostAfterS : -1;
    } else {
      (key == "push" ? p->keda.push : p->measure_durations) = on;
    }
    return Status::Ok();
  }
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  // Every setting left is a time: at most a year, as a workload's (and past LLONG_MAX strtoll
  // would return LLONG_MAX).
  if (value.empty() || end != value.c_str() + value.size() || v < 0 ||
      static_cast<double>(v) > kMaxWorkloadSeconds) {
    return Status::InvalidArgument("--scaledobject " + key + "=\"" + value +
                                   "\": must be an integer from 0 to 31622400 (366 days)");
  }
  if (key == "pollingInterval" && v >= 1) {
    p->keda.polling_s = v;
  } else if (key == "cooldownPeriod") {
    p->keda.cooldown_s = v;
  } else if (key == "scaleDownStabilizationSeconds") {
    p->hpa.down_stabilization_s = v;
  } else if (key == "initialCooldownPeriod") {
    p->keda.initial_cooldown_s = v;
  } else if (key == "terminationGracePeriodSeconds") {
    p->grace_s = v;
  } else if (key == "graceSeconds") {
    p->worker_grace_s = v;
  } else {
    return Status::InvalidArgument("--scaledobject " + key + "=\"" + value +
                                   "\": unknown setting (pollingInterval >= 1, cooldownPeriod, "
                                   "initialCooldownPeriod, scaleDownStabilizationSeconds, "
                                   "terminationGracePeriodSeconds, graceSeconds, push, "
                                   "measureDurations, podDeletionCost)");
  }
  return Status::Ok();
}

std::map<std::string, std::string> DeployedSettings(const PolicySpec& p,
                                                    const ClusterConfig& cluster) {
  std::map<std::string, std::string> out;
  const auto put = [&out](const std::string& k, int64_t v) { out[k] = std::to_string(v); };
  if (p.kind != PolicyKind::kAlwaysOn) {
    put("pollingInterval", p.keda.polling_s);
    put("cooldownPeriod", p.keda.cooldown_s);
    put("initialCooldownPeriod", p.keda.initial_cooldown_s);
    put("minReplicaCount", p.keda.min_replicas);
    put("maxReplicaCount", p.keda.max_replicas);
    out["triggerType"] = p.kind == PolicyKind::kKedaRedis ? "redis"
                         : p.keda.push                    ? "external-push"
                                                          : "external";
    put("scaleDown.stabilizationWindowSeconds", p.hpa.down_stabilization_s);
    put("scaleDown.percent", p.hpa.down_percent);
    put("scaleUp.stabilizationWindowSeconds", p.hpa.up_stabilization_s);
    put("scaleUp.percent", p.hpa.up_percent);
    put("scaleUp.pods", p.hpa.up_pods);
    put("periodSeconds", p.hpa.period_s);
  }
  if (p.kind == PolicyKind::kKedaRedis) {
    put("metadata.listLength", p.list_length);
    put("metadata.activationListLength", p.activation_list_length);
  } else {
    for (const auto& [k, v] : p.meta) out["metadata." + k] = v;
  }
  put("terminationGracePeriodSeconds", p.grace_s);
  if (p.worker_grace_s >= 0) put("graceSeconds", p.worker_grace_s);
  if (p.kind != PolicyKind::kKedaRedis) {
    out["podDeletionCost"] = p.deletion_cost_after_s >= 0 ? "true" : "false";
  }
  put("visibilityTimeoutSeconds",
      p.visibility_timeout_s >= 0 ? p.visibility_timeout_s : cluster.visibility_timeout_s);
  return out;
}

}  // namespace warmpool::sim
