#include "tests/integration/scaler/grpc_probe.h"

#include <future>

#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/generic/generic_stub.h>

namespace warmpool::testing {
namespace {

std::string LengthDelimited(int field, const std::string& value) {
  std::string out;
  out.push_back(static_cast<char>((field << 3) | 2));
  size_t n = value.size();
  do {
    unsigned char b = n & 0x7f;
    n >>= 7;
    if (n) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (n);
  return out + value;
}

grpc::ByteBuffer ToBuffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string FromBuffer(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  (void)buffer.Dump(&slices);
  std::string out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

}  // namespace

int HealthCheck(const std::shared_ptr<grpc::Channel>& channel, const std::string& service) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::ByteBuffer request = ToBuffer(service.empty() ? "" : LengthDelimited(1, service));
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) { done.set_value(s); });
  grpc::Status status = done.get_future().get();
  if (!status.ok()) return -static_cast<int>(status.error_code());
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromString(FromBuffer(response))) return -100;
  for (int i = 0; i < fields.field_count(); ++i) {
    if (fields.field(i).number() == 1) return static_cast<int>(fields.field(i).varint());
  }
  return 0;  // UNKNOWN (proto3 default omitted)
}

std::vector<std::string> ReflectionListServices(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::CompletionQueue cq;
  auto call =
      stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  // ServerReflectionRequest { string list_services = 7; }
  grpc::ByteBuffer request = ToBuffer(LengthDelimited(7, "*"));
  call->Write(request, reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  call->WritesDone(reinterpret_cast<void*>(3));
  cq.Next(&tag, &ok);
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  std::vector<std::string> names;
  if (ok) {
    // ServerReflectionResponse { ListServiceResponse list_services_response = 6; }
    // ListServiceResponse { repeated ServiceResponse service = 1; } ServiceResponse { name = 1 }
    google::protobuf::UnknownFieldSet top;
    top.ParseFromString(FromBuffer(response));
    for (int i = 0; i < top.field_count(); ++i) {
      if (top.field(i).number() != 6) continue;
      google::protobuf::UnknownFieldSet list;
      list.ParseFromString(top.field(i).length_delimited());
      for (int j = 0; j < list.field_count(); ++j) {
        google::protobuf::UnknownFieldSet svc;
        svc.ParseFromString(list.field(j).length_delimited());
        for (int k = 0; k < svc.field_count(); ++k) {
          if (svc.field(k).number() == 1) names.push_back(svc.field(k).length_delimited());
        }
      }
    }
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return names;
}

}  // namespace warmpool::testing
