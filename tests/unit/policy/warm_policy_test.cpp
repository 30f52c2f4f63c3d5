#include "policy/warm_policy.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
// 2027-01-15 08:00:00 UTC, a Friday.
const auto kNow = std::chrono::system_clock::time_point(seconds(1'800'000'000));

Observation Obs(int64_t pending, int64_t in_flight = 0, int64_t scheduled = 0) {
  Observation o;
  o.pending = pending;
  o.in_flight = in_flight;
  o.scheduled = scheduled;
  return o;
}

struct PolicyCase {
  const char* name;
  int64_t tasks_per_replica, activation, min_warm, max_replicas;
  int64_t pending, in_flight;
  bool active;
  int64_t desired;
  std::string_view reason;
};

TEST_CASE("With drainSeconds off the pool is sized from pending + in flight (v1)", "[policy]") {
  // clang-format off
  const PolicyCase cases[] = {
      // name                         tpr act warm max  pend infl  active desired reason
      {"idle scales to zero",         1,  0,  0,   100, 0,   0,    false, 0,      kReasonIdle},
      {"one task wakes one replica",  1,  0,  0,   100, 1,   0,    true,  1,      kReasonBacklog},
      {"in flight keeps it active",   1,  0,  0,   100, 0,   3,    true,  3,      kReasonInFlight},
      {"tasks per replica rounds up", 4,  0,  0,   100, 9,   0,    true,  3,      kReasonBacklog},
      {"capped at max",               1,  0,  0,   5,   50,  2,    true,  5,      kReasonCapped},
      {"warm floor while idle",       1,  0,  2,   100, 0,   0,    true,  2,      kReasonWarmFloor},
      {"warm floor below work",       1,  0,  2,   100, 7,   0,    true,  7,      kReasonBacklog},
      {"activation is strictly >",    1,  3,  0,   100, 3,   0,    false, 3,      kReasonBelowActivation},
      {"above activation",            1,  3,  0,   100, 3,   1,    true,  4,      kReasonBacklog},
      {"in flight below activation",  1,  5,  0,   100, 1,   2,    true,  2,      kReasonInFlight},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ScalerMetadata spec;
      spec.drain_seconds.reset();  // drainSeconds: off
      spec.tasks_per_replica = c.tasks_per_replica;
      spec.activation_backlog = c.activation;
      spec.min_warm_replicas = c.min_warm;
      spec.max_replicas = c.max_replicas;
      Decision d = Decide(spec, Obs(c.pending, c.in_flight), {}, kNow);
      CHECK(d.active == c.active);
      CHECK(d.desired_replicas == c.desired);
      CHECK(d.reason == c.reason);
    }
  }
}

TEST_CASE("Safety: never fewer replicas than in-flight tasks need, never inactive", "[policy]") {
  ScalerMetadata spec;
  spec.max_replicas = 2;  // even a lowered cap does not evict running tasks
  spec.drain_seconds = 3600;
  spec.task_seconds = 1;
  for (int64_t in_flight : {1, 3, 7}) {
    for (int64_t pending : {0, 1, 100}) {
      Decision d = Decide(spec, Obs(pending, in_flight), {}, kNow);
      CHECK(d.active);
      CHECK(d.desired_replicas >= in_flight);
    }
  }
}

struct DrainCase {
  const char* name;
  int64_t pending, in_flight, tpr;
  std::optional<int64_t> drain;
  std::optional<double> task_seconds;
  double measured;  // state.task_seconds
  int64_t desired;
  std::string_view reason;
};

TEST_CASE("drainSeconds sizes the pool from the task duration", "[policy][drain]") {
  // clang-format off
  const DrainCase cases[] = {
      // name                         pend  infl tpr drain  taskS  meas desired reason
      {"off: one slot per task",      600,  0,   1,  {},    2.0,   0,   100,    kReasonCapped},
      // No duration known: assumed drainSeconds / 5, one slot per 5 tasks (KEDA's listLength 5).
      {"no duration: one per 5 tasks",50,   0,   1,  60,    {},    0,   10,     kReasonDrain},
      {"measured replaces that",      50,   0,   1,  60,    {},    6.0, 5,      kReasonDrain},
      {"no duration, one running",    3,    1,   1,  150,   {},    0,   1,      kReasonDrain},
      {"600 x 2 s in 60 s = 20",      600,  0,   1,  60,    2.0,   0,   20,     kReasonDrain},
      {"whole new slots only",        610,  0,   1,  60,    2.0,   0,   20,     kReasonDrain},
      {"measured beats taskSeconds",  600,  0,   1,  60,    2.0,   1.0, 10,     kReasonDrain},
      // 5 running slots do 5 x (300 + 60) s before new ones could help: no new replicas.
      {"running ones finish in c + D",600,  5,   1,  60,    2.0,   0,   5,      kReasonDrain},
      // 2400 s of work, 1800 s done by the running slots: new slots for the rest within D.
      {"new ones for what is left",   1200, 5,   1,  60,    2.0,   0,   15,     kReasonDrain},
      {"never below in flight",       1,    30,  1,  60,    2.0,   0,   30,     kReasonDrain},
      {"tasks per replica",           600,  0,   4,  60,    2.0,   0,   5,      kReasonDrain},
      {"never more than one per task",3,    0,   1,  1,     100.0, 0,   3,      kReasonDrain},
      {"at least one",                1,    0,   1,  3600,  1.0,   0,   1,      kReasonDrain},
      {"only in flight: not drain",   0,    4,   1,  60,    2.0,   0,   4,      kReasonInFlight},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ScalerMetadata spec;
      spec.tasks_per_replica = c.tpr;
      spec.drain_seconds = c.drain;
      spec.task_seconds = c.task_seconds;
      PolicyState state;
      state.task_seconds = c.measured;
      Decision d = Decide(spec, Obs(c.pending, c.in_flight), state, kNow);
      CHECK(d.active);
      CHECK(d.desired_replicas == c.desired);
      CHECK(d.reason == c.reason);
    }
  }
}

