#include "sim/keda_grid.h"

#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "sim/cron_trigger.h"
#include "sim/simulator.h"

namespace warmpool::sim {
namespace {

constexpr int64_t kHour = 3600, kDay = 86'400;

Workload Tasks(std::vector<Task> tasks, int64_t horizon) {
  Workload w;
  w.name = "test";
  w.tasks = std::move(tasks);
  w.horizon_s = horizon;
  return w;
}

const PolicySpec* Find(const std::vector<PolicySpec>& ps, const std::string& name) {
  const auto it =
      std::find_if(ps.begin(), ps.end(), [&](const PolicySpec& p) { return p.name == name; });
  return it == ps.end() ? nullptr : &*it;
}

TEST_CASE("The KEDA grid spans listLength, cooldown, polling, grace and the cron floor",
          "[sim][grid]") {
  // Longest task 400 s: the long grace is 420 s (whole minutes). Office hours from 09:00 see no
  // work: a floor of 1.
  const Workload w = Tasks({Task{10, 400, -1, "gpu", ""}, Task{20, 5, -1, "gpu", ""}}, 10 * kHour);
  const auto grid = KedaGrid(w, ClusterConfig{});
  REQUIRE(grid.size() == 4 * 3 * 2 * 2 * 2);
  std::set<std::string> names;
  for (const auto& p : grid) {
    names.insert(p.name);
    CHECK(p.kind == PolicyKind::kKedaRedis);
    CHECK(p.activation_list_length == 0);
    CHECK(p.hpa.down_stabilization_s == HpaConfig{}.down_stabilization_s);  // HPA defaults
    CHECK_FALSE(p.keda.push);
  }
  CHECK(names.size() == grid.size());
  const PolicySpec* sre = Find(grid, "keda-ll5-cd300-pi30-g30");
  REQUIRE(sre != nullptr);
  CHECK(sre->list_length == 5);
  CHECK(sre->keda.cooldown_s == 300);
  CHECK(sre->keda.polling_s == 30);
  CHECK(sre->grace_s == 30);
  CHECK(sre->cron_replicas == 0);
  const PolicySpec* cron = Find(grid, "keda-ll1-cd900-pi10-g420-cron1");
  REQUIRE(cron != nullptr);
  CHECK(cron->list_length == 1);
  CHECK(cron->keda.cooldown_s == 900);
  CHECK(cron->keda.polling_s == 10);
  CHECK(cron->grace_s == 420);
  CHECK(cron->cron_replicas == 1);
  CHECK(Find(grid, "keda-ll10-cd60-pi30-g420") != nullptr);

  // Tasks no longer than the default grace: one grace value, no duplicate names; no office
  // hours in the horizon: no cron floor.
  const auto short_grid = KedaGrid(Tasks({Task{10, 30, -1, "gpu", ""}}, kHour), ClusterConfig{});
  CHECK(short_grid.size() == 4 * 3 * 2);
  CHECK(Find(short_grid, "keda-ll5-cd300-pi30-g30") != nullptr);
  CHECK(LongestTaskSeconds(Tasks({Task{0, 29.2, -1, "gpu", ""}}, 100)) == 30);
}

TEST_CASE("The cron floor is the mean office-hours concurrency in pods", "[sim][grid][cron]") {
  std::vector<Task> tasks;
  for (int64_t day = 0; day < 5; ++day) {  // Mon-Fri: 4 tasks over all of 09:00-17:00
    for (int i = 0; i < 4; ++i) {
      tasks.push_back(
          Task{static_cast<double>(day * kDay + 9 * kHour), 8.0 * kHour, -1, "gpu", ""});
    }
  }
  tasks.push_back(
      Task{5 * kDay + 10 * kHour, 8.0 * kHour, -1, "gpu", ""});  // Saturday: not counted
  const Workload w = Tasks(tasks, 7 * kDay);
  ClusterConfig c;
  CHECK(OfficeHoursFloor(w, c) == 4);
  c.slots_per_pod = 2;
  CHECK(OfficeHoursFloor(w, c) == 2);
  CHECK(OfficeHoursFloor(Tasks({Task{0, 60, -1, "gpu", ""}}, kHour), c) == 0);  // no office hours
  CHECK(OfficeHoursFloor(Tasks({Task{0, 60, -1, "gpu", ""}}, 10 * kHour), c) == 1);  // idle ones
  CHECK(Find(KedaGrid(w, c), "keda-ll2-cd60-pi10-g28800-cron2") != nullptr);
}

TEST_CASE("The cron window is Mon-Fri 09:00-17:00 on the simulated clock", "[sim][cron]") {
  const CronWindow w;
  CHECK_FALSE(InCronWindow(w, 9 * kHour - 1));  // Monday 08:59:59
  CHECK(InCronWindow(w, 9 * kHour));
  CHECK(InCronWindow(w, 17 * kHour - 1));
  CHECK_FALSE(InCronWindow(w, 17 * kHour));
  CHECK(InCronWindow(w, 4 * kDay + 12 * kHour));        // Friday noon
  CHECK_FALSE(InCronWindow(w, 5 * kDay + 12 * kHour));  // Saturday noon
  CHECK_FALSE(InCronWindow(w, 6 * kDay + 12 * kHour));  // Sunday noon
  CHECK(InCronWindow(w, 7 * kDay + 12 * kHour));        // the next Monday
  CHECK_FALSE(InCronWindow(w, 2 * kDay + 3 * kHour));   // Wednesday night
  CronTrigger cron([] {
    CronWindow c;
    c.desired_replicas = 3;
    return c;
  }());
  CHECK(cron.IsActive(10 * kHour));
  CHECK(cron.Metric(10 * kHour) == 3);
  CHECK_FALSE(cron.IsActive(20 * kHour));
  CHECK(cron.Metric(20 * kHour) == 1);  // KEDA's defaultDesiredReplicas outside the window
  CHECK(cron.Target() == 1);
  CHECK_FALSE(cron.CanPush());
}

// A trigger with fixed answers.
class FixedTrigger : public Trigger {
 public:
  FixedTrigger(bool active, double metric, double target)
      : active_(active), metric_(metric), target_(target) {}
  bool IsActive(int64_t) override { return active_; }
  double Metric(int64_t) override { return metric_; }
  double Target() const override { return target_; }
  bool CanPush() const override { return false; }

