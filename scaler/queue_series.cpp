#include "scaler/queue_series.h"

namespace warmpool::scaler {

QueueSeries::QueueSeries(ScalerMetrics* metrics, size_t max_series, std::chrono::seconds expiry,
                         Clock clock)
    : metrics_(metrics), max_series_(max_series), expiry_(expiry), clock_(std::move(clock)) {}

size_t QueueSeries::size() const {
  std::lock_guard lock(mu_);
  return series_.size();
}

void QueueSeries::SweepLocked(std::chrono::steady_clock::time_point now) {
  std::erase_if(series_, [&](auto& kv) {
    if (now - kv.second.last <= expiry_) return false;
    metrics_->pending.Remove(kv.second.pending);
    metrics_->in_flight.Remove(kv.second.in_flight);
    metrics_->scheduled.Remove(kv.second.scheduled);
    return true;
  });
  last_sweep_ = now;
}

void QueueSeries::Publish(const std::string& connection, const std::string& queue,
                          const QueueBacklog& b) {
  std::lock_guard lock(mu_);
  const auto now = clock_();
  if (now - last_sweep_ > expiry_ / 10) SweepLocked(now);
  auto key = std::make_pair(connection, queue);
  auto it = series_.find(key);
  if (it == series_.end()) {
    if (series_.size() >= max_series_) SweepLocked(now);
    if (series_.size() >= max_series_) return;
    prometheus::Labels labels = {{"connection", connection}, {"queue", queue}};
    it = series_
             .emplace(std::move(key),
                      Series{&metrics_->pending.Add(labels), &metrics_->in_flight.Add(labels),
                             &metrics_->scheduled.Add(labels), now})
             .first;
  }
  it->second.last = now;
  it->second.pending->Set(static_cast<double>(b.pending));
  it->second.in_flight->Set(static_cast<double>(b.in_flight));
  it->second.scheduled->Set(static_cast<double>(b.scheduled));
}

}  // namespace warmpool::scaler
