#include "policy/warm_policy.h"

#include <algorithm>
#include <cmath>

#include "policy/arrival_forecast.h"
#include "policy/keep_alive_cost.h"
#include "policy/warm_windows.h"

namespace warmpool::policy {
namespace {

using Clock = std::chrono::system_clock;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Until a duration is known, DrainSlots assumes each task takes drainSeconds / 5 (one slot per 5
// pending tasks: what KEDA's redis scaler asks with the listLength 5 its users set), or as long
// as the longest-running task has run so far, whichever is longer. One slot per task (v1) booted
// a GPU node per task of a first burst of short tasks; long ones raise the assumption as they
// run, before the first finishes. warmpool-sim: W4 saving 43 -> 48 % median (docs/SCALING.md).
constexpr double kAssumedTasksPerSlot = 5;

int64_t SlotsToReplicas(double slots, const ScalerMetadata& spec) {
  return static_cast<int64_t>(
      std::ceil(slots / static_cast<double>(spec.tasks_per_replica) - 1e-9));
}

// Replicas the cold-start-aware drain target asks for, or -1 when drainSeconds is off. See
// DrainSlots in warm_policy.h.
int64_t DrainReplicas(const ScalerMetadata& spec, int64_t pending, int64_t in_flight,
                      const PolicyState& state, Clock::time_point now, double warm_slots,
                      double oldest_in_flight_seconds,
                      const std::map<std::string, int64_t>& pending_sample) {
  const double slots = DrainSlots(spec, pending, in_flight, state, now, warm_slots,
                                  oldest_in_flight_seconds, pending_sample);
  return slots < 0 ? -1 : SlotsToReplicas(slots, spec);
}

bool InPrewarmWindow(const ScalerMetadata& spec, const PolicyState& state, double since) {
  const std::optional<PrewarmWindow> w = LearnedPrewarmWindow(spec, state);
  return w && since >= w->open && since < w->close;
}

// The replicas the learned pre-warm asks for: the expected burst, PrewarmSlots when a duration is
// known; at least 1.
int64_t PrewarmReplicas(const ScalerMetadata& spec, const PolicyState& state) {
  const int64_t burst = static_cast<int64_t>(std::ceil(state.burst_work - 1e-9));
  int64_t replicas = CeilDiv(burst, spec.tasks_per_replica);
  if (const double slots = PrewarmSlots(spec, state); slots >= 0) {
    replicas = std::min(replicas, SlotsToReplicas(slots, spec));
  }
  return std::max<int64_t>(1, replicas);
}

// A measured duration over `count` tasks, blended with `taskSeconds` when set, which weighs as
// kDurationPriorTasks measured tasks; 0 = unknown.
double BlendWithStated(const ScalerMetadata& spec, double seconds, int64_t task_count) {
  const double measured = seconds > 0 ? seconds : 0;
  if (!spec.task_seconds || *spec.task_seconds <= 0) return measured;
  // `taskSeconds` weighs as kDurationPriorTasks measured tasks, so one long first task barely
  // moves a stated duration. (Applied here, not in Observe: the scaler shares one state per
  // queue set between ScaledObjects that may state different durations.)
  // A measured estimate without a count (built directly; DecodeState gives older saved states
  // the full count) is a settled one.
  const int64_t count = task_count > 0 ? task_count : kDurationPriorTasks;
  const double n = measured > 0 ? static_cast<double>(std::min(count, kDurationPriorTasks)) : 0;
  const auto k = static_cast<double>(kDurationPriorTasks);
  return ((k - n) * *spec.task_seconds + n * measured) / k;
}

// The pre-warm window opens `to_open` seconds from now, before KEDA would have scaled the pool it
// still has to zero: going inactive now would drop that pool only to start a pod again at the
// opening (a restart and two reversals), so one replica stays until then.
bool BridgesToPrewarm(const ScalerMetadata& spec, const PolicyState& state, Clock::time_point now,
                      double to_open) {
  const HoldSettings hold = HoldSettingsOf(spec);
  return to_open > 0 && to_open <= Seconds(hold.to_zero) &&
         HeldReplicas(state.asked, now, hold) > 0;
}

}  // namespace

double DrainSlots(const ScalerMetadata& spec, int64_t pending, int64_t in_flight,
                  const PolicyState& state, Clock::time_point now, double warm_slots,
                  double oldest_in_flight_seconds,
                  const std::map<std::string, int64_t>& pending_sample) {
  if (!spec.drain_seconds) return -1;
  const double d = static_cast<double>(*spec.drain_seconds);
  const double s = PendingTaskSeconds(spec, state, pending_sample,
                                      std::max(d / kAssumedTasksPerSlot, oldest_in_flight_seconds));
  const double c = PrewarmLeadSeconds(spec, state);
  double r = std::max(static_cast<double>(in_flight), warm_slots);
  // A cold start after the backlog appeared, the replica asked for then (Decide asks for one from
  // the first observation with work, and KEDA activates from zero at once) is due any moment: it
  // counts as running, so the work that queued while it booted buys no replicas it will clear
  // (on the real Azure function azf-f952e8b0, 15 tasks of 30 ms that queued during the first cold
  // start bought 3).
  const double age = state.busy_since ? Seconds(now - *state.busy_since) : 0;
  if (r == 0 && state.busy_since && age >= c) r = static_cast<double>(spec.tasks_per_replica);
  // Slots' worth of work arriving per second. Within the first c + d of a busy period the
  // arrivals seen are the burst itself (already in the backlog): use the rate from before it.
  const bool young = state.busy_since && age < c + d;
  const double a = (young ? state.arrival_rate_before_busy : state.arrival_rate) * s;
  // Work waiting to start. (The running tasks' remainder delays each running slot by ~s/2, but
  // each slot also starts one more task just before the deadline: the two roughly cancel, and
  // counting the remainder would buy replicas under steady load whenever one task waits.)
  double w = static_cast<double>(pending) * s;
  // A cold burst (nothing running or warm) pays the cold start anyway, and what arrives before
  // the first replica is ready queues up: so the replicas for its tail start booting with the
  // first ones, size it for the typical burst (state.burst_work) when more than is visible yet,
  // but for at most twice what is visible: a burst seen so far is as likely to be in its first
  // half as in its second (Gott's delta-t argument), and bursts differ (the real function
  // azf-b7cab8f7: one of 3,416 calls, then two of 215 that each bought the first one's 75
  // replicas). warmpool-sim, 5 seeds: W2 107.4 -> 96.1 GPU-h at p95 598 -> 605 s, azf-b7cab8f7
  // 58.9 -> 37.9 at 408 -> 422 s; the other workloads within 0.5 % (docs/SCALING.md).
  const bool cold = r == 0 && state.busy_since && age < c;
  if (cold) w = std::max(w, std::min(state.burst_work * s, 2 * w));
  // Slots asked for now arrive a cold start c later; until then only the r running slots work
  // while work keeps arriving at a. New slots x drain what is left at c within d after:
  //   w + (a - r) c + (a - r - x) d <= 0.
  // A new slot is only worth a node's cold start and linger when it has at least d of that work:
  // whole slots only (from idle, the caller still asks for at least one). When the burst already
  // runs on the pool pre-warmed for it, its tasks skipped the cold start, and a node booted now
  // that gets less than a cold start's worth of work bills its boot and the autoscaler's linger
  // for a tail the pool would finish soon after (W4: extra nodes often never ran a task):
  // such a slot needs at least c of work. warmpool-sim W4, 10 seeds: GPU-h / oracle 1.20-1.38 ->
  // 1.10-1.23, p95 wait still within 60 s of KEDA's (docs/SCALING.md).
  const bool on_warm_pool = warm_slots > 0 && in_flight > 0;
  const double work_per_new_slot = on_warm_pool ? std::max(d, c) : d;
  double need = w - std::max(0.0, r - a) * (c + d);
  // The nodes of the pool KEDA last scaled to zero that are still up take new slots after a pod
  // start p instead of a cold start: each drains c + d - p by the same deadline, and its node is
  // billed for the autoscaler's linger anyway, so they come first, as many as the work needs.
  double fast = 0;
  const double p = state.warm_node_start_seconds;
  if (need > 0 && p > 0 && p < c) {
    const double lingering =
        static_cast<double>(LingeringReplicas(spec, state, now) * spec.tasks_per_replica);
    fast = std::min(std::max(0.0, lingering - r), std::ceil(need / (c + d - p) - 1e-9));
    need -= fast * (c + d - p);
  }
  const double x = fast > 0 ? fast + std::max(0.0, std::floor(need / work_per_new_slot + 1e-9))
                            : std::floor(need / work_per_new_slot + 1e-9);
  return std::max(r, r + x);
}

int64_t LingeringReplicas(const ScalerMetadata& spec, const PolicyState& state,
                          Clock::time_point t) {
  if (!state.released_at || state.released_replicas <= 0 || t < *state.released_at) return 0;
  const double since = Seconds(t - *state.released_at);
  return since + static_cast<double>(kKedaPollSlackSeconds) <
                 static_cast<double>(spec.node_unneeded_seconds)
             ? state.released_replicas
             : 0;
}

double PrewarmSlots(const ScalerMetadata& spec, const PolicyState& state) {
  const double s = TaskSecondsEstimate(spec, state);
  if (!spec.drain_seconds || s <= 0) return -1;
  const double horizon = PrewarmLeadSeconds(spec, state) + static_cast<double>(*spec.drain_seconds);
  // The fewest warm slots r on which DrainSlots asks for nothing new when the expected burst w
  // lands (between bursts nothing else arrives): floor((w - r (c + d)) / d) <= 0, i.e.
  // r > (w - d) / (c + d).
  const double w = state.burst_work * s;
  return std::max(1.0, std::floor((w - static_cast<double>(*spec.drain_seconds)) / horizon) + 1);
}

double TaskSecondsEstimate(const ScalerMetadata& spec, const PolicyState& state) {
  return BlendWithStated(spec, state.task_seconds, state.task_count);
}

double PendingTaskSeconds(const ScalerMetadata& spec, const PolicyState& state,
                          const std::map<std::string, int64_t>& pending_sample, double assumed) {
  double sum = 0;
  int64_t n = 0;
  for (const auto& [name, count] : pending_sample) {
    if (count <= 0) continue;
    const auto it = state.task_durations.find(name);
    const TaskDuration d = it == state.task_durations.end() ? TaskDuration{} : it->second;
    double s = BlendWithStated(spec, d.seconds, d.count);  // unmeasured: `taskSeconds`, or 0
    if (s <= 0) s = assumed;
    sum += s * static_cast<double>(count);
    n += count;
  }
  if (n > 0) return sum / static_cast<double>(n);
  const double all = TaskSecondsEstimate(spec, state);
  return all > 0 ? all : assumed;
}

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

namespace {

// The share of the gaps longer than `elapsed` (seconds) that end within `within` more: how
// likely the next busy period starts that soon, given none has started yet.
double NextBurstWithin(const IdleGapHistogram& gaps, double elapsed, double within) {
  const auto at = [](double s) { return std::chrono::seconds(static_cast<int64_t>(s)); };
  const double before = GapShareWithin(gaps, at(elapsed));
  return before < 1 ? (GapShareWithin(gaps, at(elapsed + within)) - before) / (1 - before) : 0;
}

// The release budget's interval T = 3600 / releasesPerHour, as the clock's duration.
Clock::duration ReleaseInterval(double releases_per_hour) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(3600.0 / releases_per_hour));
}

}  // namespace

