#include "sim/triggers.h"

#include <catch2/catch.hpp>

#include "sim/results.h"

namespace warmpool::sim {
namespace {

// Three named tasks on one prewarmed pod with one slot: a long one, then two short ones.
Workload LongThenShort() {
  Workload w;
  w.name = "probe";
  w.tasks.push_back(Task{0, 25, -1, "gpu", "app.long"});   // runs 0-25
  w.tasks.push_back(Task{0, 3, -1, "gpu", "app.short"});   // runs 25-28
  w.tasks.push_back(Task{0, 10, -1, "gpu", "app.short"});  // runs 28-38
  w.horizon_s = 100;
  return w;
}

// A workload's queue on one-slot pods (`pods` of them prewarmed), stepped as the simulator steps a
// second up to where the probe reads it (arrivals, workers, fetches).
struct ProbedQueue {
  explicit ProbedQueue(const Workload& w = LongThenShort(), int64_t pods = 1)
      : celery(w, 1, tally) {
    cluster.Prewarm(pods);
  }

  ClusterConfig config;
  RunTally tally;
  ClusterModel cluster{config, 1, tally};
  CeleryModel celery;
  policy::TaskTiming timing;
  // Steps every second after the last one stepped up to t, then probes at t.
  ProbeSnapshot RunTo(int64_t t, bool measure_durations = true) {
    for (; next <= t; ++next) {
      celery.Arrive(next);
      cluster.AdvancePods(next, [&](Pod& pod) { celery.RunWorker(next, pod); });
      celery.Fetch(next, cluster);
    }
    return ProbeQueue(celery, cluster, t, measure_durations, &timing);
  }
  int64_t next = 0;
};

TEST_CASE("The simulator's probe measures run times as the scaler does", "[sim][probe]") {
  ProbedQueue q;
  ProbeSnapshot s = q.RunTo(10);
  CHECK(s.pending == 2);
  CHECK(s.in_flight == 1);
  // Its clock starts when the scaler first sees it, not when it started.
  CHECK(s.oldest_start == 10);
  CHECK(s.pending_sample == std::map<std::string, int64_t>{{"app.short", 2}});
  CHECK(s.finished == 0);

  s = q.RunTo(30);
  // The long task is measured from 10 to 30; the 3-s one ran between the probes (25-28) and is
  // neither counted nor measured, as the scaler never sees its tag in `unacked`.
  CHECK(s.finished == 1);
  CHECK(s.finished_seconds == Approx(20));
  REQUIRE(s.finished_by_task.size() == 1);
  CHECK(s.finished_by_task[0].task == "app.long");
  CHECK(s.oldest_start == 30);  // the 10-s task, running since 28, first seen now

  s = q.RunTo(40);
  CHECK(s.in_flight == 0);
  CHECK_FALSE(s.oldest_start.has_value());
  CHECK(s.finished == 1);
  CHECK(s.finished_seconds == Approx(10));
  REQUIRE(s.finished_by_task.size() == 1);
  CHECK(s.finished_by_task[0].task == "app.short");
}

TEST_CASE("Without measured durations the probe reports no finished tasks", "[sim][probe]") {
  ProbedQueue q;
  for (int64_t t : {10, 30}) {
    const ProbeSnapshot s = q.RunTo(t, /*measure_durations=*/false);
    CHECK(s.finished == 0);
    CHECK(s.pending_sample.empty());
    CHECK(s.in_flight == 1);
  }
}

TEST_CASE("The probe sees ETA tasks in the list, then scheduled while a worker holds them",
          "[sim][probe]") {
  Workload w;
  w.name = "eta";
  w.tasks.push_back(Task{0, 5, 60, "gpu", "app.later"});
  w.tasks.push_back(Task{0, 5, 30, "gpu", "app.later"});
  w.horizon_s = 200;
  ProbedQueue q(w, /*pods=*/0);
  ProbeSnapshot s = q.RunTo(0);
  CHECK(s.pending == 2);  // no worker: LLEN counts them
  CHECK(s.pending_sampled == 2);
  CHECK(s.pending_sample_not_due == 2);  // the sample tells they are not due
  CHECK(s.scheduled == 0);
  q.cluster.Prewarm(1);
  s = q.RunTo(1);
  CHECK(s.pending == 0);
  CHECK(s.scheduled == 2);
  CHECK(s.earliest_eta == 30);
  CHECK(s.upcoming_etas == std::vector<int64_t>{30, 60});
  // The one due at 30 runs at once in the free slot: in flight, no longer scheduled.
  s = q.RunTo(30);
  CHECK(s.in_flight == 1);
  CHECK(s.scheduled == 1);
  CHECK(s.upcoming_etas == std::vector<int64_t>{60});
}

}  // namespace
}  // namespace warmpool::sim
