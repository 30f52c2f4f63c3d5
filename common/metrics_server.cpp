#include "common/metrics_server.h"

#include <stdexcept>

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

namespace warmpool {

MetricsServer::MetricsServer(const std::string& listen,
                             std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)) {
  if (listen == "off" || listen.empty()) return;
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve metrics on '" + listen + "': " + e.what());
  }
  exposer_->RegisterCollectable(registry_);
}

MetricsServer::~MetricsServer() = default;

std::optional<int> MetricsServer::port() const {
  if (!exposer_) return std::nullopt;
  auto ports = exposer_->GetListeningPorts();
  if (ports.empty()) return std::nullopt;
  return ports.front();
}

}  // namespace warmpool