TEST_CASE("taskSeconds weighs as 33 measured tasks in the duration estimate", "[policy][drain]") {
  ScalerMetadata spec;
  PolicyState s;
  CHECK(TaskSecondsEstimate(spec, s) == 0);  // nothing known
  spec.task_seconds = 2;
  CHECK(TaskSecondsEstimate(spec, s) == Approx(2));
  s.task_seconds = 35;  // one long first task barely moves the stated duration
  s.task_count = 1;
  CHECK(TaskSecondsEstimate(spec, s) == Approx((32 * 2 + 35) / 33.0));
  s.task_count = 33;  // from 33 tasks on, the measurement alone
  CHECK(TaskSecondsEstimate(spec, s) == Approx(35));
  spec.task_seconds.reset();
  s.task_count = 1;
  CHECK(TaskSecondsEstimate(spec, s) == Approx(35));
}

TEST_CASE("Pending work is sized with the sampled task names' own durations", "[policy][drain]") {
  ScalerMetadata spec;  // coldStartSeconds 300, drainSeconds 150: 30 s assumed per unknown task
  PolicyState s;
  s.task_seconds = 300;  // all names together: the last tasks to finish were 5-minute night jobs
  s.task_count = 33;
  s.task_durations["app.night"] = {300, 33, kNow};
  s.task_durations["app.burst"] = {45, 33, kNow};
  s.burst_work = 76;
  s.busy_since = kNow - seconds(10);
  Observation o = Obs(76);
  CHECK(PendingTaskSeconds(spec, s, {}, 30) == Approx(300));  // no sample: all names' estimate
  CHECK(PendingTaskSeconds(spec, PolicyState{}, {}, 30) == Approx(30));  // nothing known
  o.pending_sample = {{"app.burst", 16}};
  CHECK(PendingTaskSeconds(spec, s, o.pending_sample, 30) == Approx(45));
  // A cold burst of 76 tasks of 45 s: floor(76 x 45 / 150) = 22 slots, not 76 x 300 / 150.
  CHECK(Decide(spec, o, s, kNow).desired_replicas == 22);
  CHECK(Decide(spec, Obs(76), s, kNow).desired_replicas == 76);
  // A mix weighs each name by its share of the sample; a name never measured counts with the
  // assumption, as a new queue's tasks do, not with the other names' durations.
  o.pending_sample = {{"app.burst", 12}, {"app.night", 2}, {"app.new", 2}};
  CHECK(PendingTaskSeconds(spec, s, o.pending_sample, 30) ==
        Approx((12 * 45 + 2 * 300 + 2 * 30) / 16.0));
  o.pending_sample = {{"app.new", 16}};
  CHECK(DrainSlots(spec, 76, 0, s, kNow, 0, 0, o.pending_sample) == Approx(15));  // 76 x 30 / 150
  // taskSeconds is the prior of every name, learned or not.
  spec.task_seconds = 100;
  s.task_durations["app.burst"].count = 11;
  CHECK(PendingTaskSeconds(spec, s, {{"app.burst", 4}}, 30) == Approx((22 * 100 + 11 * 45) / 33.0));
  CHECK(PendingTaskSeconds(spec, s, {{"app.new", 4}}, 30) == Approx(100));
}

TEST_CASE("No duration known: the longest-running task raises the assumed one", "[policy][drain]") {
  ScalerMetadata spec;  // coldStartSeconds 300, drainSeconds 150: assumed 30 s per task
  const PolicyState s;
  CHECK(DrainSlots(spec, 50, 0, s, kNow) == Approx(10));  // one per 5 tasks
  // 2 running for 120 s: 50 x 120 s of work left, the 2 do 2 x 450 s by c + d.
  CHECK(DrainSlots(spec, 50, 2, s, kNow, 0, 120) == Approx(2 + std::floor((6000.0 - 900) / 150)));
  Observation o = Obs(50, 2);
  o.oldest_in_flight_seconds = 120;
  CHECK(Decide(spec, o, s, kNow).desired_replicas == 36);
  PolicyState measured;
  measured.task_seconds = 10;  // once measured, the running ones' age no longer counts
  measured.task_count = 5;
  CHECK(DrainSlots(spec, 50, 2, measured, kNow, 0, 120) == Approx(2));
}