double KeepAliveSeconds(const ScalerMetadata& spec, const PolicyState& state) {
  if (spec.keep_alive_seconds) return static_cast<double>(*spec.keep_alive_seconds);
  const double b = BreakEvenSeconds(spec, state);
  if (spec.prewarm_histogram) {
    const GapSummary g = SummariseGaps(state.gaps);
    if (g.representative) {
      // Gaps run start to start; the last busy period already used `busy` of the next gap.
      const double busy = state.idle_since && state.busy_since
                              ? std::max(0.0, Seconds(*state.idle_since - *state.busy_since))
                              : 0.0;
      KeepAliveCosts costs;
      costs.elapsed = busy;
      costs.to_zero = Seconds(HoldSettingsOf(spec).to_zero);
      costs.linger = static_cast<double>(spec.node_unneeded_seconds);
      costs.cold_start = b;
      // Until a pod start on a lingering node has been measured, price it as a cold start.
      costs.pod_start =
          state.warm_node_start_seconds > 0 && spec.cold_start_seconds > 0
              ? state.warm_node_start_seconds * b / static_cast<double>(spec.cold_start_seconds)
              : b;
      costs.cap = std::max(0.0, static_cast<double>(g.tail.count()) - busy);
      return ExpectedCostKeepAlive(state.gaps, costs);
    }
  }
  // Nothing learned yet: the deterministic ski rental, less the linger a come-back gets cheaply.
  return std::max(0.0, b - static_cast<double>(spec.node_unneeded_seconds));
}

