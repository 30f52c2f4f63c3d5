#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "scaler/backlog.h"
#include "scaler/scaler_metrics.h"

namespace warmpool::scaler {

// The per-queue gauges (pending, in flight, scheduled by {connection, queue}). Bounded, because
// queue names come from request metadata: a series not published for `expiry` is removed, and
// beyond `max_series` new queues are not published (they are still read and served). Thread-safe.
class QueueSeries {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  QueueSeries(
      ScalerMetrics* metrics, size_t max_series, std::chrono::seconds expiry,
      Clock clock = [] { return std::chrono::steady_clock::now(); });

  void Publish(const std::string& connection, const std::string& queue, const QueueBacklog& b);
  size_t size() const;

 private:
  struct Series {
    prometheus::Gauge* pending;
    prometheus::Gauge* in_flight;
    prometheus::Gauge* scheduled;
    std::chrono::steady_clock::time_point last;
  };
  void SweepLocked(std::chrono::steady_clock::time_point now);

  ScalerMetrics* const metrics_;
  const size_t max_series_;
  const std::chrono::seconds expiry_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, Series> series_;  // guarded by mu_
  std::chrono::steady_clock::time_point last_sweep_{};            // guarded by mu_
};

}  // namespace warmpool::scaler