TEST_CASE("A burst running on its pre-warmed pool adds only nodes with a cold start of work",
          "[policy][drain]") {
  ScalerMetadata spec;  // c = 300 s, d = 150 s
  PolicyState s;
  s.task_seconds = 40;
  s.task_count = 40;
  // 47 tasks x 40 s = 1880 s; 2 slots do 2 x (300 + 150) s by c + d, leaving 980 s.
  CHECK(DrainSlots(spec, 47, 2, s, kNow) == Approx(2 + 6));     // not pre-warmed: d = 150 s each
  CHECK(DrainSlots(spec, 47, 2, s, kNow, 2) == Approx(2 + 3));  // on its warm pool: c = 300 s
  // The pool asked for is still starting (nothing runs yet): the burst waits like a cold one.
  CHECK(DrainSlots(spec, 47, 0, s, kNow, 2) == Approx(2 + 6));
  // A learned cold start of 450 s (longer than coldStartSeconds) is the bar: 2 slots now do
  // 2 x 600 s by c + d, leaving 680 s: 4 new slots at d = 150 s, 1 at c = 450 s.
  s.cold_start_seconds = 450;
  CHECK(DrainSlots(spec, 47, 2, s, kNow) == Approx(2 + 4));
  CHECK(DrainSlots(spec, 47, 2, s, kNow, 2) == Approx(2 + 1));
  // drainSeconds longer than the cold start: d stays the bar.
  spec.drain_seconds = 600;
  CHECK(DrainSlots(spec, 47, 2, s, kNow, 2) == DrainSlots(spec, 47, 2, s, kNow));
}

TEST_CASE("warmWindows give a floor inside the window only", "[policy][windows]") {
  ScalerMetadata spec;
  // kNow is Friday 08:00 UTC.
  REQUIRE(ParseWarmWindows("Mon-Fri 07:00-19:00 UTC=2", &spec.warm_windows).ok());
  Decision in = Decide(spec, Obs(0), {}, kNow);
  CHECK(in.active);
  CHECK(in.desired_replicas == 2);
  CHECK(in.reason == kReasonWarmWindow);
  Decision busy = Decide(spec, Obs(50), {}, kNow);
  CHECK(busy.desired_replicas == 10);  // above the floor: one per 5 tasks (no duration known)
  Decision out = Decide(spec, Obs(0), {}, kNow + std::chrono::hours(12));
  CHECK_FALSE(out.active);
  CHECK(out.desired_replicas == 0);
  spec.min_warm_replicas = 3;
  Decision higher_floor = Decide(spec, Obs(0), {}, kNow);
  CHECK(higher_floor.desired_replicas == 3);
  CHECK(higher_floor.reason == kReasonWarmFloor);
}

TEST_CASE("ETA pre-warm: sized for the tasks due within the lead", "[policy][eta]") {
  ScalerMetadata spec;  // coldStartSeconds 300, targetWaitSeconds 450, drainSeconds 150
  Observation o = Obs(0, 0, 40);
  // 30 tasks due in 250-300 s, 10 more in an hour.
  for (int i = 0; i < 30; ++i) o.upcoming_etas.push_back(kNow + seconds(250 + i));
  for (int i = 0; i < 10; ++i) o.upcoming_etas.push_back(kNow + seconds(3600 + i));
  o.earliest_eta = o.upcoming_etas.front();
  CHECK(EtaPrewarmReplicas(spec, o, {}, kNow) == 2);  // 30 x 30 s (no duration known) / 450 s
  PolicyState learned;
  learned.task_seconds = 60;
  learned.task_count = 33;
  CHECK(EtaPrewarmReplicas(spec, o, learned, kNow) == 4);  // 30 x 60 s / 450 s
  Decision d = Decide(spec, o, learned, kNow);
  CHECK(d.active);
  CHECK(d.desired_replicas == 4);
  CHECK(d.reason == kReasonEtaPrewarm);
  spec.max_replicas = 3;
  CHECK(EtaPrewarmReplicas(spec, o, learned, kNow) == 3);
  spec.max_replicas = 100;
  spec.drain_seconds.reset();  // one slot per task
  CHECK(EtaPrewarmReplicas(spec, o, learned, kNow) == 30);
  // None due within the lead: no pre-warm (the held tasks still keep their holder, below).
  CHECK(EtaPrewarmReplicas(spec, o, learned, kNow - seconds(100)) == 0);  // due in 350 s+
  // A reading that carries only the earliest eta counts one task.
  Observation earliest_only = Obs(0, 0, 3);
  earliest_only.earliest_eta = kNow + seconds(300);
  CHECK(EtaPrewarmReplicas(ScalerMetadata{}, earliest_only, {}, kNow) == 1);
  earliest_only.earliest_eta = kNow + seconds(301);
  CHECK(EtaPrewarmReplicas(ScalerMetadata{}, earliest_only, {}, kNow) == 0);
}

