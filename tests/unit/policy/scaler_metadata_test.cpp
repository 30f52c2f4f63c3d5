#include "policy/scaler_metadata.h"

#include <catch2/catch.hpp>

namespace warmpool::policy {
namespace {

ParsedMetadata MustParse(const std::map<std::string, std::string>& raw) {
  ParsedMetadata out;
  Status s = ParseScalerMetadata(raw, &out);
  INFO(s.ToString());
  REQUIRE(s.ok());
  return out;
}

TEST_CASE("Empty metadata gives the documented defaults", "[metadata]") {
  auto m = MustParse({}).metadata;
  CHECK(m.redis == "default");
  CHECK(m.redis_address.empty());
  CHECK(m.queues == std::vector<std::string>{"celery"});
  CHECK(m.key_prefix.empty());
  CHECK(m.priority_levels == std::vector<int>{0, 3, 6, 9});
  CHECK(m.count_in_flight);
  CHECK(m.tasks_per_replica == 1);
  CHECK(m.activation_backlog == 0);
  CHECK(m.min_warm_replicas == 0);
  CHECK(m.max_replicas == 100);
}

TEST_CASE("Every key is read", "[metadata]") {
  auto parsed = MustParse({{"redisAddress", "redis.ns:6380/2"},
                           {"queues", " gpu, cpu ,gpu"},
                           {"keyPrefix", "tenant1:"},
                           {"priorityLevels", "0,5"},
                           {"countInFlight", "false"},
                           {"tasksPerReplica", "4"},
                           {"activationBacklog", "2"},
                           {"minWarmReplicas", "1"},
                           {"maxReplicas", "8"}});
  const auto& m = parsed.metadata;
  CHECK(m.redis_address == "redis.ns:6380/2");
  CHECK(m.queues == std::vector<std::string>{"cpu", "gpu"});  // sorted, deduplicated
  CHECK(m.key_prefix == "tenant1:");
  CHECK(m.priority_levels == std::vector<int>{0, 5});
  CHECK_FALSE(m.count_in_flight);
  CHECK(m.tasks_per_replica == 4);
  CHECK(m.activation_backlog == 2);
  CHECK(m.min_warm_replicas == 1);
  CHECK(m.max_replicas == 8);
  CHECK(parsed.unknown_keys.empty());
  CHECK(MustParse({{"redis", "primary"}}).metadata.redis == "primary");
}

TEST_CASE("KEDA's own keys pass silently, unknown keys are reported", "[metadata]") {
  auto parsed = MustParse({{"scalerAddress", "warmpool:6000"},
                           {"enableTLS", "false"},
                           {"unsafeSsl", "true"},
                           {"passwordFromEnv", "x"},
                           {"listLength", "5"}});
  CHECK(parsed.unknown_keys == std::vector<std::string>{"listLength"});
}

struct BadCase {
  const char* key;
  const char* value;
};

TEST_CASE("Each bad value is INVALID_ARGUMENT naming the key and value", "[metadata]") {
  // clang-format off
  const BadCase cases[] = {
      {"queues",            ""},          {"queues",            "a,,b"},
      {"priorityLevels",    "3,6"},       {"priorityLevels",    "0,6,3"},
      {"priorityLevels",    "0,10"},      {"priorityLevels",    "0,x"},
      {"priorityLevels",    "0,3,3"},     {"countInFlight",     "maybe"},
      {"tasksPerReplica",   "0"},         {"tasksPerReplica",   "1.5"},
      {"activationBacklog", "-1"},        {"minWarmReplicas",   "two"},
      {"maxReplicas",       "0"},         {"maxReplicas",       "99999999999999999999"},
      {"redisAddress",      "u:p@h:1"},   {"redisAddress",      "redis://h:1"},
      {"redis",             " "},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.key << "=" << c.value) {
      ParsedMetadata out;
      Status s = ParseScalerMetadata({{c.key, c.value}}, &out);
      REQUIRE(s.code() == Status::Code::kInvalidArgument);
      CHECK_THAT(s.message(), Catch::Contains(c.key));
      CHECK_THAT(s.message(), Catch::Contains(std::string("\"") + c.value + "\""));
    }
  }
}

TEST_CASE("Cross-field rules and several problems are all reported", "[metadata]") {
  ParsedMetadata out;
  Status s = ParseScalerMetadata({{"minWarmReplicas", "5"}, {"maxReplicas", "2"}}, &out);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("minWarmReplicas"));

  s = ParseScalerMetadata({{"redis", "a"}, {"redisAddress", "h:1"}}, &out);
  CHECK(s.code() == Status::Code::kInvalidArgument);

  s = ParseScalerMetadata({{"tasksPerReplica", "0"}, {"countInFlight", "nope"}}, &out);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("tasksPerReplica"));
  CHECK_THAT(s.message(), Catch::Contains("countInFlight"));
}

}  // namespace
}  // namespace warmpool::policy
