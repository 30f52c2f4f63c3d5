#include "scaler/scaler_server.h"

#include <atomic>
#include <condition_variable>
#include <pthread.h>
#include <signal.h>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <spdlog/spdlog.h>

#include "common/logging.h"
#include "common/metrics_server.h"
#include "redis/errors.h"
#include "scaler/backlog_reader.h"
#include "scaler/request_limits.h"
#include "scaler/scaler_service.h"
#include "scaler/tls_credentials.h"

namespace warmpool::scaler {
namespace {

constexpr char kReadinessService[] = "readiness";
constexpr char kLivenessService[] = "liveness";

// True when every named connection answers PING, each within `timeout`. On its own thread:
// a hung Redis delays readiness only, never a gRPC answer.
bool RedisReady(ConnectionRegistry& registry, std::chrono::milliseconds timeout,
                std::string* error) {
  std::string failed;
  for (auto& [name, pool] : registry.Named()) {
    try {
      auto conn = pool->Acquire(std::chrono::steady_clock::now() + timeout);
      conn->Command({"PING"});
    } catch (const RedisError& e) {
      failed +=
          std::string(failed.empty() ? "" : "; ") + "redis connection '" + name + "': " + e.what();
    }
  }
  *error = failed;
  return failed.empty();
}

// The health statuses, set on the main server's health service and on the plaintext health
// listener's (a grpc::Service is registered on one server only, so each has its own).
class HealthMirror {
 public:
  void Add(grpc::HealthCheckServiceInterface* health) { services_.push_back(health); }
  void SetServingStatus(const std::string& service, bool serving) {
    for (auto* h : services_) h->SetServingStatus(service, serving);
  }
  void Shutdown() {
    for (auto* h : services_) h->Shutdown();
  }

 private:
  std::vector<grpc::HealthCheckServiceInterface*> services_;
};

// Readiness follows Redis: checked at once and every 2 s on its own thread, logged on change.
class ReadinessChecker {
 public:
  // `tls` (nullable): readiness also needs usable TLS files.
  ReadinessChecker(ConnectionRegistry* registry, HealthMirror* health, TlsFileMonitor* tls,
                   std::chrono::milliseconds timeout)
      : thread_([this, registry, health, tls, timeout] { Run(registry, health, tls, timeout); }) {}
  ~ReadinessChecker() { Stop(); }

  void Stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run(ConnectionRegistry* registry, HealthMirror* health, TlsFileMonitor* tls,
           std::chrono::milliseconds timeout) {
    bool last = false, first = true;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      std::string error;
      bool ok = RedisReady(*registry, timeout, &error);
      std::string tls_error;
      if (tls != nullptr && !tls->Usable(&tls_error)) {
        ok = false;
        error.append(error.empty() ? "" : "; ").append("tls: ").append(tls_error);
      }
      health->SetServingStatus(kReadinessService, ok);
      if (ok != last || first) {
        LogEvent(ok ? spdlog::level::info : spdlog::level::warn, "readiness",
                 {{"ready", ok}, {"error", error}});
      }
      last = ok;
      first = false;
      lock.lock();
      cv_.wait_for(lock, std::chrono::seconds(2), [&] { return stopping_; });
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;     // last: starts once the members above exist
};

// Blocks the shutdown signals in every thread (threads started later inherit the mask); the main
// thread waits for them with sigwait.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

RedisPoolOptions PoolOptions(const ScalerOptions& options) {
  RedisPoolOptions pool_options;
  pool_options.max_connections = 16;
  pool_options.wait_timeout = options.redis_timeout;
  // A Redis back from a hang is found again within a second, whatever the backoff reached.
  pool_options.max_backoff = std::chrono::milliseconds(1000);
  return pool_options;
}

// The gRPC server on `listen` with `service` (nullptr: the health service only), or nullptr
// when the address cannot be bound.
std::unique_ptr<grpc::Server> StartGrpcServer(const std::string& listen, grpc::Service* service,
                                              std::shared_ptr<grpc::ServerCredentials> credentials,
                                              int* bound_port) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second scaler on a taken port would start and silently
  // split KEDA's traffic with the first. Off, binding a taken port fails and we exit 1.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(RequestLimits::kMaxReceiveMessageBytes);
  builder.AddListeningPort(listen, std::move(credentials), bound_port);
  if (service != nullptr) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || *bound_port == 0) return nullptr;
  return server;
}

void LogStartupFailed(const std::string& error) {
  LogEvent(spdlog::level::critical, "startup_failed", {{"error", error}});
}

std::string CannotListen(const std::string& listen) {
  return "cannot listen on " + listen +
         " (address in use by another process, or not a local address)";
}

// Server credentials for --listen: TLS when --tls-* is set (files checked first, then watched
// by *monitor), else plaintext. nullptr (logged) when a TLS file is unusable.
std::shared_ptr<grpc::ServerCredentials> ListenCredentials(
    const TlsServerFiles& tls, std::unique_ptr<TlsFileMonitor>* monitor) {
  if (!tls.enabled()) return grpc::InsecureServerCredentials();
  std::string summary;
  if (Status s = CheckTlsFiles(tls, &summary); !s.ok()) {
    LogStartupFailed(s.message());
    return nullptr;
  }
  *monitor = std::make_unique<TlsFileMonitor>(tls, summary);
  LogEvent(spdlog::level::info, "tls",
           {{"cert", tls.cert},
            {"certificate", summary},
            {"clientCa",
             tls.client_ca.empty() ? nlohmann::json(nullptr) : nlohmann::json(tls.client_ca)},
            {"mtls", !tls.client_ca.empty()},
            {"reloadS", tls.reload.count()}});
  return MakeTlsServerCredentials(tls);
}

void LogStarted(const ScalerOptions& options, int bound_port) {
  nlohmann::json connections = nlohmann::json::object();
  for (const auto& [name, ep] : options.redis) connections[name] = ep.Redacted();
  LogEvent(spdlog::level::info, "started",
           {{"listen", options.listen},
            {"port", bound_port},
            {"tls", options.tls.enabled()},
            {"health", options.health_listen},
            {"metrics", options.metrics_listen},
            {"redis", connections},
            {"coalesceMs", options.coalesce_window.count()}});
}

}  // namespace

