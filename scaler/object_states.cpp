#include "scaler/object_states.h"

#include <cmath>

#include <spdlog/spdlog.h>

#include "common/logging.h"

namespace warmpool::scaler {

ObjectStates::ObjectStates(ScalerMetrics* metrics, Options options, Clock clock)
    : metrics_(metrics), options_(options), clock_(std::move(clock)) {}

size_t ObjectStates::size() const {
  std::lock_guard lock(mu_);
  return states_.size();
}

void ObjectStates::RemoveSeries(const State& st) {
  metrics_->desired.Remove(st.desired);
  metrics_->active.Remove(st.active);
  metrics_->forecast.Remove(st.forecast);
  for (auto& [reason, counter] : st.decisions) metrics_->decisions.Remove(counter);
}

void ObjectStates::SweepLocked(std::chrono::steady_clock::time_point now) {
  std::erase_if(states_, [&](auto& kv) {
    if (now - kv.second.last_seen <= options_.expiry) return false;
    RemoveSeries(kv.second);
    return true;
  });
  last_sweep_ = now;
  if (states_.size() < options_.max_objects) warned_full_ = false;
}

ObjectStates::Change ObjectStates::Record(const ScaledObjectKey& key,
                                          const policy::Decision& decision) {
  std::lock_guard lock(mu_);
  const auto now = clock_();
  if (now - last_sweep_ > options_.expiry / 10) SweepLocked(now);
  const std::string id = key.ToString();
  auto it = states_.find(id);
  const bool is_new = it == states_.end();
  if (is_new) {
    if (states_.size() >= options_.max_objects) SweepLocked(now);
    if (states_.size() >= options_.max_objects) {
      if (!warned_full_) {
        LogEvent(spdlog::level::warn, "scaledobjects_not_tracked",
                 {{"max", options_.max_objects},
                  {"hint", "served, but without metrics or decision logs until others expire"}});
        warned_full_ = true;
      }
      return Change::kUntracked;
    }
    it = states_.emplace(id, State{}).first;
    prometheus::Labels labels = {{"namespace", key.ns}, {"scaledobject", key.name}};
    it->second.desired = &metrics_->desired.Add(labels);
    it->second.active = &metrics_->active.Add(labels);
    it->second.forecast = &metrics_->forecast.Add(labels);
  }
  State& st = it->second;
  st.last_seen = now;
  st.desired->Set(static_cast<double>(decision.desired_replicas));
  st.active->Set(decision.active ? 1.0 : 0.0);
  st.forecast->Set(decision.forecast_replicas < 0
                       ? std::nan("")
                       : static_cast<double>(decision.forecast_replicas));
  const bool changed = is_new || !(st.last == decision);
  st.last = decision;
  if (!changed) return Change::kSame;
  auto& counter = st.decisions[decision.reason];
  if (!counter) {
    counter = &metrics_->decisions.Add(
        {{"namespace", key.ns}, {"scaledobject", key.name}, {"reason", decision.reason}});
  }
  counter->Increment();
  return Change::kChanged;
}

}  // namespace warmpool::scaler
