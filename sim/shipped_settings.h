#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace warmpool::sim::shipped {

// What manifests/base ships, so that `warmpool-sim run` simulates the warmpool row as deployed.
// tests/integration/manifests/check_sim_shipped.py fails when these drift from the YAML.
// maxReplicaCount / maxReplicas and tasksPerReplica (-c) are not taken from the manifests: they
// are sized to the cluster (maxNodes, slotsPerPod), the same for every policy of a run.

// manifests/base/scaledobject.yaml
inline constexpr int64_t kPollingIntervalS = 10;
inline constexpr int64_t kCooldownPeriodS = 60;
inline constexpr int64_t kInitialCooldownPeriodS = 60;
inline constexpr int64_t kMinReplicaCount = 0;
inline constexpr bool kPush = true;  // trigger type external-push
// advanced.horizontalPodAutoscalerConfig.behavior
inline constexpr int64_t kScaleDownStabilizationS = 900;
inline constexpr int64_t kScaleDownPercent = 100;
inline constexpr int64_t kScaleUpStabilizationS = 0;
inline constexpr int64_t kScaleUpPercent = 100;
inline constexpr int64_t kScaleUpPods = 4;
inline constexpr int64_t kPolicyPeriodS = 15;  // periodSeconds of every policy above

// manifests/base/worker-deployment.yaml
inline constexpr int64_t kTerminationGracePeriodS = 86430;
inline constexpr int64_t kWorkerGraceS = 86400;           // --grace-seconds
inline constexpr int64_t kWorkerVisibilityTimeoutS = -1;  // --visibility-timeout; -1 = not set
// --pod-deletion-cost is set: the worker annotates its pod with
// controller.kubernetes.io/pod-deletion-cost, the number of its tasks that have run at least this
// long (worker/pod_deletion_cost.h, kPodCostMinRunning), so the ReplicaSet scales idle pods in
// first.
inline constexpr int64_t kPodDeletionCostAfterS = 10;

// The trigger metadata keys of scaledobject.yaml that the policy reads (connection, queue and
// priority keys have no effect in the simulator; tasksPerReplica and maxReplicas see above).
std::map<std::string, std::string> TriggerMetadata();

}  // namespace warmpool::sim::shipped
