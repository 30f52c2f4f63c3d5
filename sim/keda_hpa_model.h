#pragma once

#include <cstdint>
#include <deque>
#include <utility>

#include "sim/cluster_model.h"
#include "sim/results.h"
#include "sim/sim_config.h"

namespace warmpool::sim {

// What KEDA asks a ScaledObject's trigger. Answers may have side effects (warmpool's scaler
// observes the queue when asked), so the KEDA model asks only when KEDA would.
class Trigger {
 public:
  virtual ~Trigger() = default;
  virtual bool IsActive(int64_t t) = 0;  // IsActive / StreamIsActive
  virtual double Metric(int64_t t) = 0;  // GetMetrics: the value the HPA divides by Target()
  virtual double Target() const = 0;     // the AverageValue target
  virtual bool CanPush() const = 0;      // an external-push scaler (StreamIsActive)
};

// The HPA's recommendation for an AverageValue metric: ceil(metric / target) unless the usage
// ratio metric / (target x current) is within the tolerance of 1 (then `current`). Pure.
int64_t HpaRecommendation(double metric, double target, int64_t current, double tolerance);

// The HPA behavior's rate limits for a move from `current` to `desired`: scale-up to at most
// max(current + upPods, current + ceil(current x upPercent / 100)) (selectPolicy Max), scale-down
// by at most current x downPercent / 100 (floored). Pure.
int64_t HpaRateLimit(int64_t current, int64_t desired, const HpaConfig& hpa);

// The HPA of one ScaledObject: recommendation, stabilization windows and rate limits, as
// Kubernetes' horizontal.go normalizes them.
class HpaModel {
 public:
  explicit HpaModel(const HpaConfig& config) : config_(config) {}
  // One sync at t: the new spec.replicas for `current`, clamped to [min_replicas, max_replicas].
  int64_t Sync(int64_t t, double metric, double target, int64_t current, int64_t min_replicas,
               int64_t max_replicas);

 private:
  // The stabilized recommendation: no higher than the lowest of the scale-up window, no lower
  // than the highest of the scale-down window.
  int64_t Stabilize(int64_t t, int64_t recommendation, int64_t current);

  const HpaConfig config_;
  std::deque<std::pair<int64_t, int64_t>> history_;  // (sync time, recommendation)
};

// The KEDA operator and its HPA for one ScaledObject, one second at a time: the push stream
// (0 -> 1 and lastActiveTime; a false is ignored), polling every pollingInterval (active: 0 -> 1;
// inactive past the cooldown, or the initial cooldown if never active: straight to minReplicaCount
// from any N, bypassing the HPA), and the
// HPA sync while replicas >= 1. Phases offset the poll and sync clocks: (t + phase) % period.
class KedaHpaModel {
 public:
  KedaHpaModel(const KedaConfig& keda, const HpaConfig& hpa, int64_t keda_phase_s,
               int64_t hpa_phase_s)
      : keda_(keda),
        hpa_config_(hpa),
        hpa_(hpa),
        keda_phase_(keda_phase_s),
        hpa_phase_(hpa_phase_s) {}

  void Step(int64_t t, Trigger& trigger, Deployment& deployment, RunTally& tally);

 private:
  void Activate(int64_t t, Deployment& deployment, RunTally& tally);

  const KedaConfig keda_;
  const HpaConfig hpa_config_;
  HpaModel hpa_;
  const int64_t keda_phase_, hpa_phase_;
  int64_t last_active_ = kNever;
  bool last_pushed_ = false;
  int64_t last_push_ = kNever;
};

}  // namespace warmpool::sim
