#include "worker/task_registry.h"

#include <algorithm>
#include <thread>

namespace warmpool::worker {
namespace {

nlohmann::json ArgsList(nlohmann::json args) {
  if (args.is_array()) return args;
  return nlohmann::json::array({std::move(args)});
}

std::string Describe(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

const nlohmann::json* FindArg(const nlohmann::json& args, const nlohmann::json& kwargs, size_t i,
                              std::string_view name) {
  if (kwargs.is_object()) {
    auto it = kwargs.find(std::string(name));
    if (it != kwargs.end()) return &*it;
  }
  if (args.is_array() && i < args.size()) return &args[i];
  return nullptr;
}

}  // namespace

TaskError::TaskError(std::string exc_type, std::string exc_module, nlohmann::json args)
    : std::runtime_error(exc_type + ": " + ArgsList(args).dump()),
      exc_type_(std::move(exc_type)),
      exc_module_(std::move(exc_module)),
      exc_args_(ArgsList(std::move(args))) {}

TaskError TaskError::TypeError(std::string message) {
  return TaskError("TypeError", "builtins", std::move(message));
}
TaskError TaskError::ValueError(std::string message) {
  return TaskError("ValueError", "builtins", std::move(message));
}
TaskError TaskError::RuntimeError(std::string message) {
  return TaskError("RuntimeError", "builtins", std::move(message));
}

TaskRetry::TaskRetry(std::chrono::duration<double> countdown, std::optional<TaskError> cause,
                     int max_retries)
    : std::runtime_error("retry requested"),
      countdown_(countdown),
      cause_(std::move(cause)),
      max_retries_(max_retries) {}

bool TaskContext::StopRequested() const {
  if (cancelled_.load()) return true;
  return soft_deadline && std::chrono::steady_clock::now() >= *soft_deadline;
}

void TaskContext::ThrowIfStopRequested() const {
  if (cancelled_.load()) {
    throw TaskError("WorkerLostError", "billiard.exceptions",
                    "task cancelled by the worker (time limit or shutdown)");
  }
  if (soft_deadline && std::chrono::steady_clock::now() >= *soft_deadline) {
    throw TaskError("SoftTimeLimitExceeded", "billiard.exceptions",
                    nlohmann::json::array({soft_limit_seconds.value_or(0)}));
  }
}

void TaskContext::Sleep(std::chrono::duration<double> d) const {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(d);
  while (true) {
    ThrowIfStopRequested();
    auto now = std::chrono::steady_clock::now();
    if (now >= until) return;
    auto slice =
        std::min<std::chrono::steady_clock::duration>(until - now, std::chrono::milliseconds(10));
    std::this_thread::sleep_for(slice);
  }
}

void TaskRegistry::Register(std::string name, TaskFunction fn) {
  if (name.empty()) throw std::invalid_argument("task name must not be empty");
  if (!fn) throw std::invalid_argument("task '" + name + "' has no function");
  if (tasks_.count(name) || aliases_.count(name)) {
    throw std::invalid_argument("task '" + name + "' is already registered");
  }
  tasks_.emplace(std::move(name), std::move(fn));
}

void TaskRegistry::AddAlias(std::string alias, std::string target) {
  if (alias.empty()) throw std::invalid_argument("task alias must not be empty");
  if (!tasks_.count(target)) {
    throw std::invalid_argument("task alias '" + alias + "' points to '" + target +
                                "', which is not registered");
  }
  if (tasks_.count(alias) || aliases_.count(alias)) {
    throw std::invalid_argument("task alias '" + alias + "' is already a task name");
  }
  aliases_.emplace(std::move(alias), std::move(target));
}

void TaskRegistry::AddAliasSpec(std::string_view spec) {
  auto eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == spec.size()) {
    throw std::invalid_argument("--task-alias '" + std::string(spec) +
                                "' must look like OLD=NEW (e.g. "
                                "process_change_detection=warmpool.change_detection)");
  }
  AddAlias(std::string(spec.substr(0, eq)), std::string(spec.substr(eq + 1)));
}

void TaskRegistry::SetDefaultTimeLimit(std::string_view name, double seconds) {
  if (tasks_.find(name) == tasks_.end()) {
    throw std::invalid_argument("no registered task '" + std::string(name) + "'");
  }
  if (!(seconds > 0)) {
    throw std::invalid_argument("the default time limit of '" + std::string(name) +
                                "' must be > 0 seconds");
  }
  default_time_limits_[std::string(name)] = seconds;
}

std::optional<double> TaskRegistry::DefaultTimeLimit(std::string_view name) const {
  const auto it = default_time_limits_.find(name);
  if (it == default_time_limits_.end()) return std::nullopt;
  return it->second;
}

const TaskFunction* TaskRegistry::Find(std::string_view name, std::string* resolved) const {
  std::string_view target = name;
  if (auto a = aliases_.find(name); a != aliases_.end()) target = a->second;
  auto it = tasks_.find(target);
  if (it == tasks_.end()) return nullptr;
  if (resolved) *resolved = it->first;
  return &it->second;
}

std::vector<std::string> TaskRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, f] : tasks_) names.push_back(n);
  for (const auto& [a, t] : aliases_) names.push_back(a);
  std::sort(names.begin(), names.end());
  return names;
}

double NumberArg(const nlohmann::json& args, const nlohmann::json& kwargs, size_t i,
                 std::string_view name, std::string_view task,
                 std::optional<double> default_value) {
  const nlohmann::json* v = FindArg(args, kwargs, i, name);
  if (v == nullptr) {
    if (default_value) return *default_value;
    throw TaskError::TypeError(std::string(task) + "() missing required argument: '" +
                               std::string(name) + "'");
  }
  if (!v->is_number()) {
    throw TaskError::TypeError("argument '" + std::string(name) + "' of " + std::string(task) +
                               "() must be a number, got " + Describe(*v));
  }
  return v->get<double>();
}

std::string StringArg(const nlohmann::json& args, const nlohmann::json& kwargs, size_t i,
                      std::string_view name, std::string_view task,
                      std::optional<std::string> default_value) {
  const nlohmann::json* v = FindArg(args, kwargs, i, name);
  if (v == nullptr) {
    if (default_value) return *default_value;
    throw TaskError::TypeError(std::string(task) + "() missing required argument: '" +
                               std::string(name) + "'");
  }
  if (!v->is_string()) {
    throw TaskError::TypeError("argument '" + std::string(name) + "' of " + std::string(task) +
                               "() must be a string, got " + Describe(*v));
  }
  return v->get<std::string>();
}

void CheckArity(const nlohmann::json& args, const nlohmann::json& kwargs, size_t max_positional,
                const std::vector<std::string_view>& allowed, std::string_view task) {
  if (args.is_array() && args.size() > max_positional) {
    throw TaskError::TypeError(std::string(task) + "() takes " + std::to_string(max_positional) +
                               " positional argument(s) but " + std::to_string(args.size()) +
                               " were given");
  }
  if (!kwargs.is_object()) return;
  for (const auto& [k, v] : kwargs.items()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      throw TaskError::TypeError(std::string(task) + "() got an unexpected keyword argument '" + k +
                                 "'");
    }
  }
}

}  // namespace warmpool::worker
