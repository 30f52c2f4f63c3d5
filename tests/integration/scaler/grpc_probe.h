#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

namespace warmpool::testing {

// Calls services for which Debian ships no .proto (grpc.health.v1, grpc.reflection.v1alpha) with
// hand-encoded protobuf bytes over a generic stub, as grpcurl would. Test-only.

// grpc.health.v1.Health/Check: returns 1 SERVING, 2 NOT_SERVING, or -grpc_code on error.
int HealthCheck(const std::shared_ptr<grpc::Channel>& channel, const std::string& service);

// grpc.reflection.v1alpha.ServerReflection list_services: the service names.
std::vector<std::string> ReflectionListServices(const std::shared_ptr<grpc::Channel>& channel);

}  // namespace warmpool::testing
