#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace warmpool::policy {

// Measures task run times from successive snapshots of the in-flight delivery tags (kombu's
// `unacked` hash, filtered to the ScaledObject's queues), for Observation.measured_task_seconds
// when results carry no start time. A tag first seen at t1 and gone at t2 ran for about t2 - t1
// (within one sampling period). Plain data; copyable; the scaler keeps one per ScaledObject (it
// may live in the scaler's memory: a lost tracker only delays the next measurement).
struct TaskTiming {
  // Tag -> when it was first seen in flight.
  std::map<std::string, std::chrono::system_clock::time_point> first_seen;
};

// Applies one snapshot taken at `now`: tags no longer in flight are finished; returns the mean of
// their run times, or nullopt when none finished (or `now` is not after every first-seen time).
// New tags start their clock at `now`. Pure.
std::optional<double> ObserveInFlightTags(TaskTiming* timing, const std::vector<std::string>& tags,
                                          std::chrono::system_clock::time_point now);

// Seconds the longest-tracked tag has been in flight at `now` (0 when none), for
// Observation.oldest_in_flight_seconds. Pure.
double OldestInFlightSeconds(const TaskTiming& timing, std::chrono::system_clock::time_point now);

}  // namespace warmpool::policy
