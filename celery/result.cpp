#include "celery/result.h"

#include "celery/message.h"
#include "celery/time.h"
#include "common/json_parse.h"

namespace warmpool::celery {

std::string_view StateName(TaskState state) {
  switch (state) {
    case TaskState::kStarted:
      return "STARTED";
    case TaskState::kSuccess:
      return "SUCCESS";
    case TaskState::kFailure:
      return "FAILURE";
    case TaskState::kRetry:
      return "RETRY";
    case TaskState::kRevoked:
      return "REVOKED";
  }
  return "FAILURE";
}

nlohmann::json ExceptionInfo::ToJson() const {
  nlohmann::ordered_json j = {{"exc_type", type}, {"exc_message", message}, {"exc_module", module}};
  return nlohmann::json::parse(j.dump());
}

std::string ExceptionInfo::Repr() const {
  std::string args = PythonRepr(message.is_array() ? message : nlohmann::json::array({message}),
                                /*as_tuple=*/true);
  // "(x,)" -> "x" inside the call parentheses.
  std::string inner = args.substr(1, args.size() - 2);
  if (!inner.empty() && inner.back() == ',') inner.pop_back();
  return type + "(" + inner + ")";
}

ExceptionInfo NotRegistered(std::string_view task_name) {
  return {"NotRegistered", "celery.exceptions", nlohmann::json::array({std::string(task_name)})};
}

ExceptionInfo TaskRevokedExpired() {
  return {"TaskRevokedError", "celery.exceptions", nlohmann::json::array({"expired"})};
}

ExceptionInfo TaskRevoked() {
  return {"TaskRevokedError", "celery.exceptions", nlohmann::json::array({"revoked"})};
}

ExceptionInfo TaskRevokedTerminated() {
  return {"TaskRevokedError", "celery.exceptions", nlohmann::json::array({"terminated"})};
}

ExceptionInfo TimeLimitExceeded(double seconds) {
  return {"TimeLimitExceeded", "billiard.exceptions", nlohmann::json::array({seconds})};
}

ExceptionInfo SoftTimeLimitExceeded(double seconds) {
  return {"SoftTimeLimitExceeded", "billiard.exceptions", nlohmann::json::array({seconds})};
}

ExceptionInfo MaxRetriesExceeded(std::string_view text) {
  return {"MaxRetriesExceededError", "celery.exceptions",
          nlohmann::json::array({std::string(text)})};
}

ResultMeta SuccessMeta(std::string_view task_id, nlohmann::json value, double now) {
  ResultMeta m;
  m.state = TaskState::kSuccess;
  m.result = std::move(value);
  m.date_done = now;
  m.task_id = task_id;
  return m;
}

ResultMeta FailureMeta(std::string_view task_id, const ExceptionInfo& exc,
                       std::optional<std::string> traceback, double now) {
  ResultMeta m;
  m.state = TaskState::kFailure;
  m.result = exc.ToJson();
  m.traceback = std::move(traceback);
  m.date_done = now;
  m.task_id = task_id;
  return m;
}

ResultMeta RetryMeta(std::string_view task_id, const ExceptionInfo& exc,
                     std::optional<std::string> traceback) {
  ResultMeta m;
  m.state = TaskState::kRetry;
  m.result = exc.ToJson();
  m.traceback = std::move(traceback);
  m.task_id = task_id;
  return m;
}

ResultMeta RevokedMeta(std::string_view task_id, const ExceptionInfo& exc, double now) {
  ResultMeta m;
  m.state = TaskState::kRevoked;
  m.result = exc.ToJson();
  m.date_done = now;
  m.task_id = task_id;
  return m;
}

ResultMeta StartedMeta(std::string_view task_id, long pid, std::string_view hostname) {
  ResultMeta m;
  m.state = TaskState::kStarted;
  m.result = {{"pid", pid}, {"hostname", std::string(hostname)}};
  m.task_id = task_id;
  return m;
}

std::string EncodeResultMeta(const ResultMeta& meta) {
  nlohmann::ordered_json j;
  j["status"] = StateName(meta.state);
  j["result"] = meta.result;
  j["traceback"] = meta.traceback ? nlohmann::ordered_json(*meta.traceback) : nullptr;
  j["children"] = nlohmann::ordered_json::array();
  j["date_done"] =
      meta.date_done ? nlohmann::ordered_json(FormatIsoNaiveUtc(*meta.date_done)) : nullptr;
  if (!meta.group_id.empty()) j["group_id"] = meta.group_id;
  if (!meta.parent_id.empty()) j["parent_id"] = meta.parent_id;
  j["task_id"] = meta.task_id;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ResultKey(std::string_view task_id) {
  return "celery-task-meta-" + std::string(task_id);
}

std::optional<std::string> StoredStatus(std::string_view stored) {
  auto j = ParseJson(stored);  // a result another client stored: bounded depth, as any input
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto it = j.find("status");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace warmpool::celery
