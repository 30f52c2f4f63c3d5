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

// A real unacked value as kombu 5.2.4 writes it (celery-redis.md §1.5), eta set by countdown.
std::string UnackedValue(const std::string& routing_key, const std::string& eta_json) {
  return R"([{"body": "W1tdLCB7fSwge31d", "content-encoding": "utf-8", "content-type": "application/json", )"
         R"("headers": {"lang": "py", "task": "tasks.add", "id": "b60d", "eta": )" +
         eta_json +
         R"(, "expires": null, "retries": 0, "timelimit": [null, null]}, )"
         R"("properties": {"delivery_tag": "t1", "delivery_info": {"exchange": "", "routing_key": ")" +
         routing_key + R"("}, "priority": 0, "body_encoding": "base64"}}, "", ")" + routing_key +
         R"("])";
}

TEST_CASE("Unacked entries count as in flight or scheduled by eta", "[backlog]") {
  const auto now = At(k2000Utc);
  BacklogReading r;
  r.per_queue["gpu"];
  r.per_queue["cpu"];
  const std::string values[] = {
      UnackedValue("gpu", "null"),                            // running
      UnackedValue("gpu", R"("2026-11-29T20:05:00+00:00")"),  // countdown, future
      UnackedValue("gpu", R"("2026-11-29T20:01:00+00:00")"),  // earlier future
      UnackedValue("gpu", R"("2026-11-29T19:00:00+00:00")"),  // due: running
      UnackedValue("cpu", "null"),
      UnackedValue("cpu", R"("2026-11-29T21:30:00+01:00")"),  // 20:30 UTC: scheduled
      UnackedValue("other", "null"),                          // not our queue
  };
  for (const auto& v : values) {
    UnackedEntry e;
    REQUIRE(ParseUnackedEntry(v, &e));
    CountUnackedEntry(e, now, &r);
  }
  CHECK(r.per_queue["gpu"].in_flight == 2);
  CHECK(r.per_queue["gpu"].scheduled == 2);
  CHECK(r.per_queue["cpu"].in_flight == 1);
  CHECK(r.per_queue["cpu"].scheduled == 1);
  CHECK(r.in_flight() == 3);
  CHECK(r.scheduled() == 3);
  // In-flight delivery tags feed the run-time measurement (scheduled ones do not).
  CHECK(r.in_flight_tags == std::vector<std::string>{"t1", "t1", "t1"});
  REQUIRE(r.earliest_eta);
  CHECK(*r.earliest_eta == At(k2000Utc + 60));
}

TEST_CASE("Values that are not kombu's shape are rejected", "[backlog]") {
  UnackedEntry e;
  for (const char* bad : {"", "{}", "[1,2,3]", "[{}, \"\"]", "not json", "[{}, \"\", 5]"}) {
    DYNAMIC_SECTION(bad) { CHECK_FALSE(ParseUnackedEntry(bad, &e)); }
  }
}

TEST_CASE("Metric names are lower-case and stable per queue set", "[backlog]") {
  policy::ScalerMetadata md;
  md.queues = {"GPU.high", "cpu_q"};
  CHECK(ScalerCore::MetricNameFor(md) == "warmpool-gpu-high-cpu-q");
  md.queues = {"celery"};
  CHECK(ScalerCore::MetricNameFor(md) == "warmpool-celery");
}

TEST_CASE("ProbeTarget cache keys differ by every field", "[backlog]") {
  ProbeTarget a{"default", nullptr, "", {"gpu"}, {0, 3, 6, 9}, true};
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
}

}  // namespace
}  // namespace warmpool::scaler
