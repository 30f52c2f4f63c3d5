#include "worker/worker_options.h"

#include <cstdlib>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "common/cli.h"
#include "common/split.h"

namespace warmpool::worker {
namespace {

std::vector<std::string> SplitComma(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    for (std::string_view part : SplitOnComma(item)) {
      if (!part.empty()) out.emplace_back(part);
    }
  }
  return out;
}

// Flags whose values need converting or validating before they become WorkerOptions.
struct RawWorkerFlags {
  std::string broker, backend, master_name;
  std::vector<std::string> queues;
  double grace = 30, visibility = 3600;
  std::string log_format = "text";
  bool early_ack = false, without_heartbeat = false, without_control = false;
  double time_limit = 0, soft_time_limit = 0;
  long result_expires = 86400;
};

// The command line, one flag per statement: a flat table (CLI11).
void AddWorkerFlags(CLI::App& app, WorkerOptions& opts, RawWorkerFlags& raw) {
  app.add_option("--broker,-b", raw.broker,
                 "Broker URL redis://[[user]:pass@]host[:port][/db], "
                 "rediss://...[?ssl_cert_reqs=required&ssl_ca_certs=FILE] (TLS, verified by "
                 "default) or sentinel://[:pass@]h1:26379[;sentinel://h2:26379][?master_name=NAME] "
                 "[env CELERY_BROKER_URL; default redis://127.0.0.1:6379/0]");
  app.add_option("--result-backend", raw.backend,
                 "Result backend URL, same forms [env CELERY_RESULT_BACKEND; default: the broker]");
  app.add_option("--redis-master-name", raw.master_name,
                 "Sentinel master name for sentinel:// URLs without ?master_name (Celery's "
                 "master_name transport option) [env WARMPOOL_REDIS_MASTER_NAME]");
  app.add_option("-Q,--queues", raw.queues, "Comma-separated queues to consume [default: celery]");
  app.add_option("-c,--concurrency", opts.concurrency, "Tasks run at once [default: 1]")
      ->check(CLI::Range(1, 1024));
  app.add_option("--prefetch", opts.prefetch_multiplier,
                 "Prefetch multiplier: messages held = concurrency x N, ETA tasks excluded "
                 "[default: 1]")
      ->check(CLI::Range(1, 10000));
  app.add_option("-n,--hostname", opts.hostname, "Node name [default: warmpool@<host>]");
  app.add_option("--grace-seconds", raw.grace,
                 "On SIGTERM, wait this long for running tasks, then requeue them [default: 30]")
      ->check(warmpool::FiniteRange(0.0, 86400.0));
  app.add_option("--visibility-timeout", raw.visibility,
                 "Seconds after which an unacked message of a dead worker is restored "
                 "(kombu visibility_timeout) [default: 3600]")
      ->check(warmpool::FiniteRange(1.0, 7.0 * 86400));
  app.add_option("--health-listen", opts.health_listen,
                 "HOST:PORT serving /healthz /readyz /metrics, or 'off' [default: off]");
  app.add_option("--log-format", raw.log_format, "text|json [default: text]")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--log-level", opts.log_level, "trace|debug|info|warn|error [default: info]")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "warning", "error", "critical"}));
  app.add_option("--task-alias", opts.task_aliases,
                 "OLD=NEW: run registered task NEW for messages named OLD (repeatable)");
  app.add_option("--key-prefix", opts.key_prefix, "kombu global_keyprefix [default: none]");
  app.add_flag("--early-ack", raw.early_ack,
               "Ack when a task starts instead of when it finished (acks_late=False)");
  app.add_flag("--track-started", opts.track_started, "Store the STARTED state");
  app.add_flag("-E,--task-events", opts.task_events, "Send task-* events (as celery -E)");
  app.add_flag("--without-heartbeat", raw.without_heartbeat,
               "Do not send worker-online/heartbeat/offline events");
  app.add_flag("--without-remote-control", raw.without_control,
               "Do not answer remote control (celery inspect ping, enable_events, ...)");
  app.add_option("--time-limit", raw.time_limit,
                 "Default hard time limit in seconds for messages without one [default: none]")
      ->check(warmpool::FiniteRange(0.0, 7.0 * 86400));
  app.add_option("--soft-time-limit", raw.soft_time_limit,
                 "Default soft time limit in seconds [default: none]")
      ->check(warmpool::FiniteRange(0.0, 7.0 * 86400));
  app.add_option("--result-expires", raw.result_expires,
                 "Seconds a result is kept (SETEX); 0 = forever [default: 86400]")
      ->check(CLI::Range(0L, 365L * 86400));
  app.add_option("--deadletter-key", opts.deadletter_key,
                 "List receiving undecodable messages [default: warmpool.deadletter]");
  app.add_option("--data-root", opts.data_root,
                 "Directory tasks read and write files in, given to every task as "
                 "TaskContext::data_root [default: none]");
  app.add_option("--output-root", opts.output_root,
                 "Where imagery.change_detection writes when output_dir is None "
                 "[default: <data-root>/changes]");
  app.add_option("--device", opts.device,
                 "Imagery compute device: auto (GPU when one is usable, else CPU), cpu, cuda, "
                 "cuda:N [default: auto]")
      ->envname("WARMPOOL_DEVICE");
  app.add_option("--imagery-decode-budget-mb", opts.imagery_decode_budget_mb,
                 "Image pairs up to this many MiB decoded (both dates, uint16) are decoded once "
                 "into memory; larger ones are read in strips (bounded memory, each block decoded "
                 "twice). 0 = always strips [default: 384]")
      ->envname("WARMPOOL_IMAGERY_DECODE_BUDGET_MB")
      ->check(CLI::Range(size_t{0}, size_t{1} << 20));
  app.add_option("--imagery-threads", opts.imagery_threads,
                 "CPU threads per imagery task (raster decoding, the CPU pass, morphology); 0 = "
                 "the CPUs this process may use (affinity, cgroup CPU limit) / concurrency "
                 "[default: 0]")
      ->envname("WARMPOOL_IMAGERY_THREADS")
      ->check(CLI::Range(0, 1024));
  app.add_option("--imagery-time-limit", opts.imagery_time_limit,
                 "Hard time limit in seconds of an imagery task whose message sets none; the "
                 "task is then failed with TimeLimitExceeded and its slot freed. 0 = none "
                 "(--time-limit applies) [default: 1800]")
      ->envname("WARMPOOL_IMAGERY_TIME_LIMIT")
      ->check(warmpool::FiniteRange(0.0, 7.0 * 86400));
  app.add_option("--imagery-allow-remote", opts.imagery_allow_remote,
                 "GDAL /vsi prefix imagery tasks may read, e.g. /vsis3/bucket/ or "
                 "/vsicurl/https://data.example.org/ (repeatable; env "
                 "WARMPOOL_IMAGERY_ALLOW_REMOTE, comma-separated) [default: none: every /vsi "
                 "path is refused]");
  app.add_option("--max-tasks", opts.max_tasks,
                 "Exit 0 after this many tasks finished (results written and acked); never takes "
                 "more. For one Kubernetes Job per task. 0 = no limit [default: 0]")
      ->envname("WARMPOOL_MAX_TASKS")
      ->check(CLI::Range(0L, 1000000000L));
  app.add_option("--exit-when-idle", opts.exit_when_idle,
                 "Exit 0 when nothing was held and the queues were empty for this many seconds. "
                 "0 = never [default: 0]")
      ->envname("WARMPOOL_EXIT_WHEN_IDLE")
      ->check(warmpool::FiniteRange(0.0, 7.0 * 86400));
  app.add_flag("--pod-deletion-cost", opts.pod_deletion_cost,
               "Annotate this pod with controller.kubernetes.io/pod-deletion-cost = the tasks "
               "running for 10 s or more, so a ReplicaSet scale-in removes idle pods first. "
               "Needs POD_NAME, POD_NAMESPACE and the service account token, and RBAC get/patch "
               "on pods [default: off]");
  AddVersionFlag(app, "warmpool-worker");
}

// Environment defaults, URL parsing and checks; an error message, or "" when `opts` is complete.
std::string ApplyRawFlags(RawWorkerFlags& raw, const char* (*getenv_fn)(const char*),
                          WorkerOptions& opts) {
  if (raw.broker.empty()) {
    const char* env = getenv_fn("CELERY_BROKER_URL");
    raw.broker = env && *env ? env : "redis://127.0.0.1:6379/0";
  }
  if (raw.backend.empty()) {
    const char* env = getenv_fn("CELERY_RESULT_BACKEND");
    raw.backend = env && *env ? env : raw.broker;
  }
  std::string error;
  auto b = ParseRedisUrl(raw.broker, &error);
  if (!b) return "--broker: " + error;
  auto r = ParseRedisUrl(raw.backend, &error);
  if (!r) return "--result-backend: " + error;
  if (raw.master_name.empty()) {
    const char* env = getenv_fn("WARMPOOL_REDIS_MASTER_NAME");
    if (env && *env) raw.master_name = env;
  }
  if (Status s = ApplyDefaultMasterName(raw.master_name, "--broker", &*b); !s.ok()) {
    return s.message();
  }
  if (Status s = ApplyDefaultMasterName(raw.master_name, "--result-backend", &*r); !s.ok()) {
    return s.message();
  }
  opts.broker = *b;
  opts.result_backend = *r;
  if (!raw.queues.empty()) opts.queues = SplitComma(raw.queues);
  if (opts.queues.empty()) return "-Q/--queues: at least one queue name is required";
  if (opts.hostname.empty()) opts.hostname = DefaultHostname();
  opts.grace = std::chrono::duration<double>(raw.grace);
  opts.visibility_timeout = std::chrono::duration<double>(raw.visibility);
  opts.log_format = *ParseLogFormat(raw.log_format);
  opts.acks_late = !raw.early_ack;
  opts.heartbeat = !raw.without_heartbeat;
  opts.remote_control = !raw.without_control;
  if (raw.time_limit > 0) opts.time_limit = raw.time_limit;
  if (raw.soft_time_limit > 0) opts.soft_time_limit = raw.soft_time_limit;
  opts.result_expires = std::chrono::seconds(raw.result_expires);
  if (opts.deadletter_key.empty()) return "--deadletter-key must not be empty";
  if (opts.imagery_allow_remote.empty()) {
    const char* env = getenv_fn("WARMPOOL_IMAGERY_ALLOW_REMOTE");
    if (env && *env) opts.imagery_allow_remote = SplitComma({env});
  } else {
    opts.imagery_allow_remote = SplitComma(opts.imagery_allow_remote);
  }
  return "";
}

}  // namespace

