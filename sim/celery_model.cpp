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
    queue_.push_back(static_cast<int>(next_arrival_++));
  }
}

void CeleryModel::Start(int64_t t, int id, Pod& pod) {
  SimTask& task = tasks_[id];
  task.start = t;
  task.end = t + task.duration;
  if (wait_index_[id] < 0) {
    wait_index_[id] = static_cast<int64_t>(tally_.waits.size());
    tally_.waits.push_back(static_cast<double>(t - task.first_due));
  } else {  // redelivered: it waits again from when it was killed or requeued
    tally_.waits[wait_index_[id]] += static_cast<double>(t - lost_at_[id]);
    lost_at_[id] = -1;
  }
  pod.tasks.push_back(id);
}

void CeleryModel::Fetch(int64_t t, ClusterModel& cluster) {
  std::vector<Pod>& pods = cluster.pods();
  const auto free = [&](const Pod& p) {
    return static_cast<int64_t>(p.tasks.size()) < slots_per_pod_;
  };
  for (int id : cluster.live_pods()) {
    Pod& p = pods[id];
    if (!p.ready || p.terminating) continue;
    // Held ETA tasks that came due, earliest first: each runs here in a free slot; with none
    // free it goes back to the head of the list for any worker (warmpool-worker's
    // PromoteDueEta), the earliest at the very head.
    if (!p.held.empty()) {
      std::vector<int> due;
      std::erase_if(p.held, [&](int task_id) {
        if (tasks_[task_id].due > t) return false;
        due.push_back(task_id);
        return true;
      });
      std::sort(due.begin(), due.end(),
                [&](int a, int b) { return tasks_[a].due < tasks_[b].due; });
      size_t k = 0;
      for (; k < due.size() && free(p); ++k) Start(t, due[k], p);
      for (size_t j = due.size(); j > k; --j) queue_.push_front(due[j - 1]);
    }
    while (!queue_.empty()) {
      const int task_id = queue_.front();
      if (tasks_[task_id].due > t) {
        p.held.push_back(task_id);  // an ETA task: held until due, no slot needed
      } else if (free(p)) {
        Start(t, task_id, p);
      } else {
        break;  // no prefetch beyond free slots: the head waits for the next slot
      }
      queue_.pop_front();
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

}  // namespace warmpool::sim
