#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "celery/message.h"
#include "celery/result.h"
#include "worker/task_registry.h"

namespace warmpool::worker {

// How a task ended, as the finisher writes it (worker/finish_plan.h).
struct Outcome {
  enum class Kind { kSuccess, kFailure, kRetry, kRevoked, kSkip };
  Kind kind = Kind::kSuccess;
  nlohmann::json value;  // kSuccess: the return value
  celery::ExceptionInfo exc;
  std::optional<std::string> traceback;
  double countdown = 0;  // kRetry: seconds until the republished message is due
  double runtime = 0;
  int signum = 0;  // kRevoked by revoke(terminate=True): the signal asked for
};

// The traceback text stored with a FAILURE or RETRY of registered task `task`.
std::string Traceback(const std::string& task, const celery::ExceptionInfo& exc);

// Calls `fn` for `msg` and maps what it returned or threw, as Celery's tracer does: a value
// is kSuccess; TaskRetry is kRetry (kFailure with its cause, or MaxRetriesExceededError, once
// msg.retries reached max_retries); TaskError is kFailure with its class; a nlohmann::json
// error TypeError; any other exception RuntimeError. Sets runtime, and the traceback of a
// failure or retry. `task_name` is the registered (resolved) name.
Outcome CallTask(const TaskFunction& fn, const celery::TaskMessage& msg,
                 const std::string& task_name, TaskContext& ctx);

// FAILURE TimeLimitExceeded(limit) of a task stopped at its hard time limit.
Outcome TimeLimitOutcome(const std::string& task_name, double limit_seconds);

// REVOKED 'terminated' of a running task stopped by revoke(terminate=True, signal=signum).
Outcome TerminatedOutcome(int signum, double runtime);

}  // namespace warmpool::worker
