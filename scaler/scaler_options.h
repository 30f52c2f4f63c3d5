#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/logging.h"
#include "common/status.h"
#include "redis/url.h"
#include "scaler/tls_credentials.h"

namespace warmpool::scaler {

// Everything warmpool-scaler is configured with (flags, each also from an env var).
struct ScalerOptions {
  std::string listen = "0.0.0.0:6000";          // gRPC HOST:PORT
  std::string metrics_listen = "0.0.0.0:9090";  // Prometheus HOST:PORT, or "off"
  std::map<std::string, RedisEndpoint> redis;   // named connections; "default" used by default
  LogFormat log_format = LogFormat::kText;
  spdlog::level::level_enum log_level = spdlog::level::info;
  std::chrono::milliseconds coalesce_window{200};  // share a Redis reading this long
  std::chrono::milliseconds redis_timeout{1000};   // connect and command timeout
  std::chrono::milliseconds stream_interval{200};  // StreamIsActive poll period
  std::chrono::seconds stream_resend{0};           // StreamIsActive periodic re-send; 0 = off
  std::string state_prefix = "warmpool:";          // Redis prefix of shared policy state
  TlsServerFiles tls;                              // --tls-*: gRPC over TLS/mTLS when set
  std::string health_listen = "off";  // plaintext HOST:PORT serving only grpc.health.v1
};

// Parses "NAME=URL" entries (flags or a comma-separated env value) into named endpoints;
// sentinel:// URLs without ?master_name get `master_name` (--redis-master-name).
// InvalidArgument names the entry (password redacted) on error. Pure.
Status ParseRedisConnections(const std::vector<std::string>& entries,
                             std::chrono::milliseconds timeout,
                             std::map<std::string, RedisEndpoint>* out,
                             const std::string& master_name = "");

// Splits WARMPOOL_REDIS ("a=URL,b=URL") on commas, dropping empty items. A comma inside a URL
// must be percent-encoded (%2C); ParseRedisUrl decodes it, as redis-py and kombu do. Pure.
std::vector<std::string> SplitRedisList(std::string_view list);

// Parses argv (CLI11; --help lists every env var). Returns false and sets *exit_code when the
// program should exit (help printed or bad flags, with a message on stderr).
bool ParseScalerOptions(int argc, char** argv, ScalerOptions* out, int* exit_code);

}  // namespace warmpool::scaler
