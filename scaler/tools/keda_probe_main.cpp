// warmpool-keda-probe: calls a running external scaler exactly as KEDA does (GetMetricSpec, then
// GetMetrics + IsActive) and prints what KEDA and the HPA would see, as one JSON object. For the
// demo, smoke checks and users without grpcurl. Exit code 0 on success, 1 on an rpc error.
#include <iostream>
#include <map>
#include <string>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "externalscaler.grpc.pb.h"
#include "scaler/tools/probe_channel.h"

namespace {

nlohmann::json StatusJson(const grpc::Status& s) {
  return {{"code", static_cast<int>(s.error_code())}, {"message", s.error_message()}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Calls a KEDA external scaler as KEDA does and prints what KEDA would see."};
  std::string address = "127.0.0.1:6000", name = "demo", ns = "default";
  std::vector<std::string> meta;
  double timeout_s = 5;
  app.add_option("--scaler", address, "scalerAddress HOST:PORT")->capture_default_str();
  app.add_option("--name", name, "ScaledObject name")->capture_default_str();
  app.add_option("--namespace", ns, "ScaledObject namespace")->capture_default_str();
  app.add_option("--meta", meta, "trigger metadata key=value (repeatable)");
  app.add_option("--timeout", timeout_s, "per-rpc deadline, seconds")->capture_default_str();
  warmpool::probe::ProbeTls tls;
  app.add_option("--tls-ca", tls.ca, "TLS: PEM CA bundle the scaler's certificate must chain to");
  app.add_option("--tls-cert", tls.cert, "TLS: client certificate (PEM) for mTLS");
  app.add_option("--tls-key", tls.key, "TLS: client private key (PEM) of --tls-cert");
  app.add_option("--tls-server-name", tls.server_name,
                 "TLS: name the scaler's certificate must hold (default: --scaler's host)");
  CLI11_PARSE(app, argc, argv);

  externalscaler::ScaledObjectRef ref;
  ref.set_name(name);
  ref.set_namespace_(ns);
  for (const auto& kv : meta) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) {
      std::cerr << "--meta expects key=value, got '" << kv << "'\n";
      return 2;
    }
    (*ref.mutable_scalermetadata())[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::string channel_error;
  auto channel = warmpool::probe::MakeProbeChannel(address, tls, &channel_error);
  if (!channel) {
    std::cerr << channel_error << "\n";
    return 2;
  }
  auto stub = externalscaler::ExternalScaler::NewStub(channel);
  auto deadline = [&] {
    return std::chrono::system_clock::now() +
           std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  };
  nlohmann::ordered_json out;
  out["scaledObject"] = ns + "/" + name;

  externalscaler::GetMetricSpecResponse spec;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    grpc::Status s = stub->GetMetricSpec(&ctx, ref, &spec);
    if (!s.ok() || spec.metricspecs_size() == 0) {
      out["error"] = {{"rpc", "GetMetricSpec"}, {"status", StatusJson(s)}};
      std::cout << out.dump() << std::endl;
      return 1;
    }
  }
  const auto& metric = spec.metricspecs(0);
  out["metricName"] = metric.metricname();
  out["targetSize"] = metric.targetsizefloat() > 0 ? metric.targetsizefloat()
                                                   : static_cast<double>(metric.targetsize());
  externalscaler::GetMetricsRequest req;
  *req.mutable_scaledobjectref() = ref;
  req.set_metricname(metric.metricname());
  externalscaler::GetMetricsResponse values;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    grpc::Status s = stub->GetMetrics(&ctx, req, &values);
    if (!s.ok()) {
      out["error"] = {{"rpc", "GetMetrics"}, {"status", StatusJson(s)}};
      std::cout << out.dump() << std::endl;
      return 1;
    }
  }
  double value = 0;
  for (const auto& v : values.metricvalues()) {
    value += v.metricvaluefloat() > 0 ? v.metricvaluefloat() : static_cast<double>(v.metricvalue());
  }
  out["metricValue"] = value;
  externalscaler::IsActiveResponse active;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline());
    grpc::Status s = stub->IsActive(&ctx, ref, &active);
    if (!s.ok()) {
      out["error"] = {{"rpc", "IsActive"}, {"status", StatusJson(s)}};
      std::cout << out.dump() << std::endl;
      return 1;
    }
  }
  out["isActive"] = active.result();
  // What KEDA + the HPA do with it: AverageValue -> ceil(value / target) replicas while active.
  const double target = out["targetSize"].get<double>();
  int64_t replicas = static_cast<int64_t>(std::ceil(value / (target > 0 ? target : 1)));
  out["hpaDesiredReplicas"] = active.result() ? std::max<int64_t>(replicas, 1) : 0;
  std::cout << out.dump() << std::endl;
  return 0;
}
