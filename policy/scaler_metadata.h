#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "policy/warm_windows.h"

namespace warmpool::policy {

// One ScaledObject's trigger metadata, parsed and validated once (STYLE 9). Keys are camelCase as
// in KEDA; defaults match docs and README. Plain data; copyable.
struct ScalerMetadata {
  std::string redis = "default";  // `redis`: name of a connection configured on the scaler
  std::string redis_address;      // `redisAddress`: host:port[/db]; empty = use `redis`
  std::vector<std::string> queues = {"celery"};     // `queues`: comma-separated, non-empty
  std::string key_prefix;                           // `keyPrefix`: kombu global_keyprefix
  std::vector<int> priority_levels = {0, 3, 6, 9};  // `priorityLevels`: ascending, first 0, 0..9
  bool count_in_flight = true;                      // `countInFlight`
  int64_t tasks_per_replica = 1;                    // `tasksPerReplica`: >= 1
  int64_t activation_backlog = 0;                   // `activationBacklog`: >= 0, strict ">"
  int64_t min_warm_replicas = 0;                    // `minWarmReplicas`: >= 0, <= maxReplicas
  int64_t max_replicas = 100;                       // `maxReplicas`: >= 1

  // --- Warm-pool policy (v2). See docs/SCALING.md for the reasoning behind each default. ---
  // `keepAlive`: seconds to stay active after the last task finished; nullopt = `auto`
  // (break-even, learned from the idle-gap histogram; see BreakEvenSeconds in warm_policy.h).
  std::optional<int64_t> keep_alive_seconds;
  // `coldStartSeconds`: expected time from 0 replicas to a ready GPU worker (node boot, driver,
  // image pull, model load): the price of a cold start in replica-seconds and the pre-warm lead.
  int64_t cold_start_seconds = 300;
  // `waitCostPerHour`: $ one task waiting for one hour costs the business; 0 = batch work whose
  // delay costs nothing. Needs `replicaCostPerHour` when > 0.
  double wait_cost_per_hour = 0;
  // `replicaCostPerHour`: $ per hour of one warm replica (its GPU share of the node price); 0 = not
  // given. Only used to convert waitCostPerHour into seconds of keep-alive.
  double replica_cost_per_hour = 0;
  // `nodeUnneededSeconds`: the cluster autoscaler's scale-down-unneeded-time. After the last pod
  // leaves a node the node stays (billed) this long, so a come-back within it costs only a pod
  // start; `auto` keep-alive subtracts it from the break-even time. 0 = nodes vanish at once.
  int64_t node_unneeded_seconds = 600;
  // `cooldownSeconds` and `scaleDownWindowSeconds`: the ScaledObject's cooldownPeriod and its
  // HPA's behavior.scaleDown.stabilizationWindowSeconds, which the scaler cannot read. While the
  // policy stays active the HPA keeps the highest count it asked for within that window; `auto`
  // keep-alive prices staying active with that pool (KeepsAlive in warm_policy.h). Defaults: what
  // manifests/base ships.
  int64_t cooldown_seconds = 60;
  int64_t scale_down_window_seconds = 900;
  // `releasesPerHour`: the release budget, in pools KEDA scales to zero per hour (none back to
  // back). A release and the come-back after it are two reversals of the replica count; once the
  // budget is spent, the policy keeps one idle replica instead of releasing it, until the budget
  // allows (HoldsForReleaseBudget in warm_policy.h). nullopt = `off`.
  std::optional<double> releases_per_hour = 1.0;
  // Bounds of the keys (each key's own words in ParseScalerMetadata's message). Metadata comes
  // from whoever writes the ScaledObject: every time key is at most a year (seconds become
  // nanoseconds on the clock, which hold about 292 years), every replica count at most a million.
  static constexpr int64_t kMaxSeconds = 366LL * 24 * 3600;
  static constexpr int64_t kMaxReplicaCount = 1'000'000;
  static constexpr int64_t kMaxTasksPerReplica = 10'000;
  static constexpr double kMaxCostPerHour = 1e6;
  static constexpr double kMinReleasesPerHour = 0.01;  // one in 100 h: a bounded interval
  static constexpr double kMaxReleasesPerHour = 3600;  // one a second
  // `warmWindows`: time windows (UTC) with their own warm floor.
  std::vector<WarmWindow> warm_windows;
  // `targetWaitSeconds`: the queue-wait objective T, in seconds: a burst arriving on no warm
  // capacity should have started by T (a cold start C, then D = T - C to drain). Sizing follows
  // from it (drain_seconds = max(1, T - C)); keep-alive stays the break-even (keepAlive). `auto`
  // (default) = 1.5 x coldStartSeconds (450 s at the default 300). T <= C cannot be met from cold
  // by scaling alone: the sizing is then the tightest (D = 1), target_wait_reachable_cold is
  // false and the scaler logs that a floor (minWarmReplicas or warmWindows) is what meets it.
  int64_t target_wait_seconds = 450;
  bool target_wait_reachable_cold = true;  // T > coldStartSeconds
  // `drainSeconds`: latency target D of the cold-start-aware sizing (DrainSlots and
  // PrewarmSlots in warm_policy.h), from the task duration (measured and `taskSeconds`; until
  // one is known, D / 5 per task or the longest-running task's age): new replicas arrive a cold
  // start later, so they are asked
  // for only for the backlog the running ones leave by then, to drain within D; a pre-warmed pool
  // drains the expected burst within a cold start + D. Derived from targetWaitSeconds unless
  // given (then targetWaitSeconds = C + D; giving both is an error); `auto` = the derived value.
  // `off` (nullopt) = one slot per task (v1 sizing). ParseScalerMetadata resolves `auto`.
  std::optional<int64_t> drain_seconds = 150;
  // `taskSeconds`: expected seconds per task: used until a duration is measured, then the start
  // of the estimate, weighing as 33 measured tasks (policy_state.h).
  std::optional<double> task_seconds;
  // `prewarm`: `histogram` (default) learns idle gaps and pre-warms before the predicted next
  // arrival; `off` disables learning (keep-alive and ETA pre-warm still apply).
  bool prewarm_histogram = true;
  // `etaPrewarm`: be active `coldStartSeconds` before the earliest scheduled (eta) task.
  bool eta_prewarm = true;
  // `forecast`: the time-of-day arrival forecast (arrival_forecast.h). `shadow` (default) computes
  // it and exports it (Decision.forecast_replicas, warmpool_forecast_replicas) without acting;
  // `on` also keeps that many replicas warm (it only ever adds); `off` neither.
  enum class ForecastMode { kOff, kShadow, kOn };
  ForecastMode forecast = ForecastMode::kShadow;
};

struct ParsedMetadata {
  ScalerMetadata metadata;
};

// `value` as error messages and logs echo it: whole up to `keep` bytes, else its first `keep`
// bytes + "... (N bytes)", so a hostile 1 MB value never travels back whole. Pure.
std::string Abbreviate(std::string_view value, size_t keep = 200);

// Parses KEDA's `scalerMetadata` map, as KEDA's external scaler sends it
// (kedacore/keda pkg/scalers/external_scaler.go, parseExternalScalerMetadata):
// - `xFromEnv` is read as `x`. KEDA resolves the environment variable named by the trigger's
//   `xFromEnv: VAR` from the scale target's containers and sends the resolved value under the
//   key `xFromEnv`; an unset or empty variable drops the key (so `x` takes its default). An
//   explicit `x` wins over `xFromEnv`.
// - KEDA's own keys (scalerAddress, enableTLS, unsafeSsl, and the older tlsCertFile), and their
//   FromEnv forms, are accepted and ignored.
// - Any other key is an error: "unknown metadata key 'queue' (did you mean 'queues'?)".
// On error returns InvalidArgument whose message names every unknown or bad key and its value
// (abbreviated; all problems joined with "; "), and leaves *out untouched. Pure.
Status ParseScalerMetadata(const std::map<std::string, std::string>& raw, ParsedMetadata* out);

}  // namespace warmpool::policy