HoldSettings HoldSettingsOf(const ScalerMetadata& spec) {
  return {std::chrono::seconds(spec.scale_down_window_seconds),
          std::chrono::seconds(spec.cooldown_seconds + kKedaPollSlackSeconds)};
}

bool KeepsAlive(const ScalerMetadata& spec, const PolicyState& state, Clock::time_point now) {
  if (!state.idle_since) return false;
  const double idle = Seconds(now - *state.idle_since);
  if (spec.keep_alive_seconds) return idle < KeepAliveSeconds(spec, state);
  const int64_t held_now = HeldReplicas(state.asked, now, HoldSettingsOf(spec));
  // KEDA has scaled to zero since the policy last asked for a pod: nothing is left to keep warm,
  // and asking now would start a cold pod.
  if (held_now == 0 && !state.asked.empty()) return false;
  const int64_t held = std::max<int64_t>(1, held_now);
  const auto needed =
      static_cast<double>(std::clamp<int64_t>(PrewarmReplicas(spec, state), 1, held));
  const double spent = idle * static_cast<double>(held);
  return spent < KeepAliveSeconds(spec, state) * needed;
}

std::optional<Clock::time_point> SpendRelease(const ScalerMetadata& spec,
                                              std::optional<Clock::time_point> budget_at,
                                              Clock::time_point at) {
  if (!spec.releases_per_hour) return budget_at;
  return std::max(budget_at.value_or(at), at) + ReleaseInterval(*spec.releases_per_hour);
}

