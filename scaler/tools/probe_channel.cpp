#include "scaler/tools/probe_channel.h"

#include "common/read_file.h"

namespace warmpool::probe {

std::shared_ptr<grpc::Channel> MakeProbeChannel(const std::string& address, const ProbeTls& tls,
                                                std::string* error) {
  if (!tls.enabled()) {
    if (!tls.server_name.empty()) {
      *error = "--tls-server-name needs --tls-ca (or --tls-cert and --tls-key)";
      return nullptr;
    }
    return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  }
  if (tls.cert.empty() != tls.key.empty()) {
    *error = "--tls-cert and --tls-key go together";
    return nullptr;
  }
  grpc::SslCredentialsOptions ssl;
  // An empty CA: gRPC's default roots (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH or the system bundle).
  const std::pair<const std::string*, std::string*> files[] = {{&tls.ca, &ssl.pem_root_certs},
                                                               {&tls.cert, &ssl.pem_cert_chain},
                                                               {&tls.key, &ssl.pem_private_key}};
  const char* flags[] = {"--tls-ca", "--tls-cert", "--tls-key"};
  for (size_t i = 0; i < 3; ++i) {
    if (files[i].first->empty()) continue;
    if (!ReadWholeFile(*files[i].first, files[i].second) || files[i].second->empty()) {
      *error = std::string(flags[i]) + " " + *files[i].first + ": cannot read the file";
      return nullptr;
    }
  }
  grpc::ChannelArguments args;
  if (!tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
  return grpc::CreateCustomChannel(address, grpc::SslCredentials(ssl), args);
}

std::chrono::system_clock::time_point DeadlineIn(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace warmpool::probe
