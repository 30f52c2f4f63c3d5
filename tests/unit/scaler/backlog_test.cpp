#include "scaler/backlog.h"

#include <catch2/catch.hpp>

#include "scaler/scaler_core.h"

namespace warmpool::scaler {
namespace {

using std::chrono::system_clock;

system_clock::time_point At(int64_t unix_seconds) {
  return system_clock::time_point(std::chrono::seconds(unix_seconds));
}
constexpr int64_t k2000Utc = 1795982400;  // 2026-11-29T20:00:00Z

// An unacked entry as celery::ParseUnackedValue gives it (its parsing is tested there).
celery::UnackedEntry Unacked(const std::string& routing_key, std::optional<int64_t> eta = {}) {
  celery::UnackedEntry e;
  e.routing_key = routing_key;
  e.delivery_tag = "t1";
  if (eta) e.eta = static_cast<double>(*eta);
  return e;
}

TEST_CASE("Unacked entries count as in flight or scheduled by eta", "[backlog]") {
  const auto now = At(k2000Utc);
  BacklogReading r;
  r.per_queue["gpu"];
  r.per_queue["cpu"];
  const celery::UnackedEntry entries[] = {
      Unacked("gpu"),                   // running
      Unacked("gpu", k2000Utc + 300),   // countdown, future
      Unacked("gpu", k2000Utc + 60),    // earlier future
      Unacked("gpu", k2000Utc - 3600),  // due: running
      Unacked("gpu", k2000Utc),         // due this instant: running
      Unacked("cpu"),
      Unacked("cpu", k2000Utc + 1800),  // scheduled
      Unacked("other"),                 // not our queue
  };
  for (const auto& e : entries) CountUnackedEntry(e, now, &r);
  CHECK(r.per_queue["gpu"].in_flight == 3);
  CHECK(r.per_queue["gpu"].scheduled == 2);
  CHECK(r.per_queue["cpu"].in_flight == 1);
  CHECK(r.per_queue["cpu"].scheduled == 1);
  CHECK(r.per_queue.count("other") == 0);
  CHECK(r.in_flight() == 4);
  CHECK(r.scheduled() == 3);
  // In-flight delivery tags feed the run-time measurement (scheduled ones do not).
  CHECK(r.in_flight_tags == std::vector<std::string>{"t1", "t1", "t1", "t1"});
  REQUIRE(r.earliest_eta);
  CHECK(*r.earliest_eta == At(k2000Utc + 60));
}

TEST_CASE("An entry's fractional eta keeps its sub-second part", "[backlog]") {
  BacklogReading r;
  r.per_queue["gpu"];
  celery::UnackedEntry e = Unacked("gpu");
  e.eta = k2000Utc + 0.25;
  CountUnackedEntry(e, At(k2000Utc), &r);
  REQUIRE(r.earliest_eta);
  // Unix seconds as a double resolve to about 0.2 us around 2026.
  const auto off = *r.earliest_eta - At(k2000Utc) - std::chrono::milliseconds(250);
  CHECK(std::chrono::abs(off) < std::chrono::microseconds(1));
}

TEST_CASE("Metric names are lower-case and stable per queue set", "[backlog]") {
  policy::ScalerMetadata md;
  md.queues = {"GPU.high", "cpu_q"};
  CHECK(ScalerCore::MetricNameFor(md) == "warmpool-gpu-high-cpu-q");
  md.queues = {"celery"};
  CHECK(ScalerCore::MetricNameFor(md) == "warmpool-celery");
}

TEST_CASE("ProbeTarget cache keys differ by every field", "[backlog]") {
  ProbeTarget a;
  a.connection = "default";
  a.queues = {"gpu"};
  ProbeTarget b = a;
  CHECK(a.CacheKey() == b.CacheKey());
  b.key_prefix = "p:";
  CHECK(a.CacheKey() != b.CacheKey());
  b = a;
  b.read_unacked = false;
  CHECK(a.CacheKey() != b.CacheKey());
  b = a;
  b.connection = "other";
  CHECK(a.CacheKey() != b.CacheKey());
  b = a;
  b.priority_levels = {0, 3};
  CHECK(a.CacheKey() != b.CacheKey());
  b = a;
  b.learning.cold_start_seconds = 60;  // what the shared state learns with
  CHECK(a.CacheKey() != b.CacheKey());
  b = a;
  b.learning.prewarm_histogram = false;
  CHECK(a.CacheKey() != b.CacheKey());
  b = a;
  b.learning.max_replicas = 3;  // not read by Observe: same reading, same state
  CHECK(a.CacheKey() == b.CacheKey());
}

}  // namespace
}  // namespace warmpool::scaler
