#include "sim/cluster_model.h"

#include <catch2/catch.hpp>

#include "sim/celery_model.h"

namespace warmpool::sim {
namespace {

// Boot without randomness: VM 100 s + driver 20 s, image pull 10 s, model load 5 s.
ClusterConfig FixedCluster() {
  ClusterConfig c;
  c.vm_boot_median_s = c.vm_boot_p95_s = 100;
  c.driver_median_s = c.driver_p95_s = 20;
  c.image_pull_s = 10;
  c.model_load_min_s = c.model_load_max_s = 5;
  return c;
}

// The cluster's seconds from `from` to `to` (exclusive), with an autoscaler scan every second.
void RunCluster(ClusterModel& cluster, int64_t from, int64_t to) {
  for (int64_t t = from; t < to; ++t) {
    cluster.AdvanceNodes(t);
    cluster.AdvancePods(t, [](Pod&) {});
    cluster.Schedule(t);
    cluster.Autoscale(t);
  }
}

TEST_CASE("Cluster autoscaler adds a node once a pod has waited out the GPU buffer",
          "[sim][cluster]") {
  const ClusterConfig c = FixedCluster();
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Reconcile(0, 1, 30);
  RunCluster(cluster, 0, 30);
  CHECK(cluster.live_nodes() == 0);
  RunCluster(cluster, 30, 31);  // the pod is 30 s old
  CHECK(cluster.live_nodes() == 1);
  // Ready at 30 + 120 = 150, bound then, image pulled by 160, model loaded by 165.
  RunCluster(cluster, 31, 165);
  CHECK(cluster.ReadyPods() == 0);
  RunCluster(cluster, 165, 166);
  CHECK(cluster.ReadyPods() == 1);
  CHECK(tally.nodes_created == 1);
}

TEST_CASE("Asking for more nodes never delays the first ready pod (common random numbers)",
          "[sim][cluster]") {
  // The k-th node draws its boot from its own stream of the seed: a run that asks for 4 nodes
  // has the 1-node run's first node among them. Drawn in event order, the second run's nodes
  // would get other samples and its first pod could be ready later than the 1-node run's.
  const ClusterConfig c;  // lognormal boots with their tail
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const auto first_ready = [&](int64_t replicas) {
      RunTally tally;
      ClusterModel cluster(c, seed, tally);
      cluster.Reconcile(0, replicas, 30);
      for (int64_t t = 0; t < 3000; ++t) {
        RunCluster(cluster, t, t + 1);
        if (cluster.ReadyPods() > 0) return t;
      }
      return int64_t{-1};
    };
    const int64_t one = first_ready(1);
    INFO("seed " << seed);
    REQUIRE(one > 0);
    CHECK(first_ready(4) <= one);
  }
}

TEST_CASE("Cluster autoscaler removes an empty node after the unneeded time", "[sim][cluster]") {
  // Node added at 30, pod removed at 200. Unneeded 600 s: deleted at the t = 800 scan, gone (and
  // billed) at 860. With unneeded 60 s, delay-after-add (600 s after the t = 30 scale-up) holds
  // it until 630, gone at 690.
  for (const auto& [unneeded, deleted_at] : {std::pair<int64_t, int64_t>{600, 800}, {60, 630}}) {
    DYNAMIC_SECTION("unneeded " << unneeded) {
      ClusterConfig c = FixedCluster();
      c.ca_unneeded_s = unneeded;
      RunTally tally;
      ClusterModel cluster(c, 1, tally);
      cluster.Reconcile(0, 1, 30);
      RunCluster(cluster, 0, 200);
      cluster.Reconcile(200, 0, 30);  // an idle pod terminates at once
      RunCluster(cluster, 200, deleted_at + 60);
      CHECK(cluster.live_nodes() == 1);  // deleting, still billed
      CHECK(tally.billed_gpu_s == 0);
      RunCluster(cluster, deleted_at + 60, deleted_at + 61);
      CHECK(cluster.live_nodes() == 0);
      CHECK(tally.billed_gpu_s == Approx(static_cast<double>(deleted_at + 60 - 30)));
      CHECK(tally.boot_gpu_s == Approx(120));
      CHECK(tally.delete_gpu_s == Approx(60));
    }
  }
}

TEST_CASE("Cluster autoscaler deletes at most 10 empty nodes per scan", "[sim][cluster]") {
  const ClusterConfig c = FixedCluster();
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Reconcile(0, 12, 30);
  RunCluster(cluster, 0, 31);  // 12 nodes at t = 30
  CHECK(cluster.live_nodes() == 12);
  cluster.Reconcile(31, 0, 30);  // the pods go before any node is ready
  // Ready and empty from 150: deletable from 750 (unneeded 600); 10 at 750, 2 at 751.
  RunCluster(cluster, 31, 810);
  CHECK(cluster.live_nodes() == 12);
  RunCluster(cluster, 810, 811);
  CHECK(cluster.live_nodes() == 2);
  RunCluster(cluster, 811, 812);
  CHECK(cluster.live_nodes() == 0);
}

TEST_CASE("ReplicaSet scale-down terminates the newest ready pod first", "[sim][cluster]") {
  ClusterConfig c = FixedCluster();
  c.gpus_per_node = 2;
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Prewarm(2);  // two ready pods on one ready node, ready since 0
  REQUIRE(cluster.ReadyPods() == 2);
  cluster.pods()[0].ready_since = 10;  // pod 0 became ready later
  cluster.pods()[0].tasks = {7};       // and is busy: the ReplicaSet does not know
  cluster.Reconcile(20, 1, 30);
  CHECK(cluster.pods()[0].terminating);
  CHECK(cluster.pods()[0].deadline == 50);
  CHECK_FALSE(cluster.pods()[1].terminating);
  CHECK(cluster.live_pods().size() == 2);  // busy: it stays until its task ends or the deadline
}

TEST_CASE("With pod-deletion-cost the ReplicaSet scales idle pods in before busy ones",
          "[sim][cluster]") {
  // warmpool-worker --pod-deletion-cost: a pod's cost is the number of its tasks that have run at
  // least `after` seconds; the ReplicaSet ranks a lower cost first, before node crowding and
  // ready age (kubernetes pkg/controller/controller_utils.go, ActivePodsWithRanks.Less).
  ClusterConfig c = FixedCluster();
  c.gpus_per_node = 2;
  for (const int64_t started : {0, 15}) {
    DYNAMIC_SECTION("task started at " << started) {
      RunTally tally;
      ClusterModel cluster(c, 1, tally);
      cluster.Prewarm(2);
      cluster.pods()[0].ready_since = 10;  // the newer pod, which goes first without the cost
      Workload w;
      w.tasks.push_back(Task{static_cast<double>(started), 100, -1, "gpu", ""});
      w.horizon_s = 200;
      CeleryModel celery(w, 1, tally);
      celery.Arrive(started);
      celery.Fetch(started, cluster);  // the first ready pod takes it
      REQUIRE(cluster.pods()[0].tasks.size() == 1);
      cluster.Reconcile(20, 1, 30, -1,
                        [&](const Pod& p) { return celery.RunningAtLeast(p, 20, 10); });
      // Run 20 s by then: it counts and the idle pod goes. Run 5 s: not yet (a task that short
      // is over before the annotation would matter), so the usual ranking applies.
      const bool counted = 20 - started >= 10;
      CHECK(cluster.pods()[0].terminating == !counted);
      CHECK(cluster.pods()[1].terminating == counted);
    }
  }
}

TEST_CASE("ReplicaSet scale-down takes doubled-up nodes first, then log-scale ready age",
          "[sim][cluster]") {
  // kubernetes pkg/controller/replicaset getPodsToDelete: more of the Deployment's pods on the
  // same node ranks before a newer ready time; ready times in the same log2 bucket tie (UID).
  ClusterConfig c = FixedCluster();
  c.gpus_per_node = 2;
  RunTally tally;
  ClusterModel cluster(c, 1, tally);
  cluster.Prewarm(3);  // pods 0 and 1 on node 0, pod 2 alone on node 1
  REQUIRE(cluster.pods()[2].node == 1);
  cluster.pods()[2].ready_since = 900;  // the newest ready pod, but alone on its node
  cluster.pods()[0].ready_since = 100;
  cluster.pods()[1].ready_since = 50;
  cluster.Reconcile(1000, 2, 30, 20);
  CHECK_FALSE(cluster.pods()[2].terminating);
  // Node 0's pods were ready 900 s and 950 s: the same log2 bucket of nanoseconds, so the UID
  // decides, not the 50 s difference. Exactly one of them goes.
  CHECK(cluster.pods()[0].terminating != cluster.pods()[1].terminating);
  const Pod& victim = cluster.pods()[0].terminating ? cluster.pods()[0] : cluster.pods()[1];
  CHECK(victim.deadline == 1030);
  CHECK(victim.requeue_at == 1020);
}

TEST_CASE("Deployment counts replica changes and reversals", "[sim][cluster]") {
  Deployment d;
  RunTally tally;
  d.StartAt(2);  // not a change
  d.Scale(2, tally);
  d.Scale(4, tally);
  d.Scale(5, tally);
  d.Scale(1, tally);
  d.Scale(3, tally);
  CHECK(d.replicas() == 3);
  CHECK(tally.replica_changes == 4);
  CHECK(tally.reversals == 2);
}

}  // namespace
}  // namespace warmpool::sim
