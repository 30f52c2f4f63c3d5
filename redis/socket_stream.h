#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "redis/url.h"

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace warmpool {

// One TCP connection to a Redis server, optionally TLS (OpenSSL; Debian 12's hiredis 0.14 has
// no TLS). The socket is non-blocking; every call waits with poll() up to its timeout
// (0 = forever). Errors are thrown as RedisIoError / RedisTimeoutError with `label` (a redacted
// endpoint) in front. Move-only; not thread-safe.
class SocketStream {
 public:
  // Resolves `host`, connects within `timeout` and, when tls.enabled, completes the handshake:
  // SNI set, the server's certificate chain verified (unless TlsVerify::kNone) against
  // tls.ca_file or the system store, and its name checked against `host` (DNS name or IP).
  SocketStream(const std::string& host, int port, const RedisTlsOptions& tls,
               std::chrono::milliseconds timeout, std::string label);
  ~SocketStream();
  SocketStream(const SocketStream&) = delete;
  SocketStream& operator=(const SocketStream&) = delete;

  // Writes all of `data`; each wait for the socket to accept more is bounded by `timeout`.
  void WriteAll(std::string_view data, std::chrono::milliseconds timeout);
  // Reads what is available (at least one byte) into buf; throws on EOF, error or timeout.
  size_t ReadSome(char* buf, size_t size, std::chrono::milliseconds timeout);

 private:
  void ConnectTcp(const std::string& host, int port, std::chrono::milliseconds timeout);
  void Handshake(const std::string& host, const RedisTlsOptions& tls,
                 std::chrono::milliseconds timeout);
  // Waits for `events` (POLLIN/POLLOUT); throws RedisTimeoutError naming `what` on timeout.
  void Wait(short events, std::chrono::milliseconds timeout, std::string_view what);
  // Handles SSL_get_error for a failed SSL_read/SSL_write/SSL_connect: waits and returns when
  // the call should be retried, throws otherwise.
  void WaitOrThrowSsl(int ret, std::chrono::milliseconds timeout, std::string_view what);
  void Close();
  [[noreturn]] void ThrowErrno(std::string_view what, int err);

  std::string label_;
  int fd_ = -1;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

}  // namespace warmpool
