#include "policy/task_timing.h"

#include <algorithm>
#include <set>

namespace warmpool::policy {

FinishedInFlight ObserveInFlight(TaskTiming* timing, const std::vector<std::string>& tags,
                                 const std::vector<std::string>& tasks,
                                 std::chrono::system_clock::time_point now) {
  const std::set<std::string> current(tags.begin(), tags.end());
  FinishedInFlight out;
  double sum = 0;
  std::map<std::string, FinishedTasks> by_task;
  for (auto it = timing->first_seen.begin(); it != timing->first_seen.end();) {
    if (current.count(it->first)) {
      ++it;
      continue;
    }
    const double ran = std::chrono::duration<double>(now - it->second).count();
    const auto name = timing->task_of.find(it->first);
    if (ran > 0) {
      sum += ran;
      ++out.count;
      if (name != timing->task_of.end()) {
        FinishedTasks& f = by_task[name->second];
        f.task = name->second;
        f.seconds_sum += ran;
        ++f.count;
      }
    }
    if (name != timing->task_of.end()) timing->task_of.erase(name);
    it = timing->first_seen.erase(it);
  }
  for (size_t i = 0; i < tags.size(); ++i) {
    timing->first_seen.emplace(tags[i], now);
    // A tag first seen without a name takes one a later snapshot gives it.
    if (i < tasks.size() && !tasks[i].empty()) timing->task_of.emplace(tags[i], tasks[i]);
  }
  if (out.count > 0) out.mean_seconds = sum / static_cast<double>(out.count);
  for (auto& [name, f] : by_task) out.by_task.push_back(std::move(f));
  return out;
}

std::optional<double> ObserveInFlightTags(TaskTiming* timing, const std::vector<std::string>& tags,
                                          std::chrono::system_clock::time_point now) {
  return ObserveInFlight(timing, tags, {}, now).mean_seconds;
}

double OldestInFlightSeconds(const TaskTiming& timing, std::chrono::system_clock::time_point now) {
  double oldest = 0;
  for (const auto& [tag, since] : timing.first_seen) {
    oldest = std::max(oldest, std::chrono::duration<double>(now - since).count());
  }
  return oldest;
}

}  // namespace warmpool::policy
