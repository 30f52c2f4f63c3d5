// policy::ObserveInFlight, the scaler's run-time measurement by task name (its nameless form,
// ObserveInFlightTags, is tested in tests/unit/policy).
#include <catch2/catch.hpp>

#include "policy/task_timing.h"

namespace warmpool::policy {
namespace {

using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1'800'000'000));

TEST_CASE("Finished tasks are grouped by the name their tag was first seen with",
          "[timing][task_name]") {
  TaskTiming t;
  FinishedInFlight f = ObserveInFlight(&t, {"a", "b", "c"}, {"app.short", "app.long", ""}, kT0);
  CHECK_FALSE(f.mean_seconds);
  CHECK(f.count == 0);
  CHECK(f.by_task.empty());
  // d has no entry in `tasks`: nameless. b's name is remembered though this snapshot omits it.
  f = ObserveInFlight(&t, {"b", "d", "e"}, {"", "", "app.short"}, kT0 + seconds(10));
  REQUIRE(f.mean_seconds);  // a (app.short) and c (nameless) ran 10 s
  CHECK(*f.mean_seconds == Approx(10));
  CHECK(f.count == 2);
  CHECK(f.by_task == std::vector<FinishedTasks>{{"app.short", 10, 1}});
  f = ObserveInFlight(&t, {}, {}, kT0 + seconds(40));
  REQUIRE(f.mean_seconds);  // b ran 40 s, d and e 30 s
  CHECK(*f.mean_seconds == Approx(100.0 / 3));
  CHECK(f.count == 3);
  CHECK(f.by_task == std::vector<FinishedTasks>{{"app.long", 40, 1}, {"app.short", 30, 1}});
  CHECK(t.first_seen.empty());
  CHECK(t.task_of.empty());  // forgotten with their tags
}

TEST_CASE("The by-name sums are over the tasks the mean is over", "[timing][task_name]") {
  TaskTiming t;
  ObserveInFlight(&t, {"a", "b"}, {"x", "x"}, kT0);
  ObserveInFlight(&t, {"a", "b", "c"}, {"x", "x", "x"}, kT0 + seconds(5));
  // c finishes at the instant it was first seen: no run time, so neither counted nor summed.
  FinishedInFlight f = ObserveInFlight(&t, {}, {}, kT0 + seconds(5));
  REQUIRE(f.mean_seconds);
  CHECK(*f.mean_seconds == Approx(5));
  CHECK(f.count == 2);
  CHECK(f.by_task == std::vector<FinishedTasks>{{"x", 10, 2}});
  CHECK(t.task_of.empty());
}

TEST_CASE("A tag first seen without a name takes a later snapshot's", "[timing][task_name]") {
  TaskTiming t;
  ObserveInFlight(&t, {"a"}, {""}, kT0);
  ObserveInFlight(&t, {"a"}, {"app.late"}, kT0 + seconds(1));
  ObserveInFlight(&t, {"a"}, {"app.other"}, kT0 + seconds(2));  // the first name stays
  const FinishedInFlight f = ObserveInFlight(&t, {}, {}, kT0 + seconds(8));
  CHECK(f.by_task == std::vector<FinishedTasks>{{"app.late", 8, 1}});
  // The nameless form measures the same mean.
  TaskTiming u;
  ObserveInFlightTags(&u, {"a"}, kT0);
  CHECK(ObserveInFlightTags(&u, {}, kT0 + seconds(8)) == Approx(8));
}

}  // namespace
}  // namespace warmpool::policy