std::optional<Clock::time_point> OpeningReleaseBudget(const ScalerMetadata& spec,
                                                      Clock::time_point first_work) {
  if (!spec.releases_per_hour) return std::nullopt;
  return first_work + ReleaseInterval(*spec.releases_per_hour);
}

bool HoldsForReleaseBudget(const ScalerMetadata& spec, const PolicyState& state,
                           Clock::time_point now) {
  if (!spec.releases_per_hour || !state.release_budget_at) return false;
  const HoldSettings hold = HoldSettingsOf(spec);
  const int64_t held = HeldReplicas(state.asked, now, hold);
  // KEDA is at zero (or nothing was asked): nothing to keep. More than one held: the HPA keeps
  // a burst's pool for its window, a cost per hour far above the churn a release adds.
  if (held != 1) return false;
  const double wait = Seconds(*state.release_budget_at - (now + hold.to_zero));
  if (wait <= 0) return false;
  // Holding saves a release only if work comes back before the budget allows one; otherwise the
  // pool is released then anyway and the hold was paid for nothing. So hold while the learned
  // gaps leave such a come-back possible (none learned yet: no hold; work overdue by every gap
  // learned: release). The budget is a bound, not a price: a come-back after the node is gone
  // still makes a release and its come-back two reversals. It binds from the first gap, not
  // from the three the pre-warm needs: a queue's first calls are where it churns while the
  // policy learns (the real function 5eb5252827cb, seed 1: released twice within 4 minutes).
  if (!spec.prewarm_histogram || !state.busy_since || GapSamples(state.gaps) == 0) return false;
  return NextBurstWithin(state.gaps, Seconds(now - *state.busy_since), wait) > 0;
}

