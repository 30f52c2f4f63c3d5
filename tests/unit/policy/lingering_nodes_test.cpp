// The nodes of a pool KEDA scaled to zero linger for the cluster autoscaler's unneeded time: the
// policy remembers that pool, learns how long a pod takes to start on one of them, sizes a burst
// that lands meanwhile for those pod starts, and does not drop a pool just before its pre-warm.
#include <catch2/catch.hpp>

#include "policy/policy_state.h"
#include "policy/warm_policy.h"
#include "tests/unit/policy/observations.h"

namespace warmpool::policy {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
const auto kNow = std::chrono::system_clock::time_point(seconds(1'800'000'000));

using test::Work;

// A cold burst landing now on a queue of 40-s tasks (defaults: coldStartSeconds 300,
// drainSeconds 150, nodeUnneededSeconds 600), the last pool released `released_ago` earlier.
PolicyState BurstAfterRelease(seconds released_ago, int64_t released, double pod_start) {
  PolicyState s;
  s.task_seconds = 40;
  s.task_count = kDurationPriorTasks;
  s.busy = true;
  s.busy_since = kNow;
  s.released_at = kNow - released_ago;
  s.released_replicas = released;
  s.warm_node_start_seconds = pod_start;
  return s;
}

TEST_CASE("Lingering replicas: the released pool until nodeUnneededSeconds less a poll",
          "[policy][linger]") {
  ScalerMetadata spec;
  const PolicyState s = BurstAfterRelease(seconds(0), 5, 60);
  CHECK(LingeringReplicas(spec, s, kNow - seconds(1)) == 0);  // not released yet
  CHECK(LingeringReplicas(spec, s, kNow) == 5);
  CHECK(LingeringReplicas(spec, s, kNow + seconds(569)) == 5);
  CHECK(LingeringReplicas(spec, s, kNow + seconds(570)) == 0);  // 600 - 30 s
  spec.node_unneeded_seconds = 0;                               // nodes go at once: nothing lingers
  CHECK(LingeringReplicas(spec, s, kNow) == 0);
  CHECK(LingeringReplicas(ScalerMetadata{}, PolicyState{}, kNow) == 0);
}

TEST_CASE("A burst on lingering nodes is sized for their pod start", "[policy][linger]") {
  const ScalerMetadata spec;
  // 30 x 40 s = 1,200 s of work. From cold: floor(1200 / 150) = 8 slots. On lingering nodes a
  // slot starts after the 60-s pod start and drains 300 + 150 - 60 = 390 s: ceil(1200 / 390) = 4.
  CHECK(DrainSlots(spec, 30, 0, BurstAfterRelease(seconds(100), 5, 60), kNow) == 4);
  // One node left: it drains 390 s, the other 810 s goes to cold slots, floor(810 / 150) = 5.
  CHECK(DrainSlots(spec, 30, 0, BurstAfterRelease(seconds(100), 1, 60), kNow) == 6);
  // The nodes are gone, or no pod start on one was measured yet: from cold.
  CHECK(DrainSlots(spec, 30, 0, BurstAfterRelease(seconds(580), 5, 60), kNow) == 8);
  CHECK(DrainSlots(spec, 30, 0, BurstAfterRelease(seconds(100), 5, 0), kNow) == 8);
  // A pod start as long as a cold start gains nothing.
  CHECK(DrainSlots(spec, 30, 0, BurstAfterRelease(seconds(100), 5, 300), kNow) == 8);
  // Running slots sit on lingering nodes too: 2 running (2 x 450 s of the 2,400) leave 3 nodes
  // for new slots (3 x 390 s), and floor(330 / 150) = 2 cold slots take the rest.
  CHECK(DrainSlots(spec, 60, 2, BurstAfterRelease(seconds(100), 5, 60), kNow) == 2 + 3 + 2);
}

TEST_CASE("Observe remembers the released pool and learns the pod start on its nodes",
          "[policy][linger]") {
  ScalerMetadata spec;  // cooldown 60 s: KEDA at zero 90 s after the policy goes inactive
  spec.releases_per_hour.reset();  // three releases in 20 minutes (release_budget_test.cpp)
  PolicyState s;
  auto at = [](int64_t t) { return kNow + seconds(t); };
  s = Observe(s, spec, Work(20), at(0));
  s = Observe(s, spec, Work(0, 20), at(300));  // a cold start of 300 s; 20 replicas for 20 tasks
  REQUIRE(s.cold_start_seconds == Approx(300));
  s = Observe(s, spec, Work(0), at(400));  // inactive from here
  s = Observe(s, spec, Work(0), at(480));
  CHECK_FALSE(s.released_at);  // KEDA has not scaled to zero yet
  s = Observe(s, spec, Work(0), at(500));
  REQUIRE(s.released_at);
  CHECK(*s.released_at == at(490));
  CHECK(s.released_replicas == 20);
  s = Observe(s, spec, Work(0), at(600));
  CHECK(s.released_replicas == 20);  // a later empty history does not overwrite it
  // A burst 210 s after the release finds the nodes: its 60-s wait is a pod start.
  s = Observe(s, spec, Work(8), at(700));
  s = Observe(s, spec, Work(0, 8), at(760));
  CHECK(s.warm_node_start_seconds == Approx(60));
  CHECK(s.cold_start_seconds == Approx(300));
  // A long wait is a cold start even while nodes were expected (they were taken, or removed).
  s = Observe(s, spec, Work(0), at(800));
  s = Observe(s, spec, Work(0), at(900));
  REQUIRE(*s.released_at == at(890));
  s = Observe(s, spec, Work(3), at(950));
  s = Observe(s, spec, Work(0, 3), at(1350));
  CHECK(s.cold_start_seconds == Approx(0.7 * 300 + 0.3 * 400));
  CHECK(s.warm_node_start_seconds == Approx(60));
  // Released again at 1450 + 90; 660 s later the nodes are gone: a short wait then is no pod
  // start on a lingering node (a warm pod), a long one a cold start.
  s = Observe(s, spec, Work(0), at(1450));
  s = Observe(s, spec, Work(0), at(1600));
  REQUIRE(*s.released_at == at(1540));
  s = Observe(s, spec, Work(2), at(2200));
  s = Observe(s, spec, Work(0, 2), at(2300));
  CHECK(s.warm_node_start_seconds == Approx(60));
  CHECK(s.cold_start_seconds == Approx(0.7 * 300 + 0.3 * 400));
}

TEST_CASE("A pool still up is kept for a pre-warm that opens before KEDA would drop it",
          "[policy][linger]") {
  const ScalerMetadata spec;  // KEDA at zero cooldownSeconds 60 + a 30-s poll after inactive
  PolicyState s;
  for (int repeat = 0; repeat < 4; ++repeat) {
    for (int m : {50, 52, 55, 58}) s.gaps = RecordGap(std::move(s.gaps), minutes(m));
  }
  s.burst_work = 1;
  const std::optional<PrewarmWindow> w = LearnedPrewarmWindow(spec, s);
  REQUIRE(w);
  REQUIRE(w->open == Approx(45 * 60));  // head 50 min less the 300-s lead
  s.idle_since = kNow - minutes(1);
  s.asked = {{kNow - minutes(2), 1}, {kNow - minutes(1), 0}};  // inactive 60 s: KEDA not at zero
  SECTION("the window opens 60 s from now: stay") {
    s.busy_since = kNow - minutes(44);
    const Decision d = Decide(spec, Work(0), s, kNow);
    CHECK(d.active);
    CHECK(d.desired_replicas == 1);
    CHECK(d.reason == kReasonKeepAlive);
  }
  SECTION("the window opens 5 minutes from now: go, unless the node would linger till then") {
    s.busy_since = kNow - minutes(40);
    ScalerMetadata no_linger = spec;
    no_linger.node_unneeded_seconds = 0;
    CHECK_FALSE(Decide(no_linger, Work(0), s, kNow).active);
    // The node outlives the pod by 10 minutes: the learned keep-alive keeps the pod, which costs
    // no node time before the window and saves its start then.
    CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonKeepAlive);
  }
  SECTION("KEDA has already scaled to zero: nothing to keep") {
    s.busy_since = kNow - minutes(44);
    s.asked = {{kNow - minutes(3), 1}, {kNow - minutes(2), 0}};
    CHECK_FALSE(Decide(spec, Work(0), s, kNow).active);
  }
}

}  // namespace
}  // namespace warmpool::policy
