#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "policy/policy_state.h"
#include "policy/scaler_metadata.h"

namespace warmpool::policy {

// Decision.reason vocabulary: short, stable (logged on change and used as a Prometheus label).
inline constexpr std::string_view kReasonBacklog = "backlog";         // sized from the backlog
inline constexpr std::string_view kReasonCapped = "backlog-capped";   // capped at maxReplicas
inline constexpr std::string_view kReasonDrain = "drain";             // sized by drainSeconds
inline constexpr std::string_view kReasonInFlight = "in-flight";      // only running tasks left
inline constexpr std::string_view kReasonWarmFloor = "warm-floor";    // minWarmReplicas
inline constexpr std::string_view kReasonWarmWindow = "warm-window";  // a warmWindows floor
inline constexpr std::string_view kReasonEtaPrewarm = "eta-prewarm";  // scheduled task soon
inline constexpr std::string_view kReasonEtaHeld = "eta-held";        // a worker holds ETA tasks
inline constexpr std::string_view kReasonKeepAlive = "keep-alive";    // idle, within keep-alive
inline constexpr std::string_view kReasonPrewarm = "prewarm";         // histogram predicts work
inline constexpr std::string_view kReasonReleaseBudget =
    "release-budget";  // idle, kept: the release budget is spent
inline constexpr std::string_view kReasonForecast = "forecast";  // time-of-day forecast (on)
inline constexpr std::string_view kReasonBelowActivation =
    "below-activation";                                  // work <= activationBacklog
inline constexpr std::string_view kReasonIdle = "idle";  // nothing to do: scale to 0

// What the scaler tells KEDA.
struct Decision {
  bool active = false;           // IsActive
  int64_t desired_replicas = 0;  // GetMetrics value (HPA AverageValue target 1)
  std::string reason;            // one of the kReason* values above
  // What the time-of-day forecast asks to keep warm (ForecastReplicas, capped at maxReplicas);
  // -1 = nothing learned yet or `forecast: off`. Acted on only with `forecast: on`. Not part of
  // operator== (a decision changes when what KEDA is told changes).
  int64_t forecast_replicas = -1;
};

bool operator==(const Decision& a, const Decision& b);

// Break-even time of one cold start, in seconds (ski rental: Karlin et al., "Competitive snoopy
// caching", 1988):
//   coldStartSeconds * (1 + waitCostPerHour / replicaCostPerHour * max(1, state.burst_work))
// i.e. the GPU time a cold start bills plus the price of the expected burst waiting for it.
double BreakEvenSeconds(const ScalerMetadata& spec, const PolicyState& state);

// The keep-alive after work ends, in seconds. `keepAlive: N` gives N. `auto`:
//   - if the gap histogram is representative: ExpectedCostKeepAlive (keep_alive_cost.h), the
//     keep-alive up to the p99 gap left (given the time the last busy period already took) that
//     minimises the expected node time and start prices: B for a start on a new node, and for a
//     pod start on a node the autoscaler still keeps (nodeUnneededSeconds after KEDA's time to
//     zero) the measured one (warm_node_start_seconds) priced as B is, or B until measured.
//     A come-back while the node lingers is billed the same kept or released, so the pod is
//     kept through it; past the linger, only while the node time costs less than the start.
//   - while it is not representative (nothing learned yet): max(0, B - nodeUnneededSeconds): the
//     node the pod leaves stays billed for nodeUnneededSeconds anyway, and a come-back within it
//     costs only a pod start.
double KeepAliveSeconds(const ScalerMetadata& spec, const PolicyState& state);

// Slack over cooldownSeconds for KEDA's scale to zero, which acts at its next poll (KEDA's
// default pollingInterval; manifests/base polls every 10 s).
inline constexpr int64_t kKedaPollSlackSeconds = 30;

// The HPA window and KEDA's time to zero that the metadata states (held_pool.h):
// scaleDownWindowSeconds, and cooldownSeconds + kKedaPollSlackSeconds.
HoldSettings HoldSettingsOf(const ScalerMetadata& spec);

// Whether the keep-alive still holds at `now` (idle since state.idle_since). `keepAlive: N`: idle
// < N. `auto`: KeepAliveSeconds is a budget of replica-seconds for the replicas the next burst
// needs (m = PrewarmReplicas, at most the pool held), spent at the rate of the pool the HPA holds
// while the policy stays active (H = HeldReplicas, at least 1): idle x H < KeepAliveSeconds x m.
// Ski rental with the pool: renting costs what the HPA keeps, buying what the next burst boots.
bool KeepsAlive(const ScalerMetadata& spec, const PolicyState& state,
                std::chrono::system_clock::time_point now);

// The replicas of the pool KEDA last scaled to zero whose nodes are still up at `t`: all of them
// until nodeUnneededSeconds (less one KEDA poll) after the scale to zero, then none. The cluster
// autoscaler removes a node that long after its last pod left (AKS default 10 minutes).
int64_t LingeringReplicas(const ScalerMetadata& spec, const PolicyState& state,
                          std::chrono::system_clock::time_point t);

// The release budget (GCRA, the token bucket of ATM traffic shaping, ITU-T I.371): at most
// `releasesPerHour` pools scaled to zero per hour, none back to back (a bucket of one: each
// release and its come-back are two reversals, so one release an interval keeps the churn
// bound of two reversals an hour at the default). The budget is a time: a release at `at`
// conforms once at >= budget_at, and spending moves it to max(budget_at, at) + T, with T =
// 3600 / releasesPerHour. A release the budget did not allow (a burst's pool, or one the gaps
// gave no reason to hold) is owed the same way.
std::optional<std::chrono::system_clock::time_point> SpendRelease(
    const ScalerMetadata& spec, std::optional<std::chrono::system_clock::time_point> budget_at,
    std::chrono::system_clock::time_point at);

// The budget a queue starts with at its first work: empty, earned one interval later (nullopt
// when `releasesPerHour` is off). A queue earns its releases at the bound's rate from its first
// task on, so over any time from then, releases stay within rate x time. A full budget at the
// start would grant a release the rate never earned: with one more release than intervals, a
// queue that releases at the rate reverses a little over twice an hour over its first hours.
std::optional<std::chrono::system_clock::time_point> OpeningReleaseBudget(
    const ScalerMetadata& spec, std::chrono::system_clock::time_point first_work);

// Whether the policy keeps one idle replica because releasing it now would overspend the release
// budget: KEDA would scale to zero a poll and cooldownPeriod from now, at t, before the budget
// allows, at a. Only while holding can save that release: the gaps learned (one or more) leave
// the next busy period a chance to start before a (a hold with no come-back before a is
// released then anyway, paid for nothing); and only while the HPA holds one replica (a
// burst's pool, held for the HPA's window, costs more per hour than the churn its release adds:
// it is released, and its release spent).
//   hold = held == 1 && t < a && P(next start <= now + (a - t) | none yet) > 0
bool HoldsForReleaseBudget(const ScalerMetadata& spec, const PolicyState& state,
                           std::chrono::system_clock::time_point now);

// The pre-warm lead in seconds: max(coldStartSeconds, the measured cold start in `state`).
double PrewarmLeadSeconds(const ScalerMetadata& spec, const PolicyState& state);

// The learned pre-warm window, in seconds after a busy period started: [open, close) =
// [head - PrewarmLeadSeconds, tail) where head/tail are the 5th/99th percentile (+10 %) of the
// start-to-start gaps at least as long as the lead (a shorter gap leaves no time to pre-warm);
// nullopt when prewarm is off or those gaps are not representative or not sharp (tail - head >
// max(B, head / 2)).
struct PrewarmWindow {
  double open = 0, close = 0;
};
std::optional<PrewarmWindow> LearnedPrewarmWindow(const ScalerMetadata& spec,
                                                  const PolicyState& state);

// Cold-start-aware drain sizing, in slots (tasks at once; replicas = ceil(slots /
// tasksPerReplica)), or -1 when drainSeconds is off; S = TaskSecondsEstimate (or the assumption
// below while none is known). A replica asked for now arrives c = PrewarmLeadSeconds later; until
// then only the r = in_flight running slots work, while work keeps arriving at a = arrival rate * S
// (the rate from before the busy period during its first c + d). With w = pending * S waiting (for
// a cold burst, younger than c with nothing running, max(w, min(state.burst_work * S, 2 w)): the
// typical burst, but at most twice what is visible) and d = drainSeconds, the new slots are
//   x = floor((w - max(0, r - a) (c + d)) / d)
// (whole slots, each with at least d of work when it arrives), and the result is max(r, r + x):
// no new replicas while the running ones would finish the backlog within c + d anyway; from idle
// (r = 0, a = 0) it is floor(w / d). A cold start after the busy period began with nothing
// running or warm, the replica asked for then is due: r = tasksPerReplica.
// warm_slots: slots asked for earlier (a pre-warmed pool) that count as running even while they
// start, r = max(in_flight, warm_slots). Once that pool runs tasks (warm_slots > 0 and in_flight
// > 0), a new slot must have at least max(d, c) of work: x = floor((w - max(0, r - a) (c + d)) /
// max(d, c)); a node that works less than its own cold start costs more than the tail it
// shortens.
// Lingering nodes: while the nodes of the pool KEDA last scaled to zero are still up
// (LingeringReplicas) and a pod start on one has been measured (p =
// state.warm_node_start_seconds < c), up to that many new slots (less the r running, which sit on
// them) start after p and drain c + d - p each by the same deadline: they come first, as many as
// the work needs (ceil), and only the rest goes to cold slots (floor, each >= d of work).
// oldest_in_flight_seconds (Observation): while no duration is known, S is assumed to be
// drainSeconds / 5 (one slot per 5 pending tasks, as KEDA's listLength 5) or this, if longer.
// pending_sample (Observation): the task names of the pending messages delivered next; S is then
// PendingTaskSeconds.
double DrainSlots(const ScalerMetadata& spec, int64_t pending, int64_t in_flight,
                  const PolicyState& state, std::chrono::system_clock::time_point now,
                  double warm_slots = 0, double oldest_in_flight_seconds = 0,
                  const std::map<std::string, int64_t>& pending_sample = {});

// The task duration S the rules use: the measured estimate (state.task_seconds), blended with
// `taskSeconds` when set, which weighs as kDurationPriorTasks measured tasks; 0 = unknown.
double TaskSecondsEstimate(const ScalerMetadata& spec, const PolicyState& state);

// S of the work waiting now: the mean over `pending_sample` (name -> count) of each name's own
// estimate (state.task_durations, blended with `taskSeconds` as TaskSecondsEstimate); a name
// without one counts as `assumed` (DrainSlots: its no-duration assumption), as a new queue's
// tasks do. One estimate for all names would size a burst of short tasks for the long ones when
// another name ran last (warmpool-sim `office`: 45-s day bursts after 5-minute night jobs).
// Without a sample: TaskSecondsEstimate, or `assumed` while that is unknown.
double PendingTaskSeconds(const ScalerMetadata& spec, const PolicyState& state,
                          const std::map<std::string, int64_t>& pending_sample, double assumed);

// The pre-warmed pool for the expected burst, in slots, or -1 as DrainSlots: the fewest warm
// slots (at least 1) on which the burst (w = state.burst_work * S) needs no new replica by
// DrainSlots, floor((w - d) / (c + d)) + 1. A warm pool skips the cold start, so it has c + d to
// drain the burst.
double PrewarmSlots(const ScalerMetadata& spec, const PolicyState& state);

// Policy v2 (pure, no I/O, no clock reads). Call Observe(state, ...) with the same observation
// first. Rules, in order (the desired count is the max of the rules that apply, capped at
// maxReplicas but never below what in-flight tasks need):
//   1. work = pending + in_flight > activationBacklog: active; desired = ceil(work /
//      tasksPerReplica), or with drainSeconds D (default coldStartSeconds / 2) while tasks are
//      pending: ceil(DrainSlots / tasksPerReplica), at least 1 and never more than ceil(work /
//      tasksPerReplica).
//   2. anything in flight: active (never inactive while tasks run); desired >= ceil(in_flight /
//      tasksPerReplica).
//   3. warm floor: max(minWarmReplicas, the warmWindows floor at `now`) > 0: active.
//   4. ETA pre-warm: scheduled tasks come due within the pre-warm lead: active with
//      EtaPrewarmReplicas.
//      ETA held: any task scheduled (a worker holds it in `unacked` until its eta), or ETA tasks
//      still in the list (PendingNotDue, which no rule counts as work): active, >= 1.
//      A Celery worker that stops restores what it holds to the list (a warm shutdown), which
//      brings a replica straight back: releasing the holder buys a cold start and two reversals
//      per round, and the tasks still wait for their eta.
//   5. keep-alive: KeepsAlive (idle for less than KeepAliveSeconds since work ended, the budget
//      spent faster while the HPA holds a larger pool than the next burst needs): active, >= 1.
//   6. learned pre-warm: the gaps as long as the lead (lead = PrewarmLeadSeconds) are
//      representative, their 5th-99th percentile spread is sharp (<= max(B, head / 2)) and now is
//      in [busy_since + head - lead, busy_since + p99]: active with the replicas the expected
//      burst needs (state.burst_work tasks, or PrewarmSlots when a duration is known; >= 1).
//      Before the window, while KEDA still holds a pool, active with 1 replica (reason
//      keep-alive) when the window opens within KEDA's time to zero (cooldownSeconds + a poll):
//      dropping that pool would only start a pod again at the opening.
//   7. release budget: idle, nothing above applies, and HoldsForReleaseBudget: active, 1 replica.
//   8. otherwise inactive; desired = ceil(work / tasksPerReplica) (0 when idle), as v1.
Decision Decide(const ScalerMetadata& spec, const Observation& obs, const PolicyState& state,
                std::chrono::system_clock::time_point now);

// How many of obs.pending are ETA tasks not yet due, estimated from the pending sample's share of
// them (obs.pending_sample_not_due of obs.pending_sampled; all of them when the whole sample is).
// 0 without a sample. Pure.
int64_t PendingNotDue(const Observation& obs);

// The replicas the scheduled tasks coming due within the pre-warm lead (PrewarmLeadSeconds) need
// (obs.upcoming_etas; a reading with only earliest_eta counts one task): their work at the
// learned duration (TaskSecondsEstimate, else drainSeconds / 5 per task) drained within
// targetWaitSeconds, as they find the pool warm; one slot per task with `drainSeconds: off`.
// At least 1 and at most maxReplicas when any is due; 0 when none. Pure.
int64_t EtaPrewarmReplicas(const ScalerMetadata& spec, const Observation& obs,
                           const PolicyState& state, std::chrono::system_clock::time_point now);

}  // namespace warmpool::policy
