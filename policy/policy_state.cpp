#include "policy/policy_state.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "policy/warm_policy.h"

namespace warmpool::policy {
namespace {

using Clock = std::chrono::system_clock;
constexpr double kDurationWeight = 0.03;  // EWMA weight per measured task
constexpr double kColdWeight = 0.3;       // EWMA weight of a new cold-start measurement

// Nanoseconds, so a decoded time compares equal to the `now` it came from (Observe idempotence).
int64_t ToNanos(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Clock::time_point FromNanos(int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

double Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2])
               : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
}

Status BadGaps() {
  std::string message = "policy state field \"gaps\" must be a list of [bin, count] pairs, bin 0..";
  message.append(std::to_string(IdleGapHistogram::kBins - 1)).append(", count 0..4294967295");
  return Status::InvalidArgument(std::move(message));
}

Status BadForecast() {
  return Status::InvalidArgument(
      "policy state field \"forecast\" must hold hour >= 0, count >= 0, partial, and rate and "
      "days: both empty or both 48 values >= 0");
}

// The "taskDurations" object EncodeState writes: name -> [seconds, count, lastFinishedNs].
// Throws nlohmann's exception on a mistyped field.
Status DecodeTaskDurations(const nlohmann::json& j, std::map<std::string, TaskDuration>* out) {
  const Status bad = Status::InvalidArgument(
      "policy state field \"taskDurations\" must map at most 32 task names to [seconds >= 0, "
      "count 0..33, lastFinishedNs]");
  if (!j.is_object() || j.size() > kMaxTaskNames) return bad;
  std::map<std::string, TaskDuration> names;
  for (const auto& [name, v] : j.items()) {
    if (!v.is_array() || v.size() != 3) return bad;
    TaskDuration d{v[0].get<double>(), v[1].get<int64_t>(), FromNanos(v[2].get<int64_t>())};
    if (!std::isfinite(d.seconds) || d.seconds < 0 || d.count < 0 || d.count > kDurationPriorTasks)
      return bad;
    names.emplace(name, d);
  }
  *out = std::move(names);
  return Status::Ok();
}

// The "forecast" object EncodeState writes. Throws nlohmann's exception on a mistyped field.
Status DecodeForecast(const nlohmann::json& j, ArrivalForecast* out) {
  ArrivalForecast f;
  f.hour = j.at("hour").get<int64_t>();
  f.count = j.at("count").get<double>();
  f.partial = j.at("partial").get<bool>();
  f.rate = j.at("rate").get<std::vector<double>>();
  f.days = j.at("days").get<std::vector<int64_t>>();
  const bool sized =
      (f.rate.empty() && f.days.empty()) ||
      (f.rate.size() == ArrivalForecast::kBuckets && f.days.size() == ArrivalForecast::kBuckets);
  const auto negative = [](double v) { return !(v >= 0); };
  if (f.hour < 0 || negative(f.count) || !sized ||
      std::any_of(f.rate.begin(), f.rate.end(), negative) ||
      std::any_of(f.days.begin(), f.days.end(), [](int64_t d) { return d < 0; })) {
    return BadForecast();
  }
  *out = std::move(f);
  return Status::Ok();
}

// The "asked" list EncodeState writes: [[sinceNs, replicas], ...], times increasing.
Status DecodeAsked(const nlohmann::json& j, std::vector<AskedReplicas>* out) {
  const Status bad = Status::InvalidArgument("policy state field \"asked\" must be at most " +
                                             std::to_string(kMaxAskedEntries) +
                                             " [sinceNs, replicas >= 0] pairs in time order");
  if (!j.is_array() || j.size() > kMaxAskedEntries) return bad;
  std::vector<AskedReplicas> asked;
  for (const auto& pair : j) {
    if (!pair.is_array() || pair.size() != 2) return bad;
    const AskedReplicas a{FromNanos(pair[0].get<int64_t>()), pair[1].get<int64_t>()};
    if (a.replicas < 0 || (!asked.empty() && a.since <= asked.back().since)) return bad;
    asked.push_back(a);
  }
  *out = std::move(asked);
  return Status::Ok();
}

// Folds the mean v of n measured tasks into a duration estimate. Per-task EWMA: a mean over n
// tasks weighs as n measurements, so the few long tasks that finish last in a burst do not
// outweigh the many that finished together. Until 1/weight tasks are in it is their plain mean (a
// bias-corrected EWMA): one first task from a lognormal tail would otherwise set it alone and
// size a whole burst.
void FoldDurations(double* seconds, int64_t* count, double v, int64_t n_measured) {
  const int64_t n_tasks = std::max<int64_t>(1, n_measured);
  const auto n = static_cast<double>(n_tasks);
  const double ewma = 1 - std::pow(1 - kDurationWeight, n);
  const double mean = n / (static_cast<double>(*count) + n);
  const double w = *seconds == 0 ? 1.0 : std::max(ewma, mean);
  *seconds = (1 - w) * *seconds + w * v;
  *count = std::min(*count + n_tasks, kDurationPriorTasks);
}

}  // namespace

