#include "worker/worker_options.h"

#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace warmpool::worker {
namespace {

const char* NoEnv(const char*) { return nullptr; }
const char* CeleryEnv(const char* name) {
  if (std::strcmp(name, "CELERY_BROKER_URL") == 0) return "redis://:secret@redis:6380/2";
  if (std::strcmp(name, "CELERY_RESULT_BACKEND") == 0) return "redis://results:6379/3";
  return nullptr;
}

ParsedCommandLine Parse(std::vector<std::string> args, const char* (*env)(const char*) = NoEnv) {
  args.insert(args.begin(), "warmpool-worker");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseWorkerCommandLine(static_cast<int>(argv.size()), argv.data(), env);
}

TEST_CASE("Defaults follow Celery, with GPU-friendly concurrency and prefetch",
          "[worker][options]") {
  auto p = Parse({});
  REQUIRE(p.options.has_value());
  const WorkerOptions& o = *p.options;
  CHECK(o.broker.host == "127.0.0.1");
  CHECK(o.broker.port == 6379);
  CHECK(o.broker.db == 0);
  CHECK(o.result_backend.port == 6379);
  CHECK(o.queues == std::vector<std::string>{"celery"});
  CHECK(o.concurrency == 1);
  CHECK(o.prefetch_multiplier == 1);
  CHECK(o.prefetch_limit() == 1);
  CHECK(o.hostname.rfind("warmpool@", 0) == 0);
  CHECK(o.grace.count() == 30);
  CHECK(o.visibility_timeout.count() == 3600);
  CHECK(o.acks_late);
  CHECK_FALSE(o.task_events);
  CHECK(o.health_listen == "off");
  CHECK(o.deadletter_key == "warmpool.deadletter");
  CHECK(o.imagery_threads == 0);                        // auto: available CPUs / concurrency
  CHECK_FALSE(o.imagery_decode_budget_mb.has_value());  // the imagery task's own default
}

TEST_CASE("Flags and environment are read", "[worker][options]") {
  auto env_only = Parse({}, CeleryEnv);
  REQUIRE(env_only.options.has_value());
  CHECK(env_only.options->broker.host == "redis");
  CHECK(env_only.options->broker.password == "secret");
  CHECK(env_only.options->broker.db == 2);
  CHECK(env_only.options->result_backend.host == "results");
  CHECK(env_only.options->result_backend.db == 3);

  auto p = Parse({"--broker",
                  "redis://b:1234/5",
                  "-Q",
                  "gpu,cpu",
                  "-Q",
                  "extra",
                  "-c",
                  "2",
                  "--prefetch",
                  "3",
                  "--hostname",
                  "w1@pod",
                  "--grace-seconds",
                  "12.5",
                  "--visibility-timeout",
                  "600",
                  "--health-listen",
                  "0.0.0.0:8080",
                  "--log-format",
                  "json",
                  "--task-alias",
                  "a=b",
                  "--task-alias",
                  "c=d",
                  "--early-ack",
                  "-E",
                  "--time-limit",
                  "60",
                  "--data-root",
                  "/data",
                  "--imagery-threads",
                  "6",
                  "--imagery-decode-budget-mb",
                  "0"},
                 CeleryEnv);
  REQUIRE(p.options.has_value());
  const WorkerOptions& o = *p.options;
  CHECK(o.broker.host == "b");  // the flag wins over the environment
  CHECK(o.result_backend.host == "results");
  CHECK(o.queues == std::vector<std::string>{"gpu", "cpu", "extra"});
  CHECK(o.prefetch_limit() == 6);
  CHECK(o.hostname == "w1@pod");
  CHECK(o.grace.count() == 12.5);
  CHECK(o.visibility_timeout.count() == 600);
  CHECK(o.log_format == LogFormat::kJson);
  CHECK(o.task_aliases == std::vector<std::string>{"a=b", "c=d"});
  CHECK_FALSE(o.acks_late);
  CHECK(o.task_events);
  CHECK(o.time_limit == std::optional<double>(60));
  CHECK(o.data_root == "/data");
  CHECK(o.imagery_threads == 6);
  CHECK(o.imagery_decode_budget_mb == std::optional<size_t>(0));
}

TEST_CASE("The result backend defaults to the broker", "[worker][options]") {
  auto p = Parse({"--broker", "redis://h:7000/4"});
  REQUIRE(p.options.has_value());
  CHECK(p.options->result_backend.host == "h");
  CHECK(p.options->result_backend.port == 7000);
  CHECK(p.options->result_backend.db == 4);
}

TEST_CASE("Usage errors exit 2 and name the flag", "[worker][options][negative]") {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    const char* mentions;
  };
  std::vector<Case> cases = {
      {"bad broker", {"--broker", "http://x"}, "--broker"},
      {"zero concurrency", {"-c", "0"}, "concurrency"},
      {"bad log format", {"--log-format", "xml"}, "log-format"},
      {"empty queues", {"-Q", ","}, "queues"},
      {"unknown flag", {"--bogus"}, "bogus"},
      {"negative imagery threads", {"--imagery-threads", "-1"}, "imagery-threads"},
      {"negative decode budget", {"--imagery-decode-budget-mb", "-5"}, "imagery-decode-budget-mb"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      auto p = Parse(c.args);
      CHECK_FALSE(p.options.has_value());
      CHECK(p.exit_code == 2);
      CHECK_THAT(p.message, Catch::Contains(c.mentions));
    }
  }
  auto help = Parse({"--help"});
  CHECK_FALSE(help.options.has_value());
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.message, Catch::Contains("--grace-seconds"));
}

}  // namespace
}  // namespace warmpool::worker