TEST_CASE("ETA tasks still in the list are no work until due", "[policy][eta]") {
  ScalerMetadata spec;
  // 30 queued, all of the 16 sampled due in an hour: one worker to take them, no burst.
  Observation o = Obs(30);
  o.pending_sampled = 16;
  o.pending_sample_not_due = 16;
  CHECK(PendingNotDue(o) == 30);
  Decision d = Decide(spec, o, {}, kNow);
  CHECK(d.active);
  CHECK(d.desired_replicas == 1);
  CHECK(d.reason == kReasonEtaHeld);
  // A quarter of the sample: 10 of 40 not due; the other 30 are a burst sized as ever.
  Observation mixed = Obs(40);
  mixed.pending_sampled = 16;
  mixed.pending_sample_not_due = 4;
  CHECK(PendingNotDue(mixed) == 10);
  Observation due_only = Obs(30);
  CHECK(Decide(spec, mixed, {}, kNow) == Decide(spec, due_only, {}, kNow));
  // Nothing sampled, or nothing pending: nothing discounted.
  Observation unsampled = Obs(30);
  unsampled.pending_sample_not_due = 3;
  CHECK(PendingNotDue(unsampled) == 0);
  CHECK(PendingNotDue(Obs(0)) == 0);
}

TEST_CASE("Scheduled tasks keep the worker that holds them", "[policy][eta]") {
  // A Celery worker holds a task with a future eta in `unacked`; stopped, it restores it to the
  // list, which would bring a replica straight back: the policy keeps one.
  ScalerMetadata spec;
  Observation o = Obs(0, 0, 3);
  o.earliest_eta = kNow + seconds(3600);
  o.upcoming_etas = {*o.earliest_eta};
  Decision d = Decide(spec, o, {}, kNow);
  CHECK(d.active);
  CHECK(d.desired_replicas == 1);
  CHECK(d.reason == kReasonEtaHeld);
  spec.eta_prewarm = false;  // the hold is not the pre-warm: it stays
  CHECK(Decide(spec, o, {}, kNow).reason == kReasonEtaHeld);
  CHECK_FALSE(Decide(spec, Obs(0), {}, kNow).active);  // nothing held: idle
  // Due within the lead, the pre-warm (sized) takes over.
  spec.eta_prewarm = true;
  o.upcoming_etas = {kNow + seconds(100), kNow + seconds(100), kNow + seconds(100)};
  o.earliest_eta = o.upcoming_etas.front();
  CHECK(Decide(spec, o, {}, kNow).reason == kReasonEtaPrewarm);
}

PolicyState IdleSince(std::chrono::system_clock::time_point t) {
  PolicyState s;
  s.idle_since = t;
  return s;
}

struct KeepAliveCase {
  const char* name;
  std::optional<int64_t> keep_alive;
  int64_t cold_start, unneeded;
  double wait_cost, replica_cost;
  double want_seconds;
};

TEST_CASE("Keep-alive: fixed, or break-even minus the node's own linger", "[policy][keepalive]") {
  // clang-format off
  const KeepAliveCase cases[] = {
      // name                          keep  cold  unneeded wait  replica  want
      {"fixed",                        120,  300,  600,     0,    0,       120},
      {"auto, CA keeps node longer",   {},   300,  600,     0,    0,       0},
      {"auto, nodes vanish at once",   {},   300,  0,       0,    0,       300},
      {"auto, slow cold start",        {},   900,  600,     0,    0,       300},
      {"auto, waiting has a price",    {},   300,  600,     2.0,  1.0,     300},  // B = 900
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ScalerMetadata spec;
      spec.keep_alive_seconds = c.keep_alive;
      spec.cold_start_seconds = c.cold_start;
      spec.node_unneeded_seconds = c.unneeded;
      spec.wait_cost_per_hour = c.wait_cost;
      spec.replica_cost_per_hour = c.replica_cost;
      CHECK(KeepAliveSeconds(spec, {}) == Approx(c.want_seconds));
      const auto t0 = kNow - seconds(static_cast<int64_t>(c.want_seconds));
      if (c.want_seconds > 0) {
        Decision within = Decide(spec, Obs(0), IdleSince(t0 + seconds(1)), kNow);
        CHECK(within.active);
        CHECK(within.desired_replicas == 1);
        CHECK(within.reason == kReasonKeepAlive);
      }
      Decision after = Decide(spec, Obs(0), IdleSince(t0), kNow);
      CHECK_FALSE(after.active);
      CHECK(after.desired_replicas == 0);
    }
  }
}