double PrewarmLeadSeconds(const ScalerMetadata& spec, const PolicyState& state) {
  return std::max(static_cast<double>(spec.cold_start_seconds), state.cold_start_seconds);
}

std::optional<PrewarmWindow> LearnedPrewarmWindow(const ScalerMetadata& spec,
                                                  const PolicyState& state) {
  if (!spec.prewarm_histogram) return std::nullopt;
  // Only the gaps longer than the lead: a pre-warm cannot act on a shorter one, and its own
  // success makes them. A burst it served on a warm pod ends before the burst's stragglers
  // arrive, which then start a busy period of their own a minute or two later; counted, those
  // gaps made the 5th percentile a minute and turned the pre-warm off after its first success
  // (Azure Functions 2019, 9d414c3ea14e: a pair of calls every hour).
  const auto lead = std::chrono::seconds(static_cast<int64_t>(PrewarmLeadSeconds(spec, state)));
  const GapSummary g = SummariseGaps(state.gaps, lead);
  const double head = static_cast<double>(g.head.count());
  const double tail = static_cast<double>(g.tail.count());
  const bool sharp = g.representative && !g.tail_out_of_range &&
                     tail - head <= std::max(BreakEvenSeconds(spec, state), head / 2);
  if (!sharp) return std::nullopt;
  return PrewarmWindow{head - PrewarmLeadSeconds(spec, state), tail};
}

int64_t EtaPrewarmReplicas(const ScalerMetadata& spec, const Observation& obs,
                           const PolicyState& state, Clock::time_point now) {
  const double lead = PrewarmLeadSeconds(spec, state);
  int64_t due = 0;
  for (const Clock::time_point eta : obs.upcoming_etas) {
    if (Seconds(eta - now) > lead) break;  // ascending
    ++due;
  }
  // A reading without the etas themselves (earliest only) counts one.
  if (obs.upcoming_etas.empty() && obs.earliest_eta && Seconds(*obs.earliest_eta - now) <= lead) {
    due = 1;
  }
  if (due == 0) return 0;
  if (!spec.drain_seconds) return std::min(CeilDiv(due, spec.tasks_per_replica), spec.max_replicas);
  double seconds = TaskSecondsEstimate(spec, state);
  if (seconds <= 0) seconds = static_cast<double>(*spec.drain_seconds) / kAssumedTasksPerSlot;
  // Warm when they come due, they have the whole objective to drain in.
  const double wait = static_cast<double>(std::max<int64_t>(1, spec.target_wait_seconds));
  const auto slots = static_cast<int64_t>(std::ceil(static_cast<double>(due) * seconds / wait));
  return std::clamp<int64_t>(CeilDiv(slots, spec.tasks_per_replica), 1, spec.max_replicas);
}

int64_t PendingNotDue(const Observation& obs) {
  if (obs.pending <= 0 || obs.pending_sampled <= 0 || obs.pending_sample_not_due <= 0) return 0;
  if (obs.pending_sample_not_due >= obs.pending_sampled) return obs.pending;
  const double share =
      static_cast<double>(obs.pending_sample_not_due) / static_cast<double>(obs.pending_sampled);
  return std::min<int64_t>(obs.pending, std::llround(share * static_cast<double>(obs.pending)));
}

