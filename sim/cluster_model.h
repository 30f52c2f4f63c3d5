#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "sim/results.h"
#include "sim/sim_config.h"

namespace warmpool::sim {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

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
  int64_t deadline = 0;  // SIGKILL: SIGTERM + terminationGracePeriodSeconds
  // The worker's own grace (warmpool-worker --grace-seconds): from then it requeues what still
  // runs and exits. Never for Celery's worker, which waits for its tasks until SIGKILL.
  int64_t requeue_at = std::numeric_limits<int64_t>::max();
  std::vector<int> tasks;  // running task ids
  // ETA tasks its worker took from the list and holds (in kombu's `unacked`) until due; they need
  // no slot until then. On SIGTERM the worker restores them to the list (CeleryModel::RunWorker),
  // so a pod leaves only once it holds nothing.
  std::vector<int> held;
};

// The Deployment's spec.replicas, counting changes and direction reversals (churn).
class Deployment {
 public:
  int64_t replicas() const { return replicas_; }
  // Sets spec.replicas; a change is counted, and a reversal when it turns the direction around.
  void Scale(int64_t r, RunTally& tally);
  // Starts at r replicas without counting a change (a pool that ran before the window).
  void StartAt(int64_t r) { replicas_ = r; }

 private:
  int64_t replicas_ = 0;
  int last_dir_ = 0;
};

// The Kubernetes cluster and its cloud: nodes (boot, image cache, deletion, billing), pods (the
// ReplicaSet's create/terminate, the scheduler's binding, pod start), and the cluster
// autoscaler. Randomness uses common random numbers: the k-th node created and the k-th pod
// created draw their boot and model-load samples from their own stream of the run's seed, so
// policies compared on one seed see the same luck whatever else they do (a policy that asks for
// a third node does not change the second node's boot time). Billing adds to the run's tally.
class ClusterModel {
 public:
  ClusterModel(const ClusterConfig& config, uint64_t seed, RunTally& tally)
      : config_(config), seed_(seed), tally_(tally) {}

  // Nodes whose boot finished become ready; nodes whose deletion finished are billed and gone.
  void AdvanceNodes(int64_t t);

  // For each live pod: run_worker(pod) (the worker's second: completions, SIGKILL at the grace
  // deadline), then a terminating pod without tasks is removed, and a started one becomes ready.
  template <class RunWorker>
  void AdvancePods(int64_t t, RunWorker&& run_worker);

  // A pod's controller.kubernetes.io/pod-deletion-cost (warmpool-worker --pod-deletion-cost);
  // empty: unset on every pod (0), as Celery's own worker leaves it.
  using DeletionCost = std::function<int64_t(const Pod&)>;

  // The ReplicaSet: creates pods up to `replicas`, or terminates the surplus (SIGTERM, deadline
  // t + grace_s; the worker requeues at t + worker_grace_s, < 0 = never) in Kubernetes'
  // scale-down ranking, which does not know which pods are busy unless the worker says so
  // through `deletion_cost` (lower goes first).
  void Reconcile(int64_t t, int64_t replicas, int64_t grace_s, int64_t worker_grace_s = -1,
                 const DeletionCost& deletion_cost = {});

  // The scheduler: binds each pending pod to a ready node with a free GPU (most-allocated first,
  // then oldest); the pod is ready after the image pull (first time on the node) and model load.
  void Schedule(int64_t t);

  // One cluster-autoscaler scan: scale up for unschedulable pods once the oldest is older than
  // the GPU buffer; delete nodes empty for the unneeded time (not within delay-after-add of a
  // scale-up), at most --max-empty-bulk-delete per scan.
  void Autoscale(int64_t t);

  // Always-on: `replicas` ready pods on ready nodes at t = 0 (the pool ran before the window).
  void Prewarm(int64_t replicas);

  // Bills every node still alive at the horizon (deletions cut at the horizon).
  void BillAtHorizon(int64_t horizon);

  const std::vector<Pod>& pods() const { return pods_; }
  std::vector<Pod>& pods() { return pods_; }
  const std::vector<int>& live_pods() const { return live_pods_; }
  size_t live_nodes() const { return live_nodes_.size(); }
  const ClusterConfig& config() const { return config_; }

  int64_t Running() const;    // tasks running on live pods
  int64_t ReadyPods() const;  // ready, not terminating
  bool AnyWarmPod() const;    // some pod is ready and not terminating

 private:
  void AddNode(int64_t t, bool already_ready);
  void RemovePod(int64_t t, int id);
  void RemoveIdleTerminating(int64_t t);
  std::vector<int> RankForScaleDown(int64_t t, const DeletionCost& deletion_cost) const;
  void Bill(const Node& n, int64_t end);

  // The generator of the index-th node (kind 0) or pod (kind 1).
  std::mt19937_64 StreamOf(uint64_t kind, size_t index) const;

  const ClusterConfig config_;
  const uint64_t seed_;
  RunTally& tally_;
  std::vector<Node> nodes_;
  std::vector<int> live_nodes_;
  std::vector<Pod> pods_;
  std::vector<int> live_pods_;
  int64_t last_scale_up_ = kNever;
};

template <class RunWorker>
void ClusterModel::AdvancePods(int64_t t, RunWorker&& run_worker) {
  for (size_t i = 0; i < live_pods_.size();) {
    Pod& p = pods_[live_pods_[i]];
    run_worker(p);
    if (p.terminating && p.tasks.empty() && p.held.empty()) {
      RemovePod(t, live_pods_[i]);
      live_pods_[i] = live_pods_.back();
      live_pods_.pop_back();
      continue;
    }
    if (!p.ready && p.node >= 0 && t >= p.ready_at) {
      p.ready = true;
      p.ready_since = t;
    }
    ++i;
  }
}

inline int64_t ClusterModel::Running() const {
  int64_t n = 0;
  for (int id : live_pods_) n += static_cast<int64_t>(pods_[id].tasks.size());
  return n;
}

inline int64_t ClusterModel::ReadyPods() const {
  int64_t n = 0;
  for (int id : live_pods_) n += pods_[id].ready && !pods_[id].terminating;
  return n;
}

inline bool ClusterModel::AnyWarmPod() const {
  for (int id : live_pods_) {
    if (pods_[id].ready && !pods_[id].terminating) return true;
  }
  return false;
}

}  // namespace warmpool::sim
