#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace warmpool::celery {

// Task states as stored by Celery's result backend (celery/states.py).
enum class TaskState { kStarted, kSuccess, kFailure, kRetry, kRevoked };
std::string_view StateName(TaskState state);

// An exception as Celery serialises it for JSON backends (prepare_exception):
// {"exc_type": "ValueError", "exc_message": [args...], "exc_module": "builtins"}. The Python
// client rebuilds the class from sys.modules[exc_module], so module and type must be real.
struct ExceptionInfo {
  std::string type;    // e.g. "TypeError", "NotRegistered", "TimeLimitExceeded"
  std::string module;  // e.g. "builtins", "celery.exceptions", "billiard.exceptions"
  nlohmann::json message = nlohmann::json::array();  // the exception's args

  nlohmann::json ToJson() const;
  // "ValueError('boom')" style text for logs and events.
  std::string Repr() const;
};

// Common exceptions a worker raises.
ExceptionInfo NotRegistered(std::string_view task_name);
ExceptionInfo TaskRevokedExpired();     // TaskRevokedError('expired')
ExceptionInfo TaskRevoked();            // TaskRevokedError('revoked'), by remote control
ExceptionInfo TaskRevokedTerminated();  // TaskRevokedError('terminated'), revoke(terminate)
ExceptionInfo TimeLimitExceeded(double seconds);          // billiard.exceptions
ExceptionInfo SoftTimeLimitExceeded(double seconds);      // billiard.exceptions
ExceptionInfo MaxRetriesExceeded(std::string_view text);  // celery.exceptions

// One value of celery-task-meta-<id>; fields as celery/backends/base.py, _get_result_meta.
struct ResultMeta {
  TaskState state = TaskState::kSuccess;
  nlohmann::json result;  // value, exception dict, or STARTED {pid, hostname}
  std::optional<std::string> traceback;
  std::optional<double> date_done;  // Unix seconds; set for READY states only
  std::string task_id;
  std::string parent_id;  // omitted when empty
  std::string group_id;   // omitted when empty
};

ResultMeta SuccessMeta(std::string_view task_id, nlohmann::json value, double now);
ResultMeta FailureMeta(std::string_view task_id, const ExceptionInfo& exc,
                       std::optional<std::string> traceback, double now);
ResultMeta RetryMeta(std::string_view task_id, const ExceptionInfo& exc,
                     std::optional<std::string> traceback);
ResultMeta RevokedMeta(std::string_view task_id, const ExceptionInfo& exc, double now);
ResultMeta StartedMeta(std::string_view task_id, long pid, std::string_view hostname);

// JSON text in Celery's field order: status, result, traceback, children, date_done,
// [group_id], [parent_id], task_id. date_done is naive UTC ISO (Celery 5.2.6). Pure.
std::string EncodeResultMeta(const ResultMeta& meta);

// "celery-task-meta-<id>".
std::string ResultKey(std::string_view task_id);

// The "status" of a stored result JSON; nullopt when it is not a JSON object with a status.
std::optional<std::string> StoredStatus(std::string_view stored);

}  // namespace warmpool::celery