PolicyState Observe(PolicyState s, const ScalerMetadata& spec, const Observation& obs,
                    Clock::time_point now, Decision* decided) {
  if (s.last_observed && now <= *s.last_observed) {
    if (decided) *decided = Decide(spec, obs, s, now);
    return s;
  }
  const int64_t work = obs.pending + obs.in_flight;
  // Before RecordAsked forgets it: the pool KEDA has just scaled to zero.
  if (const auto released = PoolScaledToZero(s.asked, now, HoldSettingsOf(spec));
      released && released->replicas > 0) {
    s.released_at = released->at;
    s.released_replicas = released->replicas;
    s.release_budget_at = SpendRelease(spec, s.release_budget_at, released->at);
  }
  double rate_before = s.arrival_rate;  // decayed to now, without this observation's arrivals
  if (s.last_observed) {
    // Tasks that arrived meanwhile: the rise in work plus the tasks that finished (when measured;
    // otherwise only the rise is seen). Decaying count over tau: rate = sum(e^(-age/tau)) / tau.
    const double dt = std::chrono::duration<double>(now - *s.last_observed).count();
    const int64_t finished = obs.measured_task_seconds ? obs.measured_task_count : 0;
    const auto arrived = static_cast<double>(std::max<int64_t>(0, work - s.last_work + finished));
    rate_before = s.arrival_rate * std::exp(-dt / kArrivalRateTau);
    s.arrival_rate = rate_before + arrived / kArrivalRateTau;
    s.forecast = CountArrivals(std::move(s.forecast), now, arrived);
  } else {
    s.forecast = CountArrivals(std::move(s.forecast), now, 0);
  }
  s.last_work = work;
  s.last_observed = now;
  if (work > 0) {
    if (!s.busy) {
      if (s.busy_since) {
        s.gaps = RecordGap(std::move(s.gaps),
                           std::chrono::duration_cast<std::chrono::seconds>(now - *s.busy_since));
      }
      // A queue's first work: its release budget starts empty (OpeningReleaseBudget). A state
      // saved by an earlier version keeps the budget it has.
      if (!s.busy_since && !s.release_budget_at) {
        s.release_budget_at = OpeningReleaseBudget(spec, now);
      }
      s.prev_busy_since = s.busy_since;
      s.busy_since = now;
      s.arrival_rate_before_busy = rate_before;
      s.period_peak = 0;
    }
    s.busy = true;
    s.idle_since.reset();
    s.period_peak = std::max(s.period_peak, work);
  } else if (s.busy) {
    s.busy = false;
    s.idle_since = now;
    s.recent_peaks.push_back(s.period_peak);
    if (s.recent_peaks.size() > kRecentPeaks) s.recent_peaks.erase(s.recent_peaks.begin());
    s.burst_work = Median(s.recent_peaks);
    s.period_peak = 0;
  }
  if (work > 0 && obs.in_flight == 0) {
    if (!s.waiting_since) s.waiting_since = now;
  } else if (s.waiting_since) {
    if (obs.in_flight > 0) {
      // A burst that landed in the learned pre-warm window and waited less than the pre-warm lead
      // found a pool asked for at the window's opening: its cold start runs from there, not from
      // the burst (else every partly successful pre-warm would shorten the lead it learns from).
      // One that waited a whole lead or more found nothing starting (pre-warm off, as the scaler
      // cannot tell with one state per queue set, or failed): its own wait is the cold start.
      Clock::time_point asked = *s.waiting_since;
      const double wait = std::chrono::duration<double>(now - asked).count();
      if (s.busy_since && s.prev_busy_since && wait < PrewarmLeadSeconds(spec, s)) {
        const std::optional<PrewarmWindow> w = LearnedPrewarmWindow(spec, s);
        const double since =
            std::chrono::duration<double>(*s.busy_since - *s.prev_busy_since).count();
        if (w && since >= w->open && since < w->close) {
          asked = std::min(asked, *s.prev_busy_since + std::chrono::duration_cast<Clock::duration>(
                                                           std::chrono::duration<double>(w->open)));
        }
      }
      const double waited = std::chrono::duration<double>(now - asked).count();
      if (waited <= static_cast<double>(spec.cold_start_seconds) / 2) {
        // Short: a warm pod, or a pod start on a node still up. The latter, when KEDA was at
        // zero with the last pool's nodes lingering, is what a burst meanwhile waits for.
        if (asked == *s.waiting_since && s.released_at && asked >= *s.released_at &&
            LingeringReplicas(spec, s, asked) > 0) {
          s.warm_node_start_seconds =
              s.warm_node_start_seconds == 0
                  ? waited
                  : (1 - kColdWeight) * s.warm_node_start_seconds + kColdWeight * waited;
        }
      } else {
        s.cold_start_seconds =
            s.cold_start_seconds == 0
                ? waited
                : (1 - kColdWeight) * s.cold_start_seconds + kColdWeight * waited;
      }
    }
    s.waiting_since.reset();
  }
  if (obs.measured_task_seconds && *obs.measured_task_seconds > 0) {
    FoldDurations(&s.task_seconds, &s.task_count, *obs.measured_task_seconds,
                  obs.measured_task_count);
  }
  for (const FinishedTasks& f : obs.finished_by_task) {
    if (f.task.empty() || f.count <= 0 || !(f.seconds_sum > 0)) continue;
    auto it = s.task_durations.find(f.task);
    if (it == s.task_durations.end()) {
      if (s.task_durations.size() >= kMaxTaskNames) {
        // Bounded: a queue that names every task differently must not grow the state.
        s.task_durations.erase(std::min_element(
            s.task_durations.begin(), s.task_durations.end(), [](const auto& a, const auto& b) {
              return a.second.last_finished < b.second.last_finished;
            }));
      }
      it = s.task_durations.emplace(f.task, TaskDuration{}).first;
    }
    TaskDuration& d = it->second;
    FoldDurations(&d.seconds, &d.count, f.seconds_sum / static_cast<double>(f.count), f.count);
    d.last_finished = now;
  }
  const Decision asked = Decide(spec, obs, s, now);
  s.asked = RecordAsked(std::move(s.asked), asked.active ? asked.desired_replicas : 0, now,
                        HoldSettingsOf(spec));
  if (decided) *decided = asked;
  return s;
}

