#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace warmpool::policy {

// The replicas the HPA keeps. KEDA's HPA scales 1..N down to the highest replica count it was
// asked for within its scale-down stabilization window (Kubernetes
// pkg/controller/podautoscaler/horizontal.go, stabilizeRecommendationWithBehaviors), so after a
// burst it holds the burst's whole pool for that window, whatever the policy asks for meanwhile,
// while the policy stays active. Only KEDA's scale to zero (IsActive false for cooldownPeriod)
// bypasses the HPA; from zero KEDA activates one replica, and the HPA never scales up to a past
// recommendation, only down to it. To know what staying active costs, the policy remembers what
// it asked for.

// One replica count asked for, from `since` until the next entry (0 = inactive).
struct AskedReplicas {
  std::chrono::system_clock::time_point since;
  int64_t replicas = 0;

  friend bool operator==(const AskedReplicas&, const AskedReplicas&) = default;
};

// Most entries a history keeps (the oldest go first). An entry lost early only makes the hold
// look smaller, which is how the policy behaved without a history.
inline constexpr size_t kMaxAskedEntries = 64;

// What KEDA and its HPA are configured with (the ScaledObject's cooldownPeriod and
// scaleDown.stabilizationWindowSeconds; the scaler cannot read them, so the metadata states them).
struct HoldSettings {
  std::chrono::seconds window{900};  // the HPA's scale-down stabilization window
  // Inactive this long, KEDA has scaled to zero: cooldownPeriod plus one polling interval.
  std::chrono::seconds to_zero{90};
};

// Returns `asked` with `replicas` asked for at `now` (an entry only where the count changes),
// without the entries that ended a window ago or that came before a scale to zero. Pure.
std::vector<AskedReplicas> RecordAsked(std::vector<AskedReplicas> asked, int64_t replicas,
                                       std::chrono::system_clock::time_point now,
                                       const HoldSettings& hold);

// The pool KEDA scaled to zero: when it did (the last ask, inactive, plus HoldSettings::to_zero)
// and the replicas the HPA held just before.
struct ReleasedPool {
  std::chrono::system_clock::time_point at;
  int64_t replicas = 0;
};

// The pool KEDA has scaled to zero by `now`, when `asked` ends with an inactive entry old enough
// for that (before RecordAsked forgets it); nullopt otherwise. Pure.
std::optional<ReleasedPool> PoolScaledToZero(const std::vector<AskedReplicas>& asked,
                                             std::chrono::system_clock::time_point now,
                                             const HoldSettings& hold);

// The replicas the HPA holds at `now`: the most asked for within the window; 0 once the policy
// has been inactive long enough for KEDA to scale to zero (and nothing asked since). Pure.
int64_t HeldReplicas(const std::vector<AskedReplicas>& asked,
                     std::chrono::system_clock::time_point now, const HoldSettings& hold);

}  // namespace warmpool::policy
