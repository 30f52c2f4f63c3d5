#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
#include "scaler/backlog_source.h"
#include "scaler/coalescing_probe.h"
#include "scaler/connection_registry.h"
#include "scaler/object_states.h"
#include "scaler/queue_series.h"
#include "scaler/scaler_metrics.h"

namespace warmpool::scaler {

// A ScaledObject's metadata as borrowed key/value views (no copies on the hot path); order does
// not matter.
using MetadataView = std::vector<std::pair<std::string_view, std::string_view>>;
MetadataView ViewOf(const std::map<std::string, std::string>& raw);

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

// The external scaler without gRPC: metadata parsed once per distinct map (cached, bounded),
// Redis reads coalesced per queue set and run off the caller's thread (CoalescingProbe), the
// policy applied, decisions logged when they change. gRPC handlers translate its Status to
// grpc::Status. Nothing here blocks a caller on Redis. Thread-safe.
class ScalerCore {
 public:
  struct Options {
    std::chrono::milliseconds coalesce_window{200};  // reuse a Redis reading this long
    bool refresh_ahead = true;  // re-read polled targets in the background (no Redis on hot path)
    std::string state_prefix = "warmpool:";         // policy state keys live under this
    std::chrono::seconds state_ttl{7 * 24 * 3600};  // forget a queue set's history after this
    std::chrono::milliseconds redis_timeout{1000};  // a read's deadline, and a caller's wait
    // Bounds on what requests can make the scaler hold (any client of the port can send them).
    size_t max_cached_plans = 1024;
    size_t max_cached_plan_bytes = 4 << 20;
    size_t max_targets = 1024;
    size_t readers_per_connection = 4;
    ObjectStates::Options objects{};
    size_t max_queue_series = 1024;
  };
  using WallClock = std::function<std::chrono::system_clock::time_point()>;
  using Done = std::function<void(const Status&, const Evaluation&)>;

  // `registry` resolves metadata to connections; `source` does the I/O on them
  // (RedisBacklogSource in the scaler, a fake in tests). Both outlive the core.
  ScalerCore(
      ConnectionRegistry* registry, BacklogSource* source, ScalerMetrics* metrics, Options options,
      WallClock clock = [] { return std::chrono::system_clock::now(); });

  // Parses (or fetches from cache) the metadata and resolves its Redis connection. No Redis I/O.
  // InvalidArgument names the key and (abbreviated) value.
  Status Plan(const MetadataView& raw, std::shared_ptr<const ScalerPlan>* out);

  // Reads the backlog and decides; calls `done` once, at once when a fresh reading is at hand,
  // else from a reader thread when the read completes or from a timer thread at the Redis
  // timeout. InvalidArgument for bad metadata, Unavailable when Redis cannot be read in time
  // (never a made-up 0).
  void EvaluateAsync(const ScaledObjectKey& key, const MetadataView& raw, Done done);

  // As EvaluateAsync, but never waits: nullopt when the reading is not ready yet (a read has
  // been started; SetReadListener's callback runs when it completes).
  std::optional<Status> TryEvaluate(const ScaledObjectKey& key, const MetadataView& raw,
                                    Evaluation* out);

  // Called after every completed Redis read (on the reader thread). Set before use.
  void SetReadListener(std::function<void()> listener) {
    probe_.SetReadListener(std::move(listener));
  }

  // GetMetricSpec's metric name: "warmpool-" + the queue names, lower-case [a-z0-9-]. Stable for
  // a ScaledObject's queue set. Pure.
  static std::string MetricNameFor(const policy::ScalerMetadata& metadata);

  uint64_t redis_reads() const { return probe_.reads(); }
  size_t cached_plans() const;
  size_t tracked_objects() const { return objects_.size(); }
  size_t probe_targets() const { return probe_.targets(); }

 private:
  // Plan + name checks shared by both evaluations.
  Status Prepare(const ScaledObjectKey& key, const MetadataView& raw,
                 std::shared_ptr<const ScalerPlan>* plan);
  Status Decide(const ScaledObjectKey& key, const ScalerPlan& plan,
                const CoalescingProbe::Result& result, Evaluation* out);
  // The coalescing probe's read: one visit to the source (the backlog read, then the shared policy
  // state updated with it), then the per-queue gauges; all by `deadline`. Once per target per
  // window, on the connection's reader thread.
  BacklogReading ReadAndPublish(const ProbeTarget& target, CoalescingProbe::Deadline deadline);
  // Run times from in-flight tags that vanished since the target's last reading: fills the
  // observation's measurement and the reading's oldest in-flight age.
  void MeasureTaskTimes(const std::string& target_key, BacklogReading* reading,
                        policy::Observation* obs);
  // Logs when a connection starts failing and when it recovers (once each, naming it).
  void NoteConnectionHealth(const std::string& connection, const std::string* error);
  void Record(const ScaledObjectKey& key, const Evaluation& eval);

  ConnectionRegistry* const registry_;
  BacklogSource* const source_;
  ScalerMetrics* const metrics_;
  const Options options_;
  const WallClock clock_;
  ObjectStates objects_;
  QueueSeries queue_series_;

  mutable std::shared_mutex metadata_mu_;
  struct CachedPlan {
    std::map<std::string, std::string, std::less<>> raw;  // compared on a hash hit
    std::shared_ptr<const ScalerPlan> plan;
  };
  // Keyed by an order-independent hash of the metadata entries.
  std::unordered_map<uint64_t, std::vector<CachedPlan>> plans_;  // guarded by metadata_mu_
  size_t plan_count_ = 0;                                        // guarded by metadata_mu_
  size_t plan_bytes_ = 0;                                        // guarded by metadata_mu_

  std::mutex timings_mu_;
  struct Timing {
    policy::TaskTiming timing;
    std::chrono::steady_clock::time_point last_used;
  };
  // Run times measured from in-flight tags disappearing, per probe target (in memory: a restart
  // only delays the next measurement). Targets not read for a while are dropped.
  std::unordered_map<std::string, Timing> timings_;        // guarded by timings_mu_
  std::chrono::steady_clock::time_point timings_swept_{};  // guarded by timings_mu_

  std::mutex health_mu_;
  struct ConnectionHealth {
    bool failing = false;
    std::chrono::steady_clock::time_point since;
  };
  std::map<std::string, ConnectionHealth> health_;  // guarded by health_mu_

  // Last member: its reader threads call ReadAndPublish, so it goes (joins them) first.
  CoalescingProbe probe_;
};

}  // namespace warmpool::scaler
