#include "sim/cron_trigger.h"

#include <algorithm>

namespace warmpool::sim {

bool InCronWindow(const CronWindow& w, int64_t t) {
  constexpr int64_t kDay = 86'400;
  if (t < 0) return false;
  const auto weekday = static_cast<int>((t / kDay) % 7);
  const int64_t of_day = t % kDay;
  return weekday >= w.first_weekday && weekday <= w.last_weekday && of_day >= w.start_of_day_s &&
         of_day < w.end_of_day_s;
}

bool AnyOfTriggers::IsActive(int64_t t) {
  bool any = false;
  for (auto& trigger : triggers_) any = trigger->IsActive(t) || any;  // KEDA asks every scaler
  return any;
}

double AnyOfTriggers::Metric(int64_t t) {
  double highest = 0;
  for (auto& trigger : triggers_)
    highest = std::max(highest, trigger->Metric(t) / trigger->Target());
  return highest;
}

bool AnyOfTriggers::CanPush() const {
  return std::any_of(triggers_.begin(), triggers_.end(),
                     [](const auto& trigger) { return trigger->CanPush(); });
}

}  // namespace warmpool::sim
