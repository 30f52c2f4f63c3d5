#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/keda_hpa_model.h"

namespace warmpool::sim {

// A KEDA cron trigger's window on the simulator's clock (t = 0 is Monday 00:00 UTC, kSimEpoch):
// `start: 0 9 * * 1-5`, `end: 0 17 * * 1-5` by default, in the workload's time zone.
struct CronWindow {
  int first_weekday = 0;              // 0 = Monday
  int last_weekday = 4;               // 4 = Friday (inclusive)
  int64_t start_of_day_s = 9 * 3600;  // start: 09:00
  int64_t end_of_day_s = 17 * 3600;   // end: 17:00 (exclusive)
  int64_t desired_replicas = 1;       // desiredReplicas
};

// Whether t (simulated seconds) lies in the window: on one of its weekdays, from start (included)
// to end (excluded), as KEDA's cron scaler compares now with the next start and end. Pure.
bool InCronWindow(const CronWindow& window, int64_t t);

// KEDA's cron scaler (pkg/scalers/cron_scaler.go): active inside the window; its metric is
// desiredReplicas inside and 1 outside, against an AverageValue target of 1.
class CronTrigger : public Trigger {
 public:
  explicit CronTrigger(const CronWindow& window) : window_(window) {}

  bool IsActive(int64_t t) override { return InCronWindow(window_, t); }
  double Metric(int64_t t) override {
    return static_cast<double>(IsActive(t) ? window_.desired_replicas : 1);
  }
  double Target() const override { return 1; }
  bool CanPush() const override { return false; }

 private:
  const CronWindow window_;
};

// A ScaledObject with several triggers: KEDA is active when any trigger is, and the HPA it
// generates has one metric per trigger and takes the highest recommendation. That equals one
// metric max_i(metric_i / target_i) against a target of 1, tolerance included (the largest
// ratio decides whether the others are inside or outside the tolerance band alike).
class AnyOfTriggers : public Trigger {
 public:
  explicit AnyOfTriggers(std::vector<std::unique_ptr<Trigger>> triggers)
      : triggers_(std::move(triggers)) {}

  bool IsActive(int64_t t) override;
  double Metric(int64_t t) override;
  double Target() const override { return 1; }
  bool CanPush() const override;

 private:
  std::vector<std::unique_ptr<Trigger>> triggers_;
};

}  // namespace warmpool::sim
