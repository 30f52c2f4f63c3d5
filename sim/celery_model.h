#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
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
};

// The Celery side of a run: the broker (arrivals, tasks with an eta held out of the list until
// due, as in kombu's `unacked` hash, and the FIFO list LLEN sees) and the workers (one per pod,
// `slotsPerPod` tasks at a time, no prefetch beyond free slots; a task SIGKILLed at the grace
// deadline is redelivered to the head of the list). Waits, busy and killed time go to the tally.
class CeleryModel {
 public:
  CeleryModel(const Workload& workload, int64_t slots_per_pod, RunTally& tally);

  // Tasks that arrive at t, and held tasks that become due at t, join the list.
  void Arrive(int64_t t);
  // The worker on `pod` at t: tasks that ended are completed; on a terminating pod past its
  // grace deadline, the running tasks are killed and redelivered.
  void RunWorker(int64_t t, Pod& pod);
  // Every ready, not terminating pod takes tasks from the head of the list into its free slots.
  void Fetch(int64_t t, ClusterModel& cluster);
  // End of the run: the part of running tasks before the horizon is busy time; tasks never
  // started wait up to the horizon and count as unfinished.
  void FinishAt(int64_t horizon, const ClusterModel& cluster);

  const std::vector<SimTask>& tasks() const { return tasks_; }
  const std::deque<int>& queue() const { return queue_; }  // LLEN: runnable, not started
  int64_t scheduled() const { return static_cast<int64_t>(scheduled_.size()); }
  std::optional<int64_t> earliest_eta() const;  // earliest due time of a held task
  // Completed tasks, for the durations the scaler measures: the running sum of their durations
  // and the count since ResetFinishedCount().
  double finished_durations_sum() const { return finished_durations_sum_; }
  int64_t finished_count() const { return finished_since_take_; }
  void ResetFinishedCount() { finished_since_take_ = 0; }

 private:
  const int64_t slots_per_pod_;
  RunTally& tally_;
  std::vector<SimTask> tasks_;
  std::vector<bool> task_started_;
  size_t next_arrival_ = 0;
  std::deque<int> queue_;
  using Due = std::pair<int64_t, int>;  // (due time, task id)
  std::priority_queue<Due, std::vector<Due>, std::greater<>> scheduled_;
  double finished_durations_sum_ = 0;
  int64_t finished_since_take_ = 0;
};

// Inline: it runs for every pod every simulated second.
inline void CeleryModel::RunWorker(int64_t t, Pod& p) {
  for (size_t k = 0; k < p.tasks.size();) {
    SimTask& task = tasks_[p.tasks[k]];
    if (task.end <= t) {
      tally_.busy_gpu_s += static_cast<double>(task.duration) / slots_per_pod_;
      finished_durations_sum_ += static_cast<double>(task.duration);
      ++finished_since_take_;
      tally_.last_completion = std::max(tally_.last_completion, task.end);
      p.tasks[k] = p.tasks.back();
      p.tasks.pop_back();
      continue;
    }
    ++k;
  }
  if (p.terminating && !p.tasks.empty() && t >= p.deadline) {
    for (int id : p.tasks) {  // SIGKILL: the task is lost mid-run and redelivered
      SimTask& task = tasks_[id];
      tally_.killed_gpu_s += static_cast<double>(t - task.start) / slots_per_pod_;
      task.start = -1;
      task.end = -1;
      queue_.push_front(id);
      ++tally_.killed_tasks;
    }
    p.tasks.clear();
  }
}

}  // namespace warmpool::sim
