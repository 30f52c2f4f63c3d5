#include "celery/kombu_keys.h"

#include <algorithm>

namespace warmpool::kombu {

std::string PrefixedKey(std::string_view prefix, std::string_view key) {
  std::string out;
  out.reserve(prefix.size() + key.size());
  out.append(prefix).append(key);
  return out;
}

std::string PriorityListKey(std::string_view prefix, std::string_view queue, int step) {
  std::string key = PrefixedKey(prefix, queue);
  if (step != 0) key.append(kPrioritySep).append(std::to_string(step));
  return key;
}

std::vector<std::string> PriorityListKeys(std::string_view prefix, std::string_view queue,
                                          const std::vector<int>& steps) {
  std::vector<std::string> keys;
  keys.reserve(steps.size());
  for (int step : steps) keys.push_back(PriorityListKey(prefix, queue, step));
  return keys;
}

int PriorityStep(int priority, const std::vector<int>& steps) {
  priority = std::clamp(priority, 0, 9);
  auto it = std::upper_bound(steps.begin(), steps.end(), priority);
  return it == steps.begin() ? steps.front() : *(it - 1);
}

std::vector<std::string> ConsumeOrder(std::string_view prefix,
                                      const std::vector<std::string>& queues,
                                      const std::vector<int>& steps) {
  std::vector<std::string> keys;
  keys.reserve(queues.size() * steps.size());
  for (int step : steps) {
    for (const auto& q : queues) keys.push_back(PriorityListKey(prefix, q, step));
  }
  return keys;
}

std::string QueueFromListKey(std::string_view prefix, std::string_view key) {
  if (key.starts_with(prefix)) key.remove_prefix(prefix.size());
  if (auto pos = key.rfind(kPrioritySep); pos != std::string_view::npos) key = key.substr(0, pos);
  return std::string(key);
}

std::optional<std::string> QueueForRoutingKey(const std::vector<std::string>& binding_members,
                                              std::string_view routing_key) {
  for (const auto& member : binding_members) {
    auto first = member.find(kPrioritySep);
    auto last = member.rfind(kPrioritySep);
    if (first == std::string::npos || last == first) continue;
    if (std::string_view(member).substr(0, first) == routing_key) {
      return member.substr(last + kPrioritySep.size());
    }
  }
  return std::nullopt;
}

std::string FanoutChannel(std::string_view prefix, int db, std::string_view exchange,
                          std::string_view routing_key) {
  // Appended piece by piece: GCC 12 -O3 misreads `"/" + std::to_string(db)` as an overlapping
  // copy (-Werror=restrict, a GCC 12 false positive).
  std::string ch = PrefixedKey(prefix, "/");
  ch.append(std::to_string(db)).append(".").append(exchange);
  if (!routing_key.empty()) ch.append("/").append(routing_key);
  return ch;
}

}  // namespace warmpool::kombu
