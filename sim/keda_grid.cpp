#include "sim/keda_grid.h"

#include <algorithm>
#include <cmath>

#include "sim/cron_trigger.h"

namespace warmpool::sim {

std::string KedaGridName(const KedaGridPoint& p) {
  std::string name = "keda-ll";
  name.append(std::to_string(p.list_length))
      .append("-cd")
      .append(std::to_string(p.cooldown_s))
      .append("-pi")
      .append(std::to_string(p.polling_s))
      .append("-g")
      .append(std::to_string(p.grace_s));
  if (p.cron_replicas > 0) name.append("-cron").append(std::to_string(p.cron_replicas));
  return name;
}

PolicySpec KedaGridPolicy(const KedaGridPoint& point) {
  PolicySpec p;
  p.name = KedaGridName(point);
  p.kind = PolicyKind::kKedaRedis;
  p.list_length = point.list_length;
  p.activation_list_length = 0;
  p.keda.cooldown_s = point.cooldown_s;
  p.keda.polling_s = point.polling_s;
  p.grace_s = point.grace_s;
  p.cron_replicas = point.cron_replicas;
  return p;
}

int64_t LongestTaskSeconds(const Workload& w) {
  double longest = 0;
  for (const auto& t : w.tasks) longest = std::max(longest, t.duration_s);
  return static_cast<int64_t>(std::ceil(longest));
}

int64_t OfficeHoursFloor(const Workload& w, const ClusterConfig& cluster) {
  const CronWindow office_hours;
  // Task-seconds runnable inside the window if each task started when due, over the window's
  // seconds within the horizon: summed per second (horizons are days, not years).
  const int64_t horizon = std::max<int64_t>(1, w.horizon_s);
  std::vector<int64_t> diff(static_cast<size_t>(horizon) + 1, 0);
  for (const auto& t : w.tasks) {
    const auto due = static_cast<int64_t>(std::max(t.arrival_s, t.eta_s));
    if (due >= horizon) continue;
    diff[due] += 1;
    diff[std::min(horizon, due + static_cast<int64_t>(std::ceil(t.duration_s)))] -= 1;
  }
  int64_t running = 0, window_s = 0;
  double task_s = 0;
  for (int64_t t = 0; t < horizon; ++t) {
    running += diff[t];
    if (!InCronWindow(office_hours, t)) continue;
    ++window_s;
    task_s += static_cast<double>(running);
  }
  if (window_s == 0) return 0;
  const double pods =
      task_s / static_cast<double>(window_s) / static_cast<double>(cluster.slots_per_pod);
  return std::max<int64_t>(1, std::llround(pods));
}

std::vector<PolicySpec> KedaGrid(const Workload& w, const ClusterConfig& cluster) {
  std::vector<int64_t> graces = {30};
  const int64_t longest = LongestTaskSeconds(w);
  if (longest > 30) graces.push_back((longest + 59) / 60 * 60);
  const int64_t floor = OfficeHoursFloor(w, cluster);
  const std::vector<int64_t> crons =
      floor > 0 ? std::vector<int64_t>{0, floor} : std::vector<int64_t>{0};
  std::vector<PolicySpec> out;
  KedaGridPoint p;
  for (int64_t list_length : {1, 2, 5, 10}) {
    for (int64_t cooldown : {60, 300, 900}) {
      for (int64_t polling : {10, 30}) {
        for (int64_t grace : graces) {
          for (int64_t cron : crons) {
            p.list_length = list_length;
            p.cooldown_s = cooldown;
            p.polling_s = polling;
            p.grace_s = grace;
            p.cron_replicas = cron;
            out.push_back(KedaGridPolicy(p));
          }
        }
      }
    }
  }
  return out;
}

}  // namespace warmpool::sim
