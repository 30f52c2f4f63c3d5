#include "sim/recorder.h"

#include <catch2/catch.hpp>

namespace warmpool::sim {
namespace {

TEST_CASE("Recorded samples become arrivals and FIFO durations", "[sim][record]") {
  // t=0: 2 pending. t=1: one started (a). t=3: a done, b started, 1 more arrived. t=6: b done.
  std::vector<QueueSample> samples = {
      {0, 2, {}, {}},
      {1, 1, {"a"}, {{"a", "app.resize"}}},
      {3, 1, {"b"}, {}},  // b's message carries no task name
      {6, 0, {}, {}},
  };
  Workload w = WorkloadFromSamples(samples, "rec");
  REQUIRE(w.tasks.size() == 3);
  CHECK(w.tasks[0].arrival_s == 0);
  CHECK(w.tasks[1].arrival_s == 0);
  CHECK(w.tasks[2].arrival_s == 3);
  CHECK(w.tasks[0].duration_s == Approx(2));    // a: seen 1..3
  CHECK(w.tasks[1].duration_s == Approx(3));    // b: seen 3..6
  CHECK(w.tasks[2].duration_s == Approx(2.5));  // never started: mean
  CHECK(w.tasks[0].task == "app.resize");
  CHECK(w.tasks[1].task.empty());
  CHECK(w.tasks[2].task.empty());
  CHECK(WorkloadFromSamples({}, "empty").tasks.empty());
}

}  // namespace
}  // namespace warmpool::sim
