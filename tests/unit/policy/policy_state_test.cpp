#include "policy/policy_state.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "policy/warm_policy.h"
#include "tests/unit/policy/observations.h"

namespace warmpool::policy {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1'800'000'000));

using test::Work;

TEST_CASE("Observe tracks busy periods, idle gaps and burst size", "[state]") {
  const ScalerMetadata spec;
  PolicyState s;
  s = Observe(s, spec, Work(0), kT0);
  CHECK_FALSE(s.busy);
  CHECK_FALSE(s.idle_since);  // never busy: nothing to keep alive
  s = Observe(s, spec, Work(4, 1), kT0 + seconds(10));
  REQUIRE(s.busy_since);
  CHECK(*s.busy_since == kT0 + seconds(10));
  s = Observe(s, spec, Work(0, 8), kT0 + seconds(20));
  CHECK(s.busy);
  CHECK(s.period_peak == 8);
  CHECK(GapSamples(s.gaps) == 0);  // the first busy period has no gap before it
  s = Observe(s, spec, Work(0), kT0 + seconds(30));
  CHECK_FALSE(s.busy);
  REQUIRE(s.idle_since);
  CHECK(*s.idle_since == kT0 + seconds(30));
  CHECK(s.burst_work == Approx(8));
  s = Observe(s, spec, Work(0), kT0 + seconds(60));
  CHECK(*s.idle_since == kT0 + seconds(30));  // the idle clock does not restart
  s = Observe(s, spec, Work(2), kT0 + seconds(30) + minutes(7) + seconds(5));
  CHECK(GapSamples(s.gaps) == 1);
  CHECK(s.gaps.bins[7] == 1);  // start to start: 455 s - 10 s
  CHECK(*s.busy_since == kT0 + seconds(30) + minutes(7) + seconds(5));
  CHECK_FALSE(s.idle_since);
  s = Observe(s, spec, Work(0), kT0 + minutes(9));
  CHECK(s.burst_work == Approx(5));  // the median of the peaks 8 and 2
}

TEST_CASE("The typical burst is the median of the last five peaks: one outlier does not move it",
          "[state]") {
  PolicyState s;
  auto period = [&](int64_t peak, int i) {
    s = Observe(s, {}, Work(peak), kT0 + minutes(60 * i));
    s = Observe(s, {}, Work(0), kT0 + minutes(60 * i + 10));
  };
  for (int i = 0; i < 4; ++i) period(100, i);
  period(4000, 4);  // a weekly batch among daily ones
  CHECK(s.burst_work == Approx(100));
  REQUIRE(s.recent_peaks.size() == 5);
  for (int i = 5; i < 8; ++i) period(40, i);  // the typical burst shrinks: the median follows
  CHECK(s.burst_work == Approx(40));          // peaks 100, 4000, 40, 40, 40
  period(40, 8);
  CHECK(s.recent_peaks.size() == 5);
  CHECK(s.burst_work == Approx(40));
}

TEST_CASE("Observe folds measured durations into a mean, then an EWMA", "[state]") {
  Observation o = Work(1);
  o.measured_task_seconds = 10;
  PolicyState s = Observe({}, {}, o, kT0);
  CHECK(s.task_seconds == Approx(10));
  CHECK(s.task_count == 1);
  o.measured_task_seconds = 20;
  s = Observe(s, {}, o, kT0 + seconds(1));
  CHECK(s.task_seconds == Approx(15));  // the plain mean while few tasks are in
  o.measured_task_seconds.reset();
  s = Observe(s, {}, o, kT0 + seconds(2));
  CHECK(s.task_seconds == Approx(15));
  o.measured_task_seconds = 3;  // a mean over 10 tasks weighs as 10 measurements
  o.measured_task_count = 10;
  s = Observe(s, {}, o, kT0 + seconds(3));
  CHECK(s.task_seconds == Approx((10 + 20 + 10 * 3) / 12.0));
  CHECK(s.task_count == 12);
  // Past 33 tasks the EWMA's weight (0.03 per task) takes over from the mean.
  o.measured_task_count = 100;
  s = Observe(s, {}, o, kT0 + seconds(4));
  const double w = 1 - std::pow(0.97, 100);  // more than the mean's 100 / 112
  const double mean = (1 - w) * 5 + w * 3;
  CHECK(s.task_seconds == Approx(mean));
  CHECK(s.task_count == 33);
  o.measured_task_seconds = 13;
  o.measured_task_count = 1;
  s = Observe(s, {}, o, kT0 + seconds(5));
  CHECK(s.task_seconds == Approx(0.97 * mean + 0.03 * 13));
}

TEST_CASE("Observe learns each task name's duration apart, as it does all of them", "[state]") {
  Observation o = Work(1);
  o.measured_task_seconds = (3 * 300 + 10 * 45) / 13.0;
  o.measured_task_count = 13;
  o.finished_by_task = {{"app.night", 3 * 300, 3}, {"app.burst", 10 * 45, 10}, {"", 5, 1}};
  PolicyState s = Observe({}, {}, o, kT0);
  REQUIRE(s.task_durations.size() == 2);  // the nameless one counts in task_seconds only
  CHECK(s.task_durations.at("app.night").seconds == Approx(300));
  CHECK(s.task_durations.at("app.night").count == 3);
  CHECK(s.task_durations.at("app.burst").seconds == Approx(45));
  CHECK(s.task_durations.at("app.burst").last_finished == kT0);
  CHECK(s.task_seconds == Approx((3 * 300 + 10 * 45) / 13.0));
  // The same fold as task_seconds: the plain mean of the first 33, per name.
  o.finished_by_task = {{"app.burst", 2 * 60, 2}};
  s = Observe(s, {}, o, kT0 + seconds(1));
  CHECK(s.task_durations.at("app.burst").seconds == Approx((10 * 45 + 2 * 60) / 12.0));
  CHECK(s.task_durations.at("app.night").seconds == Approx(300));
}

TEST_CASE("The durations by name are bounded: the least recently finished name goes", "[state]") {
  PolicyState s;
  for (size_t i = 0; i < kMaxTaskNames + 5; ++i) {
    Observation o = Work(1);
    o.finished_by_task = {{"task." + std::to_string(i), 10.0 + static_cast<double>(i), 1}};
    s = Observe(s, {}, o, kT0 + seconds(static_cast<int64_t>(i) + 1));
  }
  CHECK(s.task_durations.size() == kMaxTaskNames);
  CHECK_FALSE(s.task_durations.count("task.4"));
  CHECK(s.task_durations.count("task.5"));
  CHECK(s.task_durations.count("task." + std::to_string(kMaxTaskNames + 4)));
}

TEST_CASE("A state saved before taskCount existed keeps its settled EWMA", "[state]") {
  PolicyState s;
  s.task_seconds = 4;
  std::string text = EncodeState(s);
  const std::string key = "\"taskCount\":0,";
  REQUIRE(text.find(key) != std::string::npos);
  text.erase(text.find(key), key.size());
  PolicyState decoded;
  REQUIRE(DecodeState(text, &decoded).ok());
  CHECK(decoded.task_count == 33);
}

TEST_CASE("Observe measures cold starts: work waiting with nothing in flight", "[state]") {
  const ScalerMetadata spec;  // coldStartSeconds 300: waits over 150 s count
  PolicyState s = Observe({}, spec, Work(3), kT0);
  REQUIRE(s.waiting_since);
  s = Observe(s, spec, Work(3), kT0 + seconds(200));
  CHECK(*s.waiting_since == kT0);
  s = Observe(s, spec, Work(2, 1), kT0 + seconds(400));
  CHECK_FALSE(s.waiting_since);
  CHECK(s.cold_start_seconds == Approx(400));
  // A pod restart on a lingering node (60 s) is not a cold start.
  s = Observe(s, spec, Work(0), kT0 + seconds(500));
  s = Observe(s, spec, Work(1), kT0 + seconds(600));
  s = Observe(s, spec, Work(0, 1), kT0 + seconds(660));
  CHECK(s.cold_start_seconds == Approx(400));
  // The next real one is folded in with weight 0.3.
  s = Observe(s, spec, Work(0), kT0 + seconds(700));
  s = Observe(s, spec, Work(4), kT0 + seconds(800));
  s = Observe(s, spec, Work(3, 1), kT0 + seconds(1300));
  CHECK(s.cold_start_seconds == Approx(0.7 * 400 + 0.3 * 500));
}

TEST_CASE("Observe counts arrivals into a decaying rate", "[state]") {
  PolicyState s = Observe({}, {}, Work(0), kT0);
  CHECK(s.arrival_rate == 0);
  s = Observe(s, {}, Work(10), kT0 + seconds(10));  // 10 arrived
  CHECK(s.arrival_rate == Approx(10 / kArrivalRateTau));
  CHECK(s.arrival_rate_before_busy == 0);  // the rate before this busy period
  Observation o = Work(6, 2);              // 5 finished (measured) and 3 more arrived
  o.measured_task_seconds = 4;
  o.measured_task_count = 5;
  s = Observe(s, {}, o, kT0 + seconds(20));
  const double after = 10 / kArrivalRateTau * std::exp(-10 / kArrivalRateTau) + 3 / kArrivalRateTau;
  CHECK(s.arrival_rate == Approx(after));
  s = Observe(s, {}, Work(0), kT0 + seconds(30));  // falls: nothing arrived
  CHECK(s.arrival_rate == Approx(after * std::exp(-10 / kArrivalRateTau)));
  const double before = s.arrival_rate * std::exp(-3570 / kArrivalRateTau);
  s = Observe(s, {}, Work(4), kT0 + minutes(60));
  CHECK(s.arrival_rate_before_busy == Approx(before));
  CHECK(s.arrival_rate == Approx(before + 4 / kArrivalRateTau));
  REQUIRE(s.prev_busy_since);
  CHECK(*s.prev_busy_since == kT0 + seconds(10));
}

TEST_CASE("Observe measures a pre-warmed burst's cold start from the window's opening", "[state]") {
  const ScalerMetadata spec;  // coldStartSeconds 300
  PolicyState s;
  for (int i = 0; i < 4; ++i) {
    for (auto g : {minutes(50), minutes(52), minutes(55), minutes(58)}) {
      s.gaps = RecordGap(std::move(s.gaps), g);
    }
  }
  const auto prev = kT0 - minutes(51);
  s = Observe(s, spec, Work(0), kT0 - minutes(60));
  s.busy_since = prev;  // the last burst started 51 min ago; the window opened at 45 min
  REQUIRE(LearnedPrewarmWindow(spec, s));
  s = Observe(s, spec, Work(20), kT0);
  REQUIRE(s.prev_busy_since);
  CHECK(*s.prev_busy_since == prev);
  s = Observe(s, spec, Work(18, 2), kT0 + seconds(200));
  // The pool was asked for at 45 min: 6 min + 200 s, not the 200 s the burst waited.
  CHECK(s.cold_start_seconds == Approx(560));
  SECTION("a burst that waited a whole lead found nothing starting: its own wait counts") {
    PolicyState t = Observe(s, spec, Work(0), kT0 + seconds(900));
    t.busy_since = kT0 + seconds(901) - minutes(51);  // next burst again 51 min after the last
    t = Observe(t, spec, Work(20), kT0 + seconds(901));
    REQUIRE(PrewarmLeadSeconds(spec, t) == Approx(560));
    t = Observe(t, spec, Work(18, 2), kT0 + seconds(901 + 580));  // waited 580 s >= lead
    CHECK(t.cold_start_seconds == Approx(0.7 * 560 + 0.3 * 580));
  }
}

TEST_CASE("Observe is idempotent for repeated or stale observations", "[state]") {
  PolicyState s = Observe({}, {}, Work(3), kT0);
  s = Observe(s, {}, Work(0), kT0 + seconds(5));
  const PolicyState once = s;
  CHECK(Observe(s, {}, Work(0), kT0 + seconds(5)) == once);  // same instant, second replica
  CHECK(Observe(s, {}, Work(9), kT0 + seconds(1)) == once);  // older observation
}

TEST_CASE("Observe remembers what Decide asks for, with the metadata it learns with", "[state]") {
  ScalerMetadata spec;
  spec.drain_seconds.reset();  // one replica per task
  PolicyState s;
  s = Observe(s, spec, Work(6), kT0);
  s = Observe(s, spec, Work(6, 2), kT0 + seconds(10));
  s = Observe(s, spec, Work(0, 2), kT0 + seconds(20));
  REQUIRE(s.asked.size() == 3);
  CHECK(s.asked[0] == AskedReplicas{kT0, 6});
  CHECK(s.asked[1] == AskedReplicas{kT0 + seconds(10), 8});
  CHECK(s.asked[2] == AskedReplicas{kT0 + seconds(20), 2});  // the two still running
  CHECK(HeldReplicas(s.asked, kT0 + seconds(20), HoldSettingsOf(spec)) == 8);
  // Idle: keep-alive asks for one, the HPA still holds 8 until its window (900 s) has passed.
  s = Observe(s, spec, Work(0), kT0 + seconds(30));
  CHECK(s.asked.back().replicas <= 1);
  CHECK(HeldReplicas(s.asked, kT0 + seconds(50), HoldSettingsOf(spec)) == 8);
  spec.scale_down_window_seconds = 15;
  CHECK(HeldReplicas(s.asked, kT0 + seconds(50), HoldSettingsOf(spec)) == 0);
}

TEST_CASE("Observe hands back the decision it remembers, Decide's on the new state", "[state]") {
  ScalerMetadata spec;  // keepAlive auto, the learned pre-warm: both read the state
  PolicyState s;
  std::set<std::string> reasons;
  // Bursts of 3-9 tasks every 4 minutes for 3 hours, then every 30, each draining within 150 s,
  // observed every 15 s: busy, kept alive, idle past KEDA's time to zero, pre-warmed.
  for (int64_t t = 0; t < 12 * 3600; t += 15) {
    const int64_t phase = t < 3 * 3600 ? t % 240 : t % 1800;
    const int64_t burst = 3 + t / 3600 % 7;
    const Observation obs = phase < 60 ? Work(burst) : phase < 150 ? Work(0, burst) : Work(0);
    const auto now = kT0 + seconds(t);
    Decision decided;
    decided.reason = "unset";
    s = Observe(s, spec, obs, now, &decided);
    CHECK(decided == Decide(spec, obs, s, now));
    reasons.insert(decided.reason);
    Decision stale;
    stale.reason = "unset";
    CHECK(Observe(s, spec, obs, now, &stale) == s);  // already applied: the state stays
    CHECK(stale == decided);                         // and the answer is the same
  }
  CHECK(reasons.count(std::string(kReasonKeepAlive)) == 1);
  CHECK(reasons.count(std::string(kReasonPrewarm)) == 1);
}

TEST_CASE("EncodeState/DecodeState round-trip every field", "[state]") {
  PolicyState s;
  for (int i = 0; i < 30; ++i) {
    s = Observe(s, {}, Work(5), kT0 + minutes(10 * i));
    Observation done = Work(0);
    done.measured_task_seconds = 3 + i;
    s = Observe(s, {}, done, kT0 + minutes(10 * i) + seconds(30));
  }
  s = Observe(s, {}, Work(2), kT0 + minutes(400));
  s.cold_start_seconds = 321.5;
  s.released_at = kT0 + minutes(390);
  s.released_replicas = 6;
  s.warm_node_start_seconds = 58.5;
  Observation named = Work(2);
  named.finished_by_task = {{"app.resize", 7.5, 3}, {"app.\"quoted\" name", 90, 1}};
  s = Observe(s, {}, named, kT0 + minutes(401));
  REQUIRE(s.task_durations.size() == 2);
  REQUIRE(!s.forecast.rate.empty());  // hours were folded into the time-of-day forecast
  REQUIRE(s.waiting_since);
  REQUIRE(!s.asked.empty());     // what Decide asked for since the pool last went to zero
  REQUIRE(s.release_budget_at);  // the releases KEDA made spent the budget
  PolicyState back;
  REQUIRE(DecodeState(EncodeState(s), &back).ok());
  CHECK(back == s);
  PolicyState empty;
  REQUIRE(DecodeState(EncodeState(PolicyState{}), &empty).ok());
  CHECK(empty == PolicyState{});
}

TEST_CASE("DecodeState rejects foreign or malformed text and leaves the output alone", "[state]") {
  const char* bad[] = {
      "",
      "not json",
      "[]",
      R"({"v":2,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0})",
      R"({"v":1,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0})",
      R"({"v":1,"busy":false,"gaps":[[999,1]],"taskSeconds":0,"burstWork":0,"periodPeak":0})",
      R"({"v":1,"busy":false,"gaps":[[1]],"taskSeconds":0,"burstWork":0,"periodPeak":0})",
      R"({"v":1,"busy":"no","gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":-1,"burstWork":0,"periodPeak":0})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("forecast":{"hour":5,"count":0,"partial":true,"rate":[1,2],"days":[1,2]}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("forecast":{"hour":-3,"count":0,"partial":true,"rate":[],"days":[]}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("forecast":{"hour":5,"count":"x","partial":true,"rate":[],"days":[]}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("taskDurations":{"a":[-1,3,0]}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("taskDurations":{"a":[5,99,0]}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("taskDurations":{"a":[5,3]}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("taskDurations":[["a",5,3,0]]})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("asked":[[2000,3],[1000,1]]})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("asked":[[1000,-1]]})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("asked":[[1000]]})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("asked":{"1000":1}})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("releasedReplicas":-2})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("warmNodeStartSeconds":-5})",
      R"({"v":1,"busy":false,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0,)"
      R"("releasedAtNs":"soon"})",
  };
  for (const char* text : bad) {
    DYNAMIC_SECTION(text) {
      PolicyState out;
      out.period_peak = 42;
      Status s = DecodeState(text, &out);
      CHECK(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::StartsWith("policy state "));
      CHECK(out.period_peak == 42);
    }
  }
}

TEST_CASE("DecodeState says what is wrong with a stored state", "[state]") {
  PolicyState out;
  CHECK(DecodeState("not json", &out).message() == "policy state is not valid JSON");
  CHECK_THAT(DecodeState(R"({"v":2})", &out).message(), Catch::Contains("version 1"));
  CHECK_THAT(DecodeState(R"({"v":1,"busy":false,"gaps":[[999,1]],"taskSeconds":0,"burstWork":0,)"
                         R"("periodPeak":0})",
                         &out)
                 .message(),
             Catch::Contains("\"gaps\" must be a list of [bin, count] pairs"));
  CHECK_THAT(DecodeState(R"({"v":1,"gaps":[],"taskSeconds":0,"burstWork":0,"periodPeak":0})", &out)
                 .message(),
             Catch::Contains("missing or mistyped field") && Catch::Contains("busy"));
  CHECK_THAT(DecodeState(R"({"v":1,"busy":false,"gaps":[],"taskSeconds":-1,"burstWork":0,)"
                         R"("periodPeak":0})",
                         &out)
                 .message(),
             Catch::Contains("negative"));
}

// Two scaler replicas behind KEDA's round-robin share one encoded state (as in Redis, written with
// WATCH/MULTI so updates are serial). Whichever replica answers, the decisions equal those of a
// single scaler; a replica re-applying an observation another one already applied changes nothing.
TEST_CASE("Two scaler replicas sharing encoded state decide like one", "[state]") {
  ScalerMetadata spec;
  std::vector<Observation> trace;
  for (int hour = 0; hour < 12; ++hour) {
    for (int m = 0; m < 60; ++m) trace.push_back(Work(m < 3 ? 10 : 0, m < 4 ? 2 : 0));
  }
  PolicyState single;
  std::string shared = EncodeState(PolicyState{});
  for (size_t i = 0; i < trace.size(); ++i) {
    const auto now = kT0 + minutes(static_cast<int64_t>(i));
    single = Observe(single, spec, trace[i], now);
    const Decision want = Decide(spec, trace[i], single, now);
    // Replica (i % 2) serves this call; the other one re-applies the same observation later.
    for (int replica = 0; replica < 2; ++replica) {
      PolicyState mine;
      REQUIRE(DecodeState(shared, &mine).ok());
      mine = Observe(mine, spec, trace[i], now);
      shared = EncodeState(mine);
      CHECK(Decide(spec, trace[i], mine, now) == want);
    }
  }
  PolicyState final_shared;
  REQUIRE(DecodeState(shared, &final_shared).ok());
  CHECK(final_shared == single);
  CHECK(GapSamples(single.gaps) == 11);
}

}  // namespace
}  // namespace warmpool::policy
