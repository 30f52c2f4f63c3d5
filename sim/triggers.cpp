#include "sim/triggers.h"

#include <algorithm>
#include <utility>

namespace warmpool::sim {

policy::Observation ObservationOf(const ProbeSnapshot& snapshot, int64_t t,
                                  bool measure_durations) {
  policy::Observation o;
  o.pending = snapshot.pending;
  o.in_flight = snapshot.in_flight;
  if (snapshot.oldest_start) {
    o.oldest_in_flight_seconds = std::max(0.0, static_cast<double>(t - *snapshot.oldest_start));
  }
  o.scheduled = snapshot.scheduled;
  if (snapshot.earliest_eta)
    o.earliest_eta = kSimEpoch + std::chrono::seconds(*snapshot.earliest_eta);
  if (measure_durations && snapshot.finished > 0) {
    o.measured_task_seconds = snapshot.finished_seconds / static_cast<double>(snapshot.finished);
    o.measured_task_count = snapshot.finished;
    o.finished_by_task = snapshot.finished_by_task;
  }
  // The scaler samples task names with the reads it measures durations from.
  if (measure_durations) o.pending_sample = snapshot.pending_sample;
  return o;
}

policy::Decision PolicyStep(const policy::ScalerMetadata& meta, const policy::Observation& obs,
                            int64_t t, policy::PolicyState* state) {
  const auto now = kSimEpoch + std::chrono::seconds(t);
  policy::Decision decided;
  *state = policy::Observe(std::move(*state), meta, obs, now, &decided);
  return decided;
}

ProbeSnapshot WarmpoolTrigger::Probe() {
  ProbeSnapshot s;
  s.pending = static_cast<int64_t>(celery_.queue().size());
  // A SIGKILLed task's entry stays in kombu's `unacked` until the visibility timeout, and the
  // scaler counts every unacked entry of the queue as in flight.
  s.in_flight = cluster_.Running() + celery_.lost();
  for (int id : cluster_.live_pods()) {
    for (int task_id : cluster_.pods()[id].tasks) {
      const int64_t start = celery_.tasks()[task_id].start;
      if (!s.oldest_start || start < *s.oldest_start) s.oldest_start = start;
    }
  }
  // Sampled only where ObservationOf keeps it: the scaler reads it with the durations.
  if (policy_.measure_durations) {
    const auto& queue = celery_.queue();
    const auto sampled = std::min<size_t>(queue.size(), policy::kPendingSample);
    for (size_t i = 0; i < sampled; ++i) {
      const int name = celery_.tasks()[queue[i]].name;
      if (name >= 0) ++s.pending_sample[celery_.task_names()[name]];
    }
  }
  s.scheduled = celery_.scheduled();
  s.earliest_eta = celery_.earliest_eta();
  // Taken only when durations are measured, as before: otherwise they keep accumulating unread.
  const int64_t finished = celery_.finished_count();
  if (policy_.measure_durations && finished > 0) {
    s.finished = finished;
    s.finished_seconds = celery_.finished_durations_sum() - durations_reported_;
    const auto& by_name = celery_.finished_by_name();
    for (size_t i = 0; i < by_name.size(); ++i) {
      if (by_name[i].count > 0) {
        s.finished_by_task.push_back(
            {celery_.task_names()[i], by_name[i].seconds, by_name[i].count});
      }
    }
    durations_reported_ = celery_.finished_durations_sum();
    celery_.ResetFinishedCount();
  }
  return s;
}

const policy::Decision& WarmpoolTrigger::Evaluate(int64_t t) {
  if (evaluated_at_ != t) {
    decision_ = PolicyStep(meta_, ObservationOf(Probe(), t, policy_.measure_durations), t, &state_);
    evaluated_at_ = t;
  }
  return decision_;
}

}  // namespace warmpool::sim
