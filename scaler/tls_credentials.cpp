#include "scaler/tls_credentials.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "common/logging.h"
#include "common/read_file.h"

namespace warmpool::scaler {
namespace {

std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "not a PEM file";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr MemoryBio(const std::string& data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// "subject=..., serial=..., notAfter=..." of `cert`.
std::string Describe(X509* cert) {
  BioPtr out(BIO_new(BIO_s_mem()));
  BIO_puts(out.get(), "subject=");
  X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  BIO_puts(out.get(), ", serial=");
  i2a_ASN1_INTEGER(out.get(), X509_get0_serialNumber(cert));
  BIO_puts(out.get(), ", notAfter=");
  ASN1_TIME_print(out.get(), X509_get0_notAfter(cert));
  char* data = nullptr;
  long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

Status ReadPem(const std::string& flag, const std::string& path, std::string_view label,
               std::string* content) {
  if (!ReadWholeFile(path, content)) {
    return Status::InvalidArgument(flag + " " + path + ": cannot read the file");
  }
  if (!HasPemBlock(*content, label)) {
    std::string message = flag + " " + path + ": no PEM ";
    message.append(label).append(" block");
    return Status::InvalidArgument(message);
  }
  return Status::Ok();
}

}  // namespace

Status CheckTlsFlags(const TlsServerFiles& files) {
  if (!files.enabled()) return Status::Ok();
  if (files.cert.empty() || files.key.empty()) {
    return Status::InvalidArgument(
        "--tls-cert and --tls-key go together (--tls-client-ca needs both)");
  }
  if (files.reload.count() < 1) return Status::InvalidArgument("--tls-reload-s must be >= 1");
  return Status::Ok();
}

bool HasPemBlock(std::string_view pem, std::string_view label) {
  for (size_t at = pem.find("-----BEGIN "); at != std::string_view::npos;
       at = pem.find("-----BEGIN ", at + 1)) {
    size_t start = at + 11;
    size_t end = pem.find("-----", start);
    if (end == std::string_view::npos) return false;
    std::string_view found = pem.substr(start, end - start);
    if (found == label) return true;
    if (label == "PRIVATE KEY" && found.size() >= label.size() &&
        found.substr(found.size() - label.size()) == label) {
      return true;
    }
  }
  return false;
}

Status CheckTlsFiles(const TlsServerFiles& files, std::string* summary) {
  std::string cert_pem, key_pem, ca_pem;
  if (Status s = ReadPem("--tls-cert", files.cert, "CERTIFICATE", &cert_pem); !s.ok()) return s;
  if (Status s = ReadPem("--tls-key", files.key, "PRIVATE KEY", &key_pem); !s.ok()) return s;
  if (!files.client_ca.empty()) {
    if (Status s = ReadPem("--tls-client-ca", files.client_ca, "CERTIFICATE", &ca_pem); !s.ok()) {
      return s;
    }
  }
  BioPtr cert_bio = MemoryBio(cert_pem), key_bio = MemoryBio(key_pem);
  std::unique_ptr<X509, X509Free> cert(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::InvalidArgument("--tls-cert " + files.cert + ": " + OpenSslError());
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    return Status::InvalidArgument("--tls-key " + files.key + ": " + OpenSslError() +
                                   " (an encrypted key is not supported)");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("--tls-key " + files.key + " does not match --tls-cert " +
                                   files.cert);
  }
  *summary = Describe(cert.get());
  return Status::Ok();
}

TlsFileMonitor::TlsFileMonitor(TlsServerFiles files, std::string loaded_summary)
    : files_(std::move(files)),
      summary_(std::move(loaded_summary)),
      next_check_(std::chrono::steady_clock::now() + files_.reload) {}

bool TlsFileMonitor::Usable(std::string* error) {
  const auto now = std::chrono::steady_clock::now();
  if (now >= next_check_) {
    next_check_ = now + files_.reload;
    std::string summary;
    Status s = CheckTlsFiles(files_, &summary);
    if (!s.ok()) {
      if (s.message() != error_) {
        LogEvent(spdlog::level::err, "tls_files_invalid",
                 {{"error", s.message()},
                  {"note", "new handshakes fail until a matching key and certificate appear"}});
      }
      error_ = s.message();
    } else {
      if (summary != summary_ || !error_.empty()) {
        LogEvent(spdlog::level::info, "tls_reloaded", {{"certificate", summary}});
      }
      summary_ = summary;
      error_.clear();
    }
  }
  *error = error_;
  return error_.empty();
}

std::shared_ptr<grpc::ServerCredentials> MakeTlsServerCredentials(const TlsServerFiles& files) {
  using grpc::experimental::FileWatcherCertificateProvider;
  const auto interval = static_cast<unsigned int>(files.reload.count());
  auto provider = files.client_ca.empty() ? std::make_shared<FileWatcherCertificateProvider>(
                                                files.key, files.cert, interval)
                                          : std::make_shared<FileWatcherCertificateProvider>(
                                                files.key, files.cert, files.client_ca, interval);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (files.client_ca.empty()) {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  } else {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  }
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace warmpool::scaler
