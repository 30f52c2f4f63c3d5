#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "policy/warm_policy.h"
#include "scaler/scaler_metrics.h"

namespace warmpool::scaler {

// Identifies a ScaledObject as KEDA sends it.
struct ScaledObjectKey {
  std::string name;
  std::string ns;
  std::string ToString() const { return ns.empty() ? name : ns + "/" + name; }
};

// The last decision of each ScaledObject and its Prometheus series (desired, active, decision
// changes). Bounded, because anyone who reaches the gRPC port can invent names: an object not
// seen for `expiry` is forgotten with its series (Family::Remove), and beyond `max_objects` new
// objects are served but not tracked. Thread-safe.
class ObjectStates {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  struct Options {
    size_t max_objects = 1000;
    std::chrono::seconds expiry{600};  // KEDA polls every 30 s by default
  };
  enum class Change { kSame, kChanged, kUntracked };

  ObjectStates(
      ScalerMetrics* metrics, Options options,
      Clock clock = [] { return std::chrono::steady_clock::now(); });

  // Publishes `decision` as `key`'s; says whether it changed (log it) or is not tracked.
  Change Record(const ScaledObjectKey& key, const policy::Decision& decision);
  size_t size() const;

 private:
  struct State {
    policy::Decision last;
    std::chrono::steady_clock::time_point last_seen;
    prometheus::Gauge* desired = nullptr;
    prometheus::Gauge* forecast = nullptr;
    prometheus::Gauge* active = nullptr;
    std::map<std::string, prometheus::Counter*> decisions;  // by reason (a fixed set)
  };
  void SweepLocked(std::chrono::steady_clock::time_point now);
  void RemoveSeries(const State& st);

  ScalerMetrics* const metrics_;
  const Options options_;
  const Clock clock_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, State> states_;       // guarded by mu_
  std::chrono::steady_clock::time_point last_sweep_{};  // guarded by mu_
  bool warned_full_ = false;                            // guarded by mu_
};

}  // namespace warmpool::scaler
