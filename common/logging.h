#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>
#include <spdlog/common.h>

namespace warmpool {

enum class LogFormat { kText, kJson };

// "text" | "json"; nullopt otherwise.
std::optional<LogFormat> ParseLogFormat(std::string_view text);
// "trace" | "debug" | "info" | "warn" | "error" | "critical" | "off"; nullopt otherwise.
std::optional<spdlog::level::level_enum> ParseLogLevel(std::string_view text);

// Sets the default spdlog logger to stderr with one line per event, UTC timestamps. In JSON mode
// every line is one JSON object: {"ts","level","logger", then "msg" or the event's fields}.
// Call once at start-up, before threads log.
void SetupLogging(LogFormat format, spdlog::level::level_enum level, std::string_view name);

// Logs one structured event: text mode prints `event key=value ...`, JSON mode merges
// {"event": event} with `fields`. Callers never put secrets in `fields`.
void LogEvent(spdlog::level::level_enum level, std::string_view event,
              const nlohmann::json& fields);

}  // namespace warmpool
