#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

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
};

struct ParsedMetadata {
  ScalerMetadata metadata;
  // Keys neither warmpool's nor KEDA's (scalerAddress, enableTLS, unsafeSsl, *FromEnv): the
  // caller logs each once as a warning.
  std::vector<std::string> unknown_keys;
};

// Parses KEDA's `scalerMetadata` map. On error returns InvalidArgument whose message names every
// bad key and its value (all problems joined with "; "), and leaves *out untouched. Pure.
Status ParseScalerMetadata(const std::map<std::string, std::string>& raw, ParsedMetadata* out);

}  // namespace warmpool::policy
