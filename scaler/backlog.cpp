#include "scaler/backlog.h"

#include <charconv>
#include <ctime>

#include <nlohmann/json.hpp>

namespace warmpool::scaler {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data() + pos, s.data() + pos + n, v);
  if (ec != std::errc() || p != s.data() + pos + n) return false;
  *out = v;
  return true;
}

}  // namespace

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
  return obs;
}

std::optional<std::chrono::system_clock::time_point> ParseIsoTime(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.ffffff][Z|+HH:MM|-HH:MM]
  int year, mon, day, hour, min, sec;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  if (!Digits(s, 0, 4, &year) || !Digits(s, 5, 2, &mon) || !Digits(s, 8, 2, &day) ||
      !Digits(s, 11, 2, &hour) || !Digits(s, 14, 2, &min) || !Digits(s, 17, 2, &sec)) {
    return std::nullopt;
  }
  size_t pos = 19;
  int64_t micros = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int64_t scale = 100000;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      micros += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
  }
  int offset_minutes = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z') {
      ++pos;
    } else if (s[pos] == '+' || s[pos] == '-') {
      int oh, om;
      if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
          !Digits(s, pos + 4, 2, &om)) {
        return std::nullopt;
      }
      offset_minutes = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
      pos += 6;
    }
  }
  if (pos != s.size()) return std::nullopt;
  using namespace std::chrono;
  year_month_day ymd{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(mon)),
                     std::chrono::day(static_cast<unsigned>(day))};
  if (!ymd.ok() || hour > 23 || min > 59 || sec > 60) return std::nullopt;
  auto tp = sys_days(ymd) + hours(hour) + minutes(min) + seconds(sec) + microseconds(micros) -
            minutes(offset_minutes);
  return time_point_cast<system_clock::duration>(tp);
}

bool ParseUnackedEntry(std::string_view value, UnackedEntry* out) {
  auto doc = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_array() || doc.size() < 3 || !doc[2].is_string() || !doc[0].is_object()) {
    return false;
  }
  UnackedEntry entry;
  entry.routing_key = doc[2].get<std::string>();
  const auto& envelope = doc[0];
  auto headers = envelope.find("headers");
  if (headers != envelope.end() && headers->is_object()) {
    auto eta = headers->find("eta");
    if (eta != headers->end() && eta->is_string())
      entry.eta = ParseIsoTime(eta->get<std::string>());
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
  }
}

}  // namespace warmpool::scaler
