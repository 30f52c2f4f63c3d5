#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster_model.h"
#include "sim/results.h"
#include "sim/workload.h"

namespace warmpool::sim {

// One task of the run, on the simulator's whole-second clock.
struct SimTask {
  int64_t arrival = 0;
  int64_t due = 0;  // runnable from (max of arrival and eta)
  int64_t duration = 1;
  int64_t start = -1;
  int64_t end = -1;
  int64_t first_due = 0;  // for waits of requeued tasks: the original due time
  int name = -1;          // index into CeleryModel::task_names(); -1 = unnamed
};

// The Celery side of a run: the broker (arrivals and the FIFO list LLEN sees) and the workers (one
// per pod, `slotsPerPod` tasks at a time, no prefetch beyond free slots). A task with an eta (a
// countdown) is published to the list like any other; a worker that takes it holds it in kombu's
// `unacked` until due without using a slot (Celery does not count ETA tasks against the prefetch
// limit; docs/worker.md), then runs it in a free slot, or with none free hands it back to the
// head of the list (warmpool-worker; docs/worker.md "ETA / countdown"). Shutdown of a
// terminating pod:
// - at SIGTERM the worker restores the ETA tasks it holds to the head of the list at once
//   (warm shutdown, docs/worker.md "Recovery"), so they wait for the next worker;
// - at the worker's own grace (warmpool-worker --grace-seconds, Pod::requeue_at) the running
//   tasks are requeued to the head of the list at once (worker/worker.cpp Shutdown) and counted
//   as requeued;
// - at the pod's grace deadline (SIGKILL) they are lost mid-run and stay in kombu's `unacked`
//   hash until a live consumer's restore_visible sweep finds them older than the visibility
//   timeout (kombu/transport/redis.py QoS.restore_visible; restored with rpush = the head BRPOP
//   takes next), counted as killed.
// Waits, busy, killed and requeued time go to the tally.
class CeleryModel {
 public:
  CeleryModel(const Workload& workload, int64_t slots_per_pod, RunTally& tally,
              int64_t visibility_timeout_s = 3600);

  // Tasks that arrive at t join the list, those with an eta too.
  void Arrive(int64_t t);
  // kombu's restore_visible: SIGKILLed tasks older than the visibility timeout go back to the
  // head of the list, when some worker is alive to run the sweep (`consumer_alive`).
  void RestoreVisible(int64_t t, bool consumer_alive);
  // The worker on `pod` at t: tasks that ended are completed; on a terminating pod, past the
  // worker's grace the running tasks are requeued, past the pod's deadline they are SIGKILLed.
  void RunWorker(int64_t t, Pod& pod);
  // Every ready, not terminating pod starts the ETA tasks it holds that are due in its free
  // slots (the rest go back to the head of the list), then takes from the head of the list: an
  // ETA task not yet due is held, any other starts in a free slot (none free: the head waits).
  void Fetch(int64_t t, ClusterModel& cluster);
  // End of the run: the part of running tasks before the horizon is busy time; tasks never
  // started (or lost and not restarted) wait up to the horizon and count as unfinished.
  void FinishAt(int64_t horizon, const ClusterModel& cluster);
  // The tasks on `pod` that have run at least `seconds` at t: what warmpool-worker
  // --pod-deletion-cost writes as the pod's deletion cost.
  int64_t RunningAtLeast(const Pod& pod, int64_t t, int64_t seconds) const;

  const std::vector<SimTask>& tasks() const { return tasks_; }
  // LLEN: not started and not held (ETA tasks no worker has taken included).
  const std::deque<int>& queue() const { return queue_; }
  // SIGKILLed tasks still unacked (not yet restored by a visibility sweep).
  int64_t lost() const { return static_cast<int64_t>(lost_.size()); }
  const std::vector<std::string>& task_names() const { return task_names_; }  // by SimTask.name

 private:
  // Takes the running task `id` off its worker at t: its partial run goes to `lost_gpu_s`.
  void Abandon(int64_t t, int id, double& lost_gpu_s);
  // Starts task `id` on `pod` at t, and counts its wait.
  void Start(int64_t t, int id, Pod& pod);

  const int64_t slots_per_pod_;
  const int64_t visibility_timeout_s_;
  RunTally& tally_;
  std::vector<SimTask> tasks_;
  std::vector<int64_t> wait_index_;  // index into tally.waits once started, else -1
  std::vector<int64_t> lost_at_;     // when it was last killed or requeued, else -1
  size_t next_arrival_ = 0;
  std::deque<int> queue_;
  using Due = std::pair<int64_t, int>;                               // (due time, task id)
  std::priority_queue<Due, std::vector<Due>, std::greater<>> lost_;  // (visible again at, id)
  std::vector<std::string> task_names_;
};

// Inline: it runs for every pod every simulated second.
inline void CeleryModel::RunWorker(int64_t t, Pod& p) {
  if (p.terminating && !p.held.empty()) {  // warm shutdown: held ETA tasks back to the head
    for (auto it = p.held.rbegin(); it != p.held.rend(); ++it) queue_.push_front(*it);
    p.held.clear();
  }
  for (size_t k = 0; k < p.tasks.size();) {
    SimTask& task = tasks_[p.tasks[k]];
    if (task.end <= t) {
      tally_.busy_gpu_s += static_cast<double>(task.duration) / slots_per_pod_;
      tally_.last_completion = std::max(tally_.last_completion, task.end);
      p.tasks[k] = p.tasks.back();
      p.tasks.pop_back();
      continue;
    }
    ++k;
  }
  if (!p.terminating || p.tasks.empty()) return;
  if (t >= p.deadline) {
    for (int id : p.tasks) {  // SIGKILL: lost mid-run, unacked until the visibility timeout
      Abandon(t, id, tally_.killed_gpu_s);
      lost_.push({t + visibility_timeout_s_, id});
      ++tally_.killed_tasks;
    }
    p.tasks.clear();
  } else if (t >= p.requeue_at) {
    for (int id : p.tasks) {  // the worker's grace is over: requeue and exit
      Abandon(t, id, tally_.requeued_gpu_s);
      queue_.push_front(id);
      ++tally_.requeued_tasks;
    }
    p.tasks.clear();
  }
}

inline void CeleryModel::Abandon(int64_t t, int id, double& lost_gpu_s) {
  SimTask& task = tasks_[id];
  lost_gpu_s += static_cast<double>(t - task.start) / slots_per_pod_;
  task.start = -1;
  task.end = -1;
  lost_at_[id] = t;
}

}  // namespace warmpool::sim
