#include "sim/triggers.h"

#include <algorithm>
#include <string>
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
  for (int64_t eta : snapshot.upcoming_etas) {
    o.upcoming_etas.push_back(kSimEpoch + std::chrono::seconds(eta));
  }
  if (measure_durations && snapshot.finished > 0) {
    o.measured_task_seconds = snapshot.finished_seconds / static_cast<double>(snapshot.finished);
    o.measured_task_count = snapshot.finished;
    o.finished_by_task = snapshot.finished_by_task;
  }
  // The scaler samples task names with the reads it measures durations from.
  if (measure_durations) {
    o.pending_sample = snapshot.pending_sample;
    o.pending_sampled = snapshot.pending_sampled;
    o.pending_sample_not_due = snapshot.pending_sample_not_due;
  }
  return o;
}

policy::Decision PolicyStep(const policy::ScalerMetadata& meta, const policy::Observation& obs,
                            int64_t t, policy::PolicyState* state) {
  const auto now = kSimEpoch + std::chrono::seconds(t);
  policy::Decision decided;
  *state = policy::Observe(std::move(*state), meta, obs, now, &decided);
  return decided;
}

ProbeSnapshot ProbeQueue(const CeleryModel& celery, const ClusterModel& cluster, int64_t t,
                         bool measure_durations, policy::TaskTiming* timing) {
  ProbeSnapshot s;
  s.pending = static_cast<int64_t>(celery.queue().size());
  // A SIGKILLed task's entry stays in kombu's `unacked` until the visibility timeout, and the
  // scaler counts every unacked entry of the queue as in flight.
  s.in_flight = cluster.Running() + celery.lost();
  // Sampled only where ObservationOf keeps it: the scaler reads it with the durations.
  if (measure_durations) {
    const auto& queue = celery.queue();
    const auto sampled = std::min<size_t>(queue.size(), policy::kPendingSample);
    for (size_t i = 0; i < sampled; ++i) {
      const SimTask& task = celery.tasks()[queue[i]];
      if (task.name >= 0) ++s.pending_sample[celery.task_names()[task.name]];
      if (task.due > t) ++s.pending_sample_not_due;
    }
    s.pending_sampled = static_cast<int64_t>(sampled);
  }
  // The in-flight delivery tags (a task's id), with their names, for the scaler's own run-time
  // measurement (policy::ObserveInFlight, as ScalerCore::MeasureTaskTimes runs it): the running
  // tasks and the held ETA tasks already due. A held one not yet due is scheduled.
  std::vector<std::string> tags, names;
  const auto in_flight = [&](int task_id) {
    const int name = celery.tasks()[task_id].name;
    tags.push_back(std::to_string(task_id));
    names.push_back(name >= 0 ? celery.task_names()[name] : std::string());
  };
  for (int id : cluster.live_pods()) {
    const Pod& pod = cluster.pods()[id];
    for (int task_id : pod.tasks) in_flight(task_id);
    for (int task_id : pod.held) {
      const int64_t due = celery.tasks()[task_id].due;
      if (due <= t) {
        ++s.in_flight;
        in_flight(task_id);
      } else {
        ++s.scheduled;
        if (!s.earliest_eta || due < *s.earliest_eta) s.earliest_eta = due;
        s.upcoming_etas.push_back(due);
      }
    }
  }
  // As the scaler keeps them: the earliest kUpcomingEtas, ascending.
  std::sort(s.upcoming_etas.begin(), s.upcoming_etas.end());
  if (s.upcoming_etas.size() > policy::kUpcomingEtas) s.upcoming_etas.resize(policy::kUpcomingEtas);
  const auto now = kSimEpoch + std::chrono::seconds(t);
  const policy::FinishedInFlight finished = policy::ObserveInFlight(timing, tags, names, now);
  if (!tags.empty()) s.oldest_start = t - std::llround(policy::OldestInFlightSeconds(*timing, now));
  if (measure_durations && finished.mean_seconds) {
    s.finished = finished.count;
    s.finished_seconds = *finished.mean_seconds * static_cast<double>(finished.count);
    s.finished_by_task = finished.by_task;
  }
  return s;
}

const policy::Decision& WarmpoolTrigger::Evaluate(int64_t t) {
  if (evaluated_at_ != t) {
    const ProbeSnapshot probe =
        ProbeQueue(celery_, cluster_, t, policy_.measure_durations, &timing_);
    decision_ = PolicyStep(meta_, ObservationOf(probe, t, policy_.measure_durations), t, &state_);
    evaluated_at_ = t;
  }
  return decision_;
}

}  // namespace warmpool::sim
