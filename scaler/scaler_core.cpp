#include "scaler/scaler_core.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "common/fnv1a.h"
#include "common/logging.h"
#include "policy/metadata_keys.h"
#include "redis/errors.h"
#include "scaler/policy_state_store.h"
#include "scaler/request_limits.h"

namespace warmpool::scaler {
namespace {

// What one cached plan costs besides its strings (map nodes, the plan, its vectors).
constexpr size_t kPlanOverheadBytes = 512;

// Order-independent: KEDA's map arrives in protobuf's unspecified order.
uint64_t HashMetadata(const MetadataView& raw) {
  uint64_t h = raw.size();
  for (const auto& [k, v] : raw)
    h += Fnv1a64(v, Fnv1a64(k) ^ 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
  return h;
}

CoalescingProbe::Options ProbeOptions(const ScalerCore::Options& o) {
  CoalescingProbe::Options p;
  p.window = o.coalesce_window;
  p.refresh_ahead = o.refresh_ahead;
  p.read_timeout = o.redis_timeout;
  p.max_targets = o.max_targets;
  p.readers_per_connection = o.readers_per_connection;
  return p;
}

}  // namespace

ScalerCore::ScalerCore(ConnectionRegistry* registry, BacklogSource* source, ScalerMetrics* metrics,
                       Options options, WallClock clock)
    : registry_(registry),
      source_(source),
      metrics_(metrics),
      options_(options),
      clock_(std::move(clock)),
      objects_(metrics, options.objects),
      queue_series_(metrics, options.max_queue_series, options.objects.expiry),
      probe_(
          [this](const ProbeTarget& target, CoalescingProbe::Deadline deadline) {
            return ReadAndPublish(target, deadline);
          },
          ProbeOptions(options)) {}

std::string ScalerCore::MetricNameFor(const policy::ScalerMetadata& metadata) {
  std::string name = "warmpool";
  for (const auto& q : metadata.queues) {
    name += '-';
    for (unsigned char c : q) {
      if (std::isalnum(c)) {
        name += static_cast<char>(std::tolower(c));
      } else {
        name += '-';
      }
    }
    if (name.size() > 200) break;
  }
  if (name.size() > 200) name.resize(200);
  return name;
}

MetadataView ViewOf(const std::map<std::string, std::string>& raw) {
  return MetadataView(raw.begin(), raw.end());
}

size_t ScalerCore::cached_plans() const {
  std::shared_lock lock(metadata_mu_);
  return plan_count_;
}

Status ScalerCore::Plan(const MetadataView& view, std::shared_ptr<const ScalerPlan>* out) {
  if (Status s = CheckMetadataSize(view); !s.ok()) return s;
  const uint64_t hash = HashMetadata(view);
  auto same = [&](const CachedPlan& c) {
    if (c.raw.size() != view.size()) return false;
    for (const auto& [k, v] : view) {
      auto it = c.raw.find(k);
      if (it == c.raw.end() || it->second != v) return false;
    }
    return true;
  };
  {
    std::shared_lock lock(metadata_mu_);
    auto it = plans_.find(hash);
    if (it != plans_.end()) {
      for (const auto& cached : it->second) {
        if (same(cached)) {
          *out = cached.plan;
          return Status::Ok();
        }
      }
    }
  }
  // Not cached: bad metadata is rare and its message must name the exact key and value.
  std::map<std::string, std::string> raw;
  size_t bytes = kPlanOverheadBytes;
  for (const auto& [k, v] : view) {
    raw.emplace(k, v);
    bytes += 2 * (k.size() + v.size());  // the cached copy and the parsed plan
  }
  auto plan = std::make_shared<ScalerPlan>();
  if (Status s = policy::ParseScalerMetadata(raw, &plan->parsed); !s.ok()) return s;
  const policy::ScalerMetadata& md = plan->parsed.metadata;
  ProbeTarget& target = plan->target;
  if (Status s = registry_->Resolve(md.redis, md.redis_address, &target.pool, &target.connection);
      !s.ok()) {
    return s;
  }
  target.key_prefix = md.key_prefix;
  target.queues = md.queues;
  target.priority_levels = md.priority_levels;
  target.read_unacked = md.count_in_flight || md.eta_prewarm;
  target.count_in_flight = md.count_in_flight;
  target.learning = md;
  target.policy_keys = policy::PolicyKeysOf(raw);
  plan->target_key = target.CacheKey();
  plan->metric_name = MetricNameFor(md);
  if (!md.target_wait_reachable_cold && md.min_warm_replicas == 0 && md.warm_windows.empty()) {
    LogEvent(spdlog::level::warn, "target_wait_unreachable_cold",
             {{"queues", md.queues},
              {"targetWaitSeconds", md.target_wait_seconds},
              {"coldStartSeconds", md.cold_start_seconds},
              {"effect",
               "a burst on no warm replica waits a cold start; set minWarmReplicas or "
               "warmWindows to meet the target"}});
  }

  std::unique_lock lock(metadata_mu_);
  if (plan_count_ >= options_.max_cached_plans ||
      plan_bytes_ + bytes > options_.max_cached_plan_bytes) {
    plans_.clear();  // crude but bounded: legitimate plans are re-parsed on their next call
    plan_count_ = 0;
    plan_bytes_ = 0;
  }
  plans_[hash].push_back(CachedPlan{{raw.begin(), raw.end()}, plan});
  ++plan_count_;
  plan_bytes_ += bytes;
  *out = std::move(plan);
  return Status::Ok();
}

void ScalerCore::NoteConnectionHealth(const std::string& connection, const std::string* error) {
  std::lock_guard lock(health_mu_);
  ConnectionHealth& h = health_[connection];
  const auto now = std::chrono::steady_clock::now();
  if (error && !h.failing) {
    h.failing = true;
    h.since = now;
    LogEvent(spdlog::level::warn, "redis_connection_failing",
             {{"connection", connection},
              {"error", *error},
              {"effect", "its ScaledObjects get UNAVAILABLE; other connections are unaffected"}});
  } else if (!error && h.failing) {
    h.failing = false;
    LogEvent(spdlog::level::info, "redis_connection_recovered",
             {{"connection", connection},
              {"failedSeconds", std::chrono::duration<double>(now - h.since).count()}});
  }
}

void ScalerCore::MeasureTaskTimes(const std::string& target_key, BacklogReading* reading,
                                  policy::Observation* obs) {
  std::lock_guard lock(timings_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - timings_swept_ > std::chrono::seconds(60)) {
    std::erase_if(timings_, [&](const auto& kv) {
      return now - kv.second.last_used > options_.objects.expiry;
    });
    timings_swept_ = now;
  }
  Timing& entry = timings_[target_key];
  entry.last_used = now;
  policy::TaskTiming& timing = entry.timing;
  // Tags that vanished since the last snapshot are the finished tasks; the mean, the count and
  // the by-name sums are over the same ones.
  policy::FinishedInFlight finished = policy::ObserveInFlight(
      &timing, reading->in_flight_tags, reading->in_flight_tasks, reading->taken_at);
  obs->measured_task_seconds = finished.mean_seconds;
  if (finished.mean_seconds) obs->measured_task_count = finished.count;
  obs->finished_by_task = std::move(finished.by_task);
  // For Decide (through ToObservation), and for the decision Observe remembers.
  reading->oldest_in_flight_seconds = policy::OldestInFlightSeconds(timing, reading->taken_at);
  obs->oldest_in_flight_seconds = reading->oldest_in_flight_seconds;
}

BacklogReading ScalerCore::ReadAndPublish(const ProbeTarget& target,
                                          CoalescingProbe::Deadline deadline) {
  try {
    auto session = source_->Open(target, deadline);
    metrics_->redis_reads.Increment();
    BacklogReading reading = session->ReadBacklog(clock_());
    const std::string target_key = target.CacheKey();
    std::string queues_joined;
    for (const auto& q : target.queues) queues_joined += (queues_joined.empty() ? "" : ",") + q;
    const std::string state_key =
        PolicyStateKey(options_.state_prefix, target.key_prefix, queues_joined, target_key);
    policy::Observation obs = ToObservation(reading, target.count_in_flight);
    if (target.read_unacked) MeasureTaskTimes(target_key, &reading, &obs);
    reading.state = session->UpdatePolicyState(
        state_key, options_.state_ttl, [&](const policy::PolicyState& current) {
          return policy::Observe(current, target.learning, obs, reading.taken_at);
        });
    for (const auto& [queue, b] : reading.per_queue) {
      queue_series_.Publish(target.connection, queue, b);
    }
    NoteConnectionHealth(target.connection, nullptr);
    return reading;
  } catch (const RedisError& e) {
    metrics_->redis_errors.Add({{"connection", target.connection}}).Increment();
    const std::string what = policy::Abbreviate(e.what(), 400);  // may name a long key
    NoteConnectionHealth(target.connection, &what);
    throw;
  }
}

Status ScalerCore::Prepare(const ScaledObjectKey& key, const MetadataView& raw,
                           std::shared_ptr<const ScalerPlan>* plan) {
  if (Status s = CheckObjectName(key.name, key.ns); !s.ok()) return s;
  return Plan(raw, plan);
}

Status ScalerCore::Decide(const ScaledObjectKey& key, const ScalerPlan& plan,
                          const CoalescingProbe::Result& result, Evaluation* out) {
  if (!result.ok()) {
    return Status::Unavailable("cannot read the backlog from redis connection '" +
                               plan.target.connection +
                               "': " + policy::Abbreviate(result.error, 400));
  }
  const policy::ScalerMetadata& md = plan.parsed.metadata;
  Evaluation eval;
  eval.reading = result.reading;
  eval.decision = policy::Decide(md, ToObservation(*eval.reading, md.count_in_flight),
                                 eval.reading->state, clock_());
  eval.metric_name = plan.metric_name;
  Record(key, eval);
  *out = std::move(eval);
  return Status::Ok();
}

void ScalerCore::EvaluateAsync(const ScaledObjectKey& key, const MetadataView& raw, Done done) {
  std::shared_ptr<const ScalerPlan> plan;
  if (Status s = Prepare(key, raw, &plan); !s.ok()) {
    done(s, Evaluation{});
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.redis_timeout;
  auto finish = [this, key, plan, done](const CoalescingProbe::Result& result) {
    Evaluation eval;
    Status s = Decide(key, *plan, result, &eval);
    done(s, eval);
  };
  if (auto now = probe_.Get(plan->target, plan->target_key, deadline, finish)) finish(*now);
}

std::optional<Status> ScalerCore::TryEvaluate(const ScaledObjectKey& key, const MetadataView& raw,
                                              Evaluation* out) {
  std::shared_ptr<const ScalerPlan> plan;
  if (Status s = Prepare(key, raw, &plan); !s.ok()) return s;
  auto result = probe_.Get(plan->target, plan->target_key, {});
  if (!result) return std::nullopt;
  return Decide(key, *plan, *result, out);
}

void ScalerCore::Record(const ScaledObjectKey& key, const Evaluation& eval) {
  if (objects_.Record(key, eval.decision) != ObjectStates::Change::kChanged) return;
  LogEvent(spdlog::level::info, "decision",
           {{"scaledObject", key.ToString()},
            {"pending", eval.reading->pending()},
            {"inFlight", eval.reading->in_flight()},
            {"scheduled", eval.reading->scheduled()},
            {"desired", eval.decision.desired_replicas},
            {"active", eval.decision.active},
            {"reason", eval.decision.reason}});
}

}  // namespace warmpool::scaler
