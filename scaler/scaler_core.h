#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "policy/scaler_metadata.h"
#include "policy/task_timing.h"
#include "policy/warm_policy.h"
#include "scaler/backlog.h"
#include "scaler/coalescing_probe.h"
#include "scaler/connection_registry.h"
#include "scaler/scaler_metrics.h"

namespace warmpool::scaler {

// A ScaledObject's metadata as borrowed key/value views (no copies on the hot path); order does
// not matter.
using MetadataView = std::vector<std::pair<std::string_view, std::string_view>>;
MetadataView ViewOf(const std::map<std::string, std::string>& raw);

// Identifies a ScaledObject as KEDA sends it.
struct ScaledObjectKey {
  std::string name;
  std::string ns;
  std::string ToString() const { return ns.empty() ? name : ns + "/" + name; }
};

// Everything derived from one ScaledObject metadata map, computed once and cached: the parsed
// metadata, where and what to read, and the metric name.
struct ScalerPlan {
  policy::ParsedMetadata parsed;
  ProbeTarget target;
  std::string target_key;  // target.CacheKey()
  std::string metric_name;
};

// The result of one evaluation: what the policy decided from what the probe read.
struct Evaluation {
  policy::Decision decision;
  std::shared_ptr<const BacklogReading> reading;
  std::string metric_name;
};

// The external scaler without gRPC: metadata parsed once per distinct map (cached), Redis reads
// coalesced per queue set, the policy applied, decisions logged when they change. gRPC handlers
// translate its Status to grpc::Status. Thread-safe.
class ScalerCore {
 public:
  struct Options {
    std::chrono::milliseconds coalesce_window{200};  // reuse a Redis reading this long
    bool refresh_ahead = true;  // re-read polled targets in the background (no Redis on hot path)
    std::string state_prefix = "warmpool:";         // policy state keys live under this
    std::chrono::seconds state_ttl{7 * 24 * 3600};  // forget a queue set's history after this
  };
  using WallClock = std::function<std::chrono::system_clock::time_point()>;

  ScalerCore(
      ConnectionRegistry* registry, ScalerMetrics* metrics, Options options,
      WallClock clock = [] { return std::chrono::system_clock::now(); });

  // Parses (or fetches from cache) the metadata and resolves its Redis connection.
  // InvalidArgument names the key and value.
  Status Plan(const MetadataView& raw, std::shared_ptr<const ScalerPlan>* out);

  // Reads the backlog and decides. InvalidArgument for bad metadata, Unavailable when Redis
  // cannot be read (never a made-up 0).
  Status Evaluate(const ScaledObjectKey& key, const MetadataView& raw, Evaluation* out);

  // GetMetricSpec's metric name: "warmpool-" + the queue names, lower-case [a-z0-9-]. Stable for
  // a ScaledObject's queue set. Pure.
  static std::string MetricNameFor(const policy::ScalerMetadata& metadata);

  uint64_t redis_reads() const { return probe_.reads(); }

 private:
  struct ObjectState {
    bool has_decision = false;
    policy::Decision last;
    prometheus::Gauge* desired = nullptr;
    prometheus::Gauge* active = nullptr;
  };
  // The coalescing probe's read: one pipelined backlog read, the shared policy state updated with
  // it (one optimistic transaction), then the per-queue gauges. Once per target per window.
  BacklogReading ReadAndPublish(const ProbeTarget& target);
  void Record(const ScaledObjectKey& key, const Evaluation& eval);

  ConnectionRegistry* const registry_;
  ScalerMetrics* const metrics_;
  const Options options_;
  const WallClock clock_;
  CoalescingProbe probe_;

  std::shared_mutex metadata_mu_;
  struct CachedPlan {
    std::map<std::string, std::string, std::less<>> raw;  // compared on a hash hit
    std::shared_ptr<const ScalerPlan> plan;
  };
  // Keyed by an order-independent hash of the metadata entries.
  std::unordered_map<uint64_t, std::vector<CachedPlan>> plans_;  // guarded by metadata_mu_
  size_t plan_count_ = 0;                                        // guarded by metadata_mu_
  std::set<std::string> warned_keys_;                            // guarded by metadata_mu_

  std::mutex timings_mu_;
  // Run times measured from in-flight tags disappearing, per probe target (in memory: a restart
  // only delays the next measurement).
  std::unordered_map<std::string, policy::TaskTiming> timings_;  // guarded by timings_mu_

  std::mutex objects_mu_;
  std::unordered_map<std::string, ObjectState> objects_;  // guarded by objects_mu_
};

}  // namespace warmpool::scaler
