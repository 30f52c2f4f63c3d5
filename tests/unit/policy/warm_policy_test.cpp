#include "policy/warm_policy.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));

struct PolicyCase {
  const char* name;
  int64_t tasks_per_replica, activation, min_warm, max_replicas;
  int64_t pending, in_flight;
  bool active;
  int64_t desired;
};

TEST_CASE("Policy v1 sizes the pool from pending + in flight", "[policy]") {
  // clang-format off
  const PolicyCase cases[] = {
      // name                         tpr act warm max  pend infl  active desired
      {"idle scales to zero",         1,  0,  0,   100, 0,   0,    false, 0},
      {"one task wakes one replica",  1,  0,  0,   100, 1,   0,    true,  1},
      {"in flight keeps it active",   1,  0,  0,   100, 0,   3,    true,  3},
      {"tasks per replica rounds up", 4,  0,  0,   100, 9,   0,    true,  3},
      {"capped at max",               1,  0,  0,   5,   50,  2,    true,  5},
      {"warm floor while idle",       1,  0,  2,   100, 0,   0,    true,  2},
      {"warm floor below work",       1,  0,  2,   100, 7,   0,    true,  7},
      {"activation is strictly >",    1,  3,  0,   100, 3,   0,    false, 3},
      {"above activation",            1,  3,  0,   100, 3,   1,    true,  4},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      ScalerMetadata spec;
      spec.tasks_per_replica = c.tasks_per_replica;
      spec.activation_backlog = c.activation;
      spec.min_warm_replicas = c.min_warm;
      spec.max_replicas = c.max_replicas;
      Decision d = Decide(spec, {c.pending, c.in_flight, 0}, {}, kNow);
      CHECK(d.active == c.active);
      CHECK(d.desired_replicas == c.desired);
      CHECK_FALSE(d.reason.empty());
    }
  }
}

TEST_CASE("Scheduled (eta) tasks alone do not size the pool in v1", "[policy]") {
  Decision d = Decide(ScalerMetadata{}, {0, 0, 4}, {}, kNow);
  CHECK_FALSE(d.active);
  CHECK(d.desired_replicas == 0);
}

}  // namespace
}  // namespace warmpool::policy
