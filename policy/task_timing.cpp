#include "policy/task_timing.h"

#include <algorithm>
#include <set>

namespace warmpool::policy {

std::optional<double> ObserveInFlightTags(TaskTiming* timing, const std::vector<std::string>& tags,
                                          std::chrono::system_clock::time_point now) {
  const std::set<std::string> current(tags.begin(), tags.end());
  double sum = 0;
  int count = 0;
  for (auto it = timing->first_seen.begin(); it != timing->first_seen.end();) {
    if (current.count(it->first)) {
      ++it;
      continue;
    }
    const double ran = std::chrono::duration<double>(now - it->second).count();
    if (ran > 0) {
      sum += ran;
      ++count;
    }
    it = timing->first_seen.erase(it);
  }
  for (const auto& tag : current) timing->first_seen.emplace(tag, now);
  if (count == 0) return std::nullopt;
  return sum / count;
}

double OldestInFlightSeconds(const TaskTiming& timing, std::chrono::system_clock::time_point now) {
  double oldest = 0;
  for (const auto& [tag, since] : timing.first_seen) {
    oldest = std::max(oldest, std::chrono::duration<double>(now - since).count());
  }
  return oldest;
}

}  // namespace warmpool::policy
