#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace prometheus {
class Registry;
}

namespace warmpool::worker {

// A minimal HTTP/1.0 server for Kubernetes probes and Prometheus, on its own thread:
//   GET /healthz  200 "ok" while healthy() holds, else 503
//   GET /readyz   200 "ready" while ready() holds, else 503
//   GET /metrics  the registry in Prometheus text format
// Anything else is 404. One request per connection; requests are tiny, so they are handled
// inline. Throws std::runtime_error naming the address when it cannot bind.
class HealthServer {
 public:
  HealthServer(const std::string& listen, std::function<bool()> healthy,
               std::function<bool()> ready, std::shared_ptr<prometheus::Registry> registry);
  ~HealthServer();  // stops the thread
  HealthServer(const HealthServer&) = delete;
  HealthServer& operator=(const HealthServer&) = delete;

  int port() const { return port_; }

 private:
  void Serve();
  void Handle(int fd);

  std::function<bool()> healthy_;
  std::function<bool()> ready_;
  std::shared_ptr<prometheus::Registry> registry_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace warmpool::worker
