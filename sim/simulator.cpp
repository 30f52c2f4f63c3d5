#include "sim/simulator.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <random>

#include "policy/scaler_metadata.h"
#include "sim/celery_model.h"
#include "sim/cluster_model.h"
#include "sim/cron_trigger.h"
#include "sim/keda_hpa_model.h"
#include "sim/oracle.h"
#include "sim/triggers.h"

namespace warmpool::sim {
namespace {

// One run of one policy: the event loop at 1-second resolution over the Celery, cluster and
// KEDA/HPA models, in the order the real components act within a second.
class Simulation {
 public:
  Simulation(const Workload& w, const PolicySpec& p, const ClusterConfig& c, uint64_t seed,
             int64_t step)
      : policy_(p),
        cluster_config_(c),
        step_(step),
        horizon_(std::max<int64_t>(1, w.horizon_s)),
        rng_(seed * 0xD1B54A32D192ED03ull + 17),
        celery_(w, c.slots_per_pod, tally_,
                p.visibility_timeout_s >= 0 ? p.visibility_timeout_s : c.visibility_timeout_s),
        cluster_(c, seed * 0x9E3779B97F4A7C15ull + 29, tally_) {
    // Controller phases: drawn first, in this order, so every run of a seed lines up.
    std::uniform_int_distribution<int64_t> phase(0, 1'000'000);
    keda_phase_ = phase(rng_);
    hpa_phase_ = phase(rng_);
    ca_phase_ = phase(rng_);
    if (p.keda_phase_s >= 0) keda_phase_ = p.keda_phase_s;
    if (p.hpa_phase_s >= 0) hpa_phase_ = p.hpa_phase_s;
    if (c.ca_phase_s >= 0) ca_phase_ = c.ca_phase_s;
    if (p.deletion_cost_after_s >= 0) {
      deletion_cost_ = [this](const Pod& pod) {
        return celery_.RunningAtLeast(pod, t_, policy_.deletion_cost_after_s);
      };
    }
  }

  Status Run(SimResult* out) {
    if (Status s = Deploy(); !s.ok()) return s;
    for (t_ = 0; t_ < horizon_; ++t_) Step();
    Finish(out);
    return Status::Ok();
  }

 private:
  // Parses the trigger metadata and builds the policy's controllers.
  Status Deploy() {
    if (policy_.kind == PolicyKind::kWarmpool || policy_.kind == PolicyKind::kOracle) {
      policy::ParsedMetadata parsed;
      Status s = policy::ParseScalerMetadata(policy_.meta, &parsed);
      if (!s.ok()) return s;
      meta_ = parsed.metadata;
      // The scaler cannot read the ScaledObject; a deployment states its cooldown and HPA window
      // in the metadata too, so unless --meta says otherwise the policy knows the simulated ones.
      if (!policy_.meta.count("cooldownSeconds")) meta_.cooldown_seconds = policy_.keda.cooldown_s;
      if (!policy_.meta.count("scaleDownWindowSeconds")) {
        meta_.scale_down_window_seconds = policy_.hpa.down_stabilization_s;
      }
    }
    switch (policy_.kind) {
      case PolicyKind::kWarmpool:
        trigger_ = std::make_unique<WarmpoolTrigger>(policy_, meta_, celery_, cluster_);
        break;
      case PolicyKind::kKedaRedis:
        trigger_ = std::make_unique<RedisListTrigger>(policy_, celery_);
        if (policy_.cron_replicas > 0) trigger_ = WithCronFloor(std::move(trigger_));
        break;
      case PolicyKind::kOracle:
        oracle_.emplace(policy_, cluster_config_, meta_, celery_.tasks(), horizon_);
        trigger_ = std::make_unique<OracleTrigger>(*oracle_, celery_, cluster_);
        break;
      case PolicyKind::kAlwaysOn:
        cluster_.Prewarm(policy_.replicas);
        deployment_.StartAt(policy_.replicas);
        return Status::Ok();
    }
    keda_hpa_.emplace(policy_.keda, policy_.hpa, keda_phase_, hpa_phase_);
    return Status::Ok();
  }

  // The redis trigger and an office-hours cron trigger of cron_replicas on one ScaledObject.
  std::unique_ptr<Trigger> WithCronFloor(std::unique_ptr<Trigger> redis) const {
    CronWindow office_hours;
    office_hours.desired_replicas = policy_.cron_replicas;
    std::vector<std::unique_ptr<Trigger>> triggers;
    triggers.push_back(std::move(redis));
    triggers.push_back(std::make_unique<CronTrigger>(office_hours));
    return std::make_unique<AnyOfTriggers>(std::move(triggers));
  }

