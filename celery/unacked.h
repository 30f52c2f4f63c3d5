#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace warmpool::celery {

// One value of kombu's `unacked` hash, '[<envelope>, "<exchange>", "<routing_key>"]', as kombu's
// Redis transport writes it (kombu/transport/redis.py, QoS.append: dumps([message._raw,
// exchange, routing_key])) and unpacks it on restore (`M, EX, RK = loads(p)`). The worker
// restores from it; the scaler counts it in flight or scheduled.
struct UnackedEntry {
  std::string envelope;  // the JSON envelope, as kombu wrote it
  std::string exchange;
  std::string routing_key;
  int priority = 0;           // properties.priority; 0 when absent
  std::string delivery_tag;   // properties.delivery_tag; empty when absent
  std::optional<double> eta;  // headers.eta (protocol 2) as Unix seconds; unset when absent/bad
  std::string task;           // headers.task (protocol 2); empty when absent or not a string
};

// Parses one `unacked` value. nullopt when it is not exactly kombu's shape (three elements: an
// object, then two strings), as kombu's own restore would fail on it. Pure.
std::optional<UnackedEntry> ParseUnackedValue(std::string_view value);

}  // namespace warmpool::celery
