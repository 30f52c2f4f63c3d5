#include "sim/triggers.h"

#include <algorithm>

namespace warmpool::sim {

policy::Observation WarmpoolTrigger::Observe(int64_t t) {
  policy::Observation o;
  o.pending = static_cast<int64_t>(celery_.queue().size());
  o.in_flight = cluster_.Running();
  for (int id : cluster_.live_pods()) {
    for (int task_id : cluster_.pods()[id].tasks) {
      o.oldest_in_flight_seconds = std::max(
          o.oldest_in_flight_seconds, static_cast<double>(t - celery_.tasks()[task_id].start));
    }
  }
  o.scheduled = celery_.scheduled();
  if (const auto eta = celery_.earliest_eta())
    o.earliest_eta = kSimEpoch + std::chrono::seconds(*eta);
  const int64_t finished = celery_.finished_count();
  if (policy_.measure_durations && finished > 0) {
    o.measured_task_seconds =
        (celery_.finished_durations_sum() - durations_reported_) / static_cast<double>(finished);
    o.measured_task_count = finished;
    durations_reported_ = celery_.finished_durations_sum();
    celery_.ResetFinishedCount();
  }
  return o;
}

const policy::Decision& WarmpoolTrigger::Evaluate(int64_t t) {
  if (evaluated_at_ != t) {
    const auto now = kSimEpoch + std::chrono::seconds(t);
    const policy::Observation o = Observe(t);
    state_ = policy::Observe(state_, meta_, o, now);
    decision_ = policy::Decide(meta_, o, state_, now);
    evaluated_at_ = t;
  }
  return decision_;
}

}  // namespace warmpool::sim
