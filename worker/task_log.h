#pragma once

#include <string>

#include "worker/job.h"
#include "worker/worker_metrics.h"

namespace warmpool::worker {

// The `task` log line of a job reaching `state` (info for SUCCESS/RETRY, warn otherwise), and
// the tasks_total{state} count.
void LogTask(WorkerMetrics& metrics, const Job& job, const std::string& state, double runtime,
             const std::string& detail);

}  // namespace warmpool::worker
