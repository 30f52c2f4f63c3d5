// What anyone who reaches the gRPC port can make the scaler hold stays bounded.
#include <sstream>

#include <catch2/catch.hpp>
#include <prometheus/text_serializer.h>

#include "scaler/backlog_reader.h"
#include "scaler/object_states.h"
#include "scaler/queue_series.h"
#include "scaler/scaler_core.h"

namespace warmpool::scaler {
namespace {

// "q<i>" built with append: GCC 12 at -O3 misreads "lit" + std::string (-Werror=restrict).
std::string QueueName(int i) {
  std::string name = "q";
  return name.append(std::to_string(i));
}

using namespace std::chrono_literals;

size_t MetricLines(ScalerMetrics& metrics, const std::string& needle) {
  std::istringstream in(prometheus::TextSerializer().Serialize(metrics.registry->Collect()));
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

struct Core {
  explicit Core(ScalerCore::Options options = {}) : core(&registry, &source, &metrics, options) {}
  ConnectionRegistry registry{{{"default", RedisEndpoint{}}}, RedisPoolOptions{}};
  RedisBacklogSource source;
  ScalerMetrics metrics{std::make_shared<prometheus::Registry>()};
  ScalerCore core;
};

TEST_CASE("ScaledObjects beyond the cap are not tracked, idle ones expire with their series",
          "[bounded]") {
  ScalerMetrics metrics{std::make_shared<prometheus::Registry>()};
  auto now = std::chrono::steady_clock::time_point{} + 1h;
  ObjectStates states(&metrics, {.max_objects = 100, .expiry = 600s}, [&] { return now; });
  policy::Decision d;
  d.reason = "idle";
  for (int i = 0; i < 3000; ++i) {
    auto change = states.Record({"so" + std::to_string(i), "ns"}, d);
    CHECK(change == (i < 100 ? ObjectStates::Change::kChanged : ObjectStates::Change::kUntracked));
  }
  CHECK(states.size() == 100);
  // desired, active, forecast and one decision counter per tracked object.
  CHECK(MetricLines(metrics, "scaledobject=") == 400);
  CHECK(states.Record({"so5", "ns"}, d) == ObjectStates::Change::kSame);

  now += 601s;  // none seen for longer than the expiry
  CHECK(states.Record({"new", "ns"}, d) == ObjectStates::Change::kChanged);
  CHECK(states.size() == 1);
  CHECK(MetricLines(metrics, "scaledobject=") == 4);
}

TEST_CASE("Queue series are capped and expire", "[bounded]") {
  ScalerMetrics metrics{std::make_shared<prometheus::Registry>()};
  auto now = std::chrono::steady_clock::time_point{} + 1h;
  QueueSeries series(&metrics, 50, 600s, [&] { return now; });
  for (int i = 0; i < 1000; ++i) series.Publish("default", QueueName(i), QueueBacklog{});
  CHECK(series.size() == 50);
  CHECK(MetricLines(metrics, "queue=") == 150);
  now += 601s;
  series.Publish("default", "fresh", QueueBacklog{});
  CHECK(MetricLines(metrics, "queue=") == 3);
}

TEST_CASE("The plan cache stays bounded", "[bounded]") {
  Core c(ScalerCore::Options{.max_cached_plans = 64, .max_cached_plan_bytes = 1 << 20});
  const std::string big(3000, 'x');
  for (int i = 0; i < 2000; ++i) {
    std::shared_ptr<const ScalerPlan> plan;
    const std::string prefix = big + std::to_string(i);
    REQUIRE(
        c.core
            .Plan({{"keyPrefix", prefix}, {"queues", std::string("q").append(std::to_string(i))}},
                  &plan)
            .ok());
    CHECK(c.core.cached_plans() <= 64);
  }
}

TEST_CASE("Oversized metadata is INVALID_ARGUMENT naming the key, echoing little", "[bounded]") {
  Core c;
  std::shared_ptr<const ScalerPlan> plan;
  const std::string huge(1'000'000, 'k');
  Status s = c.core.Plan({{"keyPrefix", huge}}, &plan);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("keyPrefix"));
  CHECK_THAT(s.message(), Catch::Contains("1000000 bytes"));
  CHECK(s.message().size() < 300);
  s = c.core.Plan({{huge, "1"}}, &plan);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("kkkk... (1000000 bytes)"));
  CHECK(s.message().size() < 300);
  // A bad value within the size limit is echoed abbreviated.
  s = c.core.Plan({{"tasksPerReplica", std::string(4000, '9') + "x"}}, &plan);
  CHECK(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("tasksPerReplica"));
  CHECK_THAT(s.message(), Catch::Contains("... (4001 bytes)"));
  CHECK(s.message().size() < 400);
  CHECK(c.core.cached_plans() == 0);
}

}  // namespace
}  // namespace warmpool::scaler