std::string EncodeState(const PolicyState& state) {
  nlohmann::json j;
  j["v"] = 1;
  if (state.last_observed) j["lastObservedNs"] = ToNanos(*state.last_observed);
  j["busy"] = state.busy;
  if (state.idle_since) j["idleSinceNs"] = ToNanos(*state.idle_since);
  if (state.busy_since) j["busySinceNs"] = ToNanos(*state.busy_since);
  if (state.prev_busy_since) j["prevBusySinceNs"] = ToNanos(*state.prev_busy_since);
  nlohmann::json gaps = nlohmann::json::array();
  for (size_t i = 0; i < state.gaps.bins.size(); ++i) {
    if (state.gaps.bins[i] > 0) gaps.push_back({i, state.gaps.bins[i]});
  }
  j["gaps"] = std::move(gaps);
  j["taskSeconds"] = state.task_seconds;
  j["taskCount"] = state.task_count;
  if (!state.task_durations.empty()) {
    nlohmann::json names = nlohmann::json::object();
    for (const auto& [name, d] : state.task_durations) {
      names[name] = {d.seconds, d.count, ToNanos(d.last_finished)};
    }
    j["taskDurations"] = std::move(names);
  }
  j["burstWork"] = state.burst_work;
  j["periodPeak"] = state.period_peak;
  j["recentPeaks"] = state.recent_peaks;
  if (state.waiting_since) j["waitingSinceNs"] = ToNanos(*state.waiting_since);
  j["coldStartSeconds"] = state.cold_start_seconds;
  j["arrivalRate"] = state.arrival_rate;
  j["lastWork"] = state.last_work;
  j["arrivalRateBeforeBusy"] = state.arrival_rate_before_busy;
  if (state.forecast.hour >= 0) {
    const ArrivalForecast& f = state.forecast;
    j["forecast"] = {{"hour", f.hour},
                     {"count", f.count},
                     {"partial", f.partial},
                     {"rate", f.rate},
                     {"days", f.days}};
  }
  if (!state.asked.empty()) {
    nlohmann::json asked = nlohmann::json::array();
    for (const AskedReplicas& a : state.asked) asked.push_back({ToNanos(a.since), a.replicas});
    j["asked"] = std::move(asked);
  }
  if (state.released_at) j["releasedAtNs"] = ToNanos(*state.released_at);
  if (state.released_replicas > 0) j["releasedReplicas"] = state.released_replicas;
  if (state.warm_node_start_seconds > 0) j["warmNodeStartSeconds"] = state.warm_node_start_seconds;
  if (state.release_budget_at) j["releaseBudgetAtNs"] = ToNanos(*state.release_budget_at);
  return j.dump();
}

