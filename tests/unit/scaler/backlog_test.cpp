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
  CHECK(r.in_flight_tasks == std::vector<std::string>{"", "", "", ""});  // Unacked names none
  REQUIRE(r.earliest_eta);
  CHECK(*r.earliest_eta == At(k2000Utc + 60));
}

TEST_CASE("The earliest etas are kept, at most kUpcomingEtas, ascending", "[backlog]") {
  BacklogReading r;
  r.per_queue["gpu"];
  const auto now = At(k2000Utc);
  // Twice the bound, latest first: only the earliest half is kept.
  const auto n = static_cast<int64_t>(policy::kUpcomingEtas);
  for (int64_t i = 2 * n; i >= 1; --i) CountUnackedEntry(Unacked("gpu", k2000Utc + i), now, &r);
  CountUnackedEntry(Unacked("gpu", k2000Utc - 5), now, &r);  // due: in flight, not an eta
  CHECK(r.scheduled() == 2 * n);
  const policy::Observation o = ToObservation(r, true);
  REQUIRE(o.upcoming_etas.size() == policy::kUpcomingEtas);
  for (int64_t i = 0; i < n; ++i) CHECK(o.upcoming_etas[i] == At(k2000Utc + i + 1));
  CHECK(o.earliest_eta == At(k2000Utc + 1));
}

TEST_CASE("In-flight task names stay parallel to the delivery tags", "[backlog]") {
  BacklogReading r;
  r.per_queue["gpu"];
  celery::UnackedEntry named = Unacked("gpu");
  named.task = "app.long";
  named.delivery_tag = "t2";
  celery::UnackedEntry untagged = Unacked("gpu");
  untagged.delivery_tag.clear();  // counted in flight, but not timed
  untagged.task = "app.short";
  celery::UnackedEntry scheduled = Unacked("gpu", k2000Utc + 60);
  scheduled.task = "app.later";
  for (const auto& e : {Unacked("gpu"), named, untagged, scheduled}) {
    CountUnackedEntry(e, At(k2000Utc), &r);
  }
  CHECK(r.in_flight() == 3);
  CHECK(r.in_flight_tags == std::vector<std::string>{"t1", "t2"});
  CHECK(r.in_flight_tasks == std::vector<std::string>{"", "app.long"});
}

// A queued kombu envelope naming `task` (TaskNameOfEnvelope's parsing is tested in celery/).
std::string Queued(const std::string& task) {
  return std::string(R"({"body": "W1tdLCB7fSwge31d", "headers": {"lang": "py", "task": ")") + task +
         R"(", "id": "x"}, "properties": {"delivery_tag": "t"}})";
}

TEST_CASE("The pending sample reads each sub-list from its delivered end, in step order",
          "[backlog]") {
  // LRANGE returns kombu's LPUSHed lists newest first. Sub-list 0 (delivered first) holds 4 long
  // ones pushed last (delivered last) and 6 short ones pushed before them; sub-list 3 holds 16
  // mediums, and step 6 16 more that the sample never reaches.
  std::vector<std::string> step0(4, Queued("app.long"));
  step0.insert(step0.end(), 6, Queued("app.short"));
  step0.insert(step0.begin() + 2, "not json");  // nameless: takes its place, counted nowhere
  std::vector<std::string> step3(16, Queued("app.medium"));
  std::vector<std::string> step6(16, Queued("app.never"));
  std::vector<std::vector<std::string_view>> tails;
  for (const auto* list : {&step0, &step3, &step6}) {
    tails.emplace_back(list->begin(), list->end());
  }
  BacklogReading r;
  r.pending_sample = {{"app.short", 1}};  // other queues' names add up
  r.pending_sampled = 3;
  AddPendingSample(tails, At(k2000Utc), &r);
  // 11 of step 0 (one nameless), then 5 of step 3.
  CHECK(r.pending_sample ==
        std::map<std::string, int64_t>{{"app.short", 7}, {"app.long", 4}, {"app.medium", 5}});
  CHECK(r.pending_sampled == 3 + 16);
  CHECK(r.pending_sample_not_due == 0);
  BacklogReading none;
  AddPendingSample({}, At(k2000Utc), &none);
  AddPendingSample({{}, {}}, At(k2000Utc), &none);
  CHECK(none.pending_sample.empty());
  CHECK(none.pending_sampled == 0);
}

// A queued protocol 2 envelope with headers.eta as Celery writes it (ISO-8601, UTC offset).
std::string QueuedWithEta(const std::string& eta) {
  return std::string(
             R"({"body": "W1tdLCB7fSwge31d", "headers": {"lang": "py", "task": "app.later",)") +
         R"( "id": "x", "eta": ")" + eta + R"("}, "properties": {"delivery_tag": "t"}})";
}

TEST_CASE("The pending sample counts the ETA tasks not yet due", "[backlog][eta]") {
  // k2000Utc is 2026-11-29T20:00:00Z.
  std::vector<std::string> list = {QueuedWithEta("2026-11-29T20:10:00+00:00"),  // due in 10 min
                                   QueuedWithEta("2026-11-29T19:59:00+00:00"),  // overdue
                                   Queued("app.now"), QueuedWithEta("not a time")};
  std::vector<std::vector<std::string_view>> tails(1);
  tails[0].assign(list.begin(), list.end());
  BacklogReading r;
  AddPendingSample(tails, At(k2000Utc), &r);
  CHECK(r.pending_sampled == 4);
  CHECK(r.pending_sample_not_due == 1);
  CHECK(r.pending_sample == std::map<std::string, int64_t>{{"app.later", 3}, {"app.now", 1}});
  r.per_queue["gpu"].pending = 40;
  const policy::Observation o = ToObservation(r, true);
  CHECK(o.pending_sampled == 4);
  CHECK(o.pending_sample_not_due == 1);
}

TEST_CASE("The observation carries the pending sample", "[backlog]") {
  BacklogReading r;
  r.per_queue["gpu"].pending = 3;
  r.pending_sample = {{"app.short", 2}, {"app.long", 1}};
  for (bool count_in_flight : {true, false}) {
    CHECK(ToObservation(r, count_in_flight).pending_sample == r.pending_sample);
  }
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
  b.learning.max_replicas = 3;  // the other keys enter the identity as written, below
  CHECK(a.CacheKey() == b.CacheKey());
  b.policy_keys = "maxReplicas=3\x1equeues=gpu\x1e";  // ScalerCore::Plan: PolicyKeysOf
  CHECK(a.CacheKey() != b.CacheKey());
}

}  // namespace
}  // namespace warmpool::scaler
