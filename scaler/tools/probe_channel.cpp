#include "scaler/tools/probe_channel.h"

namespace warmpool::probe {

std::shared_ptr<grpc::Channel> MakeProbeChannel(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

std::chrono::system_clock::time_point DeadlineIn(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace warmpool::probe
