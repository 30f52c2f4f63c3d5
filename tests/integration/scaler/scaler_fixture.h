#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "externalscaler.grpc.pb.h"
#include "tests/support/process.h"
#include "tests/support/redis_server.h"

namespace warmpool::testing {

// A real warmpool-scaler process talking to a real redis-server, both on free loopback ports,
// plus a gRPC stub and helpers that send tasks with Python Celery. Test-only.
class ScalerFixture {
 public:
  explicit ScalerFixture(std::vector<std::string> redis_args = {},
                         std::vector<std::string> scaler_args = {});
  // A second scaler on an existing Redis (e.g. two replicas behind KEDA's round-robin).
  ScalerFixture(TestRedisServer* shared_redis, std::vector<std::string> scaler_args);
  ~ScalerFixture();

  TestRedisServer& redis() { return *redis_ptr_; }
  externalscaler::ExternalScaler::Stub& stub() { return *stub_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  int metrics_port() const { return metrics_port_; }
  int grpc_port() const { return grpc_port_; }
  std::string ScalerLog() const { return scaler_->Log(); }
  ChildProcess& scaler() { return *scaler_; }
  // SIGTERM, wait for a clean exit (0), then the same scaler again on the same ports, healthy.
  // Returns the old process's exit code.
  int Restart();

  // Sends `count` tasks with Python Celery's send_task; returns their ids.
  std::vector<std::string> SendTasks(const std::string& queue, int count,
                                     const std::vector<std::string>& extra = {});

  // GetMetrics for a ScaledObject `name` with `metadata`; returns the gRPC status and fills
  // *value with metricValue (and checks the float field matches).
  grpc::Status GetMetrics(const std::string& name, const std::map<std::string, std::string>& md,
                          int64_t* value, const std::string& metric_name = "");
  grpc::Status IsActive(const std::string& name, const std::map<std::string, std::string>& md,
                        bool* active);

 private:
  void StartScaler();
  // One start on grpc_port_/metrics_port_: true once healthy, false when it exited or timed out.
  bool StartScalerOnce();

  std::unique_ptr<TestRedisServer> redis_;  // owned, unless shared
  TestRedisServer* redis_ptr_;
  std::string dir_;
  int grpc_port_;
  int metrics_port_;
  std::vector<std::string> scaler_args_;
  std::unique_ptr<ChildProcess> scaler_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<externalscaler::ExternalScaler::Stub> stub_;
};

std::string ScalerBinary();

}  // namespace warmpool::testing