Status DecodeState(std::string_view text, PolicyState* out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument("policy state is not valid JSON");
  if (!j.is_object() || !j.contains("v") || j["v"] != 1) {
    return Status::InvalidArgument(
        "policy state is not a version 1 warmpool state (a JSON object with \"v\": 1)");
  }
  try {
    PolicyState s;
    if (j.contains("lastObservedNs"))
      s.last_observed = FromNanos(j.at("lastObservedNs").get<int64_t>());
    s.busy = j.at("busy").get<bool>();
    if (j.contains("idleSinceNs")) s.idle_since = FromNanos(j.at("idleSinceNs").get<int64_t>());
    if (j.contains("busySinceNs")) s.busy_since = FromNanos(j.at("busySinceNs").get<int64_t>());
    if (j.contains("prevBusySinceNs")) {
      s.prev_busy_since = FromNanos(j.at("prevBusySinceNs").get<int64_t>());
    }
    const auto& gaps = j.at("gaps");
    if (!gaps.is_array()) return BadGaps();
    for (const auto& pair : gaps) {
      if (!pair.is_array() || pair.size() != 2) return BadGaps();
      const auto bin = pair[0].get<int64_t>();
      const auto count = pair[1].get<int64_t>();
      if (bin < 0 || bin >= IdleGapHistogram::kBins || count < 0 || count > UINT32_MAX) {
        return BadGaps();
      }
      if (s.gaps.bins.empty()) s.gaps.bins.assign(IdleGapHistogram::kBins, 0);
      s.gaps.bins[bin] = static_cast<uint32_t>(count);
    }
    s.task_seconds = j.at("taskSeconds").get<double>();
    // A state written before taskCount existed holds a settled EWMA.
    if (j.contains("taskCount")) {
      s.task_count = j.at("taskCount").get<int64_t>();
    } else if (s.task_seconds > 0) {
      s.task_count = kDurationPriorTasks;
    }
    if (j.contains("taskDurations")) {
      if (Status st = DecodeTaskDurations(j.at("taskDurations"), &s.task_durations); !st.ok())
        return st;
    }
    s.burst_work = j.at("burstWork").get<double>();
    s.period_peak = j.at("periodPeak").get<int64_t>();
    if (j.contains("recentPeaks")) {
      s.recent_peaks = j.at("recentPeaks").get<std::vector<int64_t>>();
      if (s.recent_peaks.size() > kRecentPeaks ||
          std::any_of(s.recent_peaks.begin(), s.recent_peaks.end(),
                      [](int64_t p) { return p < 0; })) {
        return Status::InvalidArgument(
            "policy state field \"recentPeaks\" must hold at most 5 peaks >= 0");
      }
    } else if (s.burst_work > 0) {
      // A state written before recentPeaks existed: its EWMA stands for the recent peaks.
      s.recent_peaks = {static_cast<int64_t>(std::llround(s.burst_work))};
    }
    if (j.contains("waitingSinceNs")) {
      s.waiting_since = FromNanos(j.at("waitingSinceNs").get<int64_t>());
    }
    if (j.contains("coldStartSeconds"))
      s.cold_start_seconds = j.at("coldStartSeconds").get<double>();
    if (j.contains("arrivalRate")) s.arrival_rate = j.at("arrivalRate").get<double>();
    if (j.contains("lastWork")) s.last_work = j.at("lastWork").get<int64_t>();
    if (j.contains("arrivalRateBeforeBusy")) {
      s.arrival_rate_before_busy = j.at("arrivalRateBeforeBusy").get<double>();
    }
    if (j.contains("forecast")) {
      if (Status st = DecodeForecast(j.at("forecast"), &s.forecast); !st.ok()) return st;
    }
    if (j.contains("asked")) {
      if (Status st = DecodeAsked(j.at("asked"), &s.asked); !st.ok()) return st;
    }
    if (j.contains("releasedAtNs")) s.released_at = FromNanos(j.at("releasedAtNs").get<int64_t>());
    if (j.contains("releasedReplicas")) {
      s.released_replicas = j.at("releasedReplicas").get<int64_t>();
    }
    if (j.contains("warmNodeStartSeconds")) {
      s.warm_node_start_seconds = j.at("warmNodeStartSeconds").get<double>();
    }
    if (j.contains("releaseBudgetAtNs")) {
      s.release_budget_at = FromNanos(j.at("releaseBudgetAtNs").get<int64_t>());
    }
    if (s.task_seconds < 0 || s.task_count < 0 || s.burst_work < 0 || s.period_peak < 0 ||
        s.cold_start_seconds < 0 || s.arrival_rate < 0 || s.last_work < 0 ||
        s.arrival_rate_before_busy < 0 || s.released_replicas < 0 ||
        s.warm_node_start_seconds < 0) {
      return Status::InvalidArgument(
          "policy state has a negative duration, count or rate (they are all >= 0)");
    }
    *out = std::move(s);
    return Status::Ok();
  } catch (const nlohmann::json::exception& e) {
    // A required field missing or of the wrong type; nlohmann's text names the key or type.
    std::string message = "policy state has a missing or mistyped field: ";
    message.append(e.what());
    return Status::InvalidArgument(std::move(message));
  }
}

}  // namespace warmpool::policy
