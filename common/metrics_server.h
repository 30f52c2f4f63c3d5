#pragma once

#include <memory>
#include <optional>
#include <string>

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace warmpool {

// Serves a prometheus registry on http://<listen>/metrics (prometheus-cpp pull). `listen` is
// "HOST:PORT" or "off" (nothing served). Throws std::runtime_error naming the address when it
// cannot bind.
class MetricsServer {
 public:
  MetricsServer(const std::string& listen, std::shared_ptr<prometheus::Registry> registry);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The bound port (useful with port 0), or nullopt when off.
  std::optional<int> port() const;

 private:
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::shared_ptr<prometheus::Registry> registry_;
};

}  // namespace warmpool
