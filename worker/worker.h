#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/task_registry.h"
#include "worker/worker_options.h"

namespace warmpool::worker {

class Broker;
class Consumer;
class EventDispatcher;
class ExecutorPool;
class Finisher;
class HealthServer;
class RemoteControl;
class ResultStore;
class WorkerMetrics;
struct Job;
struct WorkerState;

// The worker: owns its parts and runs their lifecycle. The consumer (worker/consumer.h) takes
// messages, holds ETA tasks, sends heartbeats, refreshes and sweeps unacked scores on the
// thread that calls Run(); the executor pool (worker/executor_pool.h) runs tasks on
// `concurrency` threads and enforces hard time limits; the finisher (worker/finisher.h) writes
// results and acks in batches. Delivery is at-least-once: a message is acked only after its
// result is stored (acks_late) and is restored to its queue when this worker stops before
// finishing it.
//
// Thread-safety: construct and Run() on one thread; RequestShutdown() may be called from any
// thread (the signal thread in main.cpp).
class Worker {
 public:
  // `registry` must outlive the worker. Throws std::runtime_error when --health-listen cannot
  // bind.
  Worker(WorkerOptions options, const TaskRegistry& registry);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Consumes until RequestShutdown(), then drains (see docs/worker.md) and returns the exit
  // code: 0 after a clean warm or cold shutdown.
  int Run();

  // Warm shutdown: stop taking, wait up to --grace-seconds for running tasks, requeue the rest.
  // `cold` (second signal, SIGQUIT): requeue running tasks at once.
  void RequestShutdown(bool cold);

  // True when executor threads were abandoned (stuck past a time limit); main should _exit.
  bool HasAbandonedThreads() const;

  // Bound port of --health-listen (0 when off).
  int health_port() const;

  // When each running task started (--pod-deletion-cost counts the long-running ones). Thread-safe.
  std::vector<std::chrono::steady_clock::time_point> RunningSince() const;

 private:
  // Stops and joins the executor threads, then the finisher. Idempotent.
  void JoinThreads();
  void StartRemoteControl();
  void Shutdown();
  void Requeue(const std::shared_ptr<Job>& job, const char* reason);

  // Remote-control answers (`celery inspect active` / `reserved` / `scheduled` / `stats`).
  // Celery's Request.info() of `job`; time_start null when it has not started.
  nlohmann::json RequestInfo(const Job& job, const nlohmann::json& time_start) const;
  nlohmann::json ActiveTasks();
  nlohmann::json ReservedTasks();
  nlohmann::json ScheduledTasks();
  nlohmann::json Stats();
  std::vector<std::string> Revoke(const std::vector<std::string>& ids, bool terminate, int signum);

  // Constant after construction.
  const WorkerOptions options_;
  const TaskRegistry& registry_;
  const std::chrono::steady_clock::time_point started_at_ = std::chrono::steady_clock::now();
  std::unique_ptr<WorkerState> state_;
  std::unique_ptr<WorkerMetrics> metrics_;
  std::unique_ptr<Broker> broker_;
  std::unique_ptr<ResultStore> results_;
  std::unique_ptr<EventDispatcher> events_;
  std::unique_ptr<Finisher> finisher_;
  std::unique_ptr<Consumer> consumer_;
  std::unique_ptr<ExecutorPool> pool_;
  std::unique_ptr<HealthServer> health_;
  std::unique_ptr<RemoteControl> control_;  // made in Run(), stopped in Shutdown()
};

}  // namespace warmpool::worker