Decision Decide(const ScalerMetadata& spec, const Observation& seen, const PolicyState& state,
                Clock::time_point now) {
  // ETA tasks in the list are no work until due: one worker takes them all, no slot used.
  const int64_t not_due = PendingNotDue(seen);
  Observation obs = seen;
  obs.pending -= not_due;
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
    // A burst that landed in the pre-warm window finds that pool warm or starting: its slots
    // count as running ones (they arrive sooner than a cold start from now).
    int64_t warm = 0;
    if (state.busy_since && state.prev_busy_since &&
        InPrewarmWindow(spec, state, Seconds(*state.busy_since - *state.prev_busy_since))) {
      warm = PrewarmReplicas(spec, state);
    }
    const auto warm_slots = static_cast<double>(warm * tpr);
    if (const int64_t drain =
            DrainReplicas(spec, obs.pending, obs.in_flight, state, now, warm_slots,
                          obs.oldest_in_flight_seconds, obs.pending_sample);
        drain >= 0 && obs.pending > 0) {
      sized = std::clamp<int64_t>(drain, std::max<int64_t>(1, in_flight_need), for_work);
      reason = kReasonDrain;
    }
    if (obs.pending > 0) sized = std::max(sized, warm);  // keep the pool this burst was warmed for
    if (sized > spec.max_replicas && obs.pending > 0) reason = kReasonCapped;
    apply(sized, reason);
  } else if (obs.in_flight > 0) {
    apply(in_flight_need, kReasonInFlight);
  }
  if (floor > 0) {
    const bool window = window_floor >= spec.min_warm_replicas;
    if (!d.active || floor > want) apply(floor, window ? kReasonWarmWindow : kReasonWarmFloor);
  }
  if (spec.eta_prewarm) {
    if (const int64_t eta = EtaPrewarmReplicas(spec, obs, state, now); eta > 0) {
      apply(eta, kReasonEtaPrewarm);
    }
  }
  // Scheduled tasks are held by a live worker (restored to the list only when it stops, or after
  // the visibility timeout when it died): keep it rather than loop through release, restore and
  // a cold start until their eta (rule 4 in warm_policy.h). ETA tasks still in the list need one
  // worker to take them.
  if (!d.active && (obs.scheduled > 0 || not_due > 0)) apply(1, kReasonEtaHeld);
  if (spec.forecast != ScalerMetadata::ForecastMode::kOff) {
    const int64_t f = ForecastReplicas(state.forecast, now, PrewarmLeadSeconds(spec, state),
                                       TaskSecondsEstimate(spec, state), tpr);
    d.forecast_replicas = f < 0 ? -1 : std::min(f, spec.max_replicas);
    // Forecasts only ever add capacity (never remove it), as predictive scaling does.
    if (spec.forecast == ScalerMetadata::ForecastMode::kOn && d.forecast_replicas > 0 &&
        (!d.active || d.forecast_replicas > want)) {
      apply(d.forecast_replicas, kReasonForecast);
    }
  }
  if (!d.active && state.idle_since) {
    const double idle = Seconds(now - *state.idle_since);
    if (KeepsAlive(spec, state, now)) {
      apply(1, kReasonKeepAlive);
    } else {
      // The histogram runs start to start: measure from the last busy period's start.
      const double since = state.busy_since ? Seconds(now - *state.busy_since) : idle;
      const std::optional<PrewarmWindow> w = LearnedPrewarmWindow(spec, state);
      if (w && since >= w->open && since < w->close) {
        apply(PrewarmReplicas(spec, state), kReasonPrewarm);
      } else if (w && BridgesToPrewarm(spec, state, now, w->open - since)) {
        apply(1, kReasonKeepAlive);
      }
    }
    if (!d.active && work == 0 && HoldsForReleaseBudget(spec, state, now)) {
      apply(1, kReasonReleaseBudget);
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
