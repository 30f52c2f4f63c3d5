#include "scaler/backlog.h"

#include <nlohmann/json.hpp>

#include "celery/time.h"
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
  if (count_in_flight) obs.oldest_in_flight_seconds = reading.oldest_in_flight_seconds;
  return obs;
}

bool ParseUnackedEntry(std::string_view value, UnackedEntry* out) {
  auto doc = ParseJson(value);  // one per unacked task on every probe: simdjson's speed
  if (!doc.is_array() || doc.size() < 3 || !doc[2].is_string() || !doc[0].is_object()) {
    return false;
  }
  UnackedEntry entry;
  entry.routing_key = doc[2].get<std::string>();
  const auto& envelope = doc[0];
  auto properties = envelope.find("properties");
  if (properties != envelope.end() && properties->is_object()) {
    auto tag = properties->find("delivery_tag");
    if (tag != properties->end() && tag->is_string()) entry.delivery_tag = tag->get<std::string>();
  }
  auto headers = envelope.find("headers");
  if (headers != envelope.end() && headers->is_object()) {
    auto eta = headers->find("eta");
    if (eta != headers->end() && eta->is_string()) {
      if (auto seconds = celery::ParseIso8601(eta->get<std::string>())) {
        entry.eta = std::chrono::system_clock::time_point(
            std::chrono::duration_cast<std::chrono::system_clock::duration>(
                std::chrono::duration<double>(*seconds)));
      }
    }
  }
  *out = std::move(entry);
  return true;
}

void CountUnackedEntry(const UnackedEntry& entry, std::chrono::system_clock::time_point now,
                       BacklogReading* reading) {
  auto it = reading->per_queue.find(entry.routing_key);
  if (it == reading->per_queue.end()) return;
  if (entry.eta && *entry.eta > now) {
    ++it->second.scheduled;
    if (!reading->earliest_eta || *entry.eta < *reading->earliest_eta) {
      reading->earliest_eta = entry.eta;
    }
  } else {
    ++it->second.in_flight;
    if (!entry.delivery_tag.empty()) reading->in_flight_tags.push_back(entry.delivery_tag);
  }
}

}  // namespace warmpool::scaler
