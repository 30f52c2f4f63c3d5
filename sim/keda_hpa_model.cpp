#include "sim/keda_hpa_model.h"

#include <algorithm>
#include <cmath>

namespace warmpool::sim {

int64_t HpaRecommendation(double metric, double target, int64_t current, double tolerance) {
  const double usage = metric / (target * static_cast<double>(current));
  return std::abs(1 - usage) <= tolerance ? current
                                          : static_cast<int64_t>(std::ceil(metric / target - 1e-9));
}

int64_t HpaRateLimit(int64_t current, int64_t desired, const HpaConfig& hpa) {
  if (desired > current) {
    const int64_t by_pods = current + hpa.up_pods;
    const int64_t by_percent = current + (current * hpa.up_percent + 99) / 100;
    return std::min(desired, std::max(by_pods, by_percent));
  }
  if (desired < current) return std::max(desired, current - (current * hpa.down_percent) / 100);
  return desired;
}

int64_t HpaModel::Stabilize(int64_t t, int64_t rec, int64_t current) {
  history_.emplace_back(t, rec);
  const int64_t keep = std::max(config_.up_stabilization_s, config_.down_stabilization_s);
  while (!history_.empty() && history_.front().first < t - keep) history_.pop_front();
  int64_t up = rec, down = rec;
  for (const auto& [when, r] : history_) {
    if (when > t - config_.up_stabilization_s) up = std::min(up, r);
    if (when > t - config_.down_stabilization_s) down = std::max(down, r);
  }
  int64_t desired = current;
  if (desired < up) desired = up;
  if (desired > down) desired = down;
  return desired;
}

int64_t HpaModel::Sync(int64_t t, double metric, double target, int64_t current,
                       int64_t min_replicas, int64_t max_replicas) {
  int64_t rec = HpaRecommendation(metric, target, current, config_.tolerance);
  rec = std::clamp(rec, min_replicas, max_replicas);
  const int64_t desired = HpaRateLimit(current, Stabilize(t, rec, current), config_);
  return std::clamp(desired, min_replicas, max_replicas);
}

void KedaHpaModel::Activate(int64_t t, Deployment& deployment, RunTally& tally) {
  if (deployment.replicas() == 0) deployment.Scale(std::max<int64_t>(1, keda_.min_replicas), tally);
  last_active_ = t;
}

void KedaHpaModel::Step(int64_t t, Trigger& trigger, Deployment& deployment, RunTally& tally) {
  if (keda_.push && trigger.CanPush()) {
    // StreamIsActive: sent on change (and re-sent every push_resend_s when set); KEDA ignores
    // false.
    const bool active = trigger.IsActive(t);
    const bool resend = active && keda_.push_resend_s > 0 &&
                        (last_push_ == kNever || t - last_push_ >= keda_.push_resend_s);
    if (active != last_pushed_ || resend) {
      last_pushed_ = active;
      last_push_ = t;
      if (active) Activate(t, deployment, tally);
    }
  }
  if ((t + keda_phase_) % keda_.polling_s == 0) {
    if (trigger.IsActive(t)) {
      Activate(t, deployment, tally);
    } else if (deployment.replicas() > keda_.min_replicas &&
               (last_active_ == kNever ? t >= keda_.initial_cooldown_s
                                       : t >= last_active_ + keda_.cooldown_s)) {
      // scaleToZeroOrIdle (KEDA pkg/scaling/executor/scale_scaledobjects.go): straight from N,
      // bypassing the HPA, cooldownPeriod after lastActiveTime, or without one
      // initialCooldownPeriod after the ScaledObject's creation (t = 0).
      deployment.Scale(keda_.min_replicas, tally);
    }
  }
  if (deployment.replicas() >= 1 && (t + hpa_phase_) % hpa_config_.sync_s == 0) {
    const double metric = trigger.Metric(t);
    const int64_t min_r = std::max<int64_t>(1, keda_.min_replicas);
    deployment.Scale(
        hpa_.Sync(t, metric, trigger.Target(), deployment.replicas(), min_r, keda_.max_replicas),
        tally);
  }
}

}  // namespace warmpool::sim
