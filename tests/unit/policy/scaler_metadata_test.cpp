#include "policy/scaler_metadata.h"

#include <catch2/catch.hpp>

#include "policy/metadata_keys.h"

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
  CHECK(MustParse({{"redis", "primary"}}).metadata.redis == "primary");
}

Status ParseError(const std::map<std::string, std::string>& raw) {
  ParsedMetadata out;
  out.metadata.queues = {"untouched"};
  Status s = ParseScalerMetadata(raw, &out);
  CHECK(out.metadata.queues == std::vector<std::string>{"untouched"});
  return s;
}

TEST_CASE("KEDA's own keys and their FromEnv forms pass silently", "[metadata][keda]") {
  auto m = MustParse({{"scalerAddress", "warmpool:6000"},
                      {"enableTLS", "false"},
                      {"unsafeSsl", "true"},
                      {"tlsCertFile", "/certs/ca.pem"},
                      {"scalerAddressFromEnv", "warmpool:6000"},
                      {"queues", "gpu"}})
               .metadata;
  CHECK(m.queues == std::vector<std::string>{"gpu"});
}

// Finding 1 of issue 19: KEDA sends `queuesFromEnv: gpu` (the resolved variable) and warmpool
// watched the default queue `celery`.
TEST_CASE("xFromEnv is read as x and an explicit x wins", "[metadata][keda]") {
  auto m = MustParse({{"queuesFromEnv", "gpu"}, {"tasksPerReplicaFromEnv", "2"}}).metadata;
  CHECK(m.queues == std::vector<std::string>{"gpu"});
  CHECK(m.tasks_per_replica == 2);
  m = MustParse({{"queues", "cpu"}, {"queuesFromEnv", "gpu"}}).metadata;
  CHECK(m.queues == std::vector<std::string>{"cpu"});
  m = MustParse({{"maxReplicasFromEnv", "3"}, {"maxReplicas", "7"}}).metadata;
  CHECK(m.max_replicas == 7);
  // A bad value names the key as the ScaledObject writes it.
  Status s = ParseError({{"tasksPerReplicaFromEnv", "two"}});
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("tasksPerReplicaFromEnv=\"two\""));
}