TEST_CASE("Keep-alive: a larger pool held by the HPA spends the budget faster",
          "[policy][keepalive]") {
  // auto keep-alive of 300 s (nodes vanish at once): a budget of 300 replica-seconds for the one
  // replica the next burst needs, spent at the rate of the pool the HPA still holds.
  ScalerMetadata spec;
  spec.node_unneeded_seconds = 0;
  REQUIRE(KeepAliveSeconds(spec, {}) == Approx(300));
  const auto ended = kNow - seconds(100);
  PolicyState one = IdleSince(ended);
  one.asked = {{ended - seconds(600), 1}, {ended, 1}};
  CHECK(Decide(spec, Obs(0), one, kNow).reason == kReasonKeepAlive);  // 100 x 1 < 300
  // A burst asked for 10 until work ended: the HPA holds all 10 for its 900-s window.
  PolicyState pool = IdleSince(ended);
  pool.asked = {{ended - seconds(600), 10}, {ended, 1}};
  const Decision d = Decide(spec, Obs(0), pool, kNow);  // 100 x 10 >= 300
  CHECK_FALSE(d.active);
  CHECK(d.reason == kReasonIdle);
  CHECK(Decide(spec, Obs(0), pool, ended + seconds(29)).reason == kReasonKeepAlive);
  // A typical burst of 5 replicas' work: worth 5 x 300 replica-seconds of keeping the pool.
  pool.burst_work = 5;
  CHECK(Decide(spec, Obs(0), pool, kNow).reason == kReasonKeepAlive);  // 100 x 10 < 1500
  CHECK_FALSE(Decide(spec, Obs(0), pool, ended + seconds(150)).active);
  // Past the HPA's window the pool is gone and the plain keep-alive is left. A stated window
  // (scaleDownWindowSeconds) moves that.
  pool.burst_work = 0;
  spec.scale_down_window_seconds = 60;
  CHECK(Decide(spec, Obs(0), pool, kNow).reason == kReasonKeepAlive);
  // `keepAlive: N` is kept as stated, whatever the HPA holds.
  spec.scale_down_window_seconds = 900;
  spec.keep_alive_seconds = 300;
  CHECK(Decide(spec, Obs(0), pool, kNow).reason == kReasonKeepAlive);
}

TEST_CASE("Keep-alive does not restart a pool KEDA has scaled to zero", "[policy][keepalive]") {
  ScalerMetadata spec;  // budget 300 replica-seconds, KEDA at zero 90 s after going inactive
  spec.node_unneeded_seconds = 0;
  const auto ended = kNow - seconds(200);
  PolicyState s = IdleSince(ended);
  // The 10 replicas held spent the budget in 30 s; the policy went inactive then.
  s.asked = {{ended - seconds(600), 10}, {ended, 1}, {ended + seconds(30), 0}};
  CHECK(Decide(spec, Obs(0), s, ended + seconds(100)).reason == kReasonIdle);  // 10 still held
  // 170 s inactive: the pool is gone. One replica for 200 s is within the budget, but asking
  // for it now would start a cold pod, not keep a warm one.
  CHECK(Decide(spec, Obs(0), s, kNow).reason == kReasonIdle);
  // Without a history (a restarted scaler) the plain keep-alive still holds.
  s.asked.clear();
  CHECK(Decide(spec, Obs(0), s, kNow).reason == kReasonKeepAlive);
}

TEST_CASE("Break-even grows with the price of the expected burst waiting", "[policy][keepalive]") {
  ScalerMetadata spec;
  CHECK(BreakEvenSeconds(spec, {}) == Approx(300));
  spec.wait_cost_per_hour = 0.5;
  spec.replica_cost_per_hour = 1.0;
  PolicyState s;
  CHECK(BreakEvenSeconds(spec, s) == Approx(450));  // at least one task waits
  s.burst_work = 4;
  CHECK(BreakEvenSeconds(spec, s) == Approx(900));
}

PolicyState WithGaps(std::initializer_list<seconds> gaps, double burst_work) {
  PolicyState s;
  for (int repeat = 0; repeat < 4; ++repeat) {
    for (auto g : gaps) s.gaps = RecordGap(std::move(s.gaps), g);
  }
  s.burst_work = burst_work;
  return s;
}

TEST_CASE("Histogram: short gaps are likely, so stay warm until the longest is covered",
          "[policy][histogram]") {
  ScalerMetadata spec;
  PolicyState s = WithGaps({seconds(20), seconds(50), seconds(80), seconds(100)}, 3);
  // A minute (whole histogram bins) and KEDA's 90 s to zero keep the pod past the longest gap.
  CHECK(KeepAliveSeconds(spec, s) == Approx(60));
  s.idle_since = kNow - seconds(59);
  CHECK(Decide(spec, Obs(0), s, kNow).reason == kReasonKeepAlive);
  s.idle_since = kNow - seconds(61);
  CHECK_FALSE(Decide(spec, Obs(0), s, kNow).active);
}

