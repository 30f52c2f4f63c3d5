#include "sim/keda_hpa_model.h"

#include <catch2/catch.hpp>

namespace warmpool::sim {
namespace {

TEST_CASE("HPA recommendation keeps the current count within the tolerance", "[sim][hpa]") {
  CHECK(HpaRecommendation(10.5, 1, 10, 0.1) == 10);  // usage 1.05
  CHECK(HpaRecommendation(11.5, 1, 10, 0.1) == 12);  // usage 1.15: ceil(11.5)
  CHECK(HpaRecommendation(8.95, 1, 10, 0.1) == 9);   // usage 0.895
  CHECK(HpaRecommendation(15, 5, 10, 0.1) == 3);     // LLEN 15 / listLength 5, exactly 3
  CHECK(HpaRecommendation(0, 5, 3, 0.1) == 0);
}

TEST_CASE("HPA rate limits are max(+4 pods, +100 %) up and 100 % down per period", "[sim][hpa]") {
  HpaConfig h;
  CHECK(HpaRateLimit(1, 100, h) == 5);    // +4 pods beats +100 %
  CHECK(HpaRateLimit(3, 100, h) == 7);    // 3 + 4 > 3 + 3
  CHECK(HpaRateLimit(10, 100, h) == 20);  // +100 %
  CHECK(HpaRateLimit(10, 12, h) == 12);   // within the limit
  CHECK(HpaRateLimit(10, 0, h) == 0);     // 100 % down
  CHECK(HpaRateLimit(7, 7, h) == 7);
  h.down_percent = 50;
  h.up_pods = 1;
  h.up_percent = 10;
  CHECK(HpaRateLimit(10, 1, h) == 5);     // at most 10 x 50 % fewer
  CHECK(HpaRateLimit(3, 0, h) == 2);      // 3 x 50 % = 1 (floored)
  CHECK(HpaRateLimit(10, 100, h) == 11);  // +10 % = +1, +1 pod
  CHECK(HpaRateLimit(15, 100, h) == 17);  // ceil(1.5) = 2 beats +1 pod
}

TEST_CASE("HPA scale-down waits for the 300 s stabilization window", "[sim][hpa]") {
  const HpaConfig h;  // defaults: up window 0, down window 300
  for (const int64_t last_sync : {314, 315}) {
    DYNAMIC_SECTION("last sync at " << last_sync) {
      HpaModel hpa(h);
      CHECK(hpa.Sync(0, 10, 1, 1, 1, 100) == 5);    // rate-limited from 1
      CHECK(hpa.Sync(15, 10, 1, 5, 1, 100) == 10);  // +100 %
      CHECK(hpa.Sync(30, 2, 1, 10, 1, 100) == 10);  // 2 recommended, 10 within the window
      // The recommendation of 10 made at t = 15 leaves the window (t - 300, t] at t = 315.
      CHECK(hpa.Sync(last_sync, 2, 1, 10, 1, 100) == (last_sync == 315 ? 2 : 10));
    }
  }
}

TEST_CASE("HPA clamps to the KEDA min and max replica counts", "[sim][hpa]") {
  HpaModel hpa(HpaConfig{});
  CHECK(hpa.Sync(0, 0, 1, 1, 1, 100) == 1);         // metric 0: still min 1 while active
  CHECK(hpa.Sync(15, 1000, 1, 99, 1, 100) == 100);  // maxReplicaCount
}

// A trigger whose answers are scripted by time: active before `until`, metric `metric`.
class ScriptedTrigger : public Trigger {
 public:
  ScriptedTrigger(int64_t until, double metric) : until_(until), metric_(metric) {}
  bool IsActive(int64_t t) override { return t < until_; }
  double Metric(int64_t t) override { return t < until_ ? metric_ : 0; }
  double Target() const override { return 1; }
  bool CanPush() const override { return true; }