std::string DefaultHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "warmpool@localhost";
  return std::string("warmpool@") + buf;
}

ParsedCommandLine ParseWorkerCommandLine(int argc, const char* const* argv,
                                         const char* (*getenv_fn)(const char*)) {
  if (getenv_fn == nullptr) getenv_fn = [](const char* n) -> const char* { return std::getenv(n); };
  ParsedCommandLine out;
  WorkerOptions opts;
  CLI::App app{
      "warmpool-worker: a Celery worker for the Redis transport (kombu 5.2 wire format) that runs "
      "C++ tasks and loses no message.",
      "warmpool-worker"};
  RawWorkerFlags raw;
  AddWorkerFlags(app, opts, raw);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    out.exit_code = 0;
    out.message = app.help();
    return out;
  } catch (const CLI::CallForVersion& e) {
    out.exit_code = 0;
    out.message = e.what();
    return out;
  } catch (const CLI::ParseError& e) {
    out.exit_code = 2;
    out.message = std::string("warmpool-worker: ") + e.what() + "\nRun with --help for usage.";
    return out;
  }

  if (std::string error = ApplyRawFlags(raw, getenv_fn, opts); !error.empty()) {
    out.exit_code = 2;
    out.message = "warmpool-worker: " + error;
    return out;
  }
  out.options = std::move(opts);
  return out;
}

}  // namespace warmpool::worker