TEST_CASE("Histogram: long gaps leave nothing to keep even where nodes vanish at once",
          "[policy][histogram]") {
  ScalerMetadata spec;
  spec.node_unneeded_seconds = 0;                    // a come-back always costs a cold start
  CHECK(KeepAliveSeconds(spec, {}) == Approx(300));  // nothing learned: the ski rental, B
  PolicyState s = WithGaps({minutes(50), minutes(52), minutes(55), minutes(58)}, 3);
  s.busy_since = kNow - minutes(1);
  s.idle_since = kNow;
  CHECK(KeepAliveSeconds(spec, s) == 0);  // the next burst is ~50 minutes away
  s = WithGaps({seconds(20), seconds(50), seconds(80), seconds(100)}, 3);
  CHECK(KeepAliveSeconds(spec, s) == Approx(60));  // likely soon: past the longest gap
}

TEST_CASE("Histogram: a sharp long gap pre-warms coldStartSeconds before the head",
          "[policy][histogram]") {
  ScalerMetadata spec;  // coldStartSeconds 300, auto keep-alive = 0 (nodes linger 600 s)
  PolicyState s = WithGaps({minutes(50), minutes(52), minutes(55), minutes(58)}, 7.2);
  // head = 50 min, p99 upper edge = 59 min + 10 % = 64.9 min; prewarm window [45, 64.9) min.
  struct Step {
    int idle_min;
    bool active;
    int64_t desired;
  };
  const Step steps[] = {
      {0, false, 0}, {44, false, 0}, {45, true, 8}, {64, true, 8}, {65, false, 0}};
  for (const auto& step : steps) {
    DYNAMIC_SECTION("idle " << step.idle_min << " min") {
      s.idle_since = kNow - minutes(step.idle_min);
      Decision d = Decide(spec, Obs(0), s, kNow);
      CHECK(d.active == step.active);
      CHECK(d.desired_replicas == step.desired);
      if (d.active) CHECK(d.reason == kReasonPrewarm);
    }
  }
  SECTION("gaps run start to start: a long busy period moves the window earlier after idle") {
    s.idle_since = kNow - minutes(36);
    s.busy_since = kNow - minutes(46);  // the last burst took 10 minutes
    CHECK(Decide(spec, Obs(0), s, kNow).reason == kReasonPrewarm);
    s.busy_since = kNow - minutes(36);
    CHECK_FALSE(Decide(spec, Obs(0), s, kNow).active);
  }
  SECTION("prewarm off disables it") {
    spec.prewarm_histogram = false;
    s.idle_since = kNow - minutes(50);
    CHECK_FALSE(Decide(spec, Obs(0), s, kNow).active);
  }
  SECTION("tasks per replica divides the burst") {
    spec.tasks_per_replica = 4;
    s.idle_since = kNow - minutes(50);
    CHECK(Decide(spec, Obs(0), s, kNow).desired_replicas == 2);
  }
  SECTION("with a known duration the warm pool drains the burst within a cold start + D") {
    s.idle_since = kNow - minutes(50);
    s.task_seconds = 30;  // 7.2 tasks x 30 s within 300 + 150 s -> 1 replica
    CHECK(Decide(spec, Obs(0), s, kNow).desired_replicas == 1);
    CHECK(PrewarmSlots(spec, s) == 1);
    s.task_seconds = 100;  // 720 s: 1 slot leaves 270 s, a new one would have 1.8 x D -> 2
    CHECK(Decide(spec, Obs(0), s, kNow).desired_replicas == 2);
    s.task_seconds = 82;  // 590 s: 1 slot leaves 140 s, less than D of work for a new one
    CHECK(Decide(spec, Obs(0), s, kNow).desired_replicas == 1);
    CHECK(DrainSlots(spec, 7, 0, s, kNow, 1) == 1);  // the same rule when the burst lands
  }
  SECTION("a measured cold start longer than coldStartSeconds moves the pre-warm earlier") {
    s.cold_start_seconds = 600;  // window now opens at 50 - 10 = 40 min
    CHECK(PrewarmLeadSeconds(spec, s) == 600);
    s.idle_since = kNow - minutes(41);
    CHECK(Decide(spec, Obs(0), s, kNow).active);
    s.cold_start_seconds = 100;  // shorter than coldStartSeconds: the configured value holds
    CHECK(PrewarmLeadSeconds(spec, s) == 300);
    CHECK_FALSE(Decide(spec, Obs(0), s, kNow).active);
  }
}

TEST_CASE("Histogram: keep-alive counts the busy time already spent of the next gap",
          "[policy][histogram]") {
  ScalerMetadata spec;  // B = 300 s; KEDA at zero 90 s after inactive, the node 600 s after that
  PolicyState s = WithGaps({minutes(20), minutes(21), minutes(22), minutes(23)}, 3);
  // Idle right after a short burst: the next start is 19-23 min away, 7-11 min after the node
  // would go: keeping it that long costs more than the cold start it saves. No keep-alive.
  s.busy_since = kNow - minutes(1);
  s.idle_since = kNow;
  CHECK(KeepAliveSeconds(spec, s) == Approx(0));
  // After a 10-minute burst the next start is 10-14 min away, about when the node would go:
  // keeping it a few minutes more saves the start. Until the pod, gone KEDA's 90 s after the
  // keep-alive, outlasts the longest gap (24 min): 13 min.
  s.busy_since = kNow - minutes(10);
  CHECK(KeepAliveSeconds(spec, s) == Approx(13 * 60));
}

