#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_config.h"
#include "sim/simulator.h"

namespace warmpool::sim {

// The JSON `warmpool-sim run --format json` prints: the run's inputs and one entry per policy with
// billedGpuHours, billedDollars, waitP50/P95/P99 (s), coldStarts, killedTasks, requeuedTasks,
// reversalsPerHour, the cost breakdown and `deployedWith` (the settings simulated); `timeline`
// arrays only when with_timeline. Pure.
std::string RunReportJson(const std::string& workload, uint64_t seed, const ClusterConfig& cluster,
                          const std::vector<SimResult>& results, bool with_timeline);

// A fixed-width text table of the same numbers, for people. Pure.
std::string RunReportTable(const std::string& workload, uint64_t seed,
                           const std::vector<SimResult>& results);

}  // namespace warmpool::sim
