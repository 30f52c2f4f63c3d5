#include "sim/oracle.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <string_view>

namespace warmpool::sim {

int64_t MedianColdStart(const ClusterConfig& c) {
  return c.ca_gpu_buffer_s + c.ca_scan_s +
         static_cast<int64_t>(c.vm_boot_median_s + c.driver_median_s + c.image_pull_s +
                              (c.model_load_min_s + c.model_load_max_s) / 2);
}

Oracle::Oracle(const PolicySpec& policy, const ClusterConfig& cluster,
               const policy::ScalerMetadata& meta, const std::vector<SimTask>& tasks,
               int64_t horizon)
    : policy_(policy),
      cluster_(cluster),
      meta_(meta),
      horizon_(horizon),
      // Looking back at what the tasks that already arrived needed is arrival-blind, so a lead-0
      // strategy may keep its replicas for an explicit keepAlive as any reactive policy can.
      hold_(policy.oracle_lead_s == 0 && meta.keep_alive_seconds ? *meta.keep_alive_seconds
                                                                 : policy.oracle_hold_s) {
  const std::vector<int64_t> conc = IdealConcurrency(tasks);
  int64_t lead = policy_.oracle_lead_s;
  if (lead < 0) lead = MedianColdStart(cluster_);
  // need_[t] = max ideal concurrency over [t, t + lead] (sliding-window maximum).
  need_.assign(static_cast<size_t>(horizon_), 0);
  std::deque<int64_t> window;
  for (int64_t i = horizon_ - 1; i >= 0; --i) {
    while (!window.empty() && conc[window.back()] <= conc[i]) window.pop_back();
    window.push_back(i);
    while (window.front() > i + lead) window.pop_front();
    need_[i] = conc[window.front()];
  }
  // Hold: keep what was needed in the last hold_ seconds (no churn through dips).
  if (hold_ > 0) {
    std::vector<int64_t> ahead = need_;
    window.clear();
    for (int64_t i = 0; i < horizon_; ++i) {
      while (!window.empty() && ahead[window.back()] <= ahead[i]) window.pop_back();
      window.push_back(i);
      while (window.front() < i - hold_) window.pop_front();
      need_[i] = ahead[window.front()];
    }
  }
}

// Tasks running at each second if each started the moment it was runnable; with drainSeconds D,
// no more than the work that became runnable in the last D seconds drained within D.
std::vector<int64_t> Oracle::IdealConcurrency(const std::vector<SimTask>& tasks) const {
  std::vector<int64_t> diff(static_cast<size_t>(horizon_) + 2, 0);
  for (const auto& task : tasks) {
    if (task.due >= horizon_) continue;
    diff[task.due] += 1;
    diff[std::min(horizon_, task.due + task.duration)] -= 1;
  }
  std::vector<int64_t> conc(static_cast<size_t>(horizon_), 0);
  int64_t run = 0;
  for (int64_t i = 0; i < horizon_; ++i) conc[i] = run += diff[i];
  if (!meta_.drain_seconds) return conc;
  // Same sizing rule as warmpool's drainSeconds D, with the true durations. Lean: a pool ready
  // for a burst has a cold start + D to drain it (warmpool's PrewarmSlots).
  const int64_t d = *meta_.drain_seconds + (policy_.oracle_lean ? MedianColdStart(cluster_) : 0);
  std::vector<double> work_at(static_cast<size_t>(horizon_) + 1, 0);
  for (const auto& task : tasks) {
    if (task.due < horizon_) work_at[task.due + 1] += static_cast<double>(task.duration);
  }
  for (int64_t i = 1; i <= horizon_; ++i) work_at[i] += work_at[i - 1];  // prefix sums
  for (int64_t i = 0; i < horizon_; ++i) {
    const double recent = work_at[i + 1] - work_at[std::max<int64_t>(0, i + 1 - d)];
    conc[i] = std::min(conc[i], static_cast<int64_t>(std::ceil(recent / static_cast<double>(d))));
  }
  return conc;
}

// Warmpool's cold-start-aware rule with the truth: the queued work w; what the pods it already
// has do before c + D (c = median cold start): a ready pod all of it, a starting one from its
// ready time (exact once on a node, else one cold start after it was asked for); new slots, which
// arrive at c, only for what those leave, drained within D.
int64_t Oracle::LeanWork(int64_t t, const CeleryModel& celery, const ClusterModel& cluster,
                         int64_t running, int64_t work) const {
  const int64_t slots = cluster_.slots_per_pod;
  double w = 0;
  for (int id : celery.queue()) {
    if (celery.tasks()[id].due <= t) w += static_cast<double>(celery.tasks()[id].duration);
  }
  const auto d = static_cast<double>(*meta_.drain_seconds);
  const auto c = static_cast<double>(MedianColdStart(cluster_));
  double capacity = 0;
  int64_t pods = 0;
  for (int id : cluster.live_pods()) {
    const Pod& p = cluster.pods()[id];
    if (p.terminating) continue;
    ++pods;
    double rem = 0;
    if (!p.ready) {
      rem = p.node >= 0 ? static_cast<double>(p.ready_at - t)
                        : static_cast<double>(p.created - t) + c;
    }
    capacity += std::max(0.0, c + d - std::max(0.0, rem)) * static_cast<double>(slots);
  }
  const double x = std::max(0.0, std::floor((w - capacity) / d + 1e-9));
  const auto lean = static_cast<int64_t>(
      std::max(static_cast<double>(running), static_cast<double>(pods * slots) + x));
  return std::clamp<int64_t>(lean, std::max<int64_t>(1, running), work);
}

// The true work left (queued durations + the rest of running tasks), drained within D.
int64_t Oracle::DrainWork(int64_t t, const CeleryModel& celery, const ClusterModel& cluster,
                          int64_t running, int64_t work) const {
  double left = 0;
  for (int id : celery.queue()) {
    if (celery.tasks()[id].due <= t) left += static_cast<double>(celery.tasks()[id].duration);
  }
  for (int id : cluster.live_pods()) {
    for (int task_id : cluster.pods()[id].tasks) {
      left += static_cast<double>(celery.tasks()[task_id].end - t);
    }
  }
  const auto drain = static_cast<int64_t>(std::ceil(
      std::max(static_cast<double>(running), left / static_cast<double>(*meta_.drain_seconds))));
  return std::clamp<int64_t>(drain, std::max<int64_t>(1, running), work);
}

int64_t Oracle::Desired(int64_t t, const CeleryModel& celery, const ClusterModel& cluster) const {
  const int64_t slots = cluster_.slots_per_pod;
  const int64_t running = cluster.Running();
  // ETA tasks not yet due sit in the list until a worker holds them: no work before they are due.
  const auto queued = std::count_if(celery.queue().begin(), celery.queue().end(),
                                    [&](int id) { return celery.tasks()[id].due <= t; });
  int64_t work = static_cast<int64_t>(queued) + running;
  if (meta_.drain_seconds && queued > 0) {
    work = policy_.oracle_lean ? LeanWork(t, celery, cluster, running, work)
                               : DrainWork(t, celery, cluster, running, work);
  }
  // Lead 0: no look-ahead at all, only the exact work in the system (drain-sized), and what the
  // tasks that already arrived needed in the last keepAlive seconds.
  const bool blind = policy_.oracle_lead_s == 0;
  const int64_t need = blind && hold_ == 0 ? work : std::max(work, need_[t]);
  return std::min((need + slots - 1) / slots, meta_.max_replicas);
}

std::vector<OracleStrategy> OracleStrategies(const PolicySpec& oracle,
                                             const ClusterConfig& cluster) {
  const auto pod_start =
      static_cast<int64_t>(std::llround((cluster.model_load_min_s + cluster.model_load_max_s) / 2));
  struct Strategy {
    int64_t lead, hold;  // hold < 0: through KEDA + HPA
    const char* name;
  };
  const Strategy strategies[] = {{oracle.oracle_lead_s, -1, "prewarm+hpa"},
                                 {oracle.oracle_lead_s, 0, "prewarm"},
                                 {oracle.oracle_lead_s, 300, "prewarm+hold"},
                                 {pod_start, -1, "react+hpa"},
                                 {pod_start, 0, "react"},
                                 {pod_start, 300, "react+hold"},
                                 {0, -1, "now+hpa"}};
  // Arrival-blind (lead 0): only "now+hpa", which needs no look-ahead at arrivals.
  const bool blind = oracle.oracle_lead_s == 0;
  std::vector<OracleStrategy> out;
  for (const bool lean : {false, true}) {
    for (const auto& st : strategies) {
      if (blind && std::string_view(st.name) != "now+hpa") continue;
      OracleStrategy s{oracle, std::string(lean ? "lean " : "") + st.name};
      s.spec.oracle_lead_s = st.lead;
      s.spec.oracle_hold_s = std::max<int64_t>(0, st.hold);
      s.spec.oracle_via_hpa = st.hold < 0;
      s.spec.oracle_lean = lean;
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace warmpool::sim
