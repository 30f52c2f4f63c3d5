#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy_state.h"

namespace warmpool::policy {

// Measures task run times from successive snapshots of the in-flight delivery tags (kombu's
// `unacked` hash, filtered to the ScaledObject's queues), for Observation.measured_task_seconds
// when results carry no start time. A tag first seen at t1 and gone at t2 ran for about t2 - t1
// (within one sampling period). Plain data; copyable; the scaler keeps one per ScaledObject (it
// may live in the scaler's memory: a lost tracker only delays the next measurement).
struct TaskTiming {
  // Tag -> when it was first seen in flight.
  std::map<std::string, std::chrono::system_clock::time_point> first_seen;
  // Tag -> its Celery task name, for the tags in first_seen that have one (so a finished task's
  // run time counts for its name: the tag is gone from the snapshot that finds it finished).
  std::map<std::string, std::string> task_of;
};

// The tasks one snapshot found finished: those whose run time was positive.
struct FinishedInFlight {
  std::optional<double> mean_seconds;  // mean of their run times; nullopt when none
  int64_t count = 0;                   // how many mean_seconds is over
  // The same tasks grouped by task name, sorted by name; tasks without a name are left out.
  std::vector<FinishedTasks> by_task;
};

// Applies one snapshot taken at `now`: tags no longer in flight are finished (counted when their
// run time is positive, i.e. `now` is after their first-seen time; forgotten either way). New
// tags start their clock at `now`. `tasks` is parallel to `tags`: each tag's task name ("" =
// none; missing entries are none), remembered from the first snapshot that names it. Pure.
FinishedInFlight ObserveInFlight(TaskTiming* timing, const std::vector<std::string>& tags,
                                 const std::vector<std::string>& tasks,
                                 std::chrono::system_clock::time_point now);

// ObserveInFlight without task names: the mean of the finished tasks' run times, or nullopt when
// none finished (or `now` is not after every first-seen time). Pure.
std::optional<double> ObserveInFlightTags(TaskTiming* timing, const std::vector<std::string>& tags,
                                          std::chrono::system_clock::time_point now);

// Seconds the longest-tracked tag has been in flight at `now` (0 when none), for
// Observation.oldest_in_flight_seconds. Pure.
double OldestInFlightSeconds(const TaskTiming& timing, std::chrono::system_clock::time_point now);

}  // namespace warmpool::policy
