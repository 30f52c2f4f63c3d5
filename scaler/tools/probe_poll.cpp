#include "scaler/tools/probe_poll.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>

#include "scaler/tools/probe_channel.h"

namespace warmpool::probe {
namespace {

nlohmann::json StatusJson(const grpc::Status& s) {
  return {{"code", static_cast<int>(s.error_code())}, {"message", s.error_message()}};
}

int Failed(nlohmann::ordered_json& out, const char* rpc, const grpc::Status& s) {
  out["error"] = {{"rpc", rpc}, {"status", StatusJson(s)}};
  std::cout << out.dump() << std::endl;
  return 1;
}

}  // namespace

int ProbePoll(externalscaler::ExternalScaler::Stub& stub,
              const externalscaler::ScaledObjectRef& ref, double timeout_s) {
  nlohmann::ordered_json out;
  std::string scaled_object = ref.namespace_();
  scaled_object.append("/").append(ref.name());
  out["scaledObject"] = scaled_object;

  externalscaler::GetMetricSpecResponse spec;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(timeout_s));
    grpc::Status s = stub.GetMetricSpec(&ctx, ref, &spec);
    if (!s.ok() || spec.metricspecs_size() == 0) return Failed(out, "GetMetricSpec", s);
  }
  const auto& metric = spec.metricspecs(0);
  out["metricName"] = metric.metricname();
  const double target = metric.targetsizefloat() > 0 ? metric.targetsizefloat()
                                                     : static_cast<double>(metric.targetsize());
  out["targetSize"] = target;
  externalscaler::GetMetricsRequest req;
  *req.mutable_scaledobjectref() = ref;
  req.set_metricname(metric.metricname());
  externalscaler::GetMetricsResponse values;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(timeout_s));
    grpc::Status s = stub.GetMetrics(&ctx, req, &values);
    if (!s.ok()) return Failed(out, "GetMetrics", s);
  }
  double value = 0;
  for (const auto& v : values.metricvalues()) {
    value += v.metricvaluefloat() > 0 ? v.metricvaluefloat() : static_cast<double>(v.metricvalue());
  }
  out["metricValue"] = value;
  externalscaler::IsActiveResponse active;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(timeout_s));
    grpc::Status s = stub.IsActive(&ctx, ref, &active);
    if (!s.ok()) return Failed(out, "IsActive", s);
  }
  out["isActive"] = active.result();
  // What KEDA + the HPA do with it: AverageValue -> ceil(value / target) replicas while active.
  const int64_t replicas = static_cast<int64_t>(std::ceil(value / (target > 0 ? target : 1)));
  out["hpaDesiredReplicas"] = active.result() ? std::max<int64_t>(replicas, 1) : 0;
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace warmpool::probe
