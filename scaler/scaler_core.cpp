#include "scaler/scaler_core.h"

#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "common/fnv1a.h"
#include "common/logging.h"
#include "common/redis_connection.h"
#include "common/redis_errors.h"
#include "common/redis_pool.h"
#include "scaler/backlog_reader.h"
#include "scaler/policy_state_store.h"

namespace warmpool::scaler {
namespace {

constexpr size_t kMaxCachedMetadata = 10000;

// Order-independent: KEDA's map arrives in protobuf's unspecified order.
uint64_t HashMetadata(const MetadataView& raw) {
  uint64_t h = raw.size();
  for (const auto& [k, v] : raw)
    h += Fnv1a64(v, Fnv1a64(k) ^ 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
  return h;
}

}  // namespace

ScalerCore::ScalerCore(ConnectionRegistry* registry, ScalerMetrics* metrics, Options options,
                       WallClock clock)
    : registry_(registry),
      metrics_(metrics),
      options_(options),
      clock_(std::move(clock)),
      probe_([this](const ProbeTarget& target) { return ReadAndPublish(target); },
             CoalescingProbe::Options{options.coalesce_window, options.refresh_ahead}) {}

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
  }
  if (name.size() > 200) name.resize(200);
  return name;
}

MetadataView ViewOf(const std::map<std::string, std::string>& raw) {
  return MetadataView(raw.begin(), raw.end());
}

Status ScalerCore::Plan(const MetadataView& view, std::shared_ptr<const ScalerPlan>* out) {
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
  for (const auto& [k, v] : view) raw.emplace(k, v);
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
  plan->target_key = target.CacheKey();
  plan->metric_name = MetricNameFor(md);

  std::unique_lock lock(metadata_mu_);
  for (const auto& unknown : plan->parsed.unknown_keys) {
    if (warned_keys_.insert(unknown).second) {
      LogEvent(spdlog::level::warn, "unknown_metadata_key",
               {{"key", unknown}, {"hint", "ignored; see README for the keys warmpool reads"}});
    }
  }
  if (plan_count_ >= kMaxCachedMetadata) {
    plans_.clear();
    plan_count_ = 0;
  }
  plans_[hash].push_back(CachedPlan{{raw.begin(), raw.end()}, plan});
  ++plan_count_;
  *out = std::move(plan);
  return Status::Ok();
}

BacklogReading ScalerCore::ReadAndPublish(const ProbeTarget& target) {
  auto guard = target.pool->Acquire();
  metrics_->redis_reads.Increment();
  BacklogReading reading = ReadBacklog(*guard, target, clock_());
  const std::string target_key = target.CacheKey();
  std::string queues_joined;
  for (const auto& q : target.queues) queues_joined += (queues_joined.empty() ? "" : ",") + q;
  const std::string state_key =
      PolicyStateKey(options_.state_prefix, target.key_prefix, queues_joined, target_key);
  policy::Observation obs = ToObservation(reading, target.count_in_flight);
  if (target.read_unacked) {
    std::lock_guard lock(timings_mu_);
    policy::TaskTiming& timing = timings_[target_key];
    // Tags that vanished since the last snapshot are the finished tasks the mean is over.
    const std::set<std::string_view> now_in_flight(reading.in_flight_tags.begin(),
                                                   reading.in_flight_tags.end());
    const auto finished =
        std::count_if(timing.first_seen.begin(), timing.first_seen.end(),
                      [&](const auto& kv) { return !now_in_flight.count(kv.first); });
    obs.measured_task_seconds =
        policy::ObserveInFlightTags(&timing, reading.in_flight_tags, reading.taken_at);
    if (obs.measured_task_seconds) obs.measured_task_count = finished;
    // For Decide (through ToObservation); Observe does not use it.
    reading.oldest_in_flight_seconds = policy::OldestInFlightSeconds(timing, reading.taken_at);
  }
  reading.state = UpdatePolicyState(
      *guard, state_key, options_.state_ttl, [&](const policy::PolicyState& current) {
        return policy::Observe(current, policy::ScalerMetadata{}, obs, reading.taken_at);
      });
  for (const auto& [queue, b] : reading.per_queue) {
    prometheus::Labels labels = {{"connection", target.connection}, {"queue", queue}};
    metrics_->pending.Add(labels).Set(static_cast<double>(b.pending));
    metrics_->in_flight.Add(labels).Set(static_cast<double>(b.in_flight));
    metrics_->scheduled.Add(labels).Set(static_cast<double>(b.scheduled));
  }
  return reading;
}

Status ScalerCore::Evaluate(const ScaledObjectKey& key, const MetadataView& raw, Evaluation* out) {
  std::shared_ptr<const ScalerPlan> plan;
  if (Status s = Plan(raw, &plan); !s.ok()) return s;
  const policy::ScalerMetadata& md = plan->parsed.metadata;
  Evaluation eval;
  try {
    eval.reading = probe_.Get(plan->target, plan->target_key);
  } catch (const RedisError& e) {
    metrics_->redis_errors.Add({{"connection", plan->target.connection}}).Increment();
    return Status::Unavailable("cannot read the backlog from redis connection '" +
                               plan->target.connection + "': " + e.what());
  }
  eval.decision = policy::Decide(md, ToObservation(*eval.reading, md.count_in_flight),
                                 eval.reading->state, clock_());
  eval.metric_name = plan->metric_name;
  Record(key, eval);
  *out = std::move(eval);
  return Status::Ok();
}

void ScalerCore::Record(const ScaledObjectKey& key, const Evaluation& eval) {
  bool changed = false;
  {
    std::lock_guard lock(objects_mu_);
    ObjectState& st = objects_[key.ToString()];
    if (!st.desired) {
      prometheus::Labels labels = {{"namespace", key.ns}, {"scaledobject", key.name}};
      st.desired = &metrics_->desired.Add(labels);
      st.active = &metrics_->active.Add(labels);
    }
    st.desired->Set(static_cast<double>(eval.decision.desired_replicas));
    st.active->Set(eval.decision.active ? 1.0 : 0.0);
    changed = !st.has_decision || !(st.last == eval.decision);
    st.has_decision = true;
    st.last = eval.decision;
  }
  if (!changed) return;
  metrics_->decisions
      .Add({{"namespace", key.ns}, {"scaledobject", key.name}, {"reason", eval.decision.reason}})
      .Increment();
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
