#pragma once

#include <chrono>

#include "externalscaler.grpc.pb.h"
#include "scaler/scaler_core.h"
#include "scaler/stream_hub.h"

namespace warmpool::scaler {

// KEDA's externalscaler.ExternalScaler over ScalerCore (callback API, STYLE 16): handlers go
// proto -> domain -> core -> proto and set both int and float fields. No handler blocks its gRPC
// thread on Redis: IsActive and GetMetrics finish their reactor from the reading's completion or
// the Redis deadline (ScalerCore::EvaluateAsync); GetMetricSpec never touches Redis.
class ScalerService final : public externalscaler::ExternalScaler::CallbackService {
 public:
  ScalerService(ScalerCore* core, ScalerMetrics* metrics, StreamHub* hub,
                std::chrono::seconds stream_resend);

  grpc::ServerUnaryReactor* IsActive(grpc::CallbackServerContext* ctx,
                                     const externalscaler::ScaledObjectRef* request,
                                     externalscaler::IsActiveResponse* response) override;
  grpc::ServerWriteReactor<externalscaler::IsActiveResponse>* StreamIsActive(
      grpc::CallbackServerContext* ctx, const externalscaler::ScaledObjectRef* request) override;
  grpc::ServerUnaryReactor* GetMetricSpec(grpc::CallbackServerContext* ctx,
                                          const externalscaler::ScaledObjectRef* request,
                                          externalscaler::GetMetricSpecResponse* response) override;
  grpc::ServerUnaryReactor* GetMetrics(grpc::CallbackServerContext* ctx,
                                       const externalscaler::GetMetricsRequest* request,
                                       externalscaler::GetMetricsResponse* response) override;

 private:
  ScalerCore* const core_;
  ScalerMetrics* const metrics_;
  StreamHub* const hub_;
  const std::chrono::seconds stream_resend_;
  prometheus::Histogram& is_active_seconds_;
  prometheus::Histogram& get_metric_spec_seconds_;
  prometheus::Histogram& get_metrics_seconds_;
};

// Maps the core's Status to a gRPC status (INVALID_ARGUMENT, UNAVAILABLE, NOT_FOUND, INTERNAL).
grpc::Status ToGrpc(const Status& status);

}  // namespace warmpool::scaler
