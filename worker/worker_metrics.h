#pragma once

#include <memory>
#include <string_view>

namespace prometheus {
class Counter;
template <typename T>
class Family;
class Gauge;
class Histogram;
class Registry;
}  // namespace prometheus

namespace warmpool::worker {

// The worker's Prometheus metrics (all names start with warmpool_worker_). Thread-safe.
class WorkerMetrics {
 public:
  WorkerMetrics();
  ~WorkerMetrics();

  // tasks_total{state}: SUCCESS, FAILURE, RETRY, REVOKED, REQUEUED, DEADLETTER.
  void CountTask(std::string_view state);
  void ObserveRuntime(double seconds);  // task_runtime_seconds
  void ObserveQueued(double seconds);   // task_queued_seconds: taken (or ETA due) -> started
  void SetRunning(double n);
  void SetReserved(double n);
  void SetEtaHeld(double n);
  void CountRedisError();

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* tasks_;
  prometheus::Histogram* runtime_;
  prometheus::Histogram* queued_;
  prometheus::Gauge* running_;
  prometheus::Gauge* reserved_;
  prometheus::Gauge* eta_held_;
  prometheus::Counter* redis_errors_;
};

}  // namespace warmpool::worker
