#include "policy/arrival_forecast.h"

#include <catch2/catch.hpp>

#include "policy/policy_state.h"
#include "policy/scaler_metadata.h"
#include "policy/warm_policy.h"

using namespace warmpool::policy;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

namespace {

// Monday 2027-01-04 00:00 UTC.
const auto kMonday = std::chrono::system_clock::time_point(seconds(1'799'020'800));

Observation Work(int64_t pending, int64_t finished = 0) {
  Observation o;
  o.pending = pending;
  if (finished > 0) {
    o.measured_task_seconds = 45;
    o.measured_task_count = finished;
  }
  return o;
}

// `days` weekdays from Monday, observed every minute: 10 tasks arrive at 09:10 and wait until
// they all finish at 09:20; nothing else all day.
PolicyState LearnOfficeMornings(int days) {
  PolicyState s;
  for (int d = 0; d < days; ++d) {
    for (int m = 0; m < 24 * 60; ++m) {
      const auto t = kMonday + hours(24 * d) + minutes(m);
      Observation o = Work(0);
      if (m >= 9 * 60 + 10 && m < 9 * 60 + 20) o = Work(10);
      if (m == 9 * 60 + 20) o = Work(0, 10);
      s = Observe(s, {}, o, t);
    }
  }
  return s;
}

}  // namespace

TEST_CASE("Arrival buckets are the UTC hour, weekends apart", "[forecast]") {
  CHECK(ArrivalBucket(kMonday) == 0);
  CHECK(ArrivalBucket(kMonday + hours(10) + minutes(59)) == 10);
  CHECK(ArrivalBucket(kMonday + hours(4 * 24 + 23)) == 23);  // Friday 23:00
  CHECK(ArrivalBucket(kMonday + hours(5 * 24 + 12)) == 36);  // Saturday 12:00
  CHECK(ArrivalBucket(kMonday + hours(6 * 24 + 23)) == 47);  // Sunday 23:00
  CHECK(ArrivalBucket(kMonday + hours(7 * 24 + 1)) == 1);    // next Monday 01:00
}

TEST_CASE("Hours are folded once whole, partial and unobserved ones never", "[forecast]") {
  ArrivalForecast f;
  f = CountArrivals(f, kMonday + minutes(30), 5);  // first seen mid-hour: partial
  f = CountArrivals(f, kMonday + minutes(90), 7);  // 01:30: hour 0 closed, not folded
  CHECK(f.rate.empty());
  f = CountArrivals(f, kMonday + minutes(100), 3);
  f = CountArrivals(f, kMonday + minutes(125), 0);  // 02:05: hour 1 (7 + 3) folded
  REQUIRE(f.rate.size() == ArrivalForecast::kBuckets);
  CHECK(f.rate[1] == 10);
  CHECK(f.days[1] == 1);
  CHECK(f.days[0] == 0);
  // Nothing observed from 02:05 to 05:10: hour 5 started unobserved, so it is not folded.
  f = CountArrivals(f, kMonday + minutes(310), 4);
  f = CountArrivals(f, kMonday + minutes(370), 0);
  CHECK(f.days[2] == 1);  // hour 2 was watched from 02:05 on, after an observed hour 1
  CHECK(f.days[5] == 0);
  CHECK(f.days[3] == 0);
}

TEST_CASE("The forecast learns a daily pattern in two days and sizes by Little's law",
          "[forecast]") {
  const PolicyState one = LearnOfficeMornings(1);
  CHECK_FALSE(ForecastRate(one.forecast, kMonday + hours(24 + 9)));  // one day is not a pattern
  const PolicyState s = LearnOfficeMornings(3);
  const auto wednesday = kMonday + hours(2 * 24);
  const auto thursday_9 = kMonday + hours(3 * 24 + 9);
  // Monday's first hour was the first observed: partial. Every other 09:00 hour held 10 tasks.
  REQUIRE(ForecastRate(s.forecast, thursday_9));
  CHECK(*ForecastRate(s.forecast, thursday_9) == Approx(10));
  CHECK(*ForecastRate(s.forecast, wednesday + hours(15)) == 0);
  CHECK_FALSE(ForecastRate(s.forecast, kMonday + hours(5 * 24 + 9)));  // Saturday: never seen
  // 10 tasks an hour of 45 s need 0.125 slots: one replica; with a 5-minute lead it is asked for
  // from 08:55.
  CHECK(ForecastReplicas(s.forecast, thursday_9 - minutes(5), 300, 45, 1) == 1);
  CHECK(ForecastReplicas(s.forecast, thursday_9 - minutes(6), 300, 45, 1) == 0);
  CHECK(ForecastReplicas(s.forecast, thursday_9, 300, 0, 1) == -1);    // duration unknown
  CHECK(ForecastReplicas(s.forecast, thursday_9, 300, 3600, 4) == 3);  // 10 slots / 4 per replica
}

TEST_CASE("forecast: shadow reports, on adds capacity, off does neither", "[forecast]") {
  const PolicyState s = LearnOfficeMornings(3);
  const auto before_nine = kMonday + hours(3 * 24 + 8) + minutes(57);
  ScalerMetadata spec;
  spec.keep_alive_seconds = 0;
  spec.prewarm_histogram = false;
  const Observation idle = Work(0);

  spec.forecast = ScalerMetadata::ForecastMode::kShadow;
  Decision d = Decide(spec, idle, s, before_nine);
  CHECK_FALSE(d.active);
  CHECK(d.desired_replicas == 0);
  CHECK(d.forecast_replicas == 1);

  spec.forecast = ScalerMetadata::ForecastMode::kOn;
  d = Decide(spec, idle, s, before_nine);
  CHECK(d.active);
  CHECK(d.desired_replicas == 1);
  CHECK(d.reason == kReasonForecast);
  // It only adds: a backlog above the forecast is sized as without it.
  Observation busy = Work(30);
  Decision with = Decide(spec, busy, s, before_nine);
  spec.forecast = ScalerMetadata::ForecastMode::kShadow;
  Decision without = Decide(spec, busy, s, before_nine);
  CHECK(with.desired_replicas == without.desired_replicas);

  spec.forecast = ScalerMetadata::ForecastMode::kOff;
  d = Decide(spec, idle, s, before_nine);
  CHECK_FALSE(d.active);
  CHECK(d.forecast_replicas == -1);
}

TEST_CASE("The forecast metadata key", "[forecast][metadata]") {
  ParsedMetadata out;
  REQUIRE(ParseScalerMetadata({}, &out).ok());
  CHECK(out.metadata.forecast == ScalerMetadata::ForecastMode::kShadow);
  REQUIRE(ParseScalerMetadata({{"forecast", "ON"}}, &out).ok());
  CHECK(out.metadata.forecast == ScalerMetadata::ForecastMode::kOn);
  const warmpool::Status s = ParseScalerMetadata({{"forecast", "arima"}}, &out);
  REQUIRE(s.code() == warmpool::Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("forecast=\"arima\""));
}