// Finding 2 of issue 19: `queue: gpu` was logged and the default queue `celery` watched.
TEST_CASE("An unknown key is INVALID_ARGUMENT naming the closest known key", "[metadata][keda]") {
  Status s = ParseError({{"queue", "gpu"}});
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("unknown metadata key 'queue' (did you mean 'queues'?)"));
  s = ParseError({{"queueFromEnv", "gpu"}});
  CHECK_THAT(s.message(), Catch::Contains("'queueFromEnv' (did you mean 'queuesFromEnv'?)"));
  s = ParseError({{"TasksPerReplica", "2"}, {"listLength", "5"}, {"maxReplicas", "0"}});
  CHECK_THAT(s.message(), Catch::Contains("'TasksPerReplica' (did you mean 'tasksPerReplica'?)"));
  CHECK_THAT(s.message(), Catch::Contains("'listLength'"));
  CHECK_THAT(s.message(), Catch::Contains("maxReplicas=\"0\""));
  s = ParseError({{"passwordFromEnv", "secret"}});
  CHECK_THAT(s.message(), Catch::Contains("unknown metadata key 'passwordFromEnv'"));
  CHECK(s.message().find("secret") == std::string::npos);
  CHECK(ClosestKnownKey("scalerAdress") == "scalerAddress");
  CHECK(ClosestKnownKey("coldStartSecodns") == "coldStartSeconds");
  CHECK(ClosestKnownKey("ketPrefix") == "keyPrefix");
  // A long key is compared by its first 64 bytes and echoed abbreviated.
  s = ParseError({{std::string(100'000, 'q'), "1"}});
  CHECK(s.message().size() < 300);
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
      {"redis",             " "},         {"maxReplicas",       "1000001"},
      {"minWarmReplicas",   "1000001"},   {"tasksPerReplica",   "10001"},
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

TEST_CASE("Warm-pool keys default as documented", "[metadata][v2]") {
  auto m = MustParse({}).metadata;
  CHECK_FALSE(m.keep_alive_seconds);  // auto
  CHECK(m.cold_start_seconds == 300);
  CHECK(m.wait_cost_per_hour == 0);
  CHECK(m.replica_cost_per_hour == 0);
  CHECK(m.node_unneeded_seconds == 600);
  CHECK(m.warm_windows.empty());
  CHECK(m.drain_seconds == 150);  // auto = coldStartSeconds / 2
  CHECK_FALSE(m.task_seconds);
  CHECK(m.prewarm_histogram);
  CHECK(m.eta_prewarm);
}

TEST_CASE("Warm-pool keys are read", "[metadata][v2]") {
  auto parsed = MustParse({{"keepAlive", "600"},
                           {"coldStartSeconds", "420"},
                           {"waitCostPerHour", "1.5"},
                           {"replicaCostPerHour", "0.526"},
                           {"nodeUnneededSeconds", "60"},
                           {"warmWindows", "Mon-Fri 07:00-19:00 UTC=2; Sat 10:00-14:00 UTC=1"},
                           {"drainSeconds", "120"},
                           {"taskSeconds", "2.5"},
                           {"prewarm", "Off"},
                           {"etaPrewarm", "false"}});
  const auto& m = parsed.metadata;
  CHECK(m.keep_alive_seconds == 600);
  CHECK(m.cold_start_seconds == 420);
  CHECK(m.wait_cost_per_hour == 1.5);
  CHECK(m.replica_cost_per_hour == 0.526);
  CHECK(m.node_unneeded_seconds == 60);
  REQUIRE(m.warm_windows.size() == 2);
  CHECK(m.warm_windows[0].replicas == 2);
  CHECK(m.drain_seconds == 120);
  CHECK(m.task_seconds == 2.5);
  CHECK_FALSE(m.prewarm_histogram);
  CHECK_FALSE(m.eta_prewarm);
  CHECK_FALSE(MustParse({{"keepAlive", "AUTO"}}).metadata.keep_alive_seconds);
  CHECK(MustParse({{"keepAlive", "0"}}).metadata.keep_alive_seconds == 0);
  CHECK(MustParse({{"prewarm", "histogram"}}).metadata.prewarm_histogram);
  CHECK(MustParse({{"coldStartSeconds", "600"}}).metadata.drain_seconds == 300);
  CHECK(MustParse({{"coldStartSeconds", "600"}, {"drainSeconds", "auto"}}).metadata.drain_seconds ==
        300);
  CHECK_FALSE(MustParse({{"drainSeconds", "off"}}).metadata.drain_seconds);
  CHECK(MustParse({}).metadata.releases_per_hour == 1.0);
  CHECK(MustParse({{"releasesPerHour", "2.5"}}).metadata.releases_per_hour == 2.5);
  CHECK(MustParse({{"releasesPerHour", "0.01"}}).metadata.releases_per_hour == 0.01);
  CHECK_FALSE(MustParse({{"releasesPerHour", "OFF"}}).metadata.releases_per_hour);
}

TEST_CASE("Each bad warm-pool value is INVALID_ARGUMENT naming key and value", "[metadata][v2]") {
  // clang-format off
  const BadCase cases[] = {
      {"keepAlive",           "forever"},   {"keepAlive",           "-1"},
      {"keepAlive",           "1.5"},       {"coldStartSeconds",    "-5"},
      {"coldStartSeconds",    "5m"},        {"waitCostPerHour",     "-1"},
      {"waitCostPerHour",     "nan"},       {"replicaCostPerHour",  "cheap"},
      {"nodeUnneededSeconds", "-1"},        {"warmWindows",         "Mon-Fri 07:00-19:00 CET=2"},
      {"warmWindows",         "weekdays"},  {"drainSeconds",        "0"},
      {"drainSeconds",        "soon"},      {"taskSeconds",         "0"},
      {"taskSeconds",         "-2"},        {"prewarm",             "arima"},
      {"etaPrewarm",          "sometimes"},  {"targetWaitSeconds",   "0"},
      {"targetWaitSeconds",   "p95"},       {"releasesPerHour",     "0"},
      {"releasesPerHour",     "0.001"},     {"releasesPerHour",     "3601"},
      {"releasesPerHour",     "inf"},       {"releasesPerHour",     "never"},
      // Past a year (seconds become nanoseconds on the clock, which overflow past ~292 years).
      {"coldStartSeconds",    "31622401"},  {"coldStartSeconds",    "9223372036854775807"},
      {"keepAlive",           "99999999999"}, {"nodeUnneededSeconds", "31622401"},
      {"cooldownSeconds",     "31622401"},  {"scaleDownWindowSeconds", "99999999999999999"},
      {"targetWaitSeconds",   "31622401"},  {"drainSeconds",        "31622401"},
      {"taskSeconds",         "1e300"},     {"waitCostPerHour",     "1e300"},
      {"replicaCostPerHour",  "1e7"},
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

TEST_CASE("targetWaitSeconds is the objective the drain horizon follows from", "[metadata][v2]") {
  auto m = MustParse({}).metadata;
  CHECK(m.target_wait_seconds == 450);  // auto: 1.5 x coldStartSeconds 300
  CHECK(m.drain_seconds == 150);        // the sizing v2 shipped with, unchanged
  CHECK(m.target_wait_reachable_cold);
  m = MustParse({{"targetWaitSeconds", "600"}, {"coldStartSeconds", "240"}}).metadata;
  CHECK(m.target_wait_seconds == 600);
  CHECK(m.drain_seconds == 360);
  // A target a cold start alone breaks: tightest sizing, and the metadata says a floor is needed.
  m = MustParse({{"targetWaitSeconds", "60"}}).metadata;
  CHECK(m.drain_seconds == 1);
  CHECK_FALSE(m.target_wait_reachable_cold);
  // drainSeconds alone still works and states the target it implies.
  m = MustParse({{"drainSeconds", "80"}}).metadata;
  CHECK(m.drain_seconds == 80);
  CHECK(m.target_wait_seconds == 380);
  CHECK(MustParse({{"targetWaitSeconds", "auto"}, {"coldStartSeconds", "100"}})
            .metadata.target_wait_seconds == 150);
  // A year is the most any time key takes, so the sums cannot overflow.
  m = MustParse({{"coldStartSeconds", "31622400"}, {"drainSeconds", "31622400"}}).metadata;
  CHECK(m.target_wait_seconds == 2 * 31622400LL);
  CHECK(MustParse({{"coldStartSeconds", "31622400"}}).metadata.target_wait_seconds ==
        31622400LL * 3 / 2);
  ParsedMetadata out;
  Status s = ParseScalerMetadata({{"targetWaitSeconds", "600"}, {"drainSeconds", "80"}}, &out);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("not both"));
}

TEST_CASE("Warm-pool cross-field rules", "[metadata][v2]") {
  ParsedMetadata out;
  Status s = ParseScalerMetadata({{"waitCostPerHour", "2"}}, &out);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("replicaCostPerHour"));
  CHECK(ParseScalerMetadata({{"waitCostPerHour", "2"}, {"replicaCostPerHour", "1"}}, &out).ok());
  s = ParseScalerMetadata({{"warmWindows", "Daily 00:00-24:00=9"}, {"maxReplicas", "4"}}, &out);
  REQUIRE(s.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("warmWindows"));
}

TEST_CASE("Bad values are echoed abbreviated: 200 bytes and their size", "[metadata]") {
  CHECK(Abbreviate("short") == "short");
  CHECK(Abbreviate(std::string(200, 'a')) == std::string(200, 'a'));
  CHECK(Abbreviate(std::string(201, 'a')) == std::string(200, 'a') + "... (201 bytes)");
  ParsedMetadata out;
  const std::string huge(1'000'000, '7');
  for (const char* key : {"maxReplicas", "queues", "warmWindows", "keepAlive", "prewarm"}) {
    const std::string value = std::string(key) == "queues" ? huge + ",," : huge + "x";
    Status s = ParseScalerMetadata({{key, value}}, &out);
    REQUIRE(s.code() == Status::Code::kInvalidArgument);
    CHECK_THAT(s.message(), Catch::Contains(key));
    CHECK_THAT(s.message(), Catch::Contains(" bytes)"));
    CHECK(s.message().size() < 800);
  }
}

}  // namespace
}  // namespace warmpool::policy
