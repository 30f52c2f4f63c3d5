#include "policy/warm_policy.h"

#include <algorithm>
#include <cmath>

#include "policy/warm_windows.h"

namespace warmpool::policy {
namespace {

using Clock = std::chrono::system_clock;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Replicas the drain target asks for, or -1 when drainSeconds is off or no duration is known.
int64_t DrainReplicas(const ScalerMetadata& spec, int64_t pending, int64_t in_flight,
                      const PolicyState& state) {
  const double s = state.task_seconds > 0 ? state.task_seconds : spec.task_seconds.value_or(0);
  if (!spec.drain_seconds || s <= 0) return -1;
  // Work left: running tasks are half done on average; all of it within D, but never fewer slots
  // than the running tasks hold.
  const double left = static_cast<double>(in_flight) * s / 2 + static_cast<double>(pending) * s;
  const double slots =
      std::max(static_cast<double>(in_flight), left / static_cast<double>(*spec.drain_seconds));
  return static_cast<int64_t>(
      std::ceil(slots / static_cast<double>(spec.tasks_per_replica) - 1e-9));
}

}  // namespace

bool operator==(const Decision& a, const Decision& b) {
  return a.active == b.active && a.desired_replicas == b.desired_replicas && a.reason == b.reason;
}

double BreakEvenSeconds(const ScalerMetadata& spec, const PolicyState& state) {
  double ratio = 0;
  if (spec.wait_cost_per_hour > 0 && spec.replica_cost_per_hour > 0) {
    ratio = spec.wait_cost_per_hour / spec.replica_cost_per_hour * std::max(1.0, state.burst_work);
  }
  return static_cast<double>(spec.cold_start_seconds) * (1 + ratio);
}

double KeepAliveSeconds(const ScalerMetadata& spec, const PolicyState& state) {
  if (spec.keep_alive_seconds) return static_cast<double>(*spec.keep_alive_seconds);
  const double b = BreakEvenSeconds(spec, state);
  if (spec.prewarm_histogram) {
    const GapSummary g = SummariseGaps(state.gaps);
    // Gaps run start to start; the last busy period already used `busy` of the next gap.
    const double busy = state.idle_since && state.busy_since
                            ? std::max(0.0, Seconds(*state.idle_since - *state.busy_since))
                            : 0.0;
    const auto at = [](double s) { return std::chrono::seconds(static_cast<int64_t>(s)); };
    const double before = GapShareWithin(state.gaps, at(busy));
    const double soon =
        before < 1 ? (GapShareWithin(state.gaps, at(busy + b)) - before) / (1 - before) : 0;
    if (g.representative && soon >= 0.5) {
      return std::min(b, std::max(0.0, static_cast<double>(g.tail.count()) - busy));
    }
  }
  return std::max(0.0, b - static_cast<double>(spec.node_unneeded_seconds));
}

double PrewarmLeadSeconds(const ScalerMetadata& spec, const PolicyState& state) {
  return std::max(static_cast<double>(spec.cold_start_seconds), state.cold_start_seconds);
}

Decision Decide(const ScalerMetadata& spec, const Observation& obs, const PolicyState& state,
                Clock::time_point now) {
  const int64_t tpr = spec.tasks_per_replica;
  const int64_t work = obs.pending + obs.in_flight;
  const int64_t for_work = CeilDiv(work, tpr);
  const int64_t in_flight_need = CeilDiv(obs.in_flight, tpr);
  const int64_t window_floor = WarmFloorAt(spec.warm_windows, now);
  const int64_t floor = std::max(spec.min_warm_replicas, window_floor);

  Decision d;
  int64_t want = 0;
  auto apply = [&](int64_t replicas, std::string_view reason) {
    if (!d.active || replicas > want) {
      want = std::max(want, replicas);
      d.reason = std::string(reason);
    }
    d.active = true;
  };

  if (work > spec.activation_backlog) {
    int64_t sized = for_work;
    std::string_view reason = obs.pending == 0 ? kReasonInFlight : kReasonBacklog;
    if (const int64_t drain = DrainReplicas(spec, obs.pending, obs.in_flight, state);
        drain >= 0 && obs.pending > 0) {
      sized = std::clamp<int64_t>(drain, std::max<int64_t>(1, in_flight_need), for_work);
      reason = kReasonDrain;
    }
    if (sized > spec.max_replicas && obs.pending > 0) reason = kReasonCapped;
    apply(sized, reason);
  } else if (obs.in_flight > 0) {
    apply(in_flight_need, kReasonInFlight);
  }
  if (floor > 0) {
    const bool window = window_floor >= spec.min_warm_replicas;
    if (!d.active || floor > want) apply(floor, window ? kReasonWarmWindow : kReasonWarmFloor);
  }
  if (!d.active && spec.eta_prewarm && obs.earliest_eta &&
      Seconds(*obs.earliest_eta - now) <= PrewarmLeadSeconds(spec, state)) {
    apply(1, kReasonEtaPrewarm);
  }
  if (!d.active && state.idle_since) {
    const double idle = Seconds(now - *state.idle_since);
    if (idle < KeepAliveSeconds(spec, state)) {
      apply(1, kReasonKeepAlive);
    } else if (spec.prewarm_histogram) {
      const GapSummary g = SummariseGaps(state.gaps);
      const double head = static_cast<double>(g.head.count());
      const double tail = static_cast<double>(g.tail.count());
      const bool sharp = g.representative && !g.tail_out_of_range &&
                         tail - head <= std::max(BreakEvenSeconds(spec, state), head / 2);
      // The histogram runs start to start: measure from the last busy period's start.
      const double since = state.busy_since ? Seconds(now - *state.busy_since) : idle;
      if (sharp && since >= head - PrewarmLeadSeconds(spec, state) && since < tail) {
        const int64_t burst = static_cast<int64_t>(std::ceil(state.burst_work - 1e-9));
        int64_t replicas = CeilDiv(burst, tpr);
        if (const int64_t drain = DrainReplicas(spec, burst, 0, state); drain >= 0) {
          replicas = std::min(replicas, drain);
        }
        apply(std::max<int64_t>(1, replicas), kReasonPrewarm);
      }
    }
  }

  if (d.active) {
    d.desired_replicas = std::max(std::min(want, spec.max_replicas), in_flight_need);
  } else {
    d.desired_replicas = std::min(for_work, spec.max_replicas);
    d.reason = std::string(work > 0 ? kReasonBelowActivation : kReasonIdle);
  }
  return d;
}

}  // namespace warmpool::policy
