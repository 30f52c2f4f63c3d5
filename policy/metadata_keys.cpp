#include "policy/metadata_keys.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "policy/scaler_metadata.h"

namespace warmpool::policy {
namespace {

// Every key ParseScalerMetadata reads (docs/scaler.md lists them with their defaults).
constexpr std::array<std::string_view, 25> kWarmpoolKeys = {
    "redis",           "redisAddress",       "queues",
    "keyPrefix",       "priorityLevels",     "countInFlight",
    "tasksPerReplica", "activationBacklog",  "minWarmReplicas",
    "maxReplicas",     "keepAlive",          "coldStartSeconds",
    "waitCostPerHour", "replicaCostPerHour", "nodeUnneededSeconds",
    "warmWindows",     "drainSeconds",       "taskSeconds",
    "prewarm",         "etaPrewarm",         "targetWaitSeconds",
    "forecast",        "cooldownSeconds",    "scaleDownWindowSeconds",
    "releasesPerHour"};

// Keys KEDA itself reads from an external trigger's metadata and passes on in scalerMetadata
// (kedacore/keda pkg/scalers/external_scaler.go, externalScalerMetadata: scalerAddress,
// enableTLS, unsafeSsl; older releases read tlsCertFile there).
constexpr std::array<std::string_view, 4> kKedaKeys = {"scalerAddress", "enableTLS", "unsafeSsl",
                                                       "tlsCertFile"};

constexpr std::string_view kFromEnv = "FromEnv";

bool IsWarmpoolKey(std::string_view key) {
  return std::find(kWarmpoolKeys.begin(), kWarmpoolKeys.end(), key) != kWarmpoolKeys.end();
}

bool IsKedaKey(std::string_view key) {
  return std::find(kKedaKeys.begin(), kKedaKeys.end(), key) != kKedaKeys.end();
}

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Levenshtein plus adjacent transpositions), ignoring case.
size_t EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && Lower(a[i - 1]) == Lower(b[j - 2]) &&
          Lower(a[i - 2]) == Lower(b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string UnknownKeyMessage(const std::string& key) {
  std::string suggestion;
  const bool from_env = key.size() > kFromEnv.size() && key.ends_with(kFromEnv);
  if (from_env) {
    suggestion = ClosestKnownKey(std::string_view(key).substr(0, key.size() - kFromEnv.size()));
    suggestion.append(kFromEnv);
  } else {
    suggestion = ClosestKnownKey(key);
  }
  std::string msg = "unknown metadata key '";
  msg.append(Abbreviate(key, 64)).append("' (did you mean '").append(suggestion).append("'?)");
  return msg;
}

}  // namespace

std::string ClosestKnownKey(std::string_view key) {
  key = key.substr(0, std::min<size_t>(key.size(), 64));
  std::string_view best = kWarmpoolKeys.front();
  size_t best_distance = EditDistance(key, best);
  auto consider = [&](std::string_view candidate) {
    const size_t d = EditDistance(key, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  };
  for (std::string_view k : kWarmpoolKeys) consider(k);
  for (std::string_view k : kKedaKeys) consider(k);
  return std::string(best);
}

ResolvedKeys ResolveMetadataKeys(const std::map<std::string, std::string>& given) {
  ResolvedKeys out;
  for (const auto& [key, value] : given) {
    if (IsWarmpoolKey(key)) {
      out.values[key] = value;  // explicit: replaces a value taken from `keyFromEnv`
      out.written_as.erase(key);
      continue;
    }
    if (IsKedaKey(key)) continue;
    if (key.size() > kFromEnv.size() && key.ends_with(kFromEnv)) {
      const std::string base = key.substr(0, key.size() - kFromEnv.size());
      if (IsWarmpoolKey(base)) {
        if (!given.count(base)) {
          out.values[base] = value;
          out.written_as[base] = key;
        }
        continue;
      }
      if (IsKedaKey(base)) continue;
    }
    out.unknown.push_back(UnknownKeyMessage(key));
  }
  return out;
}

std::string PolicyKeysOf(const std::map<std::string, std::string>& given) {
  std::string out;
  for (const auto& [key, value] : ResolveMetadataKeys(given).values) {
    out.append(key).append(1, '=').append(value).append(1, '\x1e');
  }
  return out;
}

}  // namespace warmpool::policy
