#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

namespace warmpool::probe {

// grpc.health.v1.Health/Check for `service` ("" = the server as a whole; the scaler also serves
// "readiness" and "liveness"), as kubelet's gRPC probe calls it. Prints one JSON object
// {"service", "status": SERVING|NOT_SERVING|SERVICE_UNKNOWN|UNKNOWN} (or "error"); returns the
// exit code: 0 SERVING, 1 otherwise.
int ProbeHealth(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                double timeout_s);

}  // namespace warmpool::probe
