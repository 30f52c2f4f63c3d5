#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/security/server_credentials.h>

#include "common/status.h"

namespace warmpool::scaler {

// The scaler's gRPC TLS files (--tls-cert, --tls-key, --tls-client-ca), PEM. All empty: plaintext.
struct TlsServerFiles {
  std::string cert;       // server certificate chain
  std::string key;        // its private key
  std::string client_ca;  // when set, clients must present a certificate this CA signed (mTLS)
  std::chrono::seconds reload{30};  // how often the files are checked for a new version

  bool enabled() const { return !cert.empty() || !key.empty() || !client_ca.empty(); }
};

// The flags fit together: cert and key both or neither; a client CA only with them. Pure.
Status CheckTlsFlags(const TlsServerFiles& files);

// `pem` holds at least one PEM block of `label` ("CERTIFICATE", "PRIVATE KEY"; any "... PRIVATE
// KEY" matches the latter). Pure.
bool HasPemBlock(std::string_view pem, std::string_view label);

// Reads the files once and parses them with OpenSSL: each readable and PEM, the key matching the
// certificate. A wrong path or a swapped file then stops the scaler at startup with the file's
// name, not at the first handshake. *summary gets the certificate's subject and expiry for the
// startup log.
Status CheckTlsFiles(const TlsServerFiles& files, std::string* summary);

// Watches the TLS files next to gRPC's provider. That provider loads whatever pair it finds, and
// a key that does not match its certificate fails every new handshake until a matching pair
// appears; so readiness follows the files: Usable() re-checks them (CheckTlsFiles, at most once
// per `reload`), logs `tls_reloaded` with the new certificate when they changed and are usable,
// and `tls_files_invalid` naming the problem when they are not.
class TlsFileMonitor {
 public:
  TlsFileMonitor(TlsServerFiles files, std::string loaded_summary);
  // True while the files on disk form a usable set; *error says why not. Not thread-safe: one
  // caller (the readiness thread).
  bool Usable(std::string* error);

 private:
  TlsServerFiles files_;
  std::string summary_;  // of the last usable set
  std::string error_;    // of the last check; empty when usable
  std::chrono::steady_clock::time_point next_check_;
};

// TLS (or mTLS with a client CA) server credentials over gRPC's FileWatcherCertificateProvider:
// the files are re-read every `reload` seconds, so a rotated certificate (cert-manager, or a
// Secret volume's symlink swap) serves new handshakes while open connections keep theirs.
std::shared_ptr<grpc::ServerCredentials> MakeTlsServerCredentials(const TlsServerFiles& files);

}  // namespace warmpool::scaler