TEST_CASE("Histogram: a come-back while the node lingers is kept warm", "[policy][histogram]") {
  ScalerMetadata spec;  // the node outlives its last pod by 600 s
  PolicyState s = WithGaps({minutes(10), minutes(11), minutes(12), minutes(13)}, 3);
  s.busy_since = kNow - minutes(1);
  s.idle_since = kNow;
  // The next start is 9-13 min away, beyond the break-even time but mostly while the node
  // released now would still be up: keeping the pod costs little node time and saves its
  // start. Kept until the pod, gone KEDA's 90 s after the keep-alive, outlasts the longest gap
  // (14 min, 13 from idle): 12 min.
  CHECK(KeepAliveSeconds(spec, s) == Approx(12 * 60));
  s.idle_since = kNow - minutes(11);
  CHECK(Decide(spec, Obs(0), s, kNow).reason == kReasonKeepAlive);
  // Where nodes go with their pods, the same gaps are all beyond the break-even time.
  spec.node_unneeded_seconds = 0;
  CHECK(KeepAliveSeconds(spec, s) == Approx(0));
}

TEST_CASE("Histogram: heavy-tailed or sparse gaps do not pre-warm", "[policy][histogram]") {
  ScalerMetadata spec;
  SECTION("wide spread") {
    PolicyState s = WithGaps({minutes(20), minutes(60), minutes(120), minutes(200)}, 5);
    s.idle_since = kNow - minutes(30);
    CHECK_FALSE(Decide(spec, Obs(0), s, kNow).active);
  }
  SECTION("too few samples") {
    PolicyState s;
    for (auto g : {minutes(50), minutes(51)}) s.gaps = RecordGap(std::move(s.gaps), g);
    s.idle_since = kNow - minutes(50);
    CHECK_FALSE(Decide(spec, Obs(0), s, kNow).active);
  }
}

TEST_CASE("Drain: the arrival rate uses up the running slots' credit", "[policy][drain]") {
  ScalerMetadata spec;  // coldStartSeconds 300, drainSeconds 150
  PolicyState s;
  s.task_seconds = 20;
  s.busy_since = kNow - std::chrono::hours(2);  // a long busy period: steady load
  // 50 running slots, 10 pending. Nothing arriving: the running ones drain it, no new replicas.
  CHECK(DrainSlots(spec, 10, 50, s, kNow) == Approx(50));
  // Arrivals at 2.5 tasks/s x 20 s = 50 slots keep the running ones busy: the queue needs its own
  // replicas, whole ones only: floor(10 x 20 / 150) = 1.
  s.arrival_rate = 2.5;
  CHECK(DrainSlots(spec, 10, 50, s, kNow) == Approx(51));
  CHECK(Decide(spec, Obs(10, 50), s, kNow).desired_replicas == 51);
  s.arrival_rate = 1.25;  // half the running slots are free for the queue within c + D
  CHECK(DrainSlots(spec, 10, 50, s, kNow) == Approx(50));
  CHECK(DrainSlots(spec, 800, 50, s, kNow) == Approx(50 + std::floor((16000.0 - 25 * 450) / 150)));
}

TEST_CASE("Drain: a young busy period's own arrivals are the burst, not load", "[policy][drain]") {
  ScalerMetadata spec;
  PolicyState s;
  s.task_seconds = 30;
  s.arrival_rate = 0.5;               // raised by the burst just seen
  s.arrival_rate_before_busy = 0.01;  // quiet before it
  s.busy_since = kNow - seconds(60);
  // 2 running slots, 20 x 30 s pending: 2 x (300 + 150) s = 900 s covers 600 s.
  CHECK(DrainSlots(spec, 20, 2, s, kNow) == Approx(2));
  // After c + D the measured rate counts: 0.5 x 30 = 15 slots busy with arrivals, no credit.
  CHECK(DrainSlots(spec, 20, 2, s, kNow + seconds(400)) == Approx(2 + 4));
}

