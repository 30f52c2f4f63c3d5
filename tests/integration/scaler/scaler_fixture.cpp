#include "tests/integration/scaler/scaler_fixture.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "tests/integration/scaler/grpc_probe.h"

namespace warmpool::testing {

// WARMPOOL_SCALER_BINARY runs the tests against another build (e.g. to check a regression test
// fails on the code before its fix).
std::string ScalerBinary() {
  const char* other = std::getenv("WARMPOOL_SCALER_BINARY");
  if (other && *other) return other;
  return std::string(WARMPOOL_BINARY_DIR) + "/scaler/warmpool-scaler";
}

ScalerFixture::ScalerFixture(std::vector<std::string> redis_args,
                             std::vector<std::string> scaler_args)
    : redis_(std::make_unique<TestRedisServer>(std::move(redis_args))),
      redis_ptr_(redis_.get()),
      dir_(MakeTempDir("scaler")),
      grpc_port_(FreePort()),
      metrics_port_(FreePort()),
      scaler_args_(std::move(scaler_args)) {
  StartScaler();
}

ScalerFixture::ScalerFixture(TestRedisServer* shared_redis, std::vector<std::string> scaler_args)
    : redis_ptr_(shared_redis),
      dir_(MakeTempDir("scaler")),
      grpc_port_(FreePort()),
      metrics_port_(FreePort()),
      scaler_args_(std::move(scaler_args)) {
  StartScaler();
}

int ScalerFixture::Restart() {
  scaler_->Signal(SIGTERM);
  const int code = scaler_->Wait(std::chrono::seconds(15));
  StartScaler();
  return code;
}

void ScalerFixture::StartScaler() {
  // FreePort's port is only free "a moment ago": a parallel test (or any ephemeral connection)
  // can take it before the scaler binds. Such a start fails at once saying so; pick new ports.
  for (int attempt = 1;; ++attempt) {
    if (StartScalerOnce()) return;
    const std::string log = scaler_->Log();
    if (attempt == 3 || scaler_->Running() || log.find("address in use") == std::string::npos) {
      throw std::runtime_error("warmpool-scaler did not become healthy: " + log);
    }
    grpc_port_ = FreePort();
    metrics_port_ = FreePort();
  }
}

bool ScalerFixture::StartScalerOnce() {
  std::vector<std::string> scaler_args = scaler_args_;
  std::string password = redis_ptr_->password();
  std::string url = "redis://" + (password.empty() ? "" : ":" + password + "@") +
                    "127.0.0.1:" + std::to_string(redis_ptr_->port()) + "/0";
  std::vector<std::string> argv = {ScalerBinary(),
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(grpc_port_),
                                   "--metrics-listen",
                                   "127.0.0.1:" + std::to_string(metrics_port_),
                                   "--redis",
                                   "default=" + url,
                                   "--redis-timeout-ms",
                                   "500"};
  // Short coalescing window unless the test sets its own.
  if (std::find(scaler_args.begin(), scaler_args.end(), "--coalesce-ms") == scaler_args.end()) {
    scaler_args.insert(scaler_args.end(), {"--coalesce-ms", "50"});
  }
  argv.insert(argv.end(), scaler_args.begin(), scaler_args.end());
  scaler_ = std::make_unique<ChildProcess>(argv, dir_ + "/scaler.log");
  channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(grpc_port_),
                                 grpc::InsecureChannelCredentials());
  stub_ = externalscaler::ExternalScaler::NewStub(channel_);
  return WaitFor([&] { return !scaler_->Running() || HealthCheck(channel_, "") == 1; },
                 std::chrono::seconds(15)) &&
         scaler_->Running();
}

ScalerFixture::~ScalerFixture() = default;

std::vector<std::string> ScalerFixture::SendTasks(const std::string& queue, int count,
                                                  const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {PythonInterpreter(), PythonScriptsDir() + "/celery_send.py",
                                   "--broker",          redis_ptr_->url(),
                                   "--queue",           queue,
                                   "--count",           std::to_string(count)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto result = RunCommand(argv, std::chrono::seconds(60));
  if (result.exit_code != 0) throw std::runtime_error("celery_send.py failed: " + result.output);
  std::vector<std::string> ids;
  std::istringstream in(result.output);
  for (std::string line; std::getline(in, line);) {
    if (line.size() == 36) ids.push_back(line);
  }
  return ids;
}

grpc::Status ScalerFixture::GetMetrics(const std::string& name,
                                       const std::map<std::string, std::string>& md, int64_t* value,
                                       const std::string& metric_name) {
  externalscaler::GetMetricsRequest req;
  req.mutable_scaledobjectref()->set_name(name);
  req.mutable_scaledobjectref()->set_namespace_("test");
  req.mutable_scaledobjectref()->mutable_scalermetadata()->insert(md.begin(), md.end());
  req.set_metricname(metric_name);
  externalscaler::GetMetricsResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status s = stub_->GetMetrics(&ctx, req, &resp);
  if (s.ok()) {
    if (resp.metricvalues_size() != 1) return {grpc::StatusCode::INTERNAL, "not one value"};
    const auto& v = resp.metricvalues(0);
    if (static_cast<double>(v.metricvalue()) != v.metricvaluefloat()) {
      return {grpc::StatusCode::INTERNAL, "int and float fields differ"};
    }
    *value = v.metricvalue();
  }
  return s;
}

grpc::Status ScalerFixture::IsActive(const std::string& name,
                                     const std::map<std::string, std::string>& md, bool* active) {
  externalscaler::ScaledObjectRef ref;
  ref.set_name(name);
  ref.set_namespace_("test");
  ref.mutable_scalermetadata()->insert(md.begin(), md.end());
  externalscaler::IsActiveResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status s = stub_->IsActive(&ctx, ref, &resp);
  if (s.ok()) *active = resp.result();
  return s;
}

}  // namespace warmpool::testing
