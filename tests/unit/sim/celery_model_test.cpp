#include "sim/celery_model.h"

#include <catch2/catch.hpp>

#include "sim/oracle.h"
#include "sim/results.h"

namespace warmpool::sim {
namespace {

Workload TwoTasks() {
  Workload w;
  w.name = "two";
  w.tasks.push_back(Task{0.4, 20, 10, "gpu", ""});  // held until its eta at t = 10
  w.tasks.push_back(Task{1.0, 30, -1, "gpu", ""});
  w.horizon_s = 100;
  return w;
}

// TwoTasks on a cluster of one-slot pods, none started yet.
struct TwoTaskRun {
  ClusterConfig config;
  RunTally tally;
  ClusterModel cluster{config, 1, tally};
  CeleryModel celery{TwoTasks(), 1, tally};
};

TEST_CASE("An ETA task waits in the list for a worker, which holds it without a slot until due",
          "[sim][celery]") {
  TwoTaskRun run;
  CeleryModel& celery = run.celery;
  celery.Arrive(0);
  CHECK(celery.queue() == std::deque<int>{0});  // published to the list, as Celery does
  celery.Fetch(0, run.cluster);                 // no pod: it stays there
  CHECK(celery.queue() == std::deque<int>{0});
  run.cluster.Prewarm(1);
  Pod& pod = run.cluster.pods()[0];
  celery.Fetch(0, run.cluster);
  CHECK(celery.queue().empty());
  CHECK(pod.held == std::vector<int>{0});
  CHECK(pod.tasks.empty());
  celery.Arrive(1);
  celery.Fetch(1, run.cluster);  // the held task takes no slot: task 1 starts
  CHECK(pod.tasks == std::vector<int>{1});
  celery.Fetch(9, run.cluster);
  CHECK(pod.held == std::vector<int>{0});
  celery.Fetch(10, run.cluster);  // due, but the slot is busy until 31: back to the list's head
  CHECK(pod.held.empty());
  CHECK(celery.queue() == std::deque<int>{0});
  celery.RunWorker(31, pod);
  celery.Fetch(31, run.cluster);
  CHECK(pod.tasks == std::vector<int>{0});
  CHECK(run.tally.waits == std::vector<double>{0, 21});  // task 0 waited from its eta, 10
}

TEST_CASE("A worker's warm shutdown restores the ETA tasks it holds to the head of the list",
          "[sim][celery]") {
  TwoTaskRun run;
  CeleryModel& celery = run.celery;
  run.cluster.Prewarm(1);
  celery.Arrive(0);
  celery.Fetch(0, run.cluster);
  Pod& pod = run.cluster.pods()[0];
  REQUIRE(pod.held == std::vector<int>{0});
  pod.terminating = true;  // SIGTERM: it fetches no more
  celery.Arrive(1);
  celery.Fetch(1, run.cluster);
  CHECK(celery.queue() == std::deque<int>{1});
  celery.RunWorker(2, pod);
  CHECK(pod.held.empty());
  CHECK(celery.queue() == std::deque<int>{0, 1});  // rpush: the next BRPOP takes it
  run.cluster.AdvancePods(3, [&](Pod& p) { celery.RunWorker(3, p); });
  CHECK(run.cluster.live_pods().empty());  // holding nothing and running nothing, it is gone
  CHECK(run.tally.killed_tasks == 0);
  CHECK(run.tally.requeued_tasks == 0);
}

TEST_CASE("A task SIGKILLed at the pod's deadline is not runnable before the visibility timeout",
          "[sim][celery]") {
  const ClusterConfig c;
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Prewarm(1);
  CeleryModel celery(TwoTasks(), 1, tally, /*visibility_timeout_s=*/100);
  for (int64_t t : {0, 1, 10}) celery.Arrive(t);  // both runnable at 10: [0, 1]
  celery.Fetch(10, cluster);
  CHECK(celery.queue() == std::deque<int>{1});
  CHECK(tally.waits == std::vector<double>{0});  // task 0: due 10, started 10, runs to 30
  Pod& pod = cluster.pods()[0];
  pod.terminating = true;
  pod.deadline = 25;
  pod.requeue_at = 25;  // SIGKILL wins a tie with the worker's own grace
  celery.RunWorker(24, pod);
  CHECK(pod.tasks.size() == 1);
  celery.RunWorker(25, pod);  // SIGKILL: 15 s of its 20 s run are lost
  CHECK(pod.tasks.empty());
  CHECK(celery.queue() == std::deque<int>{1});  // unacked, not in the list
  CHECK(celery.lost() == 1);
  CHECK(tally.killed_tasks == 1);
  CHECK(tally.requeued_tasks == 0);
  CHECK(tally.killed_gpu_s == Approx(15));
  CHECK(tally.busy_gpu_s == 0);
  celery.RestoreVisible(124, true);
  CHECK(celery.queue() == std::deque<int>{1});
  celery.RestoreVisible(125, false);  // no live consumer runs kombu's restore_visible sweep
  CHECK(celery.queue() == std::deque<int>{1});
  celery.RestoreVisible(126, true);  // restored with rpush: the head BRPOP takes next
  CHECK(celery.queue() == std::deque<int>{0, 1});
  CHECK(celery.lost() == 0);
  // Never started again by the horizon: it waits from the kill (25) to the horizon on top of its
  // first wait, and is unfinished like the task that never started.
  celery.FinishAt(200, cluster);
  CHECK(tally.unfinished == 2);
  CHECK(tally.waits == std::vector<double>{0 + 175, 199});
}

TEST_CASE("A task past the worker's grace is requeued at once and counted apart from kills",
          "[sim][celery]") {
  const ClusterConfig c;
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Prewarm(2);
  CeleryModel celery(TwoTasks(), 1, tally);
  for (int64_t t : {0, 1}) celery.Arrive(t);
  Pod& first = cluster.pods()[0];
  Pod& second = cluster.pods()[1];
  second.terminating = true;  // only the first pod fetches
  celery.Fetch(1, cluster);
  REQUIRE(first.tasks == std::vector<int>{1});
  REQUIRE(first.held == std::vector<int>{0});  // the ETA task, held without a slot
  first.terminating = true;
  first.requeue_at = 16;  // warmpool-worker --grace-seconds ends before the SIGKILL
  first.deadline = 46;
  celery.RunWorker(15, first);
  CHECK(first.tasks.size() == 1);
  CHECK(celery.queue() == std::deque<int>{0});  // the held ETA task, restored at SIGTERM
  celery.RunWorker(16, first);
  CHECK(first.tasks.empty());
  CHECK(celery.queue() == std::deque<int>{1, 0});  // back at the head at once
  CHECK(celery.lost() == 0);
  CHECK(tally.requeued_tasks == 1);
  CHECK(tally.requeued_gpu_s == Approx(15));
  CHECK(tally.killed_tasks == 0);
  CHECK(tally.killed_gpu_s == 0);
  second.terminating = false;
  celery.Fetch(20, cluster);  // restarted 4 s after the requeue: its wait is 0 + 4
  CHECK(second.tasks == std::vector<int>{1});
  CHECK(tally.waits == std::vector<double>{4});
}

TEST_CASE("Completed tasks feed busy time", "[sim][celery]") {
  const ClusterConfig c;
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Prewarm(1);
  CeleryModel celery(TwoTasks(), 2, tally);  // two slots per pod
  celery.Arrive(10);
  celery.Fetch(10, cluster);
  CHECK(cluster.Running() == 2);
  celery.RunWorker(30, cluster.pods()[0]);  // task 0 (20 s) ended at 30
  CHECK(cluster.Running() == 1);
  CHECK(tally.busy_gpu_s == Approx(10));    // 20 s on one of two slots
  celery.RunWorker(40, cluster.pods()[0]);  // task 1 (30 s) ended at 40
  CHECK(cluster.Running() == 0);
  CHECK(tally.busy_gpu_s == Approx(25));
  CHECK(tally.last_completion == 40);
}

TEST_CASE("Wait percentiles use the nearest rank", "[sim][results]") {
  std::vector<double> v = {10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
  CHECK(Percentile(v, 0.50) == 5);
  CHECK(Percentile(v, 0.95) == 10);
  CHECK(Percentile(v, 0.0) == 1);
  std::vector<double> none;
  CHECK(Percentile(none, 0.5) == 0);
}

TEST_CASE("Summarize splits billed time and prices it per node", "[sim][results]") {
  ClusterConfig c;
  c.gpus_per_node = 2;
  c.price_per_node_hour = 1.5;
  RunTally tally;
  tally.billed_gpu_s = 7200;  // one 2-GPU node for an hour
  tally.boot_gpu_s = 720;
  tally.busy_gpu_s = 3600;
  tally.delete_gpu_s = 360;
  tally.reversals = 3;
  tally.last_completion = 500;
  const SimResult r = Summarize("p", tally, c, 7200, 4, 20, {});
  CHECK(r.billed_gpu_hours == Approx(2));
  CHECK(r.billed_dollars == Approx(1.5));
  CHECK(r.idle_gpu_hours == Approx(2 - 0.2 - 1 - 0.1));
  CHECK(r.reversals_per_hour == Approx(1.5));
  CHECK(r.makespan_s == 480);
}

TEST_CASE("Oracle strategies cover 7 leads and holds, drain and lean", "[sim][oracle]") {
  ClusterConfig c;
  c.vm_boot_median_s = 100;
  c.driver_median_s = 20;
  c.image_pull_s = 10;
  c.model_load_min_s = 5;
  c.model_load_max_s = 15;
  // GPU buffer 30 + scan 10 + VM 100 + driver 20 + pull 10 + mean load 10.
  CHECK(MedianColdStart(c) == 180);
  PolicySpec oracle;
  oracle.kind = PolicyKind::kOracle;
  const auto strategies = OracleStrategies(oracle, c);
  REQUIRE(strategies.size() == 14);
  CHECK(strategies[0].variant == "prewarm+hpa");
  CHECK(strategies[0].spec.oracle_via_hpa);
  CHECK(strategies[2].variant == "prewarm+hold");
  CHECK(strategies[2].spec.oracle_hold_s == 300);
  CHECK(strategies[4].variant == "react");
  CHECK(strategies[4].spec.oracle_lead_s == 10);  // the mean model load
  CHECK(strategies[6].variant == "now+hpa");
  CHECK(strategies[6].spec.oracle_lead_s == 0);
  CHECK(strategies[13].variant == "lean now+hpa");
  CHECK(strategies[13].spec.oracle_lean);
}

}  // namespace
}  // namespace warmpool::sim
