#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace warmpool::probe {

// The one place warmpool-keda-probe makes its channel to the scaler (plaintext today; TLS flags
// add their credentials here).
std::shared_ptr<grpc::Channel> MakeProbeChannel(const std::string& address);

// now + `seconds`, for a ClientContext deadline.
std::chrono::system_clock::time_point DeadlineIn(double seconds);

}  // namespace warmpool::probe
