#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace warmpool::celery {

// The Celery task name (protocol 2 headers.task) of a queued kombu message: the list element
// itself, the JSON envelope {"body": ..., "headers": {"task": ...}, "properties": ...} that
// kombu's Channel._put LPUSHes. nullopt when it is not JSON, or headers.task is missing or not
// a string (protocol 1 messages name the task in the body, which the scaler does not decode).
// Never throws. Pure.
std::optional<std::string> TaskNameOfEnvelope(std::string_view envelope_json);

// headers.task of an already parsed envelope; nullopt as above. Never throws. Pure.
std::optional<std::string> TaskNameOfParsedEnvelope(const nlohmann::json& envelope);

// headers.eta of a parsed protocol 2 envelope as Unix seconds (ISO-8601 text, as Celery sends it,
// or a number); nullopt when absent, null, unreadable or not an object. Never throws. Pure.
std::optional<double> EtaOfParsedEnvelope(const nlohmann::json& envelope);

}  // namespace warmpool::celery
