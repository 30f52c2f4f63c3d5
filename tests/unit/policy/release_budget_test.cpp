// The release budget: at most `releasesPerHour` pools scaled to zero an hour, none back to back,
// earned from the queue's first work on.
// A release and the come-back after it are two reversals of the replica count; once the budget
// is spent the policy keeps one idle replica while the learned gaps say work may come back before
// the budget allows a release.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "policy/policy_state.h"
#include "policy/scaler_metadata.h"
#include "policy/warm_policy.h"
#include "tests/unit/policy/observations.h"

namespace warmpool::policy {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
const auto kNow = std::chrono::system_clock::time_point(seconds(1'800'000'000));

using test::Work;

// Idle for 10 minutes after one replica's work, past any keep-alive, the busy periods 12-19
// minutes apart (the next one is due within minutes, while the node would still linger: KEDA's
// time to zero and nodeUnneededSeconds, 11.5 minutes), the budget's time at `budget_at`.
PolicyState IdleAfterOneReplica(std::optional<std::chrono::system_clock::time_point> budget_at) {
  PolicyState s;
  for (int i = 0; i < 8; ++i) s.gaps = RecordGap(std::move(s.gaps), minutes(12 + i));
  s.burst_work = 1;
  s.busy_since = kNow - minutes(11);
  s.idle_since = kNow - minutes(10);
  s.asked = {{kNow - minutes(11), 1}};
  s.release_budget_at = budget_at;
  return s;
}

// The default metadata with a fixed one-minute keep-alive, over before each check: what holds
// then is the budget, not the learned keep-alive (which holds through gaps the node outlives on
// its own, keep_alive_cost.h).
ScalerMetadata OneMinuteKeepAlive() {
  ScalerMetadata spec;
  spec.keep_alive_seconds = 60;
  return spec;
}

TEST_CASE("Spending a release moves the budget one interval past the later of it and now",
          "[policy][release-budget]") {
  ScalerMetadata spec;  // 1 an hour
  CHECK(SpendRelease(spec, std::nullopt, kNow) == kNow + hours(1));
  CHECK(SpendRelease(spec, kNow + hours(1), kNow + minutes(10)) == kNow + hours(2));
  CHECK(SpendRelease(spec, kNow, kNow + hours(3)) == kNow + hours(4));  // unused budget is lost
  // A release the budget did not allow (the gaps gave no reason to hold) is owed: the next
  // conforms an interval later still.
  CHECK(SpendRelease(spec, kNow + hours(2), kNow) == kNow + hours(3));
  spec.releases_per_hour = 4;
  CHECK(SpendRelease(spec, std::nullopt, kNow) == kNow + minutes(15));
  spec.releases_per_hour.reset();
  CHECK(SpendRelease(spec, std::nullopt, kNow) == std::nullopt);
}

TEST_CASE("A spent budget keeps one idle replica until a release would conform",
          "[policy][release-budget]") {
  const ScalerMetadata spec = OneMinuteKeepAlive();  // 1 an hour; KEDA at zero 90 s after inactive
  // A release 5 minutes ago: the next conforms 55 minutes from now.
  PolicyState s = IdleAfterOneReplica(kNow + minutes(55));
  const Decision d = Decide(spec, Work(0), s, kNow);
  CHECK(d.active);
  CHECK(d.desired_replicas == 1);
  CHECK(d.reason == kReasonReleaseBudget);
  // 5 minutes on (busy 16 minutes ago), work may still come back before a release conforms.
  CHECK(Decide(spec, Work(0), s, kNow + minutes(5)).reason == kReasonReleaseBudget);
  // Two releases in the last 10 minutes hold as one does: none go back to back.
  s.release_budget_at = kNow + minutes(110);
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  // The last release over an hour ago: a release by the time KEDA acts conforms, nothing is held.
  s.release_budget_at = kNow + seconds(90);
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
  // One that conforms 10 minutes from now: work is likely back before then, hold.
  s.release_budget_at = kNow + minutes(10);
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  // A full budget (no release yet) holds nothing either.
  s.release_budget_at.reset();
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
}

TEST_CASE("The budget holds while work may come back before a release conforms",
          "[policy][release-budget]") {
  const ScalerMetadata spec = OneMinuteKeepAlive();
  PolicyState s = IdleAfterOneReplica(kNow + minutes(55));
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  // Ten minutes later no gap learned is that long: the work is overdue, the hold ends.
  CHECK(Decide(spec, Work(0), s, kNow + minutes(10)).reason == kReasonIdle);
  // Gaps of 20-27 minutes: the next start comes after the node is gone, but before the budget
  // allows a release: releasing now would still be a release and a come-back. Hold.
  s.gaps = {};
  for (int i = 0; i < 8; ++i) s.gaps = RecordGap(std::move(s.gaps), minutes(20 + i));
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  // Gaps of 60-67 minutes and a release that conforms in 10: no come-back before then, so a
  // hold would be paid for nothing. Release.
  s.gaps = {};
  for (int i = 0; i < 8; ++i) s.gaps = RecordGap(std::move(s.gaps), minutes(60 + i));
  s.release_budget_at = kNow + minutes(10);
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
  // The same gaps with a release 55 minutes off (the busy period started 11 minutes ago): the
  // next call may come first. Hold.
  s.release_budget_at = kNow + minutes(55);
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  // It binds from the first gap learned, not from the three a pre-warm needs: two gaps of
  // 12-13 minutes hold; none learned, nothing says work comes back: no hold.
  s.gaps = {};
  for (int i = 0; i < 2; ++i) s.gaps = RecordGap(std::move(s.gaps), minutes(12 + i));
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  s.gaps = {};
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
}

TEST_CASE("The budget holds one replica: neither a burst's pool nor one at zero",
          "[policy][release-budget]") {
  const ScalerMetadata spec = OneMinuteKeepAlive();
  PolicyState s = IdleAfterOneReplica(kNow + hours(1));
  s.burst_work = 6;
  s.asked = {{kNow - minutes(11), 6}, {kNow - minutes(10), 1}};  // the HPA still holds 6
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
  s.asked = {{kNow - minutes(20), 6}, {kNow - minutes(16), 1}};  // the HPA let 6 go a minute ago
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonReleaseBudget);
  // Inactive for longer than KEDA's time to zero: the pool is gone, asking would start a pod.
  s.asked = {{kNow - minutes(11), 1}, {kNow - minutes(5), 0}};
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
  // No history (a restarted scaler): nothing known to be held.
  s.asked.clear();
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
}

TEST_CASE("releasesPerHour: off releases whenever the keep-alive ends",
          "[policy][release-budget]") {
  ScalerMetadata spec = OneMinuteKeepAlive();
  spec.releases_per_hour.reset();
  const PolicyState s = IdleAfterOneReplica(kNow + hours(5));
  CHECK(Decide(spec, Work(0), s, kNow).reason == kReasonIdle);
}

TEST_CASE("A queue's budget opens empty at its first work", "[policy][release-budget]") {
  ScalerMetadata spec;  // 1 an hour
  CHECK(OpeningReleaseBudget(spec, kNow) == kNow + hours(1));
  // Idle observations open nothing: a queue's time starts with its first task.
  PolicyState s = Observe(PolicyState{}, spec, Work(0), kNow);
  CHECK_FALSE(s.release_budget_at);
  s = Observe(s, spec, Work(2), kNow + minutes(30));
  CHECK(s.release_budget_at == kNow + minutes(90));
  // Later busy periods leave it to the releases that spend it.
  s = Observe(s, spec, Work(0), kNow + minutes(31));
  s = Observe(s, spec, Work(1), kNow + minutes(32));  // back before KEDA could scale to zero
  CHECK(s.release_budget_at == kNow + minutes(90));
  // A state saved before the budget opened empty (busy before, no budget) keeps a full one.
  PolicyState saved;
  saved.busy_since = kNow - hours(3);
  saved.idle_since = kNow - hours(2);
  CHECK_FALSE(Observe(saved, spec, Work(1), kNow).release_budget_at);
  // Four an hour: earned 15 minutes on; off: no budget.
  spec.releases_per_hour = 4;
  CHECK(Observe(PolicyState{}, spec, Work(1), kNow).release_budget_at == kNow + minutes(15));
  spec.releases_per_hour.reset();
  CHECK_FALSE(OpeningReleaseBudget(spec, kNow));
  CHECK_FALSE(Observe(PolicyState{}, spec, Work(1), kNow).release_budget_at);
}

TEST_CASE("Observe spends the budget when KEDA scales the pool to zero, and the policy then holds",
          "[policy][release-budget]") {
  // Cooldown 60 s: KEDA at zero 90 s after the policy goes inactive.
  const ScalerMetadata spec = OneMinuteKeepAlive();
  auto at = [](int64_t t) { return kNow + seconds(t); };
  PolicyState s;
  // One-task busy periods 7-25 minutes apart (too spread for a pre-warm window), idle from 90 s
  // after each start; the reasons of the last period's decisions.
  std::set<std::string> reasons;
  auto period = [&](int64_t t, int64_t next) {
    reasons.clear();
    s = Observe(s, spec, Work(1), at(t));
    s = Observe(s, spec, Work(0, 1), at(t + 30));
    for (int64_t poll = t + 90; poll < next; poll += 10) {
      Decision d;
      s = Observe(s, spec, Work(0), at(poll), &d);
      reasons.insert(d.reason);
    }
  };
  // The first release: no gap learned says work comes back, so nothing holds, but the budget
  // opened empty at the first work, so the release is owed: the next conforms two intervals on.
  period(0, 600);
  REQUIRE(s.released_at);
  const auto first = *s.released_at;
  CHECK(s.release_budget_at == at(0) + hours(2));
  // One gap (10 minutes) says the next start is near: one replica stays while it may come, and
  // goes, over budget and owed, once the work is overdue by that gap.
  period(600, 1500);
  CHECK(reasons.count(std::string(kReasonReleaseBudget)) == 1);
  REQUIRE(s.released_at > first);
  const auto second = *s.released_at;
  CHECK(second >= at(600 + 600));
  CHECK(s.release_budget_at == at(0) + hours(3));
  // Gaps of 10 and 15 minutes: the next call, 7 then 10 minutes on, comes while one replica
  // stays. Nothing is released.
  period(1500, 1920);
  period(1920, 2520);
  CHECK(s.released_at == second);
  CHECK(reasons.count(std::string(kReasonReleaseBudget)) == 1);
  // Left idle past every gap learned, the work is overdue: released after all.
  period(2520, 4320);
  CHECK(s.released_at > second);
}

}  // namespace
}  // namespace warmpool::policy
