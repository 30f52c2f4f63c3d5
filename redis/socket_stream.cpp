#include "redis/socket_stream.h"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/logging.h"
#include "redis/errors.h"

namespace warmpool {
namespace {

using Clock = std::chrono::steady_clock;

// OpenSSL writes to the socket with write(), which raises SIGPIPE when the server has closed
// it; that would kill the process instead of failing one command. Ignored unless someone
// installed a handler (gRPC ignores it too).
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
  });
}

std::string OpenSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? std::string("unknown TLS error") : out;
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

int PollTimeout(std::chrono::milliseconds timeout) {
  return timeout.count() <= 0 ? -1 : static_cast<int>(timeout.count());
}

}  // namespace

SocketStream::SocketStream(const std::string& host, int port, const RedisTlsOptions& tls,
                           std::chrono::milliseconds timeout, std::string label)
    : label_(std::move(label)) {
  IgnoreSigpipeOnce();
  try {
    ConnectTcp(host, port, timeout);
    if (tls.enabled) Handshake(host, tls, timeout);
  } catch (...) {
    Close();  // the destructor does not run for a constructor that throws
    throw;
  }
}

SocketStream::~SocketStream() { Close(); }

void SocketStream::Close() {
  if (ssl_) SSL_free(ssl_);  // no SSL_shutdown: a close_notify could block on a dead peer
  if (ctx_) SSL_CTX_free(ctx_);
  if (fd_ >= 0) close(fd_);
  ssl_ = nullptr;
  ctx_ = nullptr;
  fd_ = -1;
}

void SocketStream::ThrowErrno(std::string_view what, int err) {
  std::string msg = label_ + ": " + std::string(what) + ": " + std::strerror(err);
  if (err == ETIMEDOUT) throw RedisTimeoutError(msg);
  throw RedisIoError(msg);
}

void SocketStream::Wait(short events, std::chrono::milliseconds timeout, std::string_view what) {
  pollfd p{fd_, events, 0};
  for (;;) {
    int n = poll(&p, 1, PollTimeout(timeout));
    if (n > 0) return;  // ready, or an error the next call reports
    if (n == 0) {
      throw RedisTimeoutError(label_ + ": " + std::string(what) + ": timed out after " +
                              std::to_string(timeout.count()) + " ms");
    }
    if (errno != EINTR) ThrowErrno(what, errno);
  }
}

void SocketStream::ConnectTcp(const std::string& host, int port,
                              std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw RedisIoError(label_ + ": connect: cannot resolve host: " + gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, freeaddrinfo);
  int last_errno = ECONNREFUSED;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    fd_ = fd;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_errno = errno;
        close(fd);
        fd_ = -1;
        continue;
      }
      Wait(POLLOUT, timeout, "connect");  // throws on timeout
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last_errno = err;
        close(fd);
        fd_ = -1;
        continue;
      }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    return;
  }
  ThrowErrno("connect", last_errno);
}

void SocketStream::Handshake(const std::string& host, const RedisTlsOptions& tls,
                             std::chrono::milliseconds timeout) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (ctx_ == nullptr) throw RedisIoError(label_ + ": TLS: " + OpenSslErrors());
  SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
  if (tls.verify == TlsVerify::kNone) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      LogEvent(spdlog::level::warn, "redis_tls_unverified",
               {{"endpoint", label_},
                {"detail", "ssl_cert_reqs=none: the server's certificate is not verified"}});
    });
  } else {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    const bool loaded = tls.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx_) == 1
                                            : SSL_CTX_load_verify_locations(
                                                  ctx_, tls.ca_file.c_str(), nullptr) == 1;
    if (!loaded) {
      throw RedisIoError(
          label_ + ": TLS: cannot load CA certificates " +
          (tls.ca_file.empty() ? std::string("(system store)") : "from '" + tls.ca_file + "'") +
          ": " + OpenSslErrors());
    }
  }
  if (!tls.cert_file.empty()) {
    const std::string& key = tls.key_file.empty() ? tls.cert_file : tls.key_file;
    if (SSL_CTX_use_certificate_chain_file(ctx_, tls.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx_) != 1) {
      throw RedisIoError(label_ + ": TLS: cannot use client certificate '" + tls.cert_file +
                         "' with key '" + key + "': " + OpenSslErrors());
    }
  }
  ssl_ = SSL_new(ctx_);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    throw RedisIoError(label_ + ": TLS: " + OpenSslErrors());
  }
  SSL_set_mode(ssl_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const bool ip = IsIpLiteral(host);
  if (!ip) SSL_set_tlsext_host_name(ssl_, host.c_str());  // SNI (RFC 6066: names only)
  if (tls.verify != TlsVerify::kNone && tls.check_hostname) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    const int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str())
                      : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    if (ok != 1) throw RedisIoError(label_ + ": TLS: cannot check host name: " + OpenSslErrors());
  }
  ERR_clear_error();
  for (;;) {
    int ret = SSL_connect(ssl_);
    if (ret == 1) return;
    const long verify = SSL_get_verify_result(ssl_);
    if (SSL_get_error(ssl_, ret) == SSL_ERROR_SSL && verify != X509_V_OK) {
      throw RedisIoError(label_ + ": TLS: certificate verify failed for host '" + host +
                         "': " + X509_verify_cert_error_string(verify) +
                         " (check ssl_ca_certs and the server's certificate names)");
    }
    WaitOrThrowSsl(ret, timeout, "TLS handshake");
  }
}

void SocketStream::WaitOrThrowSsl(int ret, std::chrono::milliseconds timeout,
                                  std::string_view what) {
  const int err = SSL_get_error(ssl_, ret);
  if (err == SSL_ERROR_WANT_READ) return Wait(POLLIN, timeout, what);
  if (err == SSL_ERROR_WANT_WRITE) return Wait(POLLOUT, timeout, what);
  if (err == SSL_ERROR_ZERO_RETURN) {
    throw RedisIoError(label_ + ": " + std::string(what) + ": server closed the connection");
  }
  if (err == SSL_ERROR_SYSCALL) {
    const int e = errno;
    ERR_clear_error();
    if (e == 0 || ret == 0) {
      throw RedisIoError(label_ + ": " + std::string(what) +
                         ": server closed the connection (is it a TLS port?)");
    }
    ThrowErrno(what, e);
  }
  throw RedisIoError(label_ + ": " + std::string(what) + ": " + OpenSslErrors());
}

void SocketStream::WriteAll(std::string_view data, std::chrono::milliseconds timeout) {
  while (!data.empty()) {
    if (ssl_) {
      ERR_clear_error();
      int n =
          SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30)));
      if (n > 0) {
        data.remove_prefix(static_cast<size_t>(n));
      } else {
        WaitOrThrowSsl(n, timeout, "write");
      }
      continue;
    }
    ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      Wait(POLLOUT, timeout, "write");
    } else if (errno != EINTR) {
      ThrowErrno("write", errno);
    }
  }
}

size_t SocketStream::ReadSome(char* buf, size_t size, std::chrono::milliseconds timeout) {
  for (;;) {
    if (ssl_) {
      ERR_clear_error();
      int n = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      if (n > 0) return static_cast<size_t>(n);
      WaitOrThrowSsl(n, timeout, "read reply");
      continue;
    }
    ssize_t n = recv(fd_, buf, size, 0);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) throw RedisIoError(label_ + ": read reply: server closed the connection");
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      Wait(POLLIN, timeout, "read reply");
    } else if (errno != EINTR) {
      ThrowErrno("read reply", errno);
    }
  }
}

}  // namespace warmpool
