#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "policy/arrival_forecast.h"
#include "policy/held_pool.h"
#include "policy/idle_gap_histogram.h"
#include "policy/scaler_metadata.h"

namespace warmpool::policy {

struct Decision;  // warm_policy.h

// Time constant of PolicyState.arrival_rate, in seconds.
inline constexpr double kArrivalRateTau = 3600;
// Measured tasks after which the duration estimate is an EWMA rather than their plain mean (about
// 1 / its weight of 0.03); `taskSeconds` weighs as this many tasks (TaskSecondsEstimate).
inline constexpr int64_t kDurationPriorTasks = 33;
// Busy periods whose peaks the typical burst (PolicyState.burst_work) is the median of.
inline constexpr size_t kRecentPeaks = 5;

// Most task names whose durations a PolicyState keeps (the least recently finished goes first).
inline constexpr size_t kMaxTaskNames = 32;
// Most pending messages per queue whose task names the scaler samples (Observation.pending_sample).
inline constexpr int64_t kPendingSample = 16;
// Most scheduled etas an Observation carries (the earliest ones).
inline constexpr size_t kUpcomingEtas = 256;

// Tasks of one Celery task name (the message's headers.task) that finished since the previous
// observation.
struct FinishedTasks {
  std::string task;
  double seconds_sum = 0;  // their run times added up
  int64_t count = 0;

  friend bool operator==(const FinishedTasks&, const FinishedTasks&) = default;
};

// What the probe measured for one ScaledObject's queues at one instant.
struct Observation {
  int64_t pending = 0;    // messages waiting in the queues' lists (all priority sub-lists)
  int64_t in_flight = 0;  // delivered, unacked, not scheduled (0 when countInFlight=false)
  int64_t scheduled = 0;  // unacked with an eta in the future (countdown / retry)
  // Earliest future eta among the scheduled tasks; nullopt when none (or not measured).
  std::optional<std::chrono::system_clock::time_point> earliest_eta;
  // The earliest future etas of the scheduled tasks, ascending, at most kUpcomingEtas (empty
  // when none or not measured): how many come due within the ETA pre-warm's lead.
  std::vector<std::chrono::system_clock::time_point> upcoming_etas;
  // Mean run time of tasks that finished since the previous observation (e.g. from results'
  // timing); nullopt = not measured. Feeds the duration estimate used by `drainSeconds`.
  std::optional<double> measured_task_seconds;
  int64_t measured_task_count = 1;  // how many finished tasks measured_task_seconds averages
  // How long the longest-running in-flight task has run so far (0 = none, or not measured): a
  // lower bound on the duration before any task has finished.
  double oldest_in_flight_seconds = 0;
  // Task names of the pending messages delivered next (at most kPendingSample per queue): name ->
  // how many of the sample. Empty = not sampled (or only nameless messages). Sizes the pending
  // work with each name's own duration, so short tasks queued after long ones of another name are
  // not sized as long ones.
  std::map<std::string, int64_t> pending_sample;
  // Of the pending messages sampled with the names (pending_sampled, 0 = not sampled), how many
  // carry an eta still in the future: ETA tasks no worker has taken yet, which are not work
  // until due (PendingNotDue in warm_policy.h).
  int64_t pending_sampled = 0;
  int64_t pending_sample_not_due = 0;
  // The finished tasks behind measured_task_seconds, by task name (those with a name).
  std::vector<FinishedTasks> finished_by_task;
};

// The duration learned for one task name.
struct TaskDuration {
  // Plain mean of the first kDurationPriorTasks, then an EWMA (as PolicyState.task_seconds).
  double seconds = 0;
  int64_t count = 0;  // tasks folded in (capped at kDurationPriorTasks)
  std::chrono::system_clock::time_point last_finished;  // for evicting the stalest name

