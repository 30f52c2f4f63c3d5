#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace warmpool::sim {

// One task of a workload. Times are seconds from the start of the simulation.
struct Task {
  double arrival_s = 0;   // sent to the broker
  double duration_s = 1;  // run time on a worker, > 0
  double eta_s = -1;      // countdown/eta: not runnable before this time; < 0 = none
  std::string queue;      // informational (the simulator models one ScaledObject)
  std::string task;       // Celery task name (headers.task): durations are learned per name
};

struct Workload {
  std::string name;
  std::vector<Task> tasks;  // sorted by arrival
  int64_t horizon_s = 0;    // simulated time; nodes still alive at the end are billed up to it
};

// The longest a workload may run: every arrival, eta and duration is at most this many seconds.
// The simulator steps through each second of the horizon, so a bigger one would run for days (and
// past about 2.9e11 years the times no longer fit its whole seconds).
inline constexpr double kMaxWorkloadSeconds = 366.0 * 24 * 3600;
// The most tasks a workload may have (the simulator keeps a record of each, about 150 bytes).
inline constexpr int64_t kMaxWorkloadTasks = 10'000'000;

// InvalidArgument when `w` has more than kMaxWorkloadTasks tasks, or naming the first task (by its
// index in `w.tasks`) whose arrival, eta or duration is not finite or is past kMaxWorkloadSeconds
// either way, or whose arrival is negative. Every simulation checks its workload with it, whatever
// made it (a CSV, an import, a recording). Pure.
Status CheckWorkloadLimits(const Workload& w);

// Parses `arrival_s,duration_s[,eta_s][,queue][,task]` with a header line naming the columns
// (eta_s, queue and task optional, in that order). Rows are sorted by arrival. The horizon is the
// last runnable time + the longest duration + 2 h (so tails and node scale-down are in).
// InvalidArgument names the line and the bad field (times past kMaxWorkloadSeconds and rows past
// kMaxWorkloadTasks included).
// Pure.
Status ParseWorkloadCsv(std::string_view text, const std::string& name, Workload* out);

// A whole field as a finite number (strtod syntax, nothing around it). The workload and trace
// parsers' number rule. Pure.
bool ParseFiniteDouble(std::string_view s, double* out);

// The CSV ParseWorkloadCsv reads (header included). Pure.
std::string FormatWorkloadCsv(const Workload& w);

// The named generators W1..W5 (docs/SCALING.md, "Workloads"), seeded: same seed, same tasks.
// Returns false for an unknown name.
bool GenerateWorkload(const std::string& name, uint64_t seed, Workload* out);

}  // namespace warmpool::sim
