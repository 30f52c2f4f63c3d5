#pragma once

#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include "externalscaler.grpc.pb.h"
#include "scaler/scaler_core.h"

namespace warmpool::scaler {

class IsActiveStream;

// Polls every open StreamIsActive stream on one thread, so a stream costs no thread of its own
// and its reads coalesce with unary calls. Thread-safe. Stop() before destruction.
class StreamHub {
 public:
  explicit StreamHub(std::chrono::milliseconds interval);
  ~StreamHub();
  void Register(IsActiveStream* stream);
  // Blocks while the hub is polling `stream`, then forgets it (called from OnDone).
  void Unregister(IsActiveStream* stream);
  void Stop();

 private:
  void Run();

  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<IsActiveStream*> streams_;  // guarded by mu_
  IsActiveStream* polling_ = nullptr;  // guarded by mu_
  bool stop_ = false;                  // guarded by mu_
  std::thread thread_;
};

// KEDA's externalscaler.ExternalScaler over ScalerCore (callback API, STYLE 16): handlers go
// proto -> domain -> core -> proto and set both int and float fields.
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
