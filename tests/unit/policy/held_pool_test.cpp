#include "policy/held_pool.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1'800'000'000));
const HoldSettings kHold{seconds(900), seconds(90)};

std::vector<AskedReplicas> Ask(std::vector<std::pair<int64_t, int64_t>> at_replicas) {
  std::vector<AskedReplicas> asked;
  for (const auto& [at, replicas] : at_replicas) {
    asked = RecordAsked(std::move(asked), replicas, kT0 + seconds(at), kHold);
  }
  return asked;
}

TEST_CASE("Asked counts are kept where they change", "[policy][held]") {
  const auto asked = Ask({{0, 1}, {10, 1}, {20, 5}, {30, 5}, {40, 1}});
  REQUIRE(asked.size() == 3);
  CHECK(asked[1] == AskedReplicas{kT0 + seconds(20), 5});
  // An observation not newer than the last entry changes nothing.
  CHECK(RecordAsked(asked, 9, kT0 + seconds(40), kHold) == asked);
}

TEST_CASE("The HPA holds the most asked for within its window", "[policy][held]") {
  const auto asked = Ask({{0, 8}, {100, 1}});
  CHECK(HeldReplicas(asked, kT0 + seconds(50), kHold) == 8);
  CHECK(HeldReplicas(asked, kT0 + seconds(999), kHold) == 8);   // 8 ended at 100: 899 s ago
  CHECK(HeldReplicas(asked, kT0 + seconds(1000), kHold) == 1);  // a window after it ended
  CHECK(HeldReplicas({}, kT0, kHold) == 0);
  // Entries a window old are dropped as new ones come.
  CHECK(Ask({{0, 8}, {100, 1}, {1000, 2}}).size() == 2);
}

TEST_CASE("After a scale to zero the pool is gone", "[policy][held]") {
  // Inactive (0) from 200 s: KEDA scales to zero cooldown + a poll later (90 s here).
  const auto asked = Ask({{0, 8}, {100, 1}, {200, 0}});
  CHECK(HeldReplicas(asked, kT0 + seconds(289), kHold) == 8);
  CHECK(HeldReplicas(asked, kT0 + seconds(290), kHold) == 0);
  // Active again from zero: KEDA starts one replica and the HPA never scales up to the old 8.
  const auto again = RecordAsked(asked, 1, kT0 + seconds(300), kHold);
  CHECK(again == std::vector<AskedReplicas>{{kT0 + seconds(300), 1}});
  CHECK(HeldReplicas(again, kT0 + seconds(300), kHold) == 1);
  // Inactive too briefly for KEDA to act: the pool is still held.
  const auto brief = Ask({{0, 8}, {100, 0}, {150, 1}});
  CHECK(HeldReplicas(brief, kT0 + seconds(160), kHold) == 8);
}

TEST_CASE("The pool scaled to zero is what the HPA held just before", "[policy][held]") {
  // 8 asked at 0, 3 from 100, inactive from 200: KEDA scales the 8 to zero at 290.
  const auto asked = Ask({{0, 8}, {100, 3}, {200, 0}});
  CHECK_FALSE(PoolScaledToZero(asked, kT0 + seconds(289), kHold));
  const auto released = PoolScaledToZero(asked, kT0 + seconds(400), kHold);
  REQUIRE(released);
  CHECK(released->at == kT0 + seconds(290));
  CHECK(released->replicas == 8);
  // Still active, or nothing asked yet: nothing was released.
  CHECK_FALSE(PoolScaledToZero(Ask({{0, 8}, {100, 3}}), kT0 + seconds(400), kHold));
  CHECK_FALSE(PoolScaledToZero({}, kT0, kHold));
}

TEST_CASE("A history is bounded", "[policy][held]") {
  std::vector<AskedReplicas> asked;
  for (int64_t i = 0; i < 500; ++i) {
    asked = RecordAsked(std::move(asked), 1 + i % 2, kT0 + seconds(i), kHold);
  }
  CHECK(asked.size() == kMaxAskedEntries);
  CHECK(asked.back().since == kT0 + seconds(499));
}

}  // namespace
}  // namespace warmpool::policy
