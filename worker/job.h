#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "celery/message.h"
#include "worker/broker_api.h"
#include "worker/outcome.h"
#include "worker/task_registry.h"

namespace warmpool::worker {

// Where a job is; moves only forward (kAbandoned: given up by a time limit, terminate or
// shutdown; its thread may still run).
enum Phase : int { kQueued, kRunning, kFinishing, kDone, kAbandoned };

// One message this worker holds (ETA-held, ready, running or finishing).
struct Job {
  Fetched fetched;
  celery::TaskMessage msg;
  std::string task_name;  // resolved registered name
  const TaskFunction* fn = nullptr;
  double taken_at = 0;  // wall time taken (or ETA due)
  std::atomic<int> phase{kQueued};
  TaskContext ctx;
  std::chrono::steady_clock::time_point started{};                     // guarded by WorkerState::mu
  std::optional<std::chrono::steady_clock::time_point> hard_deadline;  // guarded by mu
  std::optional<double> hard_limit_seconds;
  int slot = -1;  // executor slot while running; guarded by WorkerState::mu
};

// A finished job waiting for its result and ack to be written.
struct Finishing {
  std::shared_ptr<Job> job;
  Outcome outcome;
};

// Wall-clock time, Unix seconds (what Celery's messages and results carry).
inline double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace warmpool::worker
