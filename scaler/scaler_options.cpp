#include "scaler/scaler_options.h"

#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "common/split.h"

namespace warmpool::scaler {

Status ParseRedisConnections(const std::vector<std::string>& entries,
                             std::chrono::milliseconds timeout,
                             std::map<std::string, RedisEndpoint>* out,
                             const std::string& master_name) {
  std::map<std::string, RedisEndpoint> parsed;
  for (const auto& entry : entries) {
    auto eq = entry.find('=');
    std::string name = eq == std::string::npos ? "" : entry.substr(0, eq);
    if (name.empty()) {
      return Status::InvalidArgument("--redis expects NAME=URL (e.g. default=redis://host:6379/0)");
    }
    std::string error;
    auto endpoint = ParseRedisUrl(entry.substr(eq + 1), &error);
    if (!endpoint) {
      return Status::InvalidArgument("--redis " + name + ": " + error);
    }
    if (Status s = ApplyDefaultMasterName(master_name, "--redis " + name, &*endpoint); !s.ok()) {
      return s;
    }
    endpoint->connect_timeout = timeout;
    endpoint->command_timeout = timeout;
    if (parsed.count(name)) return Status::InvalidArgument("--redis " + name + " given twice");
    parsed[name] = *endpoint;
  }
  *out = std::move(parsed);
  return Status::Ok();
}

std::vector<std::string> SplitRedisList(std::string_view list) {
  std::vector<std::string> out;
  for (std::string_view item : SplitOnComma(list)) {
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

namespace {

// Flags as given, before they are checked and converted into ScalerOptions.
struct RawFlags {
  std::vector<std::string> redis;
  std::string master_name;
  std::string log_format = "text", log_level = "info";
  int coalesce_ms = 200, timeout_ms = 1000, stream_ms = 200, resend_s = 0, tls_reload_s = 30;
};

// gRPC TLS and the plaintext health listener that kubelet's gRPC probe (no TLS) can reach.
void AddTlsFlags(CLI::App& app, ScalerOptions& opts, RawFlags& raw) {
  app.add_option("--tls-cert", opts.tls.cert,
                 "Serve gRPC over TLS with this PEM certificate chain (re-read when it changes)")
      ->envname("WARMPOOL_TLS_CERT");
  app.add_option("--tls-key", opts.tls.key, "PEM private key of --tls-cert")
      ->envname("WARMPOOL_TLS_KEY");
  app.add_option("--tls-client-ca", opts.tls.client_ca,
                 "Require client certificates signed by this PEM CA bundle (mTLS)")
      ->envname("WARMPOOL_TLS_CLIENT_CA");
  app.add_option("--tls-reload-s", raw.tls_reload_s,
                 "Check the TLS files for a new version this often (s)")
      ->envname("WARMPOOL_TLS_RELOAD_S")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  app.add_option("--health-listen", opts.health_listen,
                 "Plaintext HOST:PORT serving only grpc.health.v1 (for kubelet's gRPC probe when "
                 "--listen is TLS), or 'off'")
      ->envname("WARMPOOL_HEALTH_LISTEN")
      ->capture_default_str();
}

// The flag table: every flag, its environment variable, range and help.
void AddFlags(CLI::App& app, ScalerOptions& opts, RawFlags& raw) {
  app.add_option("--listen", opts.listen, "gRPC listen address HOST:PORT")
      ->envname("WARMPOOL_LISTEN")
      ->capture_default_str();
  app.add_option("--redis", raw.redis,
                 "Named Redis connection NAME=URL, URL one of redis://[user:pass@]host:port/db, "
                 "rediss://[user:pass@]host:6380/db[?ssl_cert_reqs=required&ssl_ca_certs=FILE] "
                 "(TLS, verified by default), sentinel://[:pass@]h1:26379[;sentinel://h2:26379]"
                 "[?master_name=NAME] (repeatable; env WARMPOOL_REDIS: comma-separated, a comma "
                 "in a password as %2C). Default: default=redis://127.0.0.1:6379/0");
  app.add_option("--redis-master-name", raw.master_name,
                 "Sentinel master name for sentinel:// URLs without ?master_name (Celery's "
                 "master_name transport option)")
      ->envname("WARMPOOL_REDIS_MASTER_NAME");
  app.add_option("--metrics-listen", opts.metrics_listen,
                 "Prometheus /metrics listen address HOST:PORT, or 'off'")
      ->envname("WARMPOOL_METRICS_LISTEN")
      ->capture_default_str();
  app.add_option("--log-format", raw.log_format, "text | json")
      ->envname("WARMPOOL_LOG_FORMAT")
      ->capture_default_str();
  app.add_option("--log-level", raw.log_level, "trace | debug | info | warn | error")
      ->envname("WARMPOOL_LOG_LEVEL")
      ->capture_default_str();
  app.add_option("--coalesce-ms", raw.coalesce_ms,
                 "Share one Redis reading per queue set for this long (ms)")
      ->envname("WARMPOOL_COALESCE_MS")
      ->check(CLI::Range(0, 5000))
      ->capture_default_str();
  app.add_option("--redis-timeout-ms", raw.timeout_ms, "Redis connect and command timeout (ms)")
      ->envname("WARMPOOL_REDIS_TIMEOUT_MS")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  app.add_option("--stream-interval-ms", raw.stream_ms, "StreamIsActive poll period (ms)")
      ->envname("WARMPOOL_STREAM_INTERVAL_MS")
      ->check(CLI::Range(10, 1000))
      ->capture_default_str();
  app.add_option("--stream-resend-s", raw.resend_s,
                 "StreamIsActive also re-sends its state this often (s); 0 = only on change")
      ->envname("WARMPOOL_STREAM_RESEND_S")
      ->check(CLI::Range(0, 3600))
      ->capture_default_str();
  app.add_option("--state-prefix", opts.state_prefix,
                 "Redis key prefix for the policy state shared by scaler replicas")
      ->envname("WARMPOOL_STATE_PREFIX")
      ->capture_default_str();
  AddTlsFlags(app, opts, raw);
}

}  // namespace

bool ParseScalerOptions(int argc, char** argv, ScalerOptions* out, int* exit_code) {
  CLI::App app{
      "warmpool-scaler: a KEDA external scaler that measures the real Celery backlog in Redis\n"
      "(every queue, kombu priority sub-lists, tasks in flight) and applies a warm-pool policy."};
  ScalerOptions opts;
  RawFlags raw;
  AddFlags(app, opts, raw);
  AddVersionFlag(app, "warmpool-scaler");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *exit_code = CliExitCode(app, e);  // 0 after --help/--version, 2 on a usage error
    return false;
  }
  auto format = ParseLogFormat(raw.log_format);
  auto level = ParseLogLevel(raw.log_level);
  if (!format || !level) {
    std::cerr << "warmpool-scaler: bad --log-format '" << raw.log_format << "' or --log-level '"
              << raw.log_level << "'\n";
    *exit_code = 2;
    return false;
  }
  opts.log_format = *format;
  opts.log_level = *level;
  opts.coalesce_window = std::chrono::milliseconds(raw.coalesce_ms);
  opts.redis_timeout = std::chrono::milliseconds(raw.timeout_ms);
  opts.stream_interval = std::chrono::milliseconds(raw.stream_ms);
  opts.stream_resend = std::chrono::seconds(raw.resend_s);
  opts.tls.reload = std::chrono::seconds(raw.tls_reload_s);
  if (Status s = CheckTlsFlags(opts.tls); !s.ok()) {
    std::cerr << "warmpool-scaler: " << s.message() << "\n";
    *exit_code = 2;
    return false;
  }
  // A flag's value is one connection, never split (a raw comma may be in its password); only
  // the environment variable is a list, as in the flag's help.
  if (raw.redis.empty()) {
    const char* env = std::getenv("WARMPOOL_REDIS");
    if (env != nullptr && *env != '\0') raw.redis = SplitRedisList(env);
  }
  if (raw.redis.empty()) raw.redis.push_back("default=redis://127.0.0.1:6379/0");
  if (Status s = ParseRedisConnections(raw.redis, opts.redis_timeout, &opts.redis, raw.master_name);
      !s.ok()) {
    std::cerr << "warmpool-scaler: " << s.message() << "\n";
    *exit_code = 2;
    return false;
  }
  *out = std::move(opts);
  return true;
}

}  // namespace warmpool::scaler
