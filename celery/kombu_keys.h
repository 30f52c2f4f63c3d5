#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warmpool::kombu {

// Kombu Redis transport naming (kombu 5.2.4, transport/redis.py). Pure functions.

inline constexpr std::string_view kPrioritySep = "\x06\x16";
inline constexpr int kDefaultPrioritySteps[] = {0, 3, 6, 9};
inline constexpr std::string_view kUnackedKey = "unacked";
inline constexpr std::string_view kUnackedIndexKey = "unacked_index";
inline constexpr std::string_view kUnackedMutexKey = "unacked_mutex";

// The list holding `queue`'s messages of priority step `step`: "queue" for step 0, else
// "queue\x06\x16<step>", with the global key prefix in front (kombu `_q_for_pri`).
std::string PriorityListKey(std::string_view prefix, std::string_view queue, int step);

// Every sub-list of `queue`, in kombu's consumption order (lowest step first).
std::vector<std::string> PriorityListKeys(std::string_view prefix, std::string_view queue,
                                          const std::vector<int>& steps);

// The priority step a message priority 0..9 lands on (kombu: steps[bisect(steps, p) - 1]);
// priorities outside 0..9 are clamped first. REQUIRES: steps sorted ascending, steps[0] == 0.
int PriorityStep(int priority, const std::vector<int>& steps);

// BRPOP key order for several queues: every queue at the first step, then the next step, ...
std::vector<std::string> ConsumeOrder(std::string_view prefix,
                                      const std::vector<std::string>& queues,
                                      const std::vector<int>& steps);

// Strips the prefix and the "\x06\x16<step>" suffix from a list key: the queue name.
std::string QueueFromListKey(std::string_view prefix, std::string_view key);

// kombu's direct-exchange _lookup over the members of `_kombu.binding.<exchange>` (each
// "routing_key\x06\x16pattern\x06\x16queue"): the queue bound with `routing_key`, or nullopt.
std::optional<std::string> QueueForRoutingKey(const std::vector<std::string>& binding_members,
                                              std::string_view routing_key);

// "<prefix>unacked" and friends.
std::string PrefixedKey(std::string_view prefix, std::string_view key);

// Pub/sub channel for a fanout exchange: "<prefix>/<db>.<exchange>[/<routing_key>]".
std::string FanoutChannel(std::string_view prefix, int db, std::string_view exchange,
                          std::string_view routing_key);

}  // namespace warmpool::kombu
