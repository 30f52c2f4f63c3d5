#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "celery/unacked.h"
#include "policy/policy_state.h"
#include "policy/scaler_metadata.h"

namespace warmpool {
class RedisPool;
}

namespace warmpool::scaler {

// Which lists and hash entries make up one ScaledObject's backlog. Two ScaledObjects with equal
// ProbeTargets share Redis reads (coalescing key). Plain data.
struct ProbeTarget {
  std::string connection;            // connection identity (name, or "addr:" + redisAddress)
  RedisPool* pool = nullptr;         // where to read; not part of the identity (see connection)
  std::string key_prefix;            // kombu global_keyprefix
  std::vector<std::string> queues;   // sorted, distinct
  std::vector<int> priority_levels;  // kombu priority steps
  bool read_unacked = true;          // read the unacked hash (in flight and scheduled)
  bool count_in_flight = true;       // in-flight tasks count as work (countInFlight)
  // The metadata the shared policy state learns with (policy::Observe), which also remembers
  // what Decide asks for with it (PolicyState::asked: the pool this ScaledObject's HPA holds):
  // that of the ScaledObject whose plan made this target. Its trigger metadata, apart from
  // KEDA's own keys, is part of the identity (`policy_keys`, canonical "key=value\x1e" in key
  // order), so ScaledObjects that would decide differently read and learn apart.
  policy::ScalerMetadata learning;
  std::string policy_keys;

  std::string CacheKey() const;
};

// Counts for one queue.
struct QueueBacklog {
  int64_t pending = 0;    // LLEN summed over the queue's priority sub-lists
  int64_t in_flight = 0;  // unacked entries routed to the queue, eta absent or due
  int64_t scheduled = 0;  // unacked entries routed to the queue with a future eta
};

// One measurement of a ProbeTarget.
struct BacklogReading {
  std::map<std::string, QueueBacklog> per_queue;  // every target queue has an entry
  std::optional<std::chrono::system_clock::time_point> earliest_eta;  // among scheduled
  // The earliest policy::kUpcomingEtas etas among scheduled, kept as a max-heap while counting
  // (CountUnackedEntry); ToObservation sorts them.
  std::vector<std::chrono::system_clock::time_point> upcoming_etas;
  int64_t unparsable_unacked = 0;  // unacked entries that are not kombu JSON (counted nowhere)
  std::vector<std::string> in_flight_tags;  // delivery tags of the in-flight tasks (run times)
  // Parallel to in_flight_tags: each one's task name (headers.task), "" when it has none.
  std::vector<std::string> in_flight_tasks;
  // Task names of the pending messages delivered next, up to policy::kPendingSample per queue,
  // summed over the queues (Observation.pending_sample); read only with target.read_unacked.
  std::map<std::string, int64_t> pending_sample;
  // The messages of that sample, and how many of them carry an eta after taken_at.
  int64_t pending_sampled = 0;
  int64_t pending_sample_not_due = 0;
  // How long the longest-running of them has been seen in flight (the scaler's TaskTiming).
  double oldest_in_flight_seconds = 0;
  std::chrono::system_clock::time_point taken_at;
  // The shared policy state after this reading was applied to it (see policy_state_store.h).
  policy::PolicyState state;

  int64_t pending() const;
  int64_t in_flight() const;
  int64_t scheduled() const;
};

// What the policy sees of a reading: in-flight tasks count only with countInFlight. Pure.
policy::Observation ToObservation(const BacklogReading& reading, bool count_in_flight);

// Adds one unacked entry (celery::ParseUnackedValue) to `reading` if its routing key is one of
// the reading's queues: scheduled when its eta is after `now`, else in flight. Pure.
void CountUnackedEntry(const celery::UnackedEntry& entry, std::chrono::system_clock::time_point now,
                       BacklogReading* reading);

// Adds the task names of one queue's next policy::kPendingSample messages to `sample`.
// `sub_lists` holds the tail of each priority sub-list (LRANGE key -kPendingSample -1), in kombu's
// consumption order (PriorityListKeys); each in Redis order, so its last element, which BRPOP
// takes next, is read first. Messages without a name (TaskNameOfEnvelope) take their place in
// the sample but are not counted by name. Each message sampled counts in reading.pending_sampled,
// and in reading.pending_sample_not_due when its headers.eta is after `now` (protocol 2; a
// protocol 1 message counts as due). Pure.
void AddPendingSample(const std::vector<std::vector<std::string_view>>& sub_lists,
                      std::chrono::system_clock::time_point now, BacklogReading* reading);

}  // namespace warmpool::scaler
