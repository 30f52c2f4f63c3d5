#include "scaler/backlog.h"

#include <algorithm>

#include "celery/task_name.h"
#include "common/json_parse.h"

namespace warmpool::scaler {

std::string ProbeTarget::CacheKey() const {
  std::string key = connection;
  key += '\x1f';
  key += key_prefix;
  key += '\x1f';
  for (const auto& q : queues) {
    key += q;
    key += ',';
  }
  key += '\x1f';
  for (int l : priority_levels) key += std::to_string(l) + ",";
  key += read_unacked ? "u" : "-";
  key += count_in_flight ? "f" : "-";
  key += '\x1f';
  key += std::to_string(learning.cold_start_seconds);
  key += learning.prewarm_histogram ? "h" : "-";
  key += '\x1f';
  key += policy_keys;
  return key;
}

int64_t BacklogReading::pending() const {
  int64_t n = 0;
  for (const auto& [q, b] : per_queue) n += b.pending;
  return n;
}
int64_t BacklogReading::in_flight() const {
  int64_t n = 0;
  for (const auto& [q, b] : per_queue) n += b.in_flight;
  return n;
}
int64_t BacklogReading::scheduled() const {
  int64_t n = 0;
  for (const auto& [q, b] : per_queue) n += b.scheduled;
  return n;
}

policy::Observation ToObservation(const BacklogReading& reading, bool count_in_flight) {
  policy::Observation obs;
  obs.pending = reading.pending();
  obs.in_flight = count_in_flight ? reading.in_flight() : 0;
  obs.scheduled = reading.scheduled();
  obs.earliest_eta = reading.earliest_eta;
  obs.upcoming_etas = reading.upcoming_etas;
  std::sort(obs.upcoming_etas.begin(), obs.upcoming_etas.end());
  if (count_in_flight) obs.oldest_in_flight_seconds = reading.oldest_in_flight_seconds;
  obs.pending_sample = reading.pending_sample;
  obs.pending_sampled = reading.pending_sampled;
  obs.pending_sample_not_due = reading.pending_sample_not_due;
  return obs;
}

void CountUnackedEntry(const celery::UnackedEntry& entry, std::chrono::system_clock::time_point now,
                       BacklogReading* reading) {
  auto it = reading->per_queue.find(entry.routing_key);
  if (it == reading->per_queue.end()) return;
  std::optional<std::chrono::system_clock::time_point> eta;
  if (entry.eta) {
    eta = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(*entry.eta)));
  }
  if (eta && *eta > now) {
    ++it->second.scheduled;
    if (!reading->earliest_eta || *eta < *reading->earliest_eta) reading->earliest_eta = eta;
    // Bounded: the kUpcomingEtas earliest, the latest of them on top of the heap.
    auto& heap = reading->upcoming_etas;
    if (heap.size() < policy::kUpcomingEtas || *eta < heap.front()) {
      heap.push_back(*eta);
      std::push_heap(heap.begin(), heap.end());
      if (heap.size() > policy::kUpcomingEtas) {
        std::pop_heap(heap.begin(), heap.end());
        heap.pop_back();
      }
    }
  } else {
    ++it->second.in_flight;
    if (!entry.delivery_tag.empty()) {
      reading->in_flight_tags.push_back(entry.delivery_tag);
      reading->in_flight_tasks.push_back(entry.task);
    }
  }
}

void AddPendingSample(const std::vector<std::vector<std::string_view>>& sub_lists,
                      std::chrono::system_clock::time_point now, BacklogReading* reading) {
  const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
  int64_t taken = 0;
  for (const auto& list : sub_lists) {
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      if (taken++ == policy::kPendingSample) return;
      ++reading->pending_sampled;
      // ParseJson reports bad input as a discarded value, never by throwing.
      const nlohmann::json envelope = ParseJson(*it);
      if (auto name = celery::TaskNameOfParsedEnvelope(envelope)) ++reading->pending_sample[*name];
      if (auto eta = celery::EtaOfParsedEnvelope(envelope); eta && *eta > now_s) {
        ++reading->pending_sample_not_due;
      }
    }
  }
}

}  // namespace warmpool::scaler
