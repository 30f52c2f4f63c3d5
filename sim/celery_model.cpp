#include "sim/celery_model.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace warmpool::sim {

CeleryModel::CeleryModel(const Workload& workload, int64_t slots_per_pod, RunTally& tally,
                         int64_t visibility_timeout_s)
    : slots_per_pod_(slots_per_pod), visibility_timeout_s_(visibility_timeout_s), tally_(tally) {
  tasks_.reserve(workload.tasks.size());
  std::map<std::string, int> name_ids;
  for (const auto& t : workload.tasks) {
    SimTask s;
    if (!t.task.empty()) {
      const auto [it, added] = name_ids.emplace(t.task, static_cast<int>(task_names_.size()));
      if (added) task_names_.push_back(t.task);
      s.name = it->second;
    }
    s.arrival = static_cast<int64_t>(std::floor(t.arrival_s));
    s.due = std::max(s.arrival, static_cast<int64_t>(std::ceil(t.eta_s)));
    s.first_due = s.due;
    s.duration = std::max<int64_t>(1, std::llround(t.duration_s));
    tasks_.push_back(s);
  }
  wait_index_.assign(tasks_.size(), -1);
  lost_at_.assign(tasks_.size(), -1);
}

void CeleryModel::Arrive(int64_t t) {
  while (next_arrival_ < tasks_.size() && tasks_[next_arrival_].arrival <= t) {
    const int id = static_cast<int>(next_arrival_++);
    if (tasks_[id].due > t) {
      scheduled_.push({tasks_[id].due, id});
    } else {
      queue_.push_back(id);
    }
  }
  while (!scheduled_.empty() && scheduled_.top().first <= t) {
    queue_.push_back(scheduled_.top().second);
    scheduled_.pop();
  }
}

void CeleryModel::Fetch(int64_t t, ClusterModel& cluster) {
  std::vector<Pod>& pods = cluster.pods();
  for (int id : cluster.live_pods()) {
    if (queue_.empty()) return;  // most seconds: nothing to fetch, no pod to visit
    Pod& p = pods[id];
    if (!p.ready || p.terminating) continue;
    while (static_cast<int64_t>(p.tasks.size()) < slots_per_pod_ && !queue_.empty()) {
      const int task_id = queue_.front();
      queue_.pop_front();
      SimTask& task = tasks_[task_id];
      task.start = t;
      task.end = t + task.duration;
      if (wait_index_[task_id] < 0) {
        wait_index_[task_id] = static_cast<int64_t>(tally_.waits.size());
        tally_.waits.push_back(static_cast<double>(t - task.first_due));
      } else {  // redelivered: it waits again from when it was killed or requeued
        tally_.waits[wait_index_[task_id]] += static_cast<double>(t - lost_at_[task_id]);
        lost_at_[task_id] = -1;
      }
      p.tasks.push_back(task_id);
    }
  }
}

int64_t CeleryModel::RunningAtLeast(const Pod& pod, int64_t t, int64_t seconds) const {
  return std::count_if(pod.tasks.begin(), pod.tasks.end(),
                       [&](int id) { return t - tasks_[id].start >= seconds; });
}

void CeleryModel::FinishAt(int64_t horizon, const ClusterModel& cluster) {
  for (int id : cluster.live_pods()) {
    for (int task_id : cluster.pods()[id].tasks) {
      tally_.busy_gpu_s += static_cast<double>(horizon - tasks_[task_id].start) / slots_per_pod_;
    }
  }
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (wait_index_[i] < 0 && tasks_[i].first_due < horizon) {
      ++tally_.unfinished;
      tally_.waits.push_back(static_cast<double>(horizon - tasks_[i].first_due));
    } else if (wait_index_[i] >= 0 && lost_at_[i] >= 0) {  // lost or requeued, not restarted
      ++tally_.unfinished;
      tally_.waits[wait_index_[i]] += static_cast<double>(horizon - lost_at_[i]);
    }
  }
}

void CeleryModel::RestoreVisible(int64_t t, bool consumer_alive) {
  if (!consumer_alive) return;
  while (!lost_.empty() && lost_.top().first <= t) {
    queue_.push_front(lost_.top().second);
    lost_.pop();
  }
}

std::optional<int64_t> CeleryModel::earliest_eta() const {
  if (scheduled_.empty()) return std::nullopt;
  return scheduled_.top().first;
}

}  // namespace warmpool::sim
