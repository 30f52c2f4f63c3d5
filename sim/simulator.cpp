#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <numeric>
#include <optional>
#include <queue>
#include <random>

#include "policy/scaler_metadata.h"
#include "policy/warm_policy.h"

namespace warmpool::sim {
namespace {

using Clock = std::chrono::system_clock;
constexpr double kZ95 = 1.6448536269514722;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxEmptyBulkDelete = 10;  // CA --max-empty-bulk-delete
// Simulated t = 0 is Monday 2027-01-04 00:00 UTC, so warmWindows and weekday shapes line up.
const Clock::time_point kEpoch = Clock::time_point(std::chrono::seconds(1'799'020'800));

struct SimTask {
  int64_t arrival = 0;
  int64_t due = 0;  // runnable from (max of arrival and eta)
  int64_t duration = 1;
  int64_t start = -1;
  int64_t end = -1;
  int64_t first_due = 0;  // for waits of requeued tasks: the original due time
};

struct Node {
  int64_t created = 0;
  int64_t ready_at = 0;
  bool ready = false;
  bool deleting = false;
  int64_t delete_start = 0;
  int64_t delete_done = 0;
  int64_t pods = 0;  // pods bound (including terminating)
  int64_t empty_since = kNever;
  int64_t pull_done = -1;  // image cached on the node from this time; -1 = not pulled
};

struct Pod {
  int node = -1;
  int64_t created = 0;
  int64_t ready_at = -1;
  bool ready = false;
  int64_t ready_since = 0;
  bool terminating = false;
  int64_t deadline = 0;
  std::vector<int> tasks;  // running task ids
};

double LogNormal(std::mt19937_64& rng, double median, double p95) {
  if (p95 <= median) return median;
  std::normal_distribution<double> n(std::log(median), std::log(p95 / median) / kZ95);
  return std::exp(n(rng));
}

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0);
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

class Simulation {
 public:
  Simulation(const Workload& w, const PolicySpec& p, const ClusterConfig& c, uint64_t seed,
             int64_t step)
      : policy_(p), cluster_(c), rng_(seed * 0xD1B54A32D192ED03ull + 17), step_(step) {
    horizon_ = std::max<int64_t>(1, w.horizon_s);
    tasks_.reserve(w.tasks.size());
    for (const auto& t : w.tasks) {
      SimTask s;
      s.arrival = static_cast<int64_t>(std::floor(t.arrival_s));
      s.due = std::max(s.arrival, static_cast<int64_t>(std::ceil(t.eta_s)));
      s.first_due = s.due;
      s.duration = std::max<int64_t>(1, std::llround(t.duration_s));
      tasks_.push_back(s);
    }
    task_started_.assign(tasks_.size(), false);
    std::uniform_int_distribution<int64_t> phase(0, 1'000'000);
    keda_phase_ = phase(rng_);
    hpa_phase_ = phase(rng_);
    ca_phase_ = phase(rng_);
    if (p.keda_phase_s >= 0) keda_phase_ = p.keda_phase_s;
    if (p.hpa_phase_s >= 0) hpa_phase_ = p.hpa_phase_s;
    if (c.ca_phase_s >= 0) ca_phase_ = c.ca_phase_s;
  }

  Status Run(SimResult* out) {
    if (policy_.kind == PolicyKind::kWarmpool || policy_.kind == PolicyKind::kOracle) {
      policy::ParsedMetadata parsed;
      Status s = policy::ParseScalerMetadata(policy_.meta, &parsed);
      if (!s.ok()) return s;
      meta_ = parsed.metadata;
    }
    if (policy_.kind == PolicyKind::kOracle) PrepareOracle();
    if (policy_.kind == PolicyKind::kAlwaysOn) Prewarm(policy_.replicas);
    for (t_ = 0; t_ < horizon_; ++t_) Step();
    Finish(out);
    return Status::Ok();
  }

 private:
  // ---- one simulated second ------------------------------------------------------------------
  void Step() {
    Arrivals();
    NodesAdvance();
    PodsAdvance();
    Fetch();
    Control();
    Reconcile();
    Schedule();
    if ((t_ + ca_phase_) % cluster_.ca_scan_s == 0) ClusterAutoscaler();
    Fetch();  // pods that became ready this second
    ColdStartBookkeeping();
    if (step_ > 0 && t_ % step_ == 0) Sample();
  }

  void Arrivals() {
    while (next_arrival_ < tasks_.size() && tasks_[next_arrival_].arrival <= t_) {
      const int id = static_cast<int>(next_arrival_++);
      if (tasks_[id].due > t_) {
        scheduled_.push({tasks_[id].due, id});
      } else {
        queue_.push_back(id);
      }
    }
    while (!scheduled_.empty() && scheduled_.top().first <= t_) {
      queue_.push_back(scheduled_.top().second);
      scheduled_.pop();
    }
  }

  void NodesAdvance() {
    for (size_t i = 0; i < live_nodes_.size();) {
      Node& n = nodes_[live_nodes_[i]];
      if (!n.ready && !n.deleting && t_ >= n.ready_at) {
        n.ready = true;
        if (n.pods == 0) n.empty_since = t_;
      }
      if (n.deleting && t_ >= n.delete_done) {
        Bill(n, n.delete_done);
        live_nodes_[i] = live_nodes_.back();
        live_nodes_.pop_back();
        continue;
      }
      ++i;
    }
  }

  void PodsAdvance() {
    for (size_t i = 0; i < live_pods_.size();) {
      Pod& p = pods_[live_pods_[i]];
      // Completions.
      for (size_t k = 0; k < p.tasks.size();) {
        SimTask& task = tasks_[p.tasks[k]];
        if (task.end <= t_) {
          busy_gpu_s_ += static_cast<double>(task.duration) / cluster_.slots_per_pod;
          finished_durations_sum_ += static_cast<double>(task.duration);
          ++finished_since_observe_;
          last_completion_ = std::max(last_completion_, task.end);
          p.tasks[k] = p.tasks.back();
          p.tasks.pop_back();
          continue;
        }
        ++k;
      }
      if (p.terminating && !p.tasks.empty() && t_ >= p.deadline) {
        for (int id : p.tasks) {  // SIGKILL: the task is lost mid-run and redelivered
          SimTask& task = tasks_[id];
          killed_gpu_s_ += static_cast<double>(t_ - task.start) / cluster_.slots_per_pod;
          task.start = -1;
          task.end = -1;
          queue_.push_front(id);
          ++killed_;
        }
        p.tasks.clear();
      }
      if (p.terminating && p.tasks.empty()) {
        RemovePod(live_pods_[i]);
        live_pods_[i] = live_pods_.back();
        live_pods_.pop_back();
        continue;
      }
      if (!p.ready && p.node >= 0 && t_ >= p.ready_at) {
        p.ready = true;
        p.ready_since = t_;
      }
      ++i;
    }
  }

  void Fetch() {
    for (int id : live_pods_) {
      Pod& p = pods_[id];
      if (!p.ready || p.terminating) continue;
      while (static_cast<int64_t>(p.tasks.size()) < cluster_.slots_per_pod && !queue_.empty()) {
        const int task_id = queue_.front();
        queue_.pop_front();
        SimTask& task = tasks_[task_id];
        task.start = t_;
        task.end = t_ + task.duration;
        if (!task_started_[task_id]) {
          task_started_[task_id] = true;
          waits_.push_back(static_cast<double>(t_ - task.first_due));
        }
        p.tasks.push_back(task_id);
      }
    }
  }

  // ---- controllers ---------------------------------------------------------------------------
  policy::Observation Observe() {
    policy::Observation o;
    o.pending = static_cast<int64_t>(queue_.size());
    o.in_flight = Running();
    for (int id : live_pods_) {
      for (int task_id : pods_[id].tasks) {
        o.oldest_in_flight_seconds =
            std::max(o.oldest_in_flight_seconds, static_cast<double>(t_ - tasks_[task_id].start));
      }
    }
    o.scheduled = static_cast<int64_t>(scheduled_.size());
    if (!scheduled_.empty()) o.earliest_eta = kEpoch + std::chrono::seconds(scheduled_.top().first);
    if (policy_.measure_durations && finished_since_observe_ > 0) {
      o.measured_task_seconds = (finished_durations_sum_ - durations_reported_) /
                                static_cast<double>(finished_since_observe_);
      o.measured_task_count = finished_since_observe_;
      durations_reported_ = finished_durations_sum_;
      finished_since_observe_ = 0;
    }
    return o;
  }

  // warmpool-scaler answering one call: probe, Observe, Decide (cached within the same second,
  // as the scaler's coalescing probe would).
  const policy::Decision& Evaluate() {
    if (policy_.kind == PolicyKind::kOracle) {  // clairvoyant metric through KEDA + HPA
      decision_.desired_replicas = OracleDesired();
      decision_.active = decision_.desired_replicas > 0;
      return decision_;
    }
    if (evaluated_at_ != t_) {
      const auto now = kEpoch + std::chrono::seconds(t_);
      const policy::Observation o = Observe();
      state_ = policy::Observe(state_, meta_, o, now);
      decision_ = policy::Decide(meta_, o, state_, now);
      evaluated_at_ = t_;
    }
    return decision_;
  }

  bool KedaActive() {
    if (policy_.kind != PolicyKind::kKedaRedis) return Evaluate().active;
    return static_cast<int64_t>(queue_.size()) > policy_.activation_list_length;
  }

  void KedaActivate() {
    if (replicas_ == 0) SetReplicas(std::max<int64_t>(1, policy_.keda.min_replicas));
    last_active_ = t_;
  }

  void Control() {
    switch (policy_.kind) {
      case PolicyKind::kAlwaysOn:
        return;
      case PolicyKind::kOracle:
        if (!policy_.oracle_via_hpa) {
          SetReplicas(OracleDesired());
          return;
        }
        break;
      case PolicyKind::kWarmpool:
      case PolicyKind::kKedaRedis:
        break;
    }
    const KedaConfig& keda = policy_.keda;
    if (keda.push && policy_.kind != PolicyKind::kKedaRedis) {
      // StreamIsActive: sent on change and re-sent every push_resend_s; KEDA ignores false.
      const bool active = Evaluate().active;
      if (active != last_pushed_ || (active && t_ - last_push_ >= keda.push_resend_s)) {
        last_pushed_ = active;
        last_push_ = t_;
        if (active) KedaActivate();
      }
    }
    if ((t_ + keda_phase_) % keda.polling_s == 0) {
      if (KedaActive()) {
        KedaActivate();
      } else if (replicas_ > keda.min_replicas && last_active_ != kNever &&
                 t_ >= last_active_ + keda.cooldown_s) {
        SetReplicas(keda.min_replicas);  // scaleToZeroOrIdle: straight from N, bypassing the HPA
      }
    }
    if (replicas_ >= 1 && (t_ + hpa_phase_) % policy_.hpa.sync_s == 0) Hpa();
  }

  void Hpa() {
    const HpaConfig& h = policy_.hpa;
    double metric = 0, target = 1;
    if (policy_.kind != PolicyKind::kKedaRedis) {
      metric = static_cast<double>(Evaluate().desired_replicas);
    } else {
      metric = static_cast<double>(queue_.size());
      target = static_cast<double>(policy_.list_length);
    }
    const int64_t cur = replicas_;
    const double usage = metric / (target * static_cast<double>(cur));
    int64_t rec = std::abs(1 - usage) <= h.tolerance
                      ? cur
                      : static_cast<int64_t>(std::ceil(metric / target - 1e-9));
    const int64_t min_r = std::max<int64_t>(1, policy_.keda.min_replicas);
    rec = std::clamp(rec, min_r, policy_.keda.max_replicas);
    hpa_history_.emplace_back(t_, rec);
    const int64_t keep = std::max(h.up_stabilization_s, h.down_stabilization_s);
    while (!hpa_history_.empty() && hpa_history_.front().first < t_ - keep) {
      hpa_history_.pop_front();
    }
    int64_t up = rec, down = rec;
    for (const auto& [when, r] : hpa_history_) {
      if (when > t_ - h.up_stabilization_s) up = std::min(up, r);
      if (when > t_ - h.down_stabilization_s) down = std::max(down, r);
    }
    int64_t desired = cur;
    if (desired < up) desired = up;
    if (desired > down) desired = down;
    if (desired > cur) {
      const int64_t by_pods = cur + h.up_pods;
      const int64_t by_percent = cur + (cur * h.up_percent + 99) / 100;
      desired = std::min(desired, std::max(by_pods, by_percent));
    } else if (desired < cur) {
      desired = std::max(desired, cur - (cur * h.down_percent) / 100);
    }
    desired = std::clamp(desired, min_r, policy_.keda.max_replicas);
    SetReplicas(desired);
  }

  void SetReplicas(int64_t r) {
    if (r == replicas_) return;
    const int dir = r > replicas_ ? 1 : -1;
    if (last_dir_ != 0 && dir != last_dir_) ++reversals_;
    last_dir_ = dir;
    ++replica_changes_;
    replicas_ = r;
  }

  // ---- oracle --------------------------------------------------------------------------------
  void PrepareOracle() {
    std::vector<int64_t> diff(static_cast<size_t>(horizon_) + 2, 0);
    for (const auto& task : tasks_) {
      if (task.due >= horizon_) continue;
      diff[task.due] += 1;
      diff[std::min(horizon_, task.due + task.duration)] -= 1;
    }
    std::vector<int64_t> conc(static_cast<size_t>(horizon_), 0);
    int64_t run = 0;
    for (int64_t i = 0; i < horizon_; ++i) conc[i] = run += diff[i];
    if (meta_.drain_seconds) {
      // Same sizing rule as warmpool's drainSeconds D, with the true durations: the work that
      // became runnable in the last D seconds, drained within D. Lean: a pool ready for a burst
      // has a cold start + D to drain it (warmpool's PrewarmSlots).
      const int64_t d = *meta_.drain_seconds + (policy_.oracle_lean ? MedianColdStart() : 0);
      std::vector<double> work_at(static_cast<size_t>(horizon_) + 1, 0);
      for (const auto& task : tasks_) {
        if (task.due < horizon_) work_at[task.due + 1] += static_cast<double>(task.duration);
      }
      for (int64_t i = 1; i <= horizon_; ++i) work_at[i] += work_at[i - 1];  // prefix sums
      for (int64_t i = 0; i < horizon_; ++i) {
        const double recent = work_at[i + 1] - work_at[std::max<int64_t>(0, i + 1 - d)];
        conc[i] =
            std::min(conc[i], static_cast<int64_t>(std::ceil(recent / static_cast<double>(d))));
      }
    }
    int64_t lead = policy_.oracle_lead_s;
    if (lead < 0) lead = MedianColdStart();
    // oracle_need_[t] = max ideal concurrency over [t, t + lead] (sliding-window maximum).
    oracle_need_.assign(static_cast<size_t>(horizon_), 0);
    std::deque<int64_t> window;
    for (int64_t i = horizon_ - 1; i >= 0; --i) {
      while (!window.empty() && conc[window.back()] <= conc[i]) window.pop_back();
      window.push_back(i);
      while (window.front() > i + lead) window.pop_front();
      oracle_need_[i] = conc[window.front()];
    }
    // Hold: keep what was needed in the last oracle_hold_s seconds (no churn through dips).
    if (policy_.oracle_hold_s > 0) {
      std::vector<int64_t> ahead = oracle_need_;
      window.clear();
      for (int64_t i = 0; i < horizon_; ++i) {
        while (!window.empty() && ahead[window.back()] <= ahead[i]) window.pop_back();
        window.push_back(i);
        while (window.front() < i - policy_.oracle_hold_s) window.pop_front();
        oracle_need_[i] = ahead[window.front()];
      }
    }
  }

  // Median time from asking for a replica to it being ready on a new node.
  int64_t MedianColdStart() const {
    return cluster_.ca_gpu_buffer_s + cluster_.ca_scan_s +
           static_cast<int64_t>(cluster_.vm_boot_median_s + cluster_.driver_median_s +
                                cluster_.image_pull_s +
                                (cluster_.model_load_min_s + cluster_.model_load_max_s) / 2);
  }

  int64_t OracleDesired() {
    const int64_t slots = cluster_.slots_per_pod;
    const int64_t running = Running();
    int64_t work = static_cast<int64_t>(queue_.size()) + running;
    if (meta_.drain_seconds && !queue_.empty() && policy_.oracle_lean) {
      // Warmpool's cold-start-aware rule with the truth: the queued work w; what the pods it
      // already has do before c + D (c = median cold start): a ready pod all of it, a starting
      // one from its ready time (exact once on a node, else one cold start after it was asked
      // for); new slots, which arrive at c, only for what those leave, drained within D.
      double w = 0;
      for (int id : queue_) w += static_cast<double>(tasks_[id].duration);
      const auto d = static_cast<double>(*meta_.drain_seconds);
      const auto c = static_cast<double>(MedianColdStart());
      double capacity = 0;
      int64_t pods = 0;
      for (int id : live_pods_) {
        const Pod& p = pods_[id];
        if (p.terminating) continue;
        ++pods;
        double rem = 0;
        if (!p.ready) {
          rem = p.node >= 0 ? static_cast<double>(p.ready_at - t_)
                            : static_cast<double>(p.created - t_) + c;
        }
        capacity += std::max(0.0, c + d - std::max(0.0, rem)) * static_cast<double>(slots);
      }
      const double x = std::max(0.0, std::floor((w - capacity) / d + 1e-9));
      const auto lean = static_cast<int64_t>(
          std::max(static_cast<double>(running), static_cast<double>(pods * slots) + x));
      work = std::clamp<int64_t>(lean, std::max<int64_t>(1, running), work);
    } else if (meta_.drain_seconds && !queue_.empty()) {
      double left = 0;  // true work left: queued durations + the rest of running tasks
      for (int id : queue_) left += static_cast<double>(tasks_[id].duration);
      for (int id : live_pods_) {
        for (int task_id : pods_[id].tasks) left += static_cast<double>(tasks_[task_id].end - t_);
      }
      const auto drain = static_cast<int64_t>(std::ceil(std::max(
          static_cast<double>(running), left / static_cast<double>(*meta_.drain_seconds))));
      work = std::clamp<int64_t>(drain, std::max<int64_t>(1, running), work);
    }
    // Lead 0: no look-ahead at all, only the exact work in the system (drain-sized).
    const int64_t need = policy_.oracle_lead_s == 0 ? work : std::max(work, oracle_need_[t_]);
    return std::min((need + slots - 1) / slots, meta_.max_replicas);
  }

  // ---- Kubernetes ----------------------------------------------------------------------------
  void Reconcile() {
    int64_t active = 0;
    for (int id : live_pods_) active += !pods_[id].terminating;
    for (; active < replicas_; ++active) {
      Pod p;
      p.created = t_;
      pods_.push_back(p);
      live_pods_.push_back(static_cast<int>(pods_.size() - 1));
    }
    if (active <= replicas_) return;
    // ReplicaSet scale-down ranking: unscheduled, then not ready, then ready newest first. It
    // does not know which pods are busy.
    std::vector<int> victims;
    for (int id : live_pods_) {
      if (!pods_[id].terminating) victims.push_back(id);
    }
    std::sort(victims.begin(), victims.end(), [&](int a, int b) {
      const Pod& x = pods_[a];
      const Pod& y = pods_[b];
      const int rx = x.node < 0 ? 0 : (!x.ready ? 1 : 2);
      const int ry = y.node < 0 ? 0 : (!y.ready ? 1 : 2);
      if (rx != ry) return rx < ry;
      if (rx == 2 && x.ready_since != y.ready_since) return x.ready_since > y.ready_since;
      if (x.created != y.created) return x.created > y.created;
      return a > b;
    });
    victims.resize(static_cast<size_t>(active - replicas_));
    for (int id : victims) {
      Pod& p = pods_[id];
      p.terminating = true;
      p.deadline = t_ + policy_.grace_s;  // SIGTERM: stop fetching, finish within the grace
    }
    for (size_t i = 0; i < live_pods_.size();) {
      Pod& p = pods_[live_pods_[i]];
      if (p.terminating && p.tasks.empty()) {
        RemovePod(live_pods_[i]);
        live_pods_[i] = live_pods_.back();
        live_pods_.pop_back();
        continue;
      }
      ++i;
    }
  }

  void RemovePod(int id) {
    Pod& p = pods_[id];
    if (p.node >= 0) {
      Node& n = nodes_[p.node];
      if (--n.pods == 0) n.empty_since = t_;
    }
  }

  void Schedule() {
    for (int id : live_pods_) {
      Pod& p = pods_[id];
      if (p.node >= 0 || p.terminating) continue;
      int best = -1;
      for (int nid : live_nodes_) {
        const Node& n = nodes_[nid];
        if (!n.ready || n.deleting || n.pods >= cluster_.gpus_per_node) continue;
        // Most-allocated first (bin packing keeps other nodes empty for scale-down), then oldest.
        if (best < 0 || n.pods > nodes_[best].pods || (n.pods == nodes_[best].pods && nid < best)) {
          best = nid;
        }
      }
      if (best < 0) continue;
      Node& n = nodes_[best];
      n.pods += 1;
      n.empty_since = kNever;
      if (n.pull_done < 0)
        n.pull_done = t_ + static_cast<int64_t>(std::llround(cluster_.image_pull_s));
      std::uniform_real_distribution<double> load(cluster_.model_load_min_s,
                                                  cluster_.model_load_max_s);
      p.node = best;
      p.ready_at = std::max(t_, n.pull_done) + static_cast<int64_t>(std::llround(load(rng_)));
    }
  }

  void ClusterAutoscaler() {
    // Scale up for unschedulable pods, once the oldest is older than the GPU buffer.
    int64_t unbound = 0, oldest = t_;
    for (int id : live_pods_) {
      const Pod& p = pods_[id];
      if (p.node < 0 && !p.terminating) {
        ++unbound;
        oldest = std::min(oldest, p.created);
      }
    }
    int64_t upcoming = 0, alive = 0;
    for (int nid : live_nodes_) {
      const Node& n = nodes_[nid];
      ++alive;
      if (!n.ready && !n.deleting) upcoming += cluster_.gpus_per_node - n.pods;
    }
    const int64_t need = unbound - upcoming;
    if (need > 0 && t_ - oldest >= cluster_.ca_gpu_buffer_s) {
      const int64_t add = std::min((need + cluster_.gpus_per_node - 1) / cluster_.gpus_per_node,
                                   cluster_.max_nodes - alive);
      for (int64_t i = 0; i < add; ++i) AddNode(false);
      if (add > 0) last_scale_up_ = t_;
    }
    // Scale down empty nodes after the unneeded time (not within delay-after-add of a scale-up).
    if (last_scale_up_ != kNever && t_ - last_scale_up_ < cluster_.ca_delay_after_add_s) return;
    int64_t deleted = 0;
    for (int nid : live_nodes_) {
      Node& n = nodes_[nid];
      if (!n.ready || n.deleting || n.pods > 0 || n.empty_since == kNever) continue;
      if (t_ - n.empty_since < cluster_.ca_unneeded_s) continue;
      if (deleted++ >= kMaxEmptyBulkDelete) break;
      n.deleting = true;
      n.delete_start = t_;
      n.delete_done = t_ + cluster_.node_delete_s;
    }
  }

  void AddNode(bool already_ready) {
    Node n;
    n.created = t_;
    const double vm = std::min(cluster_.vm_boot_max_s,
                               LogNormal(rng_, cluster_.vm_boot_median_s, cluster_.vm_boot_p95_s));
    const double drv = LogNormal(rng_, cluster_.driver_median_s, cluster_.driver_p95_s);
    n.ready_at = already_ready ? t_ : t_ + static_cast<int64_t>(std::llround(vm + drv));
    n.ready = already_ready;
    if (already_ready) n.pull_done = t_;
    nodes_.push_back(n);
    live_nodes_.push_back(static_cast<int>(nodes_.size() - 1));
    ++nodes_created_;
  }

  // Always-on: the pool was already running before the window starts.
  void Prewarm(int64_t replicas) {
    const int64_t node_count = (replicas + cluster_.gpus_per_node - 1) / cluster_.gpus_per_node;
    for (int64_t i = 0; i < node_count; ++i) AddNode(true);
    replicas_ = replicas;
    for (int64_t i = 0; i < replicas; ++i) {
      Pod p;
      p.node = static_cast<int>(i / cluster_.gpus_per_node);
      p.ready = true;
      p.ready_at = 0;
      nodes_[p.node].pods += 1;
      nodes_[p.node].empty_since = kNever;
      pods_.push_back(p);
      live_pods_.push_back(static_cast<int>(pods_.size() - 1));
    }
  }

  // ---- accounting ----------------------------------------------------------------------------
  int64_t Running() const {
    int64_t n = 0;
    for (int id : live_pods_) n += static_cast<int64_t>(pods_[id].tasks.size());
    return n;
  }

  void ColdStartBookkeeping() {
    bool warm = false;
    for (int id : live_pods_) {
      const Pod& p = pods_[id];
      if (p.ready && !p.terminating) {
        warm = true;
        break;
      }
    }
    if (warm) {
      in_cold_start_ = false;
    } else if (!queue_.empty() && !in_cold_start_) {
      in_cold_start_ = true;
      ++cold_starts_;
    }
  }

  void Bill(const Node& n, int64_t end) {
    const int64_t billed = std::max(end - n.created, cluster_.billing_minimum_s);
    billed_gpu_s_ += static_cast<double>(billed * cluster_.gpus_per_node);
    boot_gpu_s_ +=
        static_cast<double>((std::min(n.ready_at, end) - n.created) * cluster_.gpus_per_node);
    if (n.deleting) {
      delete_gpu_s_ += static_cast<double>((end - n.delete_start) * cluster_.gpus_per_node);
    }
  }

  void Sample() {
    TimelineSample s;
    s.t = t_;
    s.queue = static_cast<int64_t>(queue_.size());
    s.replicas = replicas_;
    for (int id : live_pods_) s.ready_pods += pods_[id].ready && !pods_[id].terminating;
    s.busy = Running();
    s.nodes = static_cast<int64_t>(live_nodes_.size());
    timeline_.push_back(s);
  }

  void Finish(SimResult* out) {
    for (int nid : live_nodes_) {
      Node& n = nodes_[nid];
      if (n.deleting) n.delete_done = std::min(n.delete_done, horizon_);
      Bill(n, n.deleting ? n.delete_done : horizon_);
    }
    // Tasks still running at the horizon count as busy for the part they ran.
    for (int id : live_pods_) {
      for (int task_id : pods_[id].tasks) {
        busy_gpu_s_ +=
            static_cast<double>(horizon_ - tasks_[task_id].start) / cluster_.slots_per_pod;
      }
    }
    int64_t unfinished = 0;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (!task_started_[i] && tasks_[i].first_due < horizon_) {
        ++unfinished;
        waits_.push_back(static_cast<double>(horizon_ - tasks_[i].first_due));
      }
    }
    SimResult r;
    r.policy = policy_.name;
    r.horizon_hours = static_cast<double>(horizon_) / 3600;
    r.billed_gpu_hours = billed_gpu_s_ / 3600;
    r.billed_dollars = billed_gpu_s_ / 3600 / static_cast<double>(cluster_.gpus_per_node) *
                       cluster_.price_per_node_hour;
    r.boot_gpu_hours = boot_gpu_s_ / 3600;
    r.busy_gpu_hours = busy_gpu_s_ / 3600;
    r.killed_gpu_hours = killed_gpu_s_ / 3600;
    r.delete_gpu_hours = delete_gpu_s_ / 3600;
    r.idle_gpu_hours = std::max(0.0, r.billed_gpu_hours - r.boot_gpu_hours - r.busy_gpu_hours -
                                         r.killed_gpu_hours - r.delete_gpu_hours);
    r.tasks = static_cast<int64_t>(tasks_.size());
    r.unfinished = unfinished;
    r.wait_p50 = Percentile(waits_, 0.50);
    r.wait_p95 = Percentile(waits_, 0.95);
    r.wait_p99 = Percentile(waits_, 0.99);
    r.wait_max = waits_.empty() ? 0 : *std::max_element(waits_.begin(), waits_.end());
    r.cold_starts = cold_starts_;
    r.killed_tasks = killed_;
    r.replica_changes = replica_changes_;
    r.reversals_per_hour = static_cast<double>(reversals_) / r.horizon_hours;
    r.nodes_created = nodes_created_;
    if (!tasks_.empty() && last_completion_ > 0) {
      r.makespan_s = static_cast<double>(last_completion_ - tasks_.front().arrival);
    }
    r.timeline = std::move(timeline_);
    *out = std::move(r);
  }

  const PolicySpec& policy_;
  const ClusterConfig& cluster_;
  std::mt19937_64 rng_;
  const int64_t step_;
  int64_t horizon_ = 0;
  int64_t t_ = 0;
  int64_t keda_phase_ = 0, hpa_phase_ = 0, ca_phase_ = 0;

  std::vector<SimTask> tasks_;
  std::vector<bool> task_started_;
  size_t next_arrival_ = 0;
  std::deque<int> queue_;
  std::priority_queue<std::pair<int64_t, int>, std::vector<std::pair<int64_t, int>>, std::greater<>>
      scheduled_;
  std::vector<Node> nodes_;
  std::vector<int> live_nodes_;
  std::vector<Pod> pods_;
  std::vector<int> live_pods_;

  // Controllers.
  policy::ScalerMetadata meta_;
  policy::PolicyState state_;
  policy::Decision decision_;
  int64_t evaluated_at_ = -1;
  int64_t replicas_ = 0;
  int64_t last_active_ = kNever;
  bool last_pushed_ = false;
  int64_t last_push_ = kNever;
  std::deque<std::pair<int64_t, int64_t>> hpa_history_;
  int64_t last_scale_up_ = kNever;
  std::vector<int64_t> oracle_need_;

  // Measurements.
  double billed_gpu_s_ = 0, boot_gpu_s_ = 0, busy_gpu_s_ = 0, killed_gpu_s_ = 0, delete_gpu_s_ = 0;
  double finished_durations_sum_ = 0, durations_reported_ = 0;
  int64_t finished_since_observe_ = 0;
  int64_t last_completion_ = 0;
  std::vector<double> waits_;
  int64_t cold_starts_ = 0, killed_ = 0, replica_changes_ = 0, reversals_ = 0, nodes_created_ = 0;
  int last_dir_ = 0;
  bool in_cold_start_ = false;
  std::vector<TimelineSample> timeline_;
};

// Highest ideal concurrency (every task started the moment it is runnable).
int64_t PeakConcurrency(const Workload& w) {
  std::vector<std::pair<double, int>> events;
  events.reserve(w.tasks.size() * 2);
  for (const auto& t : w.tasks) {
    const double due = std::max(t.arrival_s, t.eta_s);
    events.emplace_back(due, 1);
    events.emplace_back(due + t.duration_s, -1);
  }
  std::sort(events.begin(), events.end());
  int64_t cur = 0, peak = 0;
  for (const auto& e : events) peak = std::max(peak, cur += e.second);
  return peak;
}

}  // namespace

Status Simulate(const Workload& workload, const PolicySpec& policy, const ClusterConfig& cluster,
                uint64_t seed, int64_t timeline_step_s, SimResult* out) {
  if (policy.kind != PolicyKind::kOracle) {
    Simulation sim(workload, policy, cluster, seed, timeline_step_s);
    return sim.Run(out);
  }
  // The oracle knows the future (arrivals and durations). With that knowledge it runs seven
  // strategies, each with the drain sizing and with the lean (cold-start-aware) sizing, on this
  // very run and keeps the one that bills least (hindsight): pre-start one
  // median cold start ahead ("prewarm") or one mean pod start ahead ("react"), setting the
  // Deployment directly, holding what it needed in the last 5 minutes ("+hold"), or feeding its
  // count through the same KEDA + HPA as warmpool ("+hpa"); "now+hpa" looks no further ahead
  // than the exact work in the system. See docs/SCALING.md.
  const auto pod_start =
      static_cast<int64_t>(std::llround((cluster.model_load_min_s + cluster.model_load_max_s) / 2));
  SimResult best;
  bool have = false;
  struct Strategy {
    int64_t lead, hold;  // hold < 0: through KEDA + HPA
    const char* name;
  };
  const Strategy strategies[] = {{policy.oracle_lead_s, -1, "prewarm+hpa"},
                                 {policy.oracle_lead_s, 0, "prewarm"},
                                 {policy.oracle_lead_s, 300, "prewarm+hold"},
                                 {pod_start, -1, "react+hpa"},
                                 {pod_start, 0, "react"},
                                 {pod_start, 300, "react+hold"},
                                 {0, -1, "now+hpa"}};
  for (const bool lean : {false, true}) {
    for (const auto& st : strategies) {
      PolicySpec p = policy;
      p.oracle_lead_s = st.lead;
      p.oracle_hold_s = std::max<int64_t>(0, st.hold);
      p.oracle_via_hpa = st.hold < 0;
      p.oracle_lean = lean;
      Simulation sim(workload, p, cluster, seed, timeline_step_s);
      SimResult r;
      if (Status s = sim.Run(&r); !s.ok()) return s;
      r.variant = std::string(lean ? "lean " : "") + st.name;
      if (!have || r.billed_gpu_hours < best.billed_gpu_hours) best = std::move(r);
      have = true;
    }
  }
  *out = std::move(best);
  return Status::Ok();
}

std::vector<PolicySpec> DefaultPolicies(const std::map<std::string, std::string>& meta,
                                        const Workload& workload, const ClusterConfig& cluster) {
  std::vector<PolicySpec> out;
  std::map<std::string, std::string> wp_meta = meta;
  if (!wp_meta.count("tasksPerReplica")) {
    wp_meta["tasksPerReplica"] = std::to_string(cluster.slots_per_pod);
  }
  int64_t max_replicas = 100;
  if (auto it = wp_meta.find("maxReplicas"); it != wp_meta.end()) {
    max_replicas = std::max<int64_t>(1, std::atoll(it->second.c_str()));
  }

  // warmpool as its manifests recommend: external-push, pollingInterval 10, cooldownPeriod 30 (the
  // policy's keep-alive owns N -> 0), HPA behavior left at the Kubernetes defaults (the 300 s
  // scale-down window damps 1..N churn), terminationGracePeriodSeconds above the longest task.
  PolicySpec wp;
  wp.name = "warmpool";
  wp.kind = PolicyKind::kWarmpool;
  wp.meta = wp_meta;
  wp.keda.push = true;
  wp.keda.polling_s = 10;
  wp.keda.cooldown_s = 30;
  wp.keda.max_replicas = max_replicas;
  wp.grace_s = 7200;
  out.push_back(wp);

  for (int64_t cooldown : {300, 60}) {
    PolicySpec k;
    k.name = "keda-redis-cd" + std::to_string(cooldown);
    k.kind = PolicyKind::kKedaRedis;
    k.keda.cooldown_s = cooldown;  // polling 30, listLength 5, HPA and grace defaults
    out.push_back(k);
  }

  PolicySpec ka = wp;
  ka.name = "keepalive-600";
  ka.meta["keepAlive"] = "600";
  ka.meta["prewarm"] = "off";
  ka.meta["etaPrewarm"] = "false";
  out.push_back(ka);

  PolicySpec off = wp;
  off.name = "warmpool-prewarm-off";
  off.meta["prewarm"] = "off";
  out.push_back(off);

  PolicySpec on1;
  on1.name = "always-on-1";
  on1.kind = PolicyKind::kAlwaysOn;
  on1.replicas = 1;
  on1.grace_s = wp.grace_s;
  out.push_back(on1);

  PolicySpec peak = on1;
  const int64_t peak_pods =
      (PeakConcurrency(workload) + cluster.slots_per_pod - 1) / cluster.slots_per_pod;
  peak.replicas = std::clamp<int64_t>(
      peak_pods, 1, std::min(max_replicas, cluster.max_nodes * cluster.gpus_per_node));
  peak.name = "always-on-peak";
  out.push_back(peak);

  PolicySpec oracle;
  oracle.name = "oracle";
  oracle.kind = PolicyKind::kOracle;
  oracle.meta = wp_meta;  // the same sizing rule (tasksPerReplica, drainSeconds, maxReplicas)
  oracle.keda = wp.keda;  // used by its "+hpa" strategies: the same KEDA + HPA as warmpool
  oracle.hpa = wp.hpa;
  oracle.grace_s = wp.grace_s;
  out.push_back(oracle);
  return out;
}

Status ApplyScaledObjectOption(const std::string& key, const std::string& value, PolicySpec* p) {
  if (key == "push" || key == "measureDurations") {
    if (value != "true" && value != "false") {
      return Status::InvalidArgument("--scaledobject " + key + "=\"" + value + "\": true or false");
    }
    (key == "push" ? p->keda.push : p->measure_durations) = value == "true";
    return Status::Ok();
  }
  char* end = nullptr;
  const long long v = std::strtoll(value.c_str(), &end, 10);
  if (value.empty() || end != value.c_str() + value.size() || v < 0) {
    return Status::InvalidArgument("--scaledobject " + key + "=\"" + value +
                                   "\": must be an integer >= 0");
  }
  if (key == "pollingInterval" && v >= 1) {
    p->keda.polling_s = v;
  } else if (key == "cooldownPeriod") {
    p->keda.cooldown_s = v;
  } else if (key == "scaleDownStabilizationSeconds") {
    p->hpa.down_stabilization_s = v;
  } else if (key == "terminationGracePeriodSeconds") {
    p->grace_s = v;
  } else {
    return Status::InvalidArgument("--scaledobject " + key + "=\"" + value +
                                   "\": unknown setting (pollingInterval >= 1, cooldownPeriod, "
                                   "scaleDownStabilizationSeconds, terminationGracePeriodSeconds, "
                                   "push)");
  }
  return Status::Ok();
}

}  // namespace warmpool::sim
