#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace warmpool::worker {

// --pod-deletion-cost, the pure part: what the worker writes on its own pod, and where. A
// ReplicaSet scaling in deletes the pods with the lowest controller.kubernetes.io/pod-deletion-cost
// first (KEP-2255,
// https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#pod-deletion-cost), so an
// idle worker goes before a busy one.

inline constexpr char kPodDeletionCostAnnotation[] = "controller.kubernetes.io/pod-deletion-cost";
// A task counts only once it has run this long: a shorter one is over before a scale-in matters,
// and sub-second tasks then cause no API writes at all.
inline constexpr std::chrono::seconds kPodCostMinRunning{10};

// The cost: how many of the running tasks (their start times) have run for at least
// `min_running` at `now`. 0 = idle.
int PodDeletionCost(const std::vector<std::chrono::steady_clock::time_point>& running_since,
                    std::chrono::steady_clock::time_point now,
                    std::chrono::steady_clock::duration min_running = kPodCostMinRunning);

// The JSON merge patch (application/merge-patch+json) that sets the annotation to `cost`.
std::string PodDeletionCostPatch(int cost);

// Where and how to reach the API server for the worker's own pod.
struct KubeApiConfig {
  std::string base_url;    // "https://10.0.0.1:443", or WARMPOOL_KUBE_API; no trailing '/'
  std::string token_file;  // bearer token, re-read at each request (projected tokens rotate)
  std::string ca_file;     // CA bundle; empty = the system's (an https WARMPOOL_KUBE_API only)
  std::string pod_namespace;
  std::string pod_name;

  // "/api/v1/namespaces/<ns>/pods/<name>"
  std::string PodPath() const;
};

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

using EnvMap = std::map<std::string, std::string>;
// The contents of a file, or nullopt when it cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// The in-cluster configuration from the environment: POD_NAME and POD_NAMESPACE (downward API),
// KUBERNETES_SERVICE_HOST/PORT (https) and the service account's token and ca.crt. Test/dev
// overrides: WARMPOOL_KUBE_API (a base URL, http:// allowed) and WARMPOOL_KUBE_TOKEN_FILE. An
// empty value counts as unset. InvalidArgument naming everything missing or malformed.
Status ResolveKubeApiConfig(const EnvMap& env, const FileReader& read_file, KubeApiConfig* out);

}  // namespace warmpool::worker
