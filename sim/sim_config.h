#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"

namespace warmpool::sim {

// The simulated cluster: the same for every policy in a run (fairness rule). Defaults model an
// AKS node pool of Standard_NC4as_T4_v3 (1 x T4) with cluster-autoscaler defaults; every number
// and its source is listed in docs/SCALING.md. Times in seconds.
struct ClusterConfig {
  int64_t gpus_per_node = 1;           // `gpusPerNode`
  int64_t max_nodes = 100;             // `maxNodes`: node pool maximum
  int64_t slots_per_pod = 1;           // `slotsPerPod`: tasks one worker pod runs at once
  double price_per_node_hour = 0.526;  // `pricePerNodeHour`: $ (NC4as_T4_v3 pay-as-you-go)
  int64_t billing_minimum_s = 0;       // `billingMinimumSeconds`: 0 (Azure per-second); AWS 60
  double vm_boot_median_s = 240;       // `vmBootMedian`: VM create to node Ready (lognormal)
  double vm_boot_p95_s = 600;          // `vmBootP95`
  double vm_boot_max_s = 900;          // `vmBootMax`: CA max-node-provision-time caps the tail
  double driver_median_s = 90;         // `driverMedian`: Ready to GPU allocatable (lognormal)
  double driver_p95_s = 180;           // `driverP95`
  int64_t node_delete_s = 60;          // `nodeDeleteSeconds`: drain + VM delete, still billed
  int64_t ca_scan_s = 10;              // `caScanSeconds`: --scan-interval
  int64_t ca_gpu_buffer_s = 30;        // `caGpuBufferSeconds`: unschedulablePodWithGpuTimeBuffer
  int64_t ca_unneeded_s = 600;         // `caUnneededSeconds`: --scale-down-unneeded-time
  int64_t ca_delay_after_add_s = 600;  // `caDelayAfterAddSeconds`: --scale-down-delay-after-add
  double image_pull_s = 67;            // `imagePullSeconds`: 10 GB at 150 MB/s; 0 once cached
  double model_load_min_s = 20;        // `modelLoadMin`: uniform model load on pod start
  double model_load_max_s = 90;        // `modelLoadMax`
  // `visibilityTimeoutSeconds`: a task whose worker was SIGKILLed stays in kombu's `unacked` hash
  // until a live consumer's restore_visible sweep finds it older than this (kombu Redis
  // transport visibility_timeout, default 3600 s).
  int64_t visibility_timeout_s = 3600;
  int64_t ca_phase_s = -1;  // CA scans when (t + phase) % caScanSeconds == 0; -1 = random
};

// Applies `key=value` overrides (the camelCase names above) for what-if runs. InvalidArgument
// names the key and value. Pure.
Status ApplyClusterOption(const std::string& key, const std::string& value, ClusterConfig* c);

// KEDA operator settings of one ScaledObject.
struct KedaConfig {
  int64_t polling_s = 30;    // pollingInterval
  int64_t cooldown_s = 300;  // cooldownPeriod (N -> 0 only)
  // initialCooldownPeriod: before any active result (no lastActiveTime) KEDA scales to zero
  // only this long after the ScaledObject was created (t = 0). KEDA's default is 0.
  int64_t initial_cooldown_s = 0;
  int64_t min_replicas = 0;    // minReplicaCount
  int64_t max_replicas = 100;  // maxReplicaCount
  bool push = false;           // trigger type external-push (StreamIsActive)
  // The scaler re-sends a true this often (refreshing lastActive); 0 = only on change, as
  // warmpool-scaler's --stream-resend-s default.
  int64_t push_resend_s = 0;
};

// The HPA KEDA generates (autoscaling/v2 behavior); defaults are Kubernetes' defaults.
struct HpaConfig {
  int64_t sync_s = 15;                 // --horizontal-pod-autoscaler-sync-period
  double tolerance = 0.1;              // --horizontal-pod-autoscaler-tolerance
  int64_t up_pods = 4;                 // scaleUp policy Pods 4 / period
  int64_t up_percent = 100;            // scaleUp policy Percent 100 / period (selectPolicy Max)
  int64_t up_stabilization_s = 0;      // scaleUp stabilizationWindowSeconds
  int64_t down_stabilization_s = 300;  // scaleDown stabilizationWindowSeconds
  int64_t down_percent = 100;          // scaleDown policy Percent 100 / period
  int64_t period_s = 15;               // policies' periodSeconds
};

}  // namespace warmpool::sim