  // One simulated second.
  void Step() {
    celery_.Arrive(t_);
    cluster_.AdvanceNodes(t_);
    cluster_.AdvancePods(t_, [this](Pod& pod) { celery_.RunWorker(t_, pod); });
    celery_.RestoreVisible(t_, cluster_.AnyWarmPod());
    celery_.Fetch(t_, cluster_);
    Control();
    cluster_.Reconcile(t_, deployment_.replicas(), policy_.grace_s, policy_.worker_grace_s,
                       deletion_cost_);
    cluster_.Schedule(t_);
    if ((t_ + ca_phase_) % cluster_config_.ca_scan_s == 0) cluster_.Autoscale(t_);
    celery_.Fetch(t_, cluster_);  // pods that became ready this second
    CountColdStart();
    if (step_ > 0 && t_ % step_ == 0) Sample();
  }

  // The controller that sets spec.replicas: none for always-on, the oracle directly, or KEDA +
  // the HPA over the policy's trigger.
  void Control() {
    if (policy_.kind == PolicyKind::kAlwaysOn) return;
    if (policy_.kind == PolicyKind::kOracle && !policy_.oracle_via_hpa) {
      deployment_.Scale(oracle_->Desired(t_, celery_, cluster_), tally_);
      return;
    }
    keda_hpa_->Step(t_, *trigger_, deployment_, tally_);
  }

  // A cold start: work became runnable while no worker was ready.
  void CountColdStart() {
    if (cluster_.AnyWarmPod()) {
      in_cold_start_ = false;
    } else if (!celery_.queue().empty() && !in_cold_start_) {
      in_cold_start_ = true;
      ++tally_.cold_starts;
    }
  }

  void Sample() {
    TimelineSample s;
    s.t = t_;
    s.queue = static_cast<int64_t>(celery_.queue().size());
    s.replicas = deployment_.replicas();
    s.ready_pods = cluster_.ReadyPods();
    s.busy = cluster_.Running();
    s.nodes = static_cast<int64_t>(cluster_.live_nodes());
    timeline_.push_back(s);
  }

  void Finish(SimResult* out) {
    cluster_.BillAtHorizon(horizon_);
    celery_.FinishAt(horizon_, cluster_);
    const auto& tasks = celery_.tasks();
    *out = Summarize(policy_.name, tally_, cluster_config_, horizon_,
                     static_cast<int64_t>(tasks.size()), tasks.empty() ? 0 : tasks.front().arrival,
                     std::move(timeline_));
    out->deployed_with = DeployedSettings(policy_, cluster_config_);
  }

  const PolicySpec& policy_;
  const ClusterConfig& cluster_config_;
  const int64_t step_;
  const int64_t horizon_;
  int64_t t_ = 0;
  int64_t keda_phase_ = 0, hpa_phase_ = 0, ca_phase_ = 0;
  std::mt19937_64 rng_;
  RunTally tally_;
  CeleryModel celery_;
  ClusterModel cluster_;
  Deployment deployment_;
  policy::ScalerMetadata meta_;
  std::optional<Oracle> oracle_;
  std::unique_ptr<Trigger> trigger_;
  ClusterModel::DeletionCost deletion_cost_;  // empty: the worker sets no pod-deletion-cost
  std::optional<KedaHpaModel> keda_hpa_;
  bool in_cold_start_ = false;
  std::vector<TimelineSample> timeline_;
};

}  // namespace

Status Simulate(const Workload& workload, const PolicySpec& policy, const ClusterConfig& cluster,
                uint64_t seed, int64_t timeline_step_s, SimResult* out) {
  // Before any time is turned into whole seconds: a workload past the bound would not fit them.
  if (Status s = CheckWorkloadLimits(workload); !s.ok()) return s;
  if (policy.kind != PolicyKind::kOracle) {
    Simulation sim(workload, policy, cluster, seed, timeline_step_s);
    return sim.Run(out);
  }
  // The oracle knows the future (arrivals and durations). With that knowledge it runs every
  // strategy on this very run and keeps the one that bills least (hindsight). See
  // docs/SCALING.md.
  std::optional<SimResult> best;
  for (const OracleStrategy& st : OracleStrategies(policy, cluster)) {
    Simulation sim(workload, st.spec, cluster, seed, timeline_step_s);
    SimResult r;
    if (Status s = sim.Run(&r); !s.ok()) return s;
    r.variant = st.variant;
    if (!best || r.billed_gpu_hours < best->billed_gpu_hours) best = std::move(r);
  }
  *out = std::move(*best);
  return Status::Ok();
}

}  // namespace warmpool::sim