TEST_CASE("Drain: a cold burst is sized for the typical burst, at most twice what is visible",
          "[policy][drain]") {
  ScalerMetadata spec;  // coldStartSeconds 300, drainSeconds 150
  PolicyState s;
  s.task_seconds = 3;
  s.burst_work = 100;  // bursts peak at 100 tasks
  s.busy_since = kNow - seconds(10);
  // 40 tasks visible, nothing running: the burst's tail arrives during the cold start anyway, and
  // a burst seen so far is as likely to be half done as not: 80 of the typical 100.
  CHECK(DrainSlots(spec, 40, 0, s, kNow) == Approx(1));  // floor(80 x 3 / 150)
  CHECK(DrainSlots(spec, 10, 0, s, kNow) == Approx(0));  // floor(20 x 3 / 150)
  // Half the typical burst visible: sized for all of it.
  CHECK(DrainSlots(spec, 50, 0, s, kNow) == Approx(2));  // floor(100 x 3 / 150)
  Decision d = Decide(spec, Obs(50), s, kNow);
  CHECK(d.desired_replicas == 2);
  CHECK(d.reason == kReasonDrain);
  // Visible 60 < typical 100 without the rule: floor(60 x 3 / 150) = 1.
  CHECK(DrainSlots(spec, 60, 0, s, kNow) == Approx(2));
  // More visible than typical: the visible work counts.
  CHECK(DrainSlots(spec, 200, 0, s, kNow) == Approx(4));
  // Once a task runs, or a cold start later, only the visible work (and, while nothing runs, the
  // replica asked for when the burst began).
  CHECK(DrainSlots(spec, 10, 1, s, kNow) == Approx(1));
  CHECK(DrainSlots(spec, 10, 0, s, kNow + seconds(300)) == Approx(1));
  CHECK(Decide(spec, Obs(10), s, kNow + seconds(300)).desired_replicas == 1);
}

TEST_CASE("Drain: a cold start on, the replica asked for when the burst began counts as running",
          "[policy][drain]") {
  ScalerMetadata spec;  // coldStartSeconds 300, drainSeconds 150
  PolicyState s;
  s.task_seconds = 30;
  s.busy_since = kNow;
  // Within the cold start every replica is one asked now: 20 x 30 s = 600 s, floor(600 / 150).
  CHECK(DrainSlots(spec, 20, 0, s, kNow) == Approx(4));
  CHECK(DrainSlots(spec, 20, 0, s, kNow + seconds(299)) == Approx(4));
  // A cold start on, nothing runs yet: the first replica is due and drains c + d = 450 s by the
  // time new ones would; 150 s are left: one more, not four.
  CHECK(DrainSlots(spec, 20, 0, s, kNow + seconds(300)) == Approx(1 + 1));
  CHECK(DrainSlots(spec, 20, 0, s, kNow + seconds(900)) == Approx(1 + 1));
  // With 2 tasks per replica that first replica is 2 slots.
  spec.tasks_per_replica = 2;
  CHECK(DrainSlots(spec, 20, 0, s, kNow + seconds(900)) == Approx(2));
  // Once a task runs the running slots count instead.
  spec.tasks_per_replica = 1;
  CHECK(DrainSlots(spec, 20, 1, s, kNow + seconds(900)) == Approx(1 + 1));
}

TEST_CASE("Drain: a burst in the pre-warm window counts the warm pool as running",
          "[policy][drain][histogram]") {
  ScalerMetadata spec;
  PolicyState s = WithGaps({minutes(50), minutes(52), minutes(55), minutes(58)}, 20);
  s.task_seconds = 30;  // pre-warm: 20 x 30 s / (300 + 150) s -> 2 replicas
  s.busy = true;
  s.busy_since = kNow - seconds(30);
  s.prev_busy_since = kNow - seconds(30) - minutes(51);  // landed inside [45, 64.9) min
  REQUIRE(LearnedPrewarmWindow(spec, s));
  CHECK(LearnedPrewarmWindow(spec, s)->open == Approx(45 * 60));
  // 30 x 30 s pending, the pool still starting (nothing in flight): 2 x 450 s covers 900 s.
  Decision d = Decide(spec, Obs(30), s, kNow);
  CHECK(d.desired_replicas == 2);
  CHECK(d.reason == kReasonDrain);
  // The same burst outside the window is cold: 900 s / 150 s = 6 new replicas.
  s.prev_busy_since = kNow - seconds(30) - minutes(40);
  CHECK(Decide(spec, Obs(30), s, kNow).desired_replicas == 6);
}

TEST_CASE("Pre-warm: gaps shorter than the lead do not blur the window", "[policy][histogram]") {
  ScalerMetadata spec;  // lead 300 s
  // An hourly pair of calls: once the first call of a pair ran on a warm pod, the second came
  // 90 s after the pod left and started a busy period of its own.
  PolicyState s = WithGaps({minutes(60), minutes(60), minutes(60), seconds(90), minutes(59)}, 2);
  const auto w = LearnedPrewarmWindow(spec, s);
  REQUIRE(w);
  CHECK(w->open == Approx(59 * 60 - 300));
  CHECK(w->close == Approx(61 * 66));
  // The keep-alive still reads every gap: one in five within B of the last start is not "soon".
  s.idle_since = kNow;
  s.busy_since = kNow - seconds(5);
  CHECK(KeepAliveSeconds(spec, s) == Approx(0));
}

TEST_CASE("Work always wins over idle rules and in-flight over the cap", "[policy]") {
  ScalerMetadata spec;
  spec.max_replicas = 3;
  PolicyState s = IdleSince(kNow);
  Decision d = Decide(spec, Obs(0, 5), s, kNow);
  CHECK(d.active);
  CHECK(d.desired_replicas == 5);
  CHECK(d.reason == kReasonInFlight);
}

}  // namespace
}  // namespace warmpool::policy