 private:
  int64_t until_;
  double metric_;
};

TEST_CASE("KEDA scales N to zero after the cooldown, bypassing the HPA's window", "[sim][keda]") {
  // push, polling 10, cooldown 30, phases 0. t = 0: push 0 -> 1, HPA 1 -> 3. From t = 100 the
  // trigger is inactive (the false is ignored) and the HPA's 300 s window holds 3. Sent on change
  // only, the last true KEDA saw is its t = 90 poll, so the t = 120 poll scales straight to 0;
  // re-sent every 5 s, the last true is the push at t = 95, and only the t = 130 poll is at or
  // after lastActive + cooldown.
  for (const int64_t resend : {0, 5}) {
    DYNAMIC_SECTION("re-sent every " << resend << " s") {
      KedaConfig keda;
      keda.push = true;
      keda.push_resend_s = resend;
      keda.polling_s = 10;
      keda.cooldown_s = 30;
      const HpaConfig hpa;
      KedaHpaModel model(keda, hpa, 0, 0);
      ScriptedTrigger trigger(100, 3);
      Deployment d;
      RunTally tally;
      std::vector<int64_t> replicas;
      for (int64_t t = 0; t < 200; ++t) {
        model.Step(t, trigger, d, tally);
        replicas.push_back(d.replicas());
      }
      const int64_t zero_at = resend == 0 ? 120 : 130;
      CHECK(replicas[0] == 3);
      CHECK(replicas[99] == 3);
      CHECK(replicas[zero_at - 1] == 3);
      CHECK(replicas[zero_at] == 0);
      CHECK(replicas[199] == 0);
      CHECK(tally.replica_changes == 3);  // 0 -> 1 -> 3 -> 0
      CHECK(tally.reversals == 1);
    }
  }
}

TEST_CASE("KEDA scales to zero no earlier than initialCooldownPeriod when never active",
          "[sim][keda]") {
  // replicas 2 from the start (a pool that ran before the ScaledObject), trigger never active:
  // no lastActiveTime, so KEDA waits initialCooldownPeriod 60 after creation (t = 0).
  KedaConfig keda;
  keda.polling_s = 10;
  keda.cooldown_s = 30;
  keda.initial_cooldown_s = 60;
  const HpaConfig hpa;
  KedaHpaModel model(keda, hpa, 0, 1);  // polls at t % 10 == 0; the HPA may go 2 -> 1, not 0
  ScriptedTrigger never(0, 0);
  Deployment d;
  d.StartAt(2);
  RunTally tally;
  int64_t zero_at = -1;
  for (int64_t t = 0; t < 200 && zero_at < 0; ++t) {
    model.Step(t, never, d, tally);
    if (d.replicas() == 0) zero_at = t;
  }
  CHECK(zero_at == 60);  // not at the t = 30 poll that cooldownPeriod alone would allow

  // Once active, lastActiveTime and cooldownPeriod rule, even inside the initial cooldown.
  KedaHpaModel active_model(keda, hpa, 0, 1);
  ScriptedTrigger until5(5, 1);
  Deployment d2;
  zero_at = -1;
  for (int64_t t = 0; t < 200 && zero_at < 0; ++t) {
    active_model.Step(t, until5, d2, tally);
    if (t > 5 && d2.replicas() == 0) zero_at = t;
  }
  CHECK(zero_at == 30);  // active at the t = 0 poll: 0 + cooldown 30, before the initial 60
}

TEST_CASE("KEDA without push wakes only on a poll", "[sim][keda]") {
  KedaConfig keda;  // polling 30, no push
  const HpaConfig hpa;
  KedaHpaModel model(keda, hpa, 7, 0);  // polls at t % 30 == 23
  ScriptedTrigger trigger(1000, 1);
  Deployment d;
  RunTally tally;
  int64_t woke = -1;
  for (int64_t t = 0; t < 60 && woke < 0; ++t) {
    model.Step(t, trigger, d, tally);
    if (d.replicas() > 0) woke = t;
  }
  CHECK(woke == 23);
}

}  // namespace
}  // namespace warmpool::sim
