#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace warmpool::probe {

// How warmpool-keda-probe reaches the scaler: plaintext, or TLS as KEDA does with enableTLS and a
// TriggerAuthentication's caCert / tlsClientCert / tlsClientKey.
struct ProbeTls {
  std::string ca;           // --tls-ca: PEM CA bundle the server certificate must chain to
  std::string cert;         // --tls-cert: client certificate (mTLS), with --tls-key
  std::string key;          // --tls-key
  std::string server_name;  // --tls-server-name: name checked instead of the address's host

  bool enabled() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

// A channel to `address`, TLS when `tls` asks for it. nullptr and *error (naming the flag and
// file) when a file cannot be read or the flags do not fit together.
std::shared_ptr<grpc::Channel> MakeProbeChannel(const std::string& address, const ProbeTls& tls,
                                                std::string* error);

// now + `seconds`, for a ClientContext deadline.
std::chrono::system_clock::time_point DeadlineIn(double seconds);

}  // namespace warmpool::probe
