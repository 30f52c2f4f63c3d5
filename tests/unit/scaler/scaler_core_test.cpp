#include "scaler/scaler_core.h"

#include <catch2/catch.hpp>

#include "scaler/backlog_reader.h"

namespace warmpool::scaler {
namespace {

struct Core {
  ConnectionRegistry registry{{{"default", RedisEndpoint{}}}, RedisPoolOptions{}};
  ScalerMetrics metrics{std::make_shared<prometheus::Registry>()};
  RedisBacklogSource source;
  ScalerCore core{&registry, &source, &metrics, ScalerCore::Options{}};
};

TEST_CASE("Plans are cached per metadata content, whatever the order", "[scaler_core]") {
  Core c;
  std::shared_ptr<const ScalerPlan> a, b, d;
  REQUIRE(c.core.Plan({{"queues", "gpu"}, {"tasksPerReplica", "2"}}, &a).ok());
  REQUIRE(c.core.Plan({{"tasksPerReplica", "2"}, {"queues", "gpu"}}, &b).ok());
  CHECK(a == b);  // same object: parsed once
  REQUIRE(c.core.Plan({{"tasksPerReplica", "3"}, {"queues", "gpu"}}, &d).ok());
  CHECK(a != d);
  CHECK(d->parsed.metadata.tasks_per_replica == 3);
  CHECK(a->metric_name == "warmpool-gpu");
  CHECK(a->target.connection == "default");
  CHECK(a->target.pool != nullptr);
}

TEST_CASE("Plan rejects bad metadata and unknown connections", "[scaler_core]") {
  Core c;
  std::shared_ptr<const ScalerPlan> p;
  Status s = c.core.Plan({{"maxReplicas", "-1"}}, &p);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  s = c.core.Plan({{"redis", "other"}}, &p);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("other"));
  CHECK_THAT(s.message(), Catch::Contains("default"));  // names what is configured
}

}  // namespace
}  // namespace warmpool::scaler
