#pragma once

#include <cstdint>

#include "common/status.h"
#include "sim/policy_spec.h"
#include "sim/results.h"
#include "sim/sim_config.h"
#include "sim/workload.h"

namespace warmpool::sim {

// Runs one policy over one workload on the given cluster, seeded (cluster randomness and
// controller phases). Deterministic for the same inputs. InvalidArgument when the warmpool
// metadata does not parse. timeline_step_s = 0 records no timeline. A kOracle policy runs each of
// OracleStrategies() and returns the cheapest (its variant named in SimResult::variant).
Status Simulate(const Workload& workload, const PolicySpec& policy, const ClusterConfig& cluster,
                uint64_t seed, int64_t timeline_step_s, SimResult* out);

}  // namespace warmpool::sim
