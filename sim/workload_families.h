#pragma once

// Generated workload families beyond W1..W5, kept aside to check that the policy generalises
// (docs/sim.md, "Workloads"): never tuned on. Simulated t = 0 is Monday 00:00 UTC (kSimEpoch).

#include <cstdint>
#include <string>

#include "sim/workload.h"

namespace warmpool::sim {

// "office", "weekly", "drift"; seeded: same seed, same tasks. False for any other name.
bool GenerateWorkloadFamily(const std::string& name, uint64_t seed, Workload* out);

}  // namespace warmpool::sim
