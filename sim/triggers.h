#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/scaler_metadata.h"
#include "policy/task_timing.h"
#include "policy/warm_policy.h"
#include "sim/celery_model.h"
#include "sim/cluster_model.h"
#include "sim/keda_hpa_model.h"
#include "sim/oracle.h"
#include "sim/policy_spec.h"

namespace warmpool::sim {

// Simulated t = 0 is Monday 2027-01-04 00:00 UTC, so warmWindows and weekday shapes line up.
inline const std::chrono::system_clock::time_point kSimEpoch =
    std::chrono::system_clock::time_point(std::chrono::seconds(1'799'020'800));

// What warmpool-scaler's probe reads of the simulated queue at one instant, in simulator seconds:
// the list (LLEN), the running tasks (kombu's `unacked` entries without a future eta) and since
// when the oldest of them has been seen, the tasks held for a future eta, and the tasks found
// finished since the previous probe (their tags left `unacked`) with their summed run time.
struct ProbeSnapshot {
  int64_t pending = 0;
  int64_t in_flight = 0;
  std::optional<int64_t> oldest_start;  // first sighting of the longest-seen task; none when idle
  int64_t scheduled = 0;
  std::optional<int64_t> earliest_eta;
  std::vector<int64_t> upcoming_etas;  // the earliest policy::kUpcomingEtas, ascending
  int64_t finished = 0;                // tasks finished since the previous probe
  double finished_seconds = 0;         // their summed run time
  std::vector<policy::FinishedTasks> finished_by_task;  // the named ones among them, by name
  // Names of the next policy::kPendingSample tasks to be delivered (the scaler's LRANGE sample).
  std::map<std::string, int64_t> pending_sample;
  int64_t pending_sampled = 0;         // the messages of that sample
  int64_t pending_sample_not_due = 0;  // of them, ETA tasks not yet due
};

// The probe of the simulated queue at t: the list, the running tasks and the ETA tasks the
// workers hold (scheduled until due, then in flight), and the SIGKILLed ones still unacked. Run
// times are measured as the scaler measures them (ScalerCore::MeasureTaskTimes, through the same
// policy::ObserveInFlight over `timing`): an in-flight task's id is its delivery tag, timed from
// the first probe that sees it to the first that misses it. A task that starts and ends between two
// probes is neither counted nor measured. Durations, the pending sample and the finished tasks only
// when `measure_durations`.
ProbeSnapshot ProbeQueue(const CeleryModel& celery, const ClusterModel& cluster, int64_t t,
                         bool measure_durations, policy::TaskTiming* timing);

// The policy's Observation of `snapshot` at t; task durations and the pending sample only when
// `measure_durations` (PolicySpec). Pure.
policy::Observation ObservationOf(const ProbeSnapshot& snapshot, int64_t t, bool measure_durations);

// One policy step as warmpool-scaler takes it per fresh reading (ScalerCore): fold the
// observation into the shared state with the ScaledObject's own metadata (policy::Observe), then
// decide from both (policy::Decide). tests/integration/scaler/policy_conformance_test.cpp checks
// that the real ScalerCore, reading the same queue from Redis, decides the same at every step.
policy::Decision PolicyStep(const policy::ScalerMetadata& meta, const policy::Observation& obs,
                            int64_t t, policy::PolicyState* state);

// warmpool-scaler answering KEDA: probe the queue, PolicyStep, cached within the same second as
// the scaler's coalescing probe would. Metric = desired replicas (target 1).
class WarmpoolTrigger : public Trigger {
 public:
  WarmpoolTrigger(const PolicySpec& policy, const policy::ScalerMetadata& meta, CeleryModel& celery,
                  const ClusterModel& cluster)
      : policy_(policy), meta_(meta), celery_(celery), cluster_(cluster) {}

  bool IsActive(int64_t t) override { return Evaluate(t).active; }
  double Metric(int64_t t) override { return static_cast<double>(Evaluate(t).desired_replicas); }
  double Target() const override { return 1; }
  bool CanPush() const override { return true; }

 private:
  const policy::Decision& Evaluate(int64_t t);

  const PolicySpec& policy_;
  const policy::ScalerMetadata& meta_;
  CeleryModel& celery_;
  const ClusterModel& cluster_;
  policy::PolicyState state_;
  policy::Decision decision_;
  int64_t evaluated_at_ = -1;
  policy::TaskTiming timing_;  // the in-flight tags the scaler has seen, as ScalerCore keeps
};

// KEDA's redis list scaler: LLEN only (no in-flight, no held eta tasks), listLength target,
// active above activationListLength. Polled only (no push).
class RedisListTrigger : public Trigger {
 public:
  RedisListTrigger(const PolicySpec& policy, const CeleryModel& celery)
      : policy_(policy), celery_(celery) {}

  bool IsActive(int64_t) override {
    return static_cast<int64_t>(celery_.queue().size()) > policy_.activation_list_length;
  }
  double Metric(int64_t) override { return static_cast<double>(celery_.queue().size()); }
  double Target() const override { return static_cast<double>(policy_.list_length); }
  bool CanPush() const override { return false; }

 private:
  const PolicySpec& policy_;
  const CeleryModel& celery_;
};

// The oracle's clairvoyant count fed through KEDA + HPA like warmpool's (the "+hpa" strategies).
class OracleTrigger : public Trigger {
 public:
  OracleTrigger(const Oracle& oracle, const CeleryModel& celery, const ClusterModel& cluster)
      : oracle_(oracle), celery_(celery), cluster_(cluster) {}

  bool IsActive(int64_t t) override { return oracle_.Desired(t, celery_, cluster_) > 0; }
  double Metric(int64_t t) override {
    return static_cast<double>(oracle_.Desired(t, celery_, cluster_));
  }
  double Target() const override { return 1; }
  bool CanPush() const override { return true; }

 private:
  const Oracle& oracle_;
  const CeleryModel& celery_;
  const ClusterModel& cluster_;
};

}  // namespace warmpool::sim
