#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace warmpool::scaler {

// The scaler's Prometheus metrics (names documented in the README). Families live in `registry`;
// label lookups are done once per series by callers that cache the returned references.
// prometheus-cpp metrics are thread-safe.
struct ScalerMetrics {
  explicit ScalerMetrics(std::shared_ptr<prometheus::Registry> registry);

  std::shared_ptr<prometheus::Registry> registry;
  prometheus::Family<prometheus::Gauge>& pending;          // {connection, queue}
  prometheus::Family<prometheus::Gauge>& in_flight;        // {connection, queue}
  prometheus::Family<prometheus::Gauge>& scheduled;        // {connection, queue}
  prometheus::Family<prometheus::Gauge>& desired;          // {namespace, scaledobject}
  prometheus::Family<prometheus::Gauge>& active;           // {namespace, scaledobject}
  prometheus::Family<prometheus::Gauge>& forecast;         // {namespace, scaledobject}
  prometheus::Family<prometheus::Counter>& decisions;      // {namespace, scaledobject, reason}
  prometheus::Family<prometheus::Histogram>& rpc_seconds;  // {method}
  prometheus::Family<prometheus::Counter>& rpc_errors;     // {method, code}
  prometheus::Family<prometheus::Counter>& redis_errors;   // {connection}
  prometheus::Counter& redis_reads;

  prometheus::Histogram& RpcHistogram(const std::string& method);
};

}  // namespace warmpool::scaler
