#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "policy/scaler_metadata.h"
#include "sim/celery_model.h"
#include "sim/cluster_model.h"
#include "sim/policy_spec.h"
#include "sim/sim_config.h"

namespace warmpool::sim {

// Median time from asking for a replica to it being ready on a new node: the CA's GPU buffer and
// scan, the median VM boot and driver install, the image pull and the mean model load.
int64_t MedianColdStart(const ClusterConfig& cluster);

// The clairvoyant replica count of a kOracle policy: it knows every arrival and duration. At
// construction it computes the ideal concurrency (drain-sized with the true durations when
// drainSeconds is set) and its maximum over the look-ahead lead (then held for oracle_hold_s).
// It keeps references to its arguments, which must outlive it.
class Oracle {
 public:
  Oracle(const PolicySpec& policy, const ClusterConfig& cluster, const policy::ScalerMetadata& meta,
         const std::vector<SimTask>& tasks, int64_t horizon);

  // The replicas it wants at t, from the exact work in the system and the need ahead.
  int64_t Desired(int64_t t, const CeleryModel& celery, const ClusterModel& cluster) const;

 private:
  std::vector<int64_t> IdealConcurrency(const std::vector<SimTask>& tasks) const;
  int64_t LeanWork(int64_t t, const CeleryModel& celery, const ClusterModel& cluster,
                   int64_t running, int64_t work) const;
  int64_t DrainWork(int64_t t, const CeleryModel& celery, const ClusterModel& cluster,
                    int64_t running, int64_t work) const;

  const PolicySpec& policy_;
  const ClusterConfig& cluster_;
  const policy::ScalerMetadata& meta_;
  const int64_t horizon_;
  const int64_t hold_;         // seconds need_ keeps what was needed (oracle_hold_s, keepAlive)
  std::vector<int64_t> need_;  // need_[t] = max ideal concurrency over [t, t + lead]
};

// The two oracles, both kOracle: `oracle` (oracle_lead_s -1) knows every arrival and duration of
// the run in advance; `oracle-durations` (oracle_lead_s 0) knows each task's duration once it
// arrives but no future arrival: it sizes exactly for the work queued and running, never starts
// a replica before the work is there, and goes through the same KEDA + HPA as warmpool. With an
// explicit keepAlive K it also keeps, for K seconds, the replicas the tasks that already arrived
// needed (a reactive keep-alive; `auto` keeps none beyond KEDA's cooldown and the HPA's window).

// One of the oracle's clairvoyant strategies: the policy to run and its variant name.
struct OracleStrategy {
  PolicySpec spec;
  std::string variant;
};

// The fourteen strategies Simulate runs for a kOracle policy, keeping the one that bills least:
// pre-start one median cold start ahead ("prewarm") or one mean pod start ahead ("react"), setting
// the Deployment directly, holding what it needed in the last 5 minutes ("+hold"), or feeding its
// count through the same KEDA + HPA as warmpool ("+hpa"); "now+hpa" looks no further ahead than
// the exact work in the system. Each with the drain sizing and with the lean one ("lean ...").
// For the arrival-blind oracle (oracle_lead_s 0) only the two "now+hpa" strategies.
std::vector<OracleStrategy> OracleStrategies(const PolicySpec& oracle,
                                             const ClusterConfig& cluster);

}  // namespace warmpool::sim
