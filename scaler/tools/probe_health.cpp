#include "scaler/tools/probe_health.h"

#include <future>
#include <iostream>

#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/generic/generic_stub.h>

#include "scaler/tools/probe_channel.h"

namespace warmpool::probe {
namespace {

// Debian 12 ships no grpc/health/v1/health.proto, so the two one-field messages are encoded by
// hand: HealthCheckRequest { string service = 1; }, HealthCheckResponse { ServingStatus
// status = 1; } (github.com/grpc/grpc-proto grpc/health/v1/health.proto).
std::string EncodeRequest(const std::string& service) {
  std::string out;
  if (service.empty()) return out;
  out.push_back(static_cast<char>((1 << 3) | 2));  // field 1, length-delimited
  size_t n = service.size();
  do {
    unsigned char b = n & 0x7f;
    n >>= 7;
    if (n) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (n);
  out.append(service);
  return out;
}

const char* StatusName(int64_t status) {
  switch (status) {
    case 1:
      return "SERVING";
    case 2:
      return "NOT_SERVING";
    case 3:
      return "SERVICE_UNKNOWN";
    default:
      return "UNKNOWN";
  }
}

}  // namespace

int ProbeHealth(const std::shared_ptr<grpc::Channel>& channel, const std::string& service,
                double timeout_s) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(timeout_s));
  const std::string request_bytes = EncodeRequest(service);
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) { done.set_value(std::move(s)); });
  const grpc::Status status = done.get_future().get();
  nlohmann::ordered_json out;
  out["service"] = service;
  if (!status.ok()) {
    out["error"] = {{"code", static_cast<int>(status.error_code())},
                    {"message", status.error_message()}};
    std::cout << out.dump() << std::endl;
    return 1;
  }
  std::vector<grpc::Slice> slices;
  (void)response.Dump(&slices);
  std::string bytes;
  for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  google::protobuf::UnknownFieldSet fields;
  int64_t serving = 0;  // proto3 omits the default (UNKNOWN)
  if (fields.ParseFromString(bytes)) {
    for (int i = 0; i < fields.field_count(); ++i) {
      if (fields.field(i).number() == 1 &&
          fields.field(i).type() == google::protobuf::UnknownField::TYPE_VARINT) {
        serving = static_cast<int64_t>(fields.field(i).varint());
      }
    }
  }
  out["status"] = StatusName(serving);
  std::cout << out.dump() << std::endl;
  return serving == 1 ? 0 : 1;
}

}  // namespace warmpool::probe
