#include "sim/cluster_model.h"

#include <algorithm>
#include <cmath>

namespace warmpool::sim {
namespace {

constexpr double kZ95 = 1.6448536269514722;
constexpr int64_t kMaxEmptyBulkDelete = 10;  // CA --max-empty-bulk-delete

// A lognormal sample with the given median and 95th percentile (the median when p95 <= median).
double LogNormal(std::mt19937_64& rng, double median, double p95) {
  if (p95 <= median) return median;
  std::normal_distribution<double> n(std::log(median), std::log(p95 / median) / kZ95);
  return std::exp(n(rng));
}

uint64_t SplitMix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::mt19937_64 ClusterModel::StreamOf(uint64_t kind, size_t index) const {
  return std::mt19937_64(SplitMix64(seed_ ^ SplitMix64(2 * static_cast<uint64_t>(index) + kind)));
}

void Deployment::Scale(int64_t r, RunTally& tally) {
  if (r == replicas_) return;
  const int dir = r > replicas_ ? 1 : -1;
  if (last_dir_ != 0 && dir != last_dir_) ++tally.reversals;
  last_dir_ = dir;
  ++tally.replica_changes;
  replicas_ = r;
}

void ClusterModel::AdvanceNodes(int64_t t) {
  for (size_t i = 0; i < live_nodes_.size();) {
    Node& n = nodes_[live_nodes_[i]];
    if (!n.ready && !n.deleting && t >= n.ready_at) {
      n.ready = true;
      if (n.pods == 0) n.empty_since = t;
    }
    if (n.deleting && t >= n.delete_done) {
      Bill(n, n.delete_done);
      live_nodes_[i] = live_nodes_.back();
      live_nodes_.pop_back();
      continue;
    }
    ++i;
  }
}

void ClusterModel::Reconcile(int64_t t, int64_t replicas, int64_t grace_s, int64_t worker_grace_s,
                             const DeletionCost& deletion_cost) {
  int64_t active = 0;
  for (int id : live_pods_) active += !pods_[id].terminating;
  for (; active < replicas; ++active) {
    Pod p;
    p.created = t;
    pods_.push_back(p);
    live_pods_.push_back(static_cast<int>(pods_.size() - 1));
  }
  if (active <= replicas) return;
  std::vector<int> victims = RankForScaleDown(t, deletion_cost);
  victims.resize(static_cast<size_t>(active - replicas));
  for (int id : victims) {
    Pod& p = pods_[id];
    p.terminating = true;
    p.deadline = t + grace_s;  // SIGTERM: stop fetching, finish within the grace
    if (worker_grace_s >= 0) p.requeue_at = t + worker_grace_s;
  }
  RemoveIdleTerminating(t);
}

// ReplicaSet scale-down ranking, as kubernetes pkg/controller/replicaset getPodsToDelete sorts
// controller.ActivePodsWithRanks (pkg/controller/controller_utils.go): 1. unscheduled before
// scheduled; 2./3. pending or not ready before ready; 4. lower pod-deletion-cost first (0 when
// unset; set only by warmpool-worker --pod-deletion-cost, see DeletionCost); 5. more active pods of
// the Deployment on the same node first (getPodsRankedByRelatedPodsOnSameNode); 6. ready for
// less time first, compared in log2 buckets of the ready duration (LogarithmicScaleDown, on by
// default since 1.22; ties by pod UID, here a hash of the pod's index); 8. newer first. Without
// the annotation it does not know which pods are busy.
std::vector<int> ClusterModel::RankForScaleDown(int64_t t,
                                                const DeletionCost& deletion_cost) const {
  std::vector<int> victims;
  std::vector<int64_t> on_node(nodes_.size(), 0);
  for (int id : live_pods_) {
    if (pods_[id].terminating) continue;
    victims.push_back(id);
    if (pods_[id].node >= 0) ++on_node[pods_[id].node];
  }
  const auto bucket = [t](const Pod& p) {  // floor(log2(ready duration in ns)), -1 if none
    const int64_t d = t - p.ready_since;
    return d > 0 ? static_cast<int>(std::floor(std::log2(static_cast<double>(d) * 1e9))) : -1;
  };
  const auto cost = [&deletion_cost](const Pod& p) {
    return deletion_cost ? deletion_cost(p) : int64_t{0};
  };
  // A stable stand-in for the random pod UID.
  const auto uid = [](int id) { return SplitMix64(static_cast<uint64_t>(id)); };
  std::sort(victims.begin(), victims.end(), [&](int a, int b) {
    const Pod& x = pods_[a];
    const Pod& y = pods_[b];
    const int rx = x.node < 0 ? 0 : (!x.ready ? 1 : 2);
    const int ry = y.node < 0 ? 0 : (!y.ready ? 1 : 2);
    if (rx != ry) return rx < ry;
    if (const auto cx = cost(x), cy = cost(y); cx != cy) return cx < cy;
    if (rx > 0 && on_node[x.node] != on_node[y.node]) return on_node[x.node] > on_node[y.node];
    if (rx == 2 && x.ready_since != y.ready_since) {
      const int bx = bucket(x), by = bucket(y);
      if (bx != by) return bx < by;
      return uid(a) < uid(b);
    }
    if (x.created != y.created) return x.created > y.created;
    return a > b;
  });
  return victims;
}

void ClusterModel::RemoveIdleTerminating(int64_t t) {
  for (size_t i = 0; i < live_pods_.size();) {
    Pod& p = pods_[live_pods_[i]];
    if (p.terminating && p.tasks.empty() && p.held.empty()) {
      RemovePod(t, live_pods_[i]);
      live_pods_[i] = live_pods_.back();
      live_pods_.pop_back();
      continue;
    }
    ++i;
  }
}

void ClusterModel::RemovePod(int64_t t, int id) {
  Pod& p = pods_[id];
  if (p.node >= 0) {
    Node& n = nodes_[p.node];
    if (--n.pods == 0) n.empty_since = t;
  }
}

void ClusterModel::Schedule(int64_t t) {
  for (int id : live_pods_) {
    Pod& p = pods_[id];
    if (p.node >= 0 || p.terminating) continue;
    int best = -1;
    for (int nid : live_nodes_) {
      const Node& n = nodes_[nid];
      if (!n.ready || n.deleting || n.pods >= config_.gpus_per_node) continue;
      // Most-allocated first (bin packing keeps other nodes empty for scale-down), then oldest.
      if (best < 0 || n.pods > nodes_[best].pods || (n.pods == nodes_[best].pods && nid < best)) {
        best = nid;
      }
    }
    if (best < 0) continue;
    Node& n = nodes_[best];
    n.pods += 1;
    n.empty_since = kNever;
    if (n.pull_done < 0) n.pull_done = t + static_cast<int64_t>(std::llround(config_.image_pull_s));
    std::uniform_real_distribution<double> load(config_.model_load_min_s, config_.model_load_max_s);
    std::mt19937_64 rng = StreamOf(1, static_cast<size_t>(id));
    p.node = best;
    p.ready_at = std::max(t, n.pull_done) + static_cast<int64_t>(std::llround(load(rng)));
  }
}

void ClusterModel::Autoscale(int64_t t) {
  // Scale up for unschedulable pods, once the oldest is older than the GPU buffer.
  int64_t unbound = 0, oldest = t;
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
    if (!n.ready && !n.deleting) upcoming += config_.gpus_per_node - n.pods;
  }
  const int64_t need = unbound - upcoming;
  if (need > 0 && t - oldest >= config_.ca_gpu_buffer_s) {
    const int64_t add = std::min((need + config_.gpus_per_node - 1) / config_.gpus_per_node,
                                 config_.max_nodes - alive);
    for (int64_t i = 0; i < add; ++i) AddNode(t, false);
    if (add > 0) last_scale_up_ = t;
  }
  // Scale down empty nodes after the unneeded time (not within delay-after-add of a scale-up).
  if (last_scale_up_ != kNever && t - last_scale_up_ < config_.ca_delay_after_add_s) return;
  int64_t deleted = 0;
  for (int nid : live_nodes_) {
    Node& n = nodes_[nid];
    if (!n.ready || n.deleting || n.pods > 0 || n.empty_since == kNever) continue;
    if (t - n.empty_since < config_.ca_unneeded_s) continue;
    if (deleted++ >= kMaxEmptyBulkDelete) break;
    n.deleting = true;
    n.delete_start = t;
    n.delete_done = t + config_.node_delete_s;
  }
}

void ClusterModel::AddNode(int64_t t, bool already_ready) {
  Node n;
  n.created = t;
  std::mt19937_64 rng = StreamOf(0, nodes_.size());
  const double vm = std::min(config_.vm_boot_max_s,
                             LogNormal(rng, config_.vm_boot_median_s, config_.vm_boot_p95_s));
  const double drv = LogNormal(rng, config_.driver_median_s, config_.driver_p95_s);
  n.ready_at = already_ready ? t : t + static_cast<int64_t>(std::llround(vm + drv));
  n.ready = already_ready;
  if (already_ready) n.pull_done = t;
  nodes_.push_back(n);
  live_nodes_.push_back(static_cast<int>(nodes_.size() - 1));
  ++tally_.nodes_created;
}

void ClusterModel::Prewarm(int64_t replicas) {
  const int64_t node_count = (replicas + config_.gpus_per_node - 1) / config_.gpus_per_node;
  for (int64_t i = 0; i < node_count; ++i) AddNode(0, true);
  for (int64_t i = 0; i < replicas; ++i) {
    Pod p;
    p.node = static_cast<int>(i / config_.gpus_per_node);
    p.ready = true;
    p.ready_at = 0;
    nodes_[p.node].pods += 1;
    nodes_[p.node].empty_since = kNever;
    pods_.push_back(p);
    live_pods_.push_back(static_cast<int>(pods_.size() - 1));
  }
}

void ClusterModel::BillAtHorizon(int64_t horizon) {
  for (int nid : live_nodes_) {
    Node& n = nodes_[nid];
    if (n.deleting) n.delete_done = std::min(n.delete_done, horizon);
    Bill(n, n.deleting ? n.delete_done : horizon);
  }
}

void ClusterModel::Bill(const Node& n, int64_t end) {
  const int64_t billed = std::max(end - n.created, config_.billing_minimum_s);
  tally_.billed_gpu_s += static_cast<double>(billed * config_.gpus_per_node);
  tally_.boot_gpu_s +=
      static_cast<double>((std::min(n.ready_at, end) - n.created) * config_.gpus_per_node);
  if (n.deleting) {
    tally_.delete_gpu_s += static_cast<double>((end - n.delete_start) * config_.gpus_per_node);
  }
}

}  // namespace warmpool::sim
