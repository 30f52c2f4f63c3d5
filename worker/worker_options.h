#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/logging.h"
#include "redis/url.h"

namespace warmpool::worker {

// Everything the worker is configured with; parsed once from the command line and environment
// (ParseWorkerCommandLine), then validated. Defaults follow Celery where it has one.
struct WorkerOptions {
  RedisEndpoint broker;          // --broker / CELERY_BROKER_URL; default redis://127.0.0.1:6379/0
  RedisEndpoint result_backend;  // --result-backend / CELERY_RESULT_BACKEND; default = broker
  std::vector<std::string> queues = {"celery"};  // -Q; consumed in kombu priority order
  std::string key_prefix;                        // kombu global_keyprefix; empty = none
  int concurrency = 1;                           // tasks run at once (threads); >= 1
  int prefetch_multiplier = 1;  // --prefetch: messages held = concurrency * this (ETA excluded)
  std::string hostname;         // nodename; default warmpool@<host>
  std::chrono::duration<double> grace{30};  // SIGTERM: wait this long for running tasks
  std::chrono::duration<double> visibility_timeout{3600};  // kombu's; stale unacked entries
  std::string health_listen = "off";  // HOST:PORT for /healthz /readyz /metrics; "off" = none
  LogFormat log_format = LogFormat::kText;
  std::string log_level = "info";
  std::vector<std::string> task_aliases;  // "OLD=NEW"
  bool acks_late = true;                  // ack after the task finished; false = ack when it starts
  bool track_started = false;             // store STARTED (Celery task_track_started)
  bool task_events = false;               // -E: send task-* events
  bool heartbeat = true;                  // worker-online/heartbeat/offline events
  bool remote_control = true;             // answer pidbox broadcasts (ping, enable_events, ...)
  std::chrono::duration<double> heartbeat_interval{2.0};
  std::optional<double> time_limit;            // default hard limit (s) when a message has none
  std::optional<double> soft_time_limit;       // default soft limit (s)
  std::chrono::seconds result_expires{86400};  // SETEX seconds; 0 = plain SET
  std::string deadletter_key = "warmpool.deadletter";  // list for undecodable messages
  std::string data_root;        // --data-root: directory tasks resolve file paths in (TaskContext)
  std::string output_root;      // --output-root: imagery outputs; empty = <data_root>/changes
  std::string device = "auto";  // --device: auto | cpu | cuda | cuda:N (imagery tasks)
  // --imagery-decode-budget-mb; unset = the imagery task's default (384), 0 = always strips
  std::optional<size_t> imagery_decode_budget_mb;
  int imagery_threads = 0;  // --imagery-threads: per imagery task; 0 = available CPUs / concurrency
  // --imagery-time-limit: hard limit (s) of an imagery task whose message has none; 0 = none
  // (--time-limit then applies)
  double imagery_time_limit = 1800;
  // --imagery-allow-remote (repeatable) / WARMPOOL_IMAGERY_ALLOW_REMOTE (comma-separated): GDAL
  // /vsi prefixes imagery tasks may read; empty = none. Checked by imagery::ParseRemotePrefixes.
  std::vector<std::string> imagery_allow_remote;
  // --max-tasks: exit 0 once this many messages were taken and finished (results written, acked);
  // never takes more than that. 0 = no limit. For one Kubernetes Job per task (ScaledJob).
  long max_tasks = 0;
  // --exit-when-idle: exit 0 once nothing was held and every queue empty this long (s); 0 = never.
  double exit_when_idle = 0;
  // --pod-deletion-cost: keep the pod's controller.kubernetes.io/pod-deletion-cost annotation at
  // the number of tasks running for 10 s or more, so a scale-in removes idle pods first
  // (worker/pod_cost_publisher.h). Needs the in-cluster API config (pod_deletion_cost.h).
  bool pod_deletion_cost = false;

  // messages taken at once, excluding ETA-held ones
  int prefetch_limit() const { return concurrency * prefetch_multiplier; }
};

// Outcome of parsing: options, or an exit (help/version printed, or a usage error).
struct ParsedCommandLine {
  std::optional<WorkerOptions> options;
  int exit_code = 0;    // when !options: 0 after --help, 2 on a usage error
  std::string message;  // help text or error to print
};

// Parses argv (CLI11) with env fallbacks (CELERY_BROKER_URL, CELERY_RESULT_BACKEND read through
// `getenv`, injectable for tests). Validates ranges and URLs; every error names the flag.
ParsedCommandLine ParseWorkerCommandLine(int argc, const char* const* argv,
                                         const char* (*getenv_fn)(const char*) = nullptr);

// "warmpool@<gethostname()>".
std::string DefaultHostname();

}  // namespace warmpool::worker
