// warmpool-worker: thin main over the warmpool_worker library (see docs/worker.md).
#include <cstdio>
#include <iostream>
#include <signal.h>
#include <thread>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "common/logging.h"
#include "imagery/path_policy.h"
#include "worker/cpu_budget.h"
#include "worker/kube_api_client.h"
#include "worker/pod_cost_publisher.h"
#include "worker/task_registry.h"
#include "worker/tasks/builtin_tasks.h"
#include "worker/tasks/imagery_tasks.h"
#include "worker/worker.h"
#include "worker/worker_options.h"

int main(int argc, char** argv) {
  using namespace warmpool;
  auto parsed = worker::ParseWorkerCommandLine(argc, argv);
  if (!parsed.options) {
    (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.message << "\n";
    return parsed.exit_code;
  }
  worker::WorkerOptions options = std::move(*parsed.options);
  SetupLogging(options.log_format, *ParseLogLevel(options.log_level), "warmpool-worker");

  worker::TaskRegistry registry;
  worker::RegisterBuiltinTasks(registry);
  try {
    imagery::ImageryConfig imagery_config;
    imagery_config.data_root = options.data_root;
    imagery_config.output_root = options.output_root;
    imagery_config.device = options.device;
    imagery_config.allow_remote_prefixes =
        imagery::ParseRemotePrefixes(options.imagery_allow_remote);
    imagery_config.time_limit_s = options.imagery_time_limit;
    if (options.imagery_decode_budget_mb) {
      imagery_config.whole_decode_max_mb = *options.imagery_decode_budget_mb;
    }
    const int cpus = worker::AvailableCpus();
    imagery_config.threads =
        worker::ImageryThreads(options.imagery_threads, cpus, options.concurrency);
    LogEvent(spdlog::level::info, "imagery_threads",
             {{"threads", imagery_config.threads},
              {"available_cpus", cpus},
              {"concurrency", options.concurrency},
              {"source", options.imagery_threads > 0 ? "set" : "auto"}});
    worker::RegisterImageryTasks(registry, imagery_config);
    for (const auto& spec : options.task_aliases) registry.AddAliasSpec(spec);
  } catch (const std::exception& e) {
    LogEvent(spdlog::level::critical, "bad_configuration", {{"error", e.what()}});
    return 2;
  }
  // Bad in-cluster config is an error at start, not a publisher that silently never writes.
  worker::KubeApiConfig kube_api;
  if (options.pod_deletion_cost) {
    Status s = worker::ResolveKubeApiConfig(worker::KubeEnvFromProcess(), worker::ReadFileContents,
                                            &kube_api);
    if (!s.ok()) {
      LogEvent(spdlog::level::critical, "bad_configuration",
               {{"flag", "--pod-deletion-cost"}, {"error", s.message()}});
      return 2;
    }
  }

  // Signals go to one thread (sigwait), so no handler runs inside Redis or task code.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGQUIT);
  sigaddset(&signals, SIGUSR2);  // our own wake-up of the signal thread at exit
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::unique_ptr<worker::Worker> w;
  try {
    w = std::make_unique<worker::Worker>(options, registry);
  } catch (const std::exception& e) {
    LogEvent(spdlog::level::critical, "startup_failed", {{"error", e.what()}});
    return 1;
  }
  std::thread signal_thread([&signals, &w] {
    int count = 0;
    while (true) {
      int sig = 0;
      if (sigwait(&signals, &sig) != 0) continue;
      if (sig == SIGUSR2) return;
      ++count;
      LogEvent(spdlog::level::info, "signal_received", {{"signal", strsignal(sig)}});
      w->RequestShutdown(/*cold=*/sig == SIGQUIT || count > 1);
    }
  });
  std::unique_ptr<worker::PodCostPublisher> pod_cost;
  if (options.pod_deletion_cost) {
    pod_cost = worker::StartPodCostPublisher(kube_api, [&w] { return w->RunningSince(); });
  }
  int code = w->Run();
  pod_cost.reset();  // stops its thread, aborting a request in flight
  // Wake and end the signal thread.
  pthread_kill(signal_thread.native_handle(), SIGUSR2);
  signal_thread.join();
  spdlog::default_logger()->flush();
  if (w->HasAbandonedThreads()) {
    // A task thread is stuck past its time limit; its message is already requeued or failed.
    std::fflush(nullptr);
    _exit(code);
  }
  return code;
}
