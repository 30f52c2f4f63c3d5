#include "worker/worker_metrics.h"

#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace warmpool::worker {
namespace {

prometheus::Histogram::BucketBoundaries TimeBuckets() {
  return {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600};
}

}  // namespace

WorkerMetrics::WorkerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  tasks_ = &prometheus::BuildCounter()
                .Name("warmpool_worker_tasks_total")
                .Help("Tasks finished, by state")
                .Register(*registry_);
  runtime_ = &prometheus::BuildHistogram()
                  .Name("warmpool_worker_task_runtime_seconds")
                  .Help("Task run time")
                  .Register(*registry_)
                  .Add({}, TimeBuckets());
  queued_ = &prometheus::BuildHistogram()
                 .Name("warmpool_worker_task_queued_seconds")
                 .Help("Time from taking a message (or its ETA) to starting the task")
                 .Register(*registry_)
                 .Add({}, TimeBuckets());
  auto& gauges = prometheus::BuildGauge()
                     .Name("warmpool_worker_tasks")
                     .Help("Tasks held by this worker, by phase")
                     .Register(*registry_);
  running_ = &gauges.Add({{"phase", "running"}});
  reserved_ = &gauges.Add({{"phase", "reserved"}});
  eta_held_ = &gauges.Add({{"phase", "eta"}});
  redis_errors_ = &prometheus::BuildCounter()
                       .Name("warmpool_worker_redis_errors_total")
                       .Help("Redis errors seen (each is retried)")
                       .Register(*registry_)
                       .Add({});
}

WorkerMetrics::~WorkerMetrics() = default;

void WorkerMetrics::CountTask(std::string_view state) {
  tasks_->Add({{"state", std::string(state)}}).Increment();
}

void WorkerMetrics::ObserveRuntime(double seconds) { runtime_->Observe(seconds); }
void WorkerMetrics::ObserveQueued(double seconds) { queued_->Observe(seconds); }
void WorkerMetrics::SetRunning(double n) { running_->Set(n); }
void WorkerMetrics::SetReserved(double n) { reserved_->Set(n); }
void WorkerMetrics::SetEtaHeld(double n) { eta_held_->Set(n); }
void WorkerMetrics::CountRedisError() { redis_errors_->Increment(); }

}  // namespace warmpool::worker
