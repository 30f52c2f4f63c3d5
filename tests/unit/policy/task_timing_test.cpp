#include "policy/task_timing.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1'800'000'000));

TEST_CASE("Run times come from in-flight tags appearing and disappearing", "[timing]") {
  TaskTiming t;
  CHECK_FALSE(ObserveInFlightTags(&t, {"a", "b"}, kT0));
  CHECK_FALSE(ObserveInFlightTags(&t, {"a", "b", "c"}, kT0 + seconds(5)));
  auto mean = ObserveInFlightTags(&t, {"c"}, kT0 + seconds(10));  // a, b ran 10 s
  REQUIRE(mean);
  CHECK(*mean == Approx(10));
  mean = ObserveInFlightTags(&t, {}, kT0 + seconds(25));  // c ran 20 s
  REQUIRE(mean);
  CHECK(*mean == Approx(20));
  CHECK(t.first_seen.empty());
  CHECK_FALSE(ObserveInFlightTags(&t, {}, kT0 + seconds(30)));
}

TEST_CASE("A repeated snapshot at the same instant measures nothing", "[timing]") {
  TaskTiming t;
  ObserveInFlightTags(&t, {"a"}, kT0);
  CHECK_FALSE(ObserveInFlightTags(&t, {}, kT0));  // zero run time is not a measurement
  CHECK(t.first_seen.empty());
}

TEST_CASE("The oldest in-flight tag's age bounds the duration before any finished", "[timing]") {
  TaskTiming t;
  CHECK(OldestInFlightSeconds(t, kT0) == 0);
  ObserveInFlightTags(&t, {"a"}, kT0);
  ObserveInFlightTags(&t, {"a", "b"}, kT0 + seconds(20));
  CHECK(OldestInFlightSeconds(t, kT0 + seconds(30)) == Approx(30));
  ObserveInFlightTags(&t, {"b"}, kT0 + seconds(40));  // a finished
  CHECK(OldestInFlightSeconds(t, kT0 + seconds(40)) == Approx(20));
}

}  // namespace
}  // namespace warmpool::policy
