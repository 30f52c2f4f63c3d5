#include "policy/scaler_metadata.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string_view>

#include "policy/metadata_keys.h"

namespace warmpool::policy {
namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<std::string> SplitCsv(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string_view::npos) comma = s.size();
    out.push_back(Trim(s.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

bool ParseInt64(std::string_view text, int64_t* out) {
  std::string t = Trim(text);
  if (t.empty()) return false;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || ptr != t.data() + t.size()) return false;
  *out = v;
  return true;
}

bool ParseDouble(std::string_view text, double* out) {
  std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

// A bound as the messages print it: 0, 1000000, 0.5.
std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

bool ParseBool(std::string_view text, bool* out) {
  std::string t = Trim(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "true" || t == "1" || t == "yes") {
    *out = true;
    return true;
  }
  if (t == "false" || t == "0" || t == "no") {
    *out = false;
    return true;
  }
  return false;
}

struct Parser {
  const std::map<std::string, std::string>& raw;
  const std::map<std::string, std::string>& written_as;  // `x` -> `xFromEnv`
  std::vector<std::string> problems;

  // The key as the ScaledObject spells it.
  std::string Name(const std::string& key) const {
    auto it = written_as.find(key);
    return it == written_as.end() ? key : it->second;
  }

  void Bad(const std::string& key, const std::string& value, const std::string& want) {
    std::string problem = Name(key);
    problem.append("=\"").append(Abbreviate(value)).append("\": ").append(Abbreviate(want, 400));
    problems.push_back(std::move(problem));
  }

  // An integer from min to max.
  void Int(const char* key, int64_t min, int64_t max, int64_t* field) {
    auto it = raw.find(key);
    if (it == raw.end()) return;
    int64_t v = 0;
    if (!ParseInt64(it->second, &v) || v < min || v > max) {
      Bad(key, it->second,
          "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
      return;
    }
    *field = v;
  }

  // A finite number from min (excluded when `strict`) to max.
  bool Double(const char* key, double min, bool strict, double max, double* field) {
    auto it = raw.find(key);
    if (it == raw.end()) return false;
    double v = 0;
    if (!ParseDouble(it->second, &v) || v < min || (strict && v == min) || v > max) {
      Bad(key, it->second,
          std::string("must be a number ") + (strict ? "> " : "from ") + Number(min) + " to " +
              Number(max));
      return false;
    }
    *field = v;
    return true;
  }

  void Bool(const char* key, bool* field) {
    auto it = raw.find(key);
    if (it == raw.end()) return;
    if (!ParseBool(it->second, field)) Bad(key, it->second, "must be true or false");
  }
};

}  // namespace

std::string Abbreviate(std::string_view value, size_t keep) {
  if (value.size() <= keep) return std::string(value);
  return std::string(value.substr(0, keep)) + "... (" + std::to_string(value.size()) + " bytes)";
}

namespace {

// Where the backlog lives: the Redis connection, queues, key prefix and priority levels.
void ParseConnectionKeys(const std::map<std::string, std::string>& raw, Parser& p,
                         ScalerMetadata& m) {
  if (auto it = raw.find("redis"); it != raw.end()) {
    m.redis = Trim(it->second);
    if (m.redis.empty()) p.Bad("redis", it->second, "must name a connection given with --redis");
  }
  if (auto it = raw.find("redisAddress"); it != raw.end()) {
    m.redis_address = Trim(it->second);
    if (m.redis_address.empty() || m.redis_address.find('@') != std::string::npos ||
        m.redis_address.find("://") != std::string::npos) {
      p.Bad("redisAddress", it->second, "must be host:port[/db] without scheme or credentials");
    }
    if (raw.count("redis")) {
      p.Bad("redisAddress", it->second, "give either redis or redisAddress, not both");
    }
  }
  if (auto it = raw.find("queues"); it != raw.end()) {
    auto queues = SplitCsv(it->second);
    bool ok = !queues.empty() && std::none_of(queues.begin(), queues.end(),
                                              [](const std::string& q) { return q.empty(); });
    if (!ok) {
      p.Bad("queues", it->second, "must be a comma-separated list of non-empty queue names");
    } else {
      std::sort(queues.begin(), queues.end());
      queues.erase(std::unique(queues.begin(), queues.end()), queues.end());
      m.queues = std::move(queues);
    }
  }
  if (auto it = raw.find("keyPrefix"); it != raw.end()) m.key_prefix = it->second;
  if (auto it = raw.find("priorityLevels"); it != raw.end()) {
    std::vector<int> levels;
    bool ok = true;
    for (const auto& part : SplitCsv(it->second)) {
      int64_t v = 0;
      if (!ParseInt64(part, &v) || v < 0 || v > 9) {
        ok = false;
        break;
      }
      levels.push_back(static_cast<int>(v));
    }
    ok = ok && !levels.empty() && levels.front() == 0 &&
         std::is_sorted(levels.begin(), levels.end()) &&
         std::adjacent_find(levels.begin(), levels.end()) == levels.end();
    if (!ok) {
      p.Bad("priorityLevels", it->second,
            "must be ascending distinct integers in 0..9 starting with 0, e.g. 0,3,6,9");
    } else {
      m.priority_levels = std::move(levels);
    }
  }
}

// How the backlog becomes replicas.
void ParseSizingKeys(Parser& p, ScalerMetadata& m) {
  p.Bool("countInFlight", &m.count_in_flight);
  p.Int("tasksPerReplica", 1, ScalerMetadata::kMaxTasksPerReplica, &m.tasks_per_replica);
  p.Int("activationBacklog", 0, std::numeric_limits<int64_t>::max(), &m.activation_backlog);
  p.Int("minWarmReplicas", 0, ScalerMetadata::kMaxReplicaCount, &m.min_warm_replicas);
  p.Int("maxReplicas", 1, ScalerMetadata::kMaxReplicaCount, &m.max_replicas);
}

// The queue-wait objective and the drain horizon that follows from it (after coldStartSeconds).
void ParseObjectiveKeys(const std::map<std::string, std::string>& raw, Parser& p,
                        ScalerMetadata& m) {
  const int64_t c = m.cold_start_seconds;
  const int64_t automatic = c + std::max<int64_t>(1, c / 2);  // 1.5 x C (C is at most a year)
  int64_t target = automatic;
  const auto tw = raw.find("targetWaitSeconds");
  if (tw != raw.end() && Lower(Trim(tw->second)) != "auto") {
    if (!ParseInt64(Trim(tw->second), &target) || target < 1 ||
        target > ScalerMetadata::kMaxSeconds) {
      p.Bad("targetWaitSeconds", tw->second,
            "must be auto or an integer number of seconds from 1 to " +
                std::to_string(ScalerMetadata::kMaxSeconds));
      target = automatic;
    }
  }
  m.target_wait_seconds = target;
  m.drain_seconds = std::max<int64_t>(1, target - c);
  if (auto it = raw.find("drainSeconds"); it != raw.end()) {
    const std::string v = Lower(Trim(it->second));
    int64_t seconds = 0;
    if (tw != raw.end() && v != "auto") {
      p.Bad("drainSeconds", it->second,
            "give targetWaitSeconds (the objective) or drainSeconds (its drain part), not both");
    } else if (v == "auto") {
      // derived above
    } else if (v == "off") {
      m.drain_seconds.reset();
    } else if (ParseInt64(v, &seconds) && seconds >= 1 && seconds <= ScalerMetadata::kMaxSeconds) {
      m.drain_seconds = seconds;
      m.target_wait_seconds = c + seconds;
    } else {
      p.Bad("drainSeconds", it->second,
            "must be auto, off or an integer number of seconds from 1 to " +
                std::to_string(ScalerMetadata::kMaxSeconds));
    }
  }
  m.target_wait_reachable_cold = m.target_wait_seconds > c;
}

// The warm-pool policy keys.
void ParsePolicyKeys(const std::map<std::string, std::string>& raw, Parser& p, ScalerMetadata& m) {
  // Warm-pool policy keys.
  if (auto it = raw.find("keepAlive"); it != raw.end()) {
    std::string v = Trim(it->second);
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    int64_t seconds = 0;
    if (v == "auto") {
      m.keep_alive_seconds.reset();
    } else if (ParseInt64(v, &seconds) && seconds >= 0 && seconds <= ScalerMetadata::kMaxSeconds) {
      m.keep_alive_seconds = seconds;
    } else {
      p.Bad("keepAlive", it->second,
            "must be auto or an integer number of seconds from 0 to " +
                std::to_string(ScalerMetadata::kMaxSeconds));
    }
  }
  constexpr int64_t kYear = ScalerMetadata::kMaxSeconds;
  p.Int("coldStartSeconds", 0, kYear, &m.cold_start_seconds);
  p.Double("waitCostPerHour", 0, false, ScalerMetadata::kMaxCostPerHour, &m.wait_cost_per_hour);
  p.Double("replicaCostPerHour", 0, false, ScalerMetadata::kMaxCostPerHour,
           &m.replica_cost_per_hour);
  p.Int("nodeUnneededSeconds", 0, kYear, &m.node_unneeded_seconds);
  p.Int("cooldownSeconds", 0, kYear, &m.cooldown_seconds);
  p.Int("scaleDownWindowSeconds", 0, kYear, &m.scale_down_window_seconds);
  if (auto it = raw.find("releasesPerHour"); it != raw.end()) {
    double v = 0;
    if (Lower(Trim(it->second)) == "off") {
      m.releases_per_hour.reset();
    } else if (ParseDouble(it->second, &v) && v >= ScalerMetadata::kMinReleasesPerHour &&
               v <= ScalerMetadata::kMaxReleasesPerHour) {
      m.releases_per_hour = v;
    } else {
      p.Bad("releasesPerHour", it->second, "must be off or a number from 0.01 to 3600");
    }
  }
  if (auto it = raw.find("warmWindows"); it != raw.end()) {
    if (Status s = ParseWarmWindows(it->second, &m.warm_windows); !s.ok()) {
      p.Bad("warmWindows", it->second, s.message());
    }
  }
  ParseObjectiveKeys(raw, p, m);
  {
    double task_seconds = 0;
    if (p.Double("taskSeconds", 0, true, static_cast<double>(ScalerMetadata::kMaxSeconds),
                 &task_seconds)) {
      m.task_seconds = task_seconds;
    }
  }
  if (auto it = raw.find("prewarm"); it != raw.end()) {
    std::string v = Trim(it->second);
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v == "histogram") {
      m.prewarm_histogram = true;
    } else if (v == "off") {
      m.prewarm_histogram = false;
    } else {
      p.Bad("prewarm", it->second, "must be histogram or off");
    }
  }
  p.Bool("etaPrewarm", &m.eta_prewarm);
  if (auto it = raw.find("forecast"); it != raw.end()) {
    const std::string v = Lower(Trim(it->second));
    if (v == "shadow") {
      m.forecast = ScalerMetadata::ForecastMode::kShadow;
    } else if (v == "on") {
      m.forecast = ScalerMetadata::ForecastMode::kOn;
    } else if (v == "off") {
      m.forecast = ScalerMetadata::ForecastMode::kOff;
    } else {
      p.Bad("forecast", it->second, "must be shadow, on or off");
    }
  }
}

// Cross-field rules, in one place.
void CheckCrossFieldRules(const std::map<std::string, std::string>& raw, Parser& p,
                          const ScalerMetadata& m) {
  if (m.min_warm_replicas > m.max_replicas) {
    std::string want = "must not exceed maxReplicas (";
    want.append(std::to_string(m.max_replicas)).append(")");
    p.Bad("minWarmReplicas", std::to_string(m.min_warm_replicas), want);
  }
  if (m.wait_cost_per_hour > 0 && m.replica_cost_per_hour <= 0) {
    p.Bad("waitCostPerHour", raw.at("waitCostPerHour"),
          "needs replicaCostPerHour > 0 to weigh waiting against GPU time");
  }
  for (const auto& w : m.warm_windows) {
    if (w.replicas > m.max_replicas) {
      p.Bad("warmWindows", raw.at("warmWindows"),
            "a window floor (" + std::to_string(w.replicas) + ") exceeds maxReplicas (" +
                std::to_string(m.max_replicas) + ")");
      break;
    }
  }
}

}  // namespace

Status ParseScalerMetadata(const std::map<std::string, std::string>& given, ParsedMetadata* out) {
  const ResolvedKeys keys = ResolveMetadataKeys(given);
  const std::map<std::string, std::string>& raw = keys.values;
  ParsedMetadata parsed;
  ScalerMetadata& m = parsed.metadata;
  Parser p{raw, keys.written_as, keys.unknown};
  ParseConnectionKeys(raw, p, m);
  ParseSizingKeys(p, m);
  ParsePolicyKeys(raw, p, m);
  CheckCrossFieldRules(raw, p, m);

  if (!p.problems.empty()) {
    std::string msg = "invalid ScaledObject metadata: ";
    for (size_t i = 0; i < p.problems.size(); ++i) {
      if (i) msg += "; ";
      msg += p.problems[i];
    }
    return Status::InvalidArgument(msg);
  }
  *out = std::move(parsed);
  return Status::Ok();
}

}  // namespace warmpool::policy
