#include "policy/held_pool.h"

#include <algorithm>

namespace warmpool::policy {

namespace {

using Clock = std::chrono::system_clock;

// The last entry is an inactive one old enough for KEDA to have scaled to zero.
bool ScaledToZero(const std::vector<AskedReplicas>& asked, Clock::time_point now,
                  const HoldSettings& hold) {
  return !asked.empty() && asked.back().replicas == 0 && now - asked.back().since >= hold.to_zero;
}

}  // namespace

std::vector<AskedReplicas> RecordAsked(std::vector<AskedReplicas> asked, int64_t replicas,
                                       Clock::time_point now, const HoldSettings& hold) {
  if (!asked.empty() && now <= asked.back().since) return asked;
  // From zero KEDA activates one replica and the HPA starts over: what came before is gone.
  if (ScaledToZero(asked, now, hold)) asked.clear();
  if (asked.empty() || asked.back().replicas != replicas) asked.push_back({now, replicas});
  // An entry ended when the next began; once that is a window ago it no longer counts.
  size_t drop = 0;
  while (drop + 1 < asked.size() && asked[drop + 1].since <= now - hold.window) ++drop;
  drop = std::max(drop, asked.size() > kMaxAskedEntries ? asked.size() - kMaxAskedEntries : 0);
  asked.erase(asked.begin(), asked.begin() + static_cast<std::ptrdiff_t>(drop));
  return asked;
}

std::optional<ReleasedPool> PoolScaledToZero(const std::vector<AskedReplicas>& asked,
                                             Clock::time_point now, const HoldSettings& hold) {
  if (!ScaledToZero(asked, now, hold)) return std::nullopt;
  const Clock::time_point at = asked.back().since + hold.to_zero;
  return ReleasedPool{at, HeldReplicas(asked, at - Clock::duration(1), hold)};
}

int64_t HeldReplicas(const std::vector<AskedReplicas>& asked, Clock::time_point now,
                     const HoldSettings& hold) {
  if (ScaledToZero(asked, now, hold)) return 0;
  int64_t held = 0;
  for (size_t i = 0; i < asked.size() && asked[i].since <= now; ++i) {
    const bool ended = i + 1 < asked.size() && asked[i + 1].since <= now;
    if (!ended || asked[i + 1].since > now - hold.window) held = std::max(held, asked[i].replicas);
  }
  return held;
}

}  // namespace warmpool::policy
