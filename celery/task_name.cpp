#include "celery/task_name.h"

#include "celery/message.h"
#include "common/json_parse.h"

namespace warmpool::celery {

std::optional<std::string> TaskNameOfEnvelope(std::string_view envelope_json) {
  // ParseJson reports bad or too deeply nested input as a discarded value, never by throwing.
  return TaskNameOfParsedEnvelope(ParseJson(envelope_json));
}

std::optional<std::string> TaskNameOfParsedEnvelope(const nlohmann::json& envelope) {
  if (!envelope.is_object()) return std::nullopt;  // discarded values are not objects either
  const auto headers = envelope.find("headers");
  if (headers == envelope.end() || !headers->is_object()) return std::nullopt;
  const auto task = headers->find("task");
  if (task == headers->end() || !task->is_string()) return std::nullopt;
  return task->get<std::string>();
}

std::optional<double> EtaOfParsedEnvelope(const nlohmann::json& envelope) {
  if (!envelope.is_object()) return std::nullopt;
  const auto headers = envelope.find("headers");
  if (headers == envelope.end() || !headers->is_object()) return std::nullopt;
  std::optional<double> eta;
  if (!ReadCeleryTime(*headers, "eta", "headers.eta", &eta).ok()) return std::nullopt;
  return eta;
}

}  // namespace warmpool::celery
