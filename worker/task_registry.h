#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace warmpool::worker {

// A failure a task reports to its Python caller. It becomes a FAILURE result
// {"exc_type", "exc_message", "exc_module"}; the Python client rebuilds the class from
// sys.modules[exc_module], so use a real module ("builtins", "celery.exceptions", ...) or an
// application module the client imports.
class TaskError : public std::runtime_error {
 public:
  // `args` are the exception's args (Python's exc.args); a string becomes a one-element list.
  TaskError(std::string exc_type, std::string exc_module, nlohmann::json args);

  const std::string& exc_type() const { return exc_type_; }
  const std::string& exc_module() const { return exc_module_; }
  const nlohmann::json& exc_args() const { return exc_args_; }

  // Python built-ins, for argument checks: TypeError("seconds must be a number, got 'x'").
  static TaskError TypeError(std::string message);
  static TaskError ValueError(std::string message);
  static TaskError RuntimeError(std::string message);

 private:
  std::string exc_type_;
  std::string exc_module_;
  nlohmann::json exc_args_;
};

// Thrown by a task to ask for a retry (Celery's self.retry): the worker republishes the message
// with the same id, retries + 1 and eta = now + countdown, and stores RETRY with `cause`. When
// the message's retries already reached max_retries, FAILURE is stored instead (with `cause`
// when given, else MaxRetriesExceededError).
class TaskRetry : public std::runtime_error {
 public:
  explicit TaskRetry(std::chrono::duration<double> countdown, std::optional<TaskError> cause = {},
                     int max_retries = 3);
  std::chrono::duration<double> countdown() const { return countdown_; }
  const std::optional<TaskError>& cause() const { return cause_; }
  int max_retries() const { return max_retries_; }

 private:
  std::chrono::duration<double> countdown_;
  std::optional<TaskError> cause_;
  int max_retries_;
};

// What a running task may read about itself. Owned by the worker; valid for the duration of the
// call. StopRequested()/ThrowIfStopRequested() are thread-safe.
class TaskContext {
 public:
  std::string id;
  std::string name;      // registered name (after --task-alias)
  std::string hostname;  // worker nodename
  std::string queue;
  std::string data_root;  // --data-root (empty when not set): where file paths are resolved
  int retries = 0;
  std::optional<std::chrono::steady_clock::time_point> soft_deadline;  // soft time limit
  std::optional<double> soft_limit_seconds;

  // True once the worker gave up on this task (hard time limit, or shutdown grace over) or the
  // soft time limit passed. Long tasks should poll it and return or throw.
  bool StopRequested() const;
  // Throws TaskError SoftTimeLimitExceeded (billiard.exceptions) when the soft limit passed, or
  // TaskError WorkerLostError when the worker cancelled the task. Call between work units.
  void ThrowIfStopRequested() const;
  // Sleeps up to `d`, returning early (via ThrowIfStopRequested) when a stop is requested.
  void Sleep(std::chrono::duration<double> d) const;

  void RequestCancelForWorker() { cancelled_.store(true); }

 private:
  std::atomic<bool> cancelled_{false};
};

// A task: (args, kwargs, context) -> JSON result. Throw TaskError for a failure Python should
// see with a specific class, TaskRetry to retry. Any other std::exception becomes FAILURE
// RuntimeError(what()); nlohmann::json type errors become TypeError. Called on a worker thread;
// several calls may run at once when --concurrency > 1.
using TaskFunction = std::function<nlohmann::json(
    const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext& context)>;

// Registered tasks by name, plus aliases (a Python task name mapped onto a registered one).
// Filled before the worker starts; read-only (and so thread-safe) afterwards.
class TaskRegistry {
 public:
  // Registers `fn` under `name`. Throws std::invalid_argument on an empty or duplicate name.
  void Register(std::string name, TaskFunction fn);
  // Makes `alias` dispatch to the registered task `target`. Throws std::invalid_argument when
  // `target` is not registered or `alias` is already a name.
  void AddAlias(std::string alias, std::string target);
  // Parses "OLD=NEW" (the --task-alias flag) and calls AddAlias.
  void AddAliasSpec(std::string_view spec);

  // Sets the hard time limit (seconds, > 0) the worker applies to registered task `name` when a
  // message carries none; it takes precedence over the worker-wide --time-limit. Throws
  // std::invalid_argument when `name` is not registered or seconds <= 0.
  void SetDefaultTimeLimit(std::string_view name, double seconds);
  // That limit for a registered (resolved) name, or nullopt.
  std::optional<double> DefaultTimeLimit(std::string_view name) const;

  // The function for `name` (through aliases), or nullptr. `resolved` gets the target name.
  const TaskFunction* Find(std::string_view name, std::string* resolved = nullptr) const;
  std::vector<std::string> Names() const;  // registered names and aliases, sorted

 private:
  std::map<std::string, TaskFunction, std::less<>> tasks_;
  std::map<std::string, std::string, std::less<>> aliases_;
  std::map<std::string, double, std::less<>> default_time_limits_;
};

// Argument helpers with Celery-like errors. Positional index `i` or keyword `name`, whichever
// the caller passed (kwargs win); a missing required argument is TypeError("<task>() missing
// required argument: '<name>'"), a wrong type TypeError naming the argument.
double NumberArg(const nlohmann::json& args, const nlohmann::json& kwargs, size_t i,
                 std::string_view name, std::string_view task,
                 std::optional<double> default_value = std::nullopt);
std::string StringArg(const nlohmann::json& args, const nlohmann::json& kwargs, size_t i,
                      std::string_view name, std::string_view task,
                      std::optional<std::string> default_value = std::nullopt);
// Rejects more positional args than `max_positional` or kwargs outside `allowed` (TypeError).
void CheckArity(const nlohmann::json& args, const nlohmann::json& kwargs, size_t max_positional,
                const std::vector<std::string_view>& allowed, std::string_view task);

}  // namespace warmpool::worker
