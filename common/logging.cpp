#include "common/logging.h"

#include <memory>
#include <string>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace warmpool {
namespace {

// Structured payloads start with this byte so the JSON formatter can splice their members in
// without escaping; it never appears in plain messages (control character).
constexpr char kStructuredMarker = '\x01';
LogFormat g_format = LogFormat::kText;

// %j: a plain message becomes "msg":"<escaped>"; a structured one is spliced in as members.
class JsonPayloadFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string_view payload(msg.payload.data(), msg.payload.size());
    std::string out;
    if (!payload.empty() && payload.front() == kStructuredMarker) {
      out = std::string(payload.substr(1));
    } else {
      out = "\"msg\":" + nlohmann::json(std::string(payload))
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    dest.append(out.data(), out.data() + out.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonPayloadFlag>();
  }
};

std::string TextValue(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.find_first_of(" \"=") == std::string::npos && !s.empty()) return s;
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return std::nullopt;
}

std::optional<spdlog::level::level_enum> ParseLogLevel(std::string_view text) {
  static constexpr std::pair<std::string_view, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace},       {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},         {"warn", spdlog::level::warn},
      {"warning", spdlog::level::warn},      {"error", spdlog::level::err},
      {"critical", spdlog::level::critical}, {"off", spdlog::level::off}};
  for (const auto& [name, level] : kLevels) {
    if (name == text) return level;
  }
  return std::nullopt;
}

void SetupLogging(LogFormat format, spdlog::level::level_enum level, std::string_view name) {
  g_format = format;
  auto logger = std::make_shared<spdlog::logger>(std::string(name),
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
  if (format == LogFormat::kJson) {
    formatter->add_flag<JsonPayloadFlag>('j').set_pattern(
        R"({"ts":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","logger":"%n",%j})");
  } else {
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %n: %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
}

void LogEvent(spdlog::level::level_enum level, std::string_view event,
              const nlohmann::json& fields) {
  if (!spdlog::should_log(level)) return;
  std::string line;
  if (g_format == LogFormat::kJson) {
    nlohmann::ordered_json obj;  // "event" first, then the fields
    obj["event"] = event;
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.items()) obj[k] = v;
    }
    std::string dumped = obj.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // Strip the outer braces: the pattern supplies them around ts/level/logger.
    line = kStructuredMarker + dumped.substr(1, dumped.size() - 2);
  } else {
    line = std::string(event);
    if (fields.is_object()) {
      for (const auto& [k, v] : fields.items()) line += " " + k + "=" + TextValue(v);
    }
  }
  spdlog::log(level, "{}", line);
}

}  // namespace warmpool