 private:
  bool active_;
  double metric_, target_;
};

TEST_CASE("Several triggers: active if any is, the HPA takes the highest ratio", "[sim][cron]") {
  auto make = [](bool a1, double m1, double t1, bool a2, double m2, double t2) {
    std::vector<std::unique_ptr<Trigger>> ts;
    ts.push_back(std::make_unique<FixedTrigger>(a1, m1, t1));
    ts.push_back(std::make_unique<FixedTrigger>(a2, m2, t2));
    return AnyOfTriggers(std::move(ts));
  };
  auto idle = make(false, 0, 5, false, 1, 1);
  CHECK_FALSE(idle.IsActive(0));
  CHECK(idle.Metric(0) == 1);
  auto queue = make(true, 30, 5, false, 1, 1);  // LLEN 30 / listLength 5 over the cron's 1
  CHECK(queue.IsActive(0));
  CHECK(queue.Metric(0) == 6);
  CHECK(queue.Target() == 1);
  auto floor = make(false, 0, 5, true, 4, 1);  // empty queue inside the window
  CHECK(floor.IsActive(0));
  CHECK(floor.Metric(0) == 4);
}

// Replicas in a timeline sampled every `step` seconds.
int64_t ReplicasAt(const SimResult& r, int64_t t, int64_t step) {
  return r.timeline.at(static_cast<size_t>(t / step)).replicas;
}

TEST_CASE("A cron floor keeps N replicas in office hours, none outside", "[sim][cron]") {
  PolicySpec p;
  KedaGridPoint point;
  point.cron_replicas = 3;
  p = KedaGridPolicy(point);
  p.keda_phase_s = 0;
  p.hpa_phase_s = 0;
  const Workload empty = Tasks({}, 6 * kDay);  // Monday to Saturday night, no task at all
  SimResult r;
  REQUIRE(Simulate(empty, p, ClusterConfig{}, 1, 60, &r).ok());
  CHECK(ReplicasAt(r, 9 * kHour - 60, 60) == 0);
  CHECK(ReplicasAt(r, 9 * kHour + 60, 60) == 3);
  CHECK(ReplicasAt(r, 17 * kHour - 60, 60) == 3);
  CHECK(ReplicasAt(r, 17 * kHour + 300 + 60, 60) == 0);  // cooldown 300 after the window
  CHECK(ReplicasAt(r, 4 * kDay + 12 * kHour, 60) == 3);  // Friday
  CHECK(ReplicasAt(r, 5 * kDay + 12 * kHour, 60) == 0);  // Saturday
  CHECK(r.billed_gpu_hours > 5 * 3 * 8);                 // 3 nodes x 8 h x 5 days, plus boots
}

TEST_CASE("oracle-durations never starts a replica before the work arrives", "[sim][oracle]") {
  const Workload w = Tasks({Task{1000, 60, -1, "gpu", ""}}, 3000);
  const auto policies = DefaultPolicies({}, w, ClusterConfig{});
  const PolicySpec* blind = Find(policies, "oracle-durations");
  const PolicySpec* oracle = Find(policies, "oracle");
  REQUIRE(blind != nullptr);
  REQUIRE(oracle != nullptr);
  SimResult b, o;
  REQUIRE(Simulate(w, *blind, ClusterConfig{}, 1, 1, &b).ok());
  REQUIRE(Simulate(w, *oracle, ClusterConfig{}, 1, 1, &o).ok());
  CHECK((b.variant == "now+hpa" || b.variant == "lean now+hpa"));
  int64_t blind_before = 0, oracle_before = 0;
  for (int64_t t = 0; t < 1000; ++t) {
    blind_before = std::max(blind_before, ReplicasAt(b, t, 1));
    oracle_before = std::max(oracle_before, ReplicasAt(o, t, 1));
  }
  CHECK(blind_before == 0);
  CHECK(oracle_before >= 1);  // the full oracle pre-starts one cold start ahead
  CHECK(ReplicasAt(b, 1000, 1) == 1);
  CHECK(b.wait_p95 > o.wait_p95);
}

TEST_CASE("oracle-durations with a keepAlive keeps the replica the last task needed",
          "[sim][oracle]") {
  // Two tasks 1,440 s apart: without a keep-alive the replica goes after the first (KEDA's
  // cooldown) and the second waits a cold start; with keepAlive 1800 it is still there. Either
  // way nothing starts before the first task arrives (looking back is arrival-blind).
  const Workload w = Tasks({Task{1000, 60, -1, "gpu", ""}, Task{2500, 60, -1, "gpu", ""}}, 6000);
  const ClusterConfig c;
  SimResult lean, kept;
  const auto run = [&](const std::map<std::string, std::string>& meta, SimResult* r) {
    const auto policies = DefaultPolicies(meta, w, c);
    REQUIRE(Simulate(w, *Find(policies, "oracle-durations"), c, 1, 1, r).ok());
  };
  run({}, &lean);
  run({{"keepAlive", "1800"}}, &kept);
  int64_t before = 0;
  for (int64_t t = 0; t < 1000; ++t) before = std::max(before, ReplicasAt(kept, t, 1));
  CHECK(before == 0);
  CHECK(ReplicasAt(lean, 2400, 1) == 0);
  CHECK(ReplicasAt(kept, 2400, 1) == 1);
  CHECK(kept.wait_p50 < lean.wait_p50);  // the second task waits no cold start
  CHECK(kept.billed_gpu_hours > lean.billed_gpu_hours);
}

TEST_CASE("oracle-durations bills at least the full oracle", "[sim][oracle]") {
  for (const char* name : {"W1", "W4"}) {
    Workload w;
    REQUIRE(GenerateWorkload(name, 2, &w));
    const ClusterConfig c;
    const auto policies = DefaultPolicies({}, w, c);
    SimResult b, o;
    REQUIRE(Simulate(w, *Find(policies, "oracle-durations"), c, 2, 0, &b).ok());
    REQUIRE(Simulate(w, *Find(policies, "oracle"), c, 2, 0, &o).ok());
    INFO(name << ": oracle-durations " << b.billed_gpu_hours << ", oracle " << o.billed_gpu_hours);
    CHECK(b.billed_gpu_hours >= o.billed_gpu_hours);
  }
}

}  // namespace
}  // namespace warmpool::sim