int RunScalerServer(const ScalerOptions& options) {
  SetupLogging(options.log_format, options.log_level, "warmpool-scaler");
  sigset_t signals = BlockShutdownSignals();

  ConnectionRegistry registry(options.redis, PoolOptions(options));
  auto prom = std::make_shared<prometheus::Registry>();
  ScalerMetrics metrics(prom);
  // Before the core: the core's reader threads wake the hub until the core is gone.
  StreamHub hub(options.stream_interval);
  ScalerCore::Options core_options;
  core_options.coalesce_window = options.coalesce_window;
  core_options.state_prefix = options.state_prefix;
  core_options.redis_timeout = options.redis_timeout;
  RedisBacklogSource source;
  ScalerCore core(&registry, &source, &metrics, core_options);
  core.SetReadListener([&hub] { hub.Wake(); });
  ScalerService service(&core, &metrics, &hub, options.stream_resend);

  std::unique_ptr<MetricsServer> metrics_server;
  try {
    metrics_server = std::make_unique<MetricsServer>(options.metrics_listen, prom);
  } catch (const std::exception& e) {
    LogEvent(spdlog::level::critical, "startup_failed", {{"error", e.what()}});
    return 1;
  }

  std::unique_ptr<TlsFileMonitor> tls_monitor;
  auto credentials = ListenCredentials(options.tls, &tls_monitor);
  if (!credentials) return 1;
  int bound_port = 0;
  std::unique_ptr<grpc::Server> server =
      StartGrpcServer(options.listen, &service, std::move(credentials), &bound_port);
  if (!server) {
    LogStartupFailed(CannotListen(options.listen));
    return 1;
  }
  HealthMirror health;
  health.Add(server->GetHealthCheckService());
  std::unique_ptr<grpc::Server> health_server;
  if (options.health_listen != "off" && !options.health_listen.empty()) {
    int health_port = 0;
    health_server = StartGrpcServer(options.health_listen, nullptr,
                                    grpc::InsecureServerCredentials(), &health_port);
    if (!health_server) {
      LogStartupFailed(CannotListen(options.health_listen));
      return 1;
    }
    health.Add(health_server->GetHealthCheckService());
  }
  health.SetServingStatus(kLivenessService, true);
  LogStarted(options, bound_port);
  ReadinessChecker readiness(&registry, &health, tls_monitor.get(), options.redis_timeout);

  int sig = 0;
  sigwait(&signals, &sig);
  LogEvent(spdlog::level::info, "stopping", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  readiness.Stop();
  health.Shutdown();  // probes see NOT_SERVING while we drain
  // Streams end with OK before the drain: KEDA resets its StreamIsActive retry wait to 2 s only
  // on a clean EOF and doubles it (up to 60 s) on an error, such as the drain's UNAVAILABLE.
  const bool streams_done = hub.FinishAll(std::chrono::seconds(2));
  if (!streams_done) LogEvent(spdlog::level::warn, "streams_not_finished", {});
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  server->Wait();
  if (health_server) {
    health_server->Shutdown(std::chrono::system_clock::now());
    health_server->Wait();
  }
  hub.Stop();
  LogEvent(spdlog::level::info, "stopped", {});
  return 0;
}

}  // namespace warmpool::scaler
