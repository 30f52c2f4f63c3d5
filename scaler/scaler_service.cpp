#include "scaler/scaler_service.h"

#include <spdlog/spdlog.h>

#include "scaler/is_active_stream.h"
#include "scaler/request_limits.h"

namespace warmpool::scaler {
namespace {

ScaledObjectKey KeyOf(const externalscaler::ScaledObjectRef& ref) {
  return ScaledObjectKey{ref.name(), ref.namespace_()};
}

// Borrowed views: valid while the request message lives (the whole handler).
MetadataView ViewOf(const externalscaler::ScaledObjectRef& ref) {
  MetadataView view;
  view.reserve(ref.scalermetadata().size());
  for (const auto& [k, v] : ref.scalermetadata()) view.emplace_back(k, v);
  return view;
}

std::map<std::string, std::string> MetadataOf(const externalscaler::ScaledObjectRef& ref) {
  return std::map<std::string, std::string>(ref.scalermetadata().begin(),
                                            ref.scalermetadata().end());
}

bool EqualsIgnoreCase(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Times one handler into its histogram and counts failures by code.
class RpcTimer {
 public:
  RpcTimer(prometheus::Histogram& hist, ScalerMetrics* metrics, const char* method)
      : hist_(hist), metrics_(metrics), method_(method), start_(std::chrono::steady_clock::now()) {}
  grpc::Status Done(grpc::Status status) {
    hist_.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    if (!status.ok()) {
      metrics_->rpc_errors
          .Add({{"method", method_},
                {"code", std::to_string(static_cast<int>(status.error_code()))}})
          .Increment();
    }
    return status;
  }

 private:
  prometheus::Histogram& hist_;
  ScalerMetrics* metrics_;
  const char* method_;
  std::chrono::steady_clock::time_point start_;
};

// A stream refused at once (bad or oversized request); deletes itself when done.
class RefusedStream final : public grpc::ServerWriteReactor<externalscaler::IsActiveResponse> {
 public:
  void OnDone() override { delete this; }
};

}  // namespace

grpc::Status ToGrpc(const Status& status) {
  switch (status.code()) {
    case Status::Code::kOk:
      return grpc::Status::OK;
    case Status::Code::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, status.message()};
    case Status::Code::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, status.message()};
    case Status::Code::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, status.message()};
    case Status::Code::kInternal:
      return {grpc::StatusCode::INTERNAL, status.message()};
  }
  return {grpc::StatusCode::UNKNOWN, status.message()};
}

// --- ScalerService -----------------------------------------------------------------------------

ScalerService::ScalerService(ScalerCore* core, ScalerMetrics* metrics, StreamHub* hub,
                             std::chrono::seconds stream_resend)
    : core_(core),
      metrics_(metrics),
      hub_(hub),
      stream_resend_(stream_resend),
      is_active_seconds_(metrics->RpcHistogram("IsActive")),
      get_metric_spec_seconds_(metrics->RpcHistogram("GetMetricSpec")),
      get_metrics_seconds_(metrics->RpcHistogram("GetMetrics")) {}

grpc::ServerUnaryReactor* ScalerService::IsActive(grpc::CallbackServerContext* ctx,
                                                  const externalscaler::ScaledObjectRef* request,
                                                  externalscaler::IsActiveResponse* response) {
  auto timer = std::make_shared<RpcTimer>(is_active_seconds_, metrics_, "IsActive");
  auto* reactor = ctx->DefaultReactor();
  // `response` lives until Finish; the callback may run here or on a reader/timer thread.
  core_->EvaluateAsync(KeyOf(*request), ViewOf(*request),
                       [timer, reactor, response](const Status& s, const Evaluation& eval) {
                         if (s.ok()) response->set_result(eval.decision.active);
                         reactor->Finish(timer->Done(ToGrpc(s)));
                       });
  return reactor;
}

grpc::ServerWriteReactor<externalscaler::IsActiveResponse>* ScalerService::StreamIsActive(
    grpc::CallbackServerContext* /*ctx*/, const externalscaler::ScaledObjectRef* request) {
  std::shared_ptr<const ScalerPlan> plan;
  Status checked = CheckObjectName(request->name(), request->namespace_());
  if (checked.ok()) checked = core_->Plan(ViewOf(*request), &plan);
  if (!checked.ok()) {  // refused before anything is copied or registered
    auto* refused = new RefusedStream();
    refused->Finish(ToGrpc(checked));
    return refused;
  }
  auto* stream =
      new IsActiveStream(core_, hub_, KeyOf(*request), MetadataOf(*request), stream_resend_);
  hub_->Register(stream);
  return stream;
}

grpc::ServerUnaryReactor* ScalerService::GetMetricSpec(
    grpc::CallbackServerContext* ctx, const externalscaler::ScaledObjectRef* request,
    externalscaler::GetMetricSpecResponse* response) {
  RpcTimer timer(get_metric_spec_seconds_, metrics_, "GetMetricSpec");
  // Cheap and deterministic (KEDA calls it on every poll and HPA query): metadata only, no Redis.
  std::shared_ptr<const ScalerPlan> plan;
  Status s = core_->Plan(ViewOf(*request), &plan);
  if (s.ok()) {
    auto* spec = response->add_metricspecs();
    spec->set_metricname(plan->metric_name);
    spec->set_targetsize(1);
    spec->set_targetsizefloat(1.0);
  }
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(timer.Done(ToGrpc(s)));
  return reactor;
}

grpc::ServerUnaryReactor* ScalerService::GetMetrics(
    grpc::CallbackServerContext* ctx, const externalscaler::GetMetricsRequest* request,
    externalscaler::GetMetricsResponse* response) {
  auto timer = std::make_shared<RpcTimer>(get_metrics_seconds_, metrics_, "GetMetrics");
  auto* reactor = ctx->DefaultReactor();
  // `request` and `response` live until Finish.
  core_->EvaluateAsync(
      KeyOf(request->scaledobjectref()), ViewOf(request->scaledobjectref()),
      [timer, reactor, request, response](Status s, const Evaluation& eval) {
        if (s.ok() && !request->metricname().empty() &&
            !EqualsIgnoreCase(request->metricname(), eval.metric_name)) {
          s = Status::NotFound("metricName \"" + policy::Abbreviate(request->metricname()) +
                               "\" is not served for this ScaledObject; GetMetricSpec returns \"" +
                               eval.metric_name + "\"");
        }
        if (s.ok()) {
          auto* value = response->add_metricvalues();
          value->set_metricname(eval.metric_name);
          value->set_metricvalue(eval.decision.desired_replicas);
          value->set_metricvaluefloat(static_cast<double>(eval.decision.desired_replicas));
        }
        reactor->Finish(timer->Done(ToGrpc(s)));
      });
  return reactor;
}

}  // namespace warmpool::scaler
