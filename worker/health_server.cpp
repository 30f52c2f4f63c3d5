#include "worker/health_server.h"

#include <arpa/inet.h>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace warmpool::worker {
namespace {

void WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string Response(int code, const std::string& reason, const std::string& content_type,
                     const std::string& body) {
  std::ostringstream out;
  out << "HTTP/1.0 " << code << " " << reason << "\r\nContent-Type: " << content_type
      << "\r\nContent-Length: " << body.size() << "\r\nConnection: close\r\n\r\n"
      << body;
  return out.str();
}

}  // namespace

HealthServer::HealthServer(const std::string& listen, std::function<bool()> healthy,
                           std::function<bool()> ready,
                           std::shared_ptr<prometheus::Registry> registry)
    : healthy_(std::move(healthy)), ready_(std::move(ready)), registry_(std::move(registry)) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) {
    throw std::runtime_error("--health-listen '" + listen + "' must be HOST:PORT or 'off'");
  }
  std::string host = listen.substr(0, colon);
  std::string port = listen.substr(colon + 1);
  if (host.empty() || host == "*") host = "0.0.0.0";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    throw std::runtime_error("--health-listen '" + listen + "': cannot resolve the address");
  }
  int fd = ::socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
  int one = 1;
  if (fd >= 0) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
    std::string err = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    freeaddrinfo(res);
    throw std::runtime_error("--health-listen '" + listen + "': cannot listen: " + err);
  }
  freeaddrinfo(res);
  sockaddr_storage bound{};
  socklen_t len = sizeof(bound);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listen_fd_ = fd;
  thread_ = std::thread([this] { Serve(); });
}

HealthServer::~HealthServer() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void HealthServer::Serve() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    Handle(fd);
    ::close(fd);
  }
}

void HealthServer::Handle(int fd) {
  timeval tv{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string request;
  char buf[1024];
  while (request.find("\r\n") == std::string::npos && request.size() < 8192) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  std::istringstream line(request.substr(0, request.find("\r\n")));
  std::string method, path;
  line >> method >> path;
  if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
  if (method != "GET" && method != "HEAD") {
    WriteAll(fd, Response(405, "Method Not Allowed", "text/plain", "GET only\n"));
  } else if (path == "/healthz") {
    bool ok = healthy_();
    WriteAll(fd, ok ? Response(200, "OK", "text/plain", "ok\n")
                    : Response(503, "Service Unavailable", "text/plain", "unhealthy\n"));
  } else if (path == "/readyz") {
    bool ok = ready_();
    WriteAll(fd, ok ? Response(200, "OK", "text/plain", "ready\n")
                    : Response(503, "Service Unavailable", "text/plain", "not ready\n"));
  } else if (path == "/metrics") {
    prometheus::TextSerializer serializer;
    std::string body = serializer.Serialize(registry_->Collect());
    WriteAll(fd, Response(200, "OK", "text/plain; version=0.0.4", body));
  } else {
    WriteAll(fd, Response(404, "Not Found", "text/plain", "not found\n"));
  }
}

}  // namespace warmpool::worker