  friend bool operator==(const TaskDuration&, const TaskDuration&) = default;
};

// Per-ScaledObject memory the policy carries between decisions. The scaler persists it (encoded
// with EncodeState) under its own Redis prefix so every scaler replica decides the same. Plain
// data; copyable; a default-constructed state means "nothing learned yet".
struct PolicyState {
  // Time of the newest observation applied; Observe ignores observations not newer than this.
  std::optional<std::chrono::system_clock::time_point> last_observed;
  bool busy = false;  // the last applied observation had work (pending + in_flight > 0)
  // First observation without work after a busy period (the keep-alive clock and the start of the
  // current idle gap); nullopt while busy or before any work was seen.
  std::optional<std::chrono::system_clock::time_point> idle_since;
  // Start of the current (or last) busy period: the first observation with work after idle.
  std::optional<std::chrono::system_clock::time_point> busy_since;
  // Start of the busy period before the current one (so Decide can tell whether the current
  // burst landed in the pre-warm window the previous one opened).
  std::optional<std::chrono::system_clock::time_point> prev_busy_since;
  // Gaps between the starts of successive busy periods (burst inter-arrival times). Measured
  // start to start, not from the end of work, so the policy's own cold starts (which stretch a
  // busy period) do not shift what it learns.
  IdleGapHistogram gaps;
  double task_seconds = 0;  // measured task duration (seconds; see Observe); 0 = unknown
  int64_t task_count = 0;   // tasks folded into task_seconds (capped at the EWMA's horizon)
  // Durations by task name (at most kMaxTaskNames), learned alongside task_seconds (all names).
  std::map<std::string, TaskDuration> task_durations;
  // The typical busy period's peak work (pending + in_flight): the median of recent_peaks; 0 =
  // none. A median, not a mean: one weekly batch 40x the daily ones would otherwise size every
  // daily burst after it for a part of that batch (warmpool-sim `weekly`).
  double burst_work = 0;
  std::vector<int64_t> recent_peaks;  // the last kRecentPeaks busy periods' peaks, oldest first
  int64_t period_peak = 0;            // peak work in the current busy period
  // Start of the current wait for a first worker: work seen with nothing in flight; nullopt once a
  // task runs (or while idle).
  std::optional<std::chrono::system_clock::time_point> waiting_since;
  // EWMA (weight 0.3) of measured cold starts: waits for a first running task longer than half of
  // coldStartSeconds (shorter ones were warm pods or pod restarts on a lingering node); 0 = none.
  double cold_start_seconds = 0;
  // Arrival rate of tasks (tasks per second): new work between observations (the rise in pending
  // + in_flight plus the tasks measured as finished meanwhile), as an exponentially decaying
  // count over kArrivalRateTau (1 h), so one burst weighs little and steady traffic fully.
  double arrival_rate = 0;
  int64_t last_work = 0;  // pending + in_flight at the last applied observation
  // arrival_rate just before the current busy period began (its own arrivals excluded).
  double arrival_rate_before_busy = 0;
  // Tasks per hour by time of day (and weekday/weekend), for the `forecast` key. Learned in every
  // mode, so the mode is not part of what a shared state learns with.
  ArrivalForecast forecast;
  // What Decide asked for (with the metadata the state learns with) within the HPA's scale-down
  // window: the pool the HPA still holds (held_pool.h).
  std::vector<AskedReplicas> asked;
  // The pool KEDA last scaled to zero (held_pool.h, PoolScaledToZero): its nodes stay for the
  // cluster autoscaler's nodeUnneededSeconds, and a pod asked for meanwhile starts on one of them
  // without a node boot (LingeringReplicas).
  std::optional<std::chrono::system_clock::time_point> released_at;
  int64_t released_replicas = 0;
  // EWMA (weight 0.3) of measured waits for a first running task that began while such nodes
  // were there: the pod start on a node that is already up; 0 = none yet.
  double warm_node_start_seconds = 0;
  // The release budget's theoretical arrival time (GCRA, as a token bucket): set an interval
  // after the queue's first work (it starts empty, OpeningReleaseBudget), and each pool KEDA
  // scales to zero moves it to max(it, then) + 3600 / releasesPerHour; nullopt = a full budget
  // (`releasesPerHour: off`, no work seen yet, or a state saved before it started empty).
  std::optional<std::chrono::system_clock::time_point> release_budget_at;

  friend bool operator==(const PolicyState&, const PolicyState&) = default;
};

// The pure state update the scaler calls once per fresh observation, before Decide:
//   - work (pending + in_flight) appearing after idle records the time since the previous busy
//     period started in the histogram;
//   - work ending starts the idle clock and adds the busy period's peak to recent_peaks, whose
//     median is burst_work;
//   - a measured task duration updates the duration estimate: the plain mean of the first 33
//     tasks, then an EWMA (weight 0.03 per task);
//   - the wait from work appearing with nothing in flight to the first running task is a cold
//     start measurement when longer than coldStartSeconds / 2; a shorter one that began while
//     the last released pool's nodes lingered (LingeringReplicas) measures a pod start on such a
//     node (warm_node_start_seconds);
//   - the queue's first work opens the release budget, empty (OpeningReleaseBudget);
//   - the pool KEDA has just scaled to zero (PoolScaledToZero) is remembered with its time and
//     spends the release budget (SpendRelease);
//   - tasks that arrived since the previous observation (rise of pending + in_flight, plus the
//     finished tasks measured_task_count reports) update arrival_rate and are counted in the
//     hour's bucket of the time-of-day forecast (CountArrivals);
//   - what Decide asks for with this observation and `spec` is remembered (RecordAsked), so a
//     later decision knows the pool the HPA still holds.
// Idempotent and monotonic: an observation at or before state.last_observed returns `state`
// unchanged, so two scaler replicas applying the same observation agree. When `decided` is given
// it receives Decide's answer for this observation on the returned state: the decision remembered
// when the observation is applied (a caller deciding at `now` need not decide again).
// Pure; takes the state by value so a caller that replaces its own can move it in.
PolicyState Observe(PolicyState state, const ScalerMetadata& spec, const Observation& obs,
                    std::chrono::system_clock::time_point now, Decision* decided = nullptr);

// Compact JSON (nlohmann): times as Unix nanoseconds, the histogram sparse as [bin, count] pairs.
// Version field "v": 1. Pure.
std::string EncodeState(const PolicyState& state);

// Parses EncodeState's output. On malformed or foreign input returns InvalidArgument saying what
// is wrong with it (for the caller's log; it then starts from a default state) and leaves *out
// untouched. Pure.
Status DecodeState(std::string_view text, PolicyState* out);

}  // namespace warmpool::policy
