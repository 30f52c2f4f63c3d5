#include "scaler/scaler_metrics.h"

namespace warmpool::scaler {
namespace {

prometheus::Histogram::BucketBoundaries RpcBuckets() {
  return {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 1, 3};
}

}  // namespace

ScalerMetrics::ScalerMetrics(std::shared_ptr<prometheus::Registry> reg)
    : registry(std::move(reg)),
      pending(prometheus::BuildGauge()
                  .Name("warmpool_queue_pending")
                  .Help("Messages waiting in the queue's lists, all priority sub-lists")
                  .Register(*registry)),
      in_flight(prometheus::BuildGauge()
                    .Name("warmpool_queue_in_flight")
                    .Help("Delivered, unacknowledged tasks of the queue (kombu unacked)")
                    .Register(*registry)),
      scheduled(prometheus::BuildGauge()
                    .Name("warmpool_queue_scheduled")
                    .Help("Unacknowledged tasks of the queue whose eta is in the future")
                    .Register(*registry)),
      desired(prometheus::BuildGauge()
                  .Name("warmpool_desired_replicas")
                  .Help("Replicas the policy asks for, per ScaledObject")
                  .Register(*registry)),
      active(prometheus::BuildGauge()
                 .Name("warmpool_active")
                 .Help("1 when the ScaledObject is active (IsActive)")
                 .Register(*registry)),
      forecast(prometheus::BuildGauge()
                   .Name("warmpool_forecast_replicas")
                   .Help("Replicas the time-of-day forecast would keep warm (NaN until learned); "
                         "acted on only with forecast: on")
                   .Register(*registry)),
      decisions(prometheus::BuildCounter()
                    .Name("warmpool_decision_changes_total")
                    .Help("Decision changes per ScaledObject, by the new decision's reason")
                    .Register(*registry)),
      rpc_seconds(prometheus::BuildHistogram()
                      .Name("warmpool_rpc_duration_seconds")
                      .Help("Latency of external scaler rpcs")
                      .Register(*registry)),
      rpc_errors(prometheus::BuildCounter()
                     .Name("warmpool_rpc_errors_total")
                     .Help("Failed rpcs by method and gRPC status code")
                     .Register(*registry)),
      redis_errors(prometheus::BuildCounter()
                       .Name("warmpool_redis_errors_total")
                       .Help("Failed Redis reads by connection")
                       .Register(*registry)),
      redis_reads(prometheus::BuildCounter()
                      .Name("warmpool_redis_reads_total")
                      .Help("Backlog reads sent to Redis (after coalescing)")
                      .Register(*registry)
                      .Add({})) {}

prometheus::Histogram& ScalerMetrics::RpcHistogram(const std::string& method) {
  return rpc_seconds.Add({{"method", method}}, RpcBuckets());
}

}  // namespace warmpool::scaler
