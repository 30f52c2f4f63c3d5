// End to end: real redis-server, real warmpool-scaler process, real gRPC calls, tasks sent by
// Debian's Python Celery 5.2.6.
#include <signal.h>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/scaler/grpc_probe.h"
#include "tests/integration/scaler/scaler_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;
using Metadata = std::map<std::string, std::string>;
// Tests that read the measured backlog through GetMetrics set drainSeconds: off, so the metric
// is one replica per task (v1) rather than the cold-start-aware pool for an unknown duration.

// Polls GetMetrics until it returns `want` (readings are shared for the coalescing window).
int64_t MetricsEventually(ScalerFixture& f, const std::string& name, const Metadata& md,
                          int64_t want) {
  int64_t value = -1;
  WaitFor(
      [&] {
        grpc::Status s = f.GetMetrics(name, md, &value);
        return s.ok() && value == want;
      },
      3s);
  return value;
}

TEST_CASE("A priority=5 task that LLEN misses is counted", "[scaler][integration]") {
  ScalerFixture f;
  f.SendTasks("gpu", 1, {"--priority", "5"});
  CHECK(f.redis().Cli({"LLEN", "gpu"}) == "0");  // what KEDA's redis scaler reads
  CHECK(MetricsEventually(f, "w", {{"queues", "gpu"}}, 1) == 1);
  bool active = false;
  REQUIRE(f.IsActive("w", {{"queues", "gpu"}}, &active).ok());
  CHECK(active);
}

TEST_CASE("Idle queue: zero replicas and inactive", "[scaler][integration]") {
  ScalerFixture f;
  int64_t value = -1;
  REQUIRE(f.GetMetrics("w", {{"queues", "gpu"}}, &value).ok());
  CHECK(value == 0);
  bool active = true;
  REQUIRE(f.IsActive("w", {{"queues", "gpu"}}, &active).ok());
  CHECK_FALSE(active);
}

TEST_CASE("An unacked task counts in flight unless countInFlight=false", "[scaler][integration]") {
  ScalerFixture f;
  f.SendTasks("gpu", 2);
  ChildProcess taker({PythonInterpreter(), PythonScriptsDir() + "/kombu_take_unacked.py",
                      "--broker", f.redis().url(), "--queue", "gpu"},
                     MakeTempDir("taker") + "/taker.log");
  REQUIRE(WaitFor([&] { return taker.Log().find("TAKEN gpu") != std::string::npos; }, 20s));
  CHECK(f.redis().Cli({"HLEN", "unacked"}) == "1");
  CHECK(f.redis().Cli({"LLEN", "gpu"}) == "1");
  CHECK(MetricsEventually(f, "w", {{"drainSeconds", "off"}, {"queues", "gpu"}}, 2) == 2);
  CHECK(MetricsEventually(f, "w2",
                          {{"drainSeconds", "off"}, {"queues", "gpu"}, {"countInFlight", "false"}},
                          1) == 1);
  // Only the in-flight task left: still active, so KEDA will not scale to zero under it.
  f.redis().Cli({"DEL", "gpu"});
  CHECK(MetricsEventually(f, "w", {{"drainSeconds", "off"}, {"queues", "gpu"}}, 1) == 1);
  bool active = false;
  REQUIRE(f.IsActive("w", {{"queues", "gpu"}}, &active).ok());
  CHECK(active);
  taker.Signal(SIGKILL);
}

TEST_CASE("Before any task finished: one replica per 5 tasks, more as a running one ages",
          "[scaler][integration][policy]") {
  ScalerFixture f;
  f.SendTasks("gpu", 10);
  CHECK(MetricsEventually(f, "w", {{"queues", "gpu"}}, 2) == 2);  // as KEDA's listLength 5
  CHECK(MetricsEventually(f, "v1", {{"queues", "gpu"}, {"drainSeconds", "off"}}, 10) == 10);
  // A task that keeps running says the tasks take at least that long: with a 10 s cold start
  // and drainSeconds 10 (assumed 2 s per task), 9 pending behind a task running for 6 s or
  // more need new replicas: 1 + floor((9 x 6 - 1 x 20) / 10) = 4.
  const Metadata md = {{"queues", "gpu"}, {"coldStartSeconds", "10"}, {"drainSeconds", "10"}};
  ChildProcess taker({PythonInterpreter(), PythonScriptsDir() + "/kombu_take_unacked.py",
                      "--broker", f.redis().url(), "--queue", "gpu"},
                     MakeTempDir("taker") + "/taker.log");
  REQUIRE(WaitFor([&] { return taker.Log().find("TAKEN gpu") != std::string::npos; }, 20s));
  int64_t first = -1;
  REQUIRE(f.GetMetrics("fast", md, &first).ok());
  CHECK(first <= 2);
  int64_t value = -1;
  CHECK(WaitFor([&] { return f.GetMetrics("fast", md, &value).ok() && value >= 4; }, 15s));
  taker.Signal(SIGKILL);
}

TEST_CASE("A countdown task is scheduled, not in flight", "[scaler][integration]") {
  ScalerFixture f;
  f.SendTasks("gpu", 1, {"--countdown", "600"});
  ChildProcess taker({PythonInterpreter(), PythonScriptsDir() + "/kombu_take_unacked.py",
                      "--broker", f.redis().url(), "--queue", "gpu"},
                     MakeTempDir("taker") + "/taker.log");
  REQUIRE(WaitFor([&] { return taker.Log().find("TAKEN gpu") != std::string::npos; }, 20s));
  // Not in flight (no work to size for), but its holder is kept: stopped, a Celery worker would
  // restore the task to the list and bring a replica straight back (policy rule 4, eta-held).
  CHECK(MetricsEventually(f, "w", {{"queues", "gpu"}}, 1) == 1);
  REQUIRE(WaitFor(
      [&] {
        auto log = f.ScalerLog();
        return log.find("scheduled=1") != std::string::npos &&
               log.find("eta-held") != std::string::npos;
      },
      3s));
  taker.Signal(SIGKILL);
}

TEST_CASE("Several queues are summed, other queues ignored", "[scaler][integration]") {
  ScalerFixture f;
  f.SendTasks("a", 1);
  f.SendTasks("b", 2, {"--priority", "9"});
  f.SendTasks("c", 4);
  CHECK(MetricsEventually(f, "w", {{"drainSeconds", "off"}, {"queues", "a,b"}}, 3) == 3);
  CHECK(MetricsEventually(
            f, "w", {{"drainSeconds", "off"}, {"queues", "c"}, {"tasksPerReplica", "3"}}, 2) == 2);
  CHECK(MetricsEventually(
            f, "w", {{"drainSeconds", "off"}, {"queues", "a,b,c"}, {"maxReplicas", "5"}}, 5) == 5);
}

TEST_CASE("keyPrefix selects kombu's global_keyprefix lists", "[scaler][integration]") {
  ScalerFixture f;
  f.SendTasks("gpu", 3, {"--keyprefix", "tenant1:"});
  CHECK(f.redis().Cli({"LLEN", "tenant1:gpu"}) == "3");
  CHECK(MetricsEventually(f, "w",
                          {{"drainSeconds", "off"}, {"queues", "gpu"}, {"keyPrefix", "tenant1:"}},
                          3) == 3);
  CHECK(MetricsEventually(f, "w", {{"drainSeconds", "off"}, {"queues", "gpu"}}, 0) == 0);
}

TEST_CASE("redisAddress metadata reaches another Redis without credentials",
          "[scaler][integration]") {
  ScalerFixture f;
  TestRedisServer other;
  other.Cli({"LPUSH", "gpu", "x", "y"});
  CHECK(MetricsEventually(
            f, "w", {{"drainSeconds", "off"}, {"queues", "gpu"}, {"redisAddress", other.address()}},
            2) == 2);
}

TEST_CASE("Bad metadata is INVALID_ARGUMENT naming the key", "[scaler][integration]") {
  ScalerFixture f;
  int64_t value = 0;
  grpc::Status s = f.GetMetrics("w", {{"tasksPerReplica", "zero"}}, &value);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(s.error_message(), Catch::Contains("tasksPerReplica"));
  CHECK_THAT(s.error_message(), Catch::Contains("zero"));
  bool active = false;
  s = f.IsActive("w", {{"redis", "nosuch"}}, &active);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(s.error_message(), Catch::Contains("nosuch"));

  externalscaler::ScaledObjectRef ref;
  ref.set_name("w");
  (*ref.mutable_scalermetadata())["priorityLevels"] = "5,1";
  externalscaler::GetMetricSpecResponse spec;
  grpc::ClientContext ctx;
  s = f.stub().GetMetricSpec(&ctx, ref, &spec);
  CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(s.error_message(), Catch::Contains("priorityLevels"));
}

TEST_CASE("GetMetricSpec: one metric, target 1, matched case-insensitively",
          "[scaler][integration]") {
  ScalerFixture f;
  externalscaler::ScaledObjectRef ref;
  ref.set_name("w");
  ref.set_namespace_("ns");
  (*ref.mutable_scalermetadata())["queues"] = "GPU";
  externalscaler::GetMetricSpecResponse spec;
  grpc::ClientContext ctx;
  REQUIRE(f.stub().GetMetricSpec(&ctx, ref, &spec).ok());
  REQUIRE(spec.metricspecs_size() == 1);
  CHECK(spec.metricspecs(0).metricname() == "warmpool-gpu");
  CHECK(spec.metricspecs(0).targetsize() == 1);
  CHECK(spec.metricspecs(0).targetsizefloat() == 1.0);

  f.SendTasks("GPU", 2);
  int64_t value = 0;
  REQUIRE(WaitFor(
      [&] {
        return f.GetMetrics("w", {{"drainSeconds", "off"}, {"queues", "GPU"}}, &value,
                            "Warmpool-GPU")
                   .ok() &&
               value == 2;
      },
      3s));
  grpc::Status s =
      f.GetMetrics("w", {{"drainSeconds", "off"}, {"queues", "GPU"}}, &value, "s0-something-else");
  CHECK(s.error_code() == grpc::StatusCode::NOT_FOUND);
}

TEST_CASE("Redis down is UNAVAILABLE naming the connection, never a made-up 0",
          "[scaler][integration]") {
  ScalerFixture f({"--requirepass", "hunter2"});
  f.SendTasks("gpu", 0);
  int64_t value = -1;
  REQUIRE(WaitFor([&] { return f.GetMetrics("w", {{"queues", "gpu"}}, &value).ok(); }, 3s));
  CHECK(value == 0);
  f.redis().Stop();
  grpc::Status s;
  REQUIRE(WaitFor(
      [&] {
        s = f.GetMetrics("w", {{"queues", "gpu"}}, &value);
        return !s.ok();
      },
      3s));
  CHECK(s.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK_THAT(s.error_message(), Catch::Contains("'default'"));
  CHECK(s.error_message().find("hunter2") == std::string::npos);
  bool active = false;
  CHECK(f.IsActive("w", {{"queues", "gpu"}}, &active).error_code() ==
        grpc::StatusCode::UNAVAILABLE);
  // Readiness follows Redis; liveness does not.
  CHECK(WaitFor([&] { return HealthCheck(f.channel(), "readiness") == 2; }, 5s));
  CHECK(HealthCheck(f.channel(), "") == 1);
  CHECK(f.ScalerLog().find("hunter2") == std::string::npos);

  f.redis().Start();
  CHECK(WaitFor([&] { return f.GetMetrics("w", {{"queues", "gpu"}}, &value).ok(); }, 10s));
  CHECK(WaitFor([&] { return HealthCheck(f.channel(), "readiness") == 1; }, 5s));
}

TEST_CASE("StreamIsActive sends state on open, true within 1 s of a task, then changes only",
          "[scaler][integration]") {
  ScalerFixture f;
  externalscaler::ScaledObjectRef ref;
  ref.set_name("push");
  ref.set_namespace_("test");
  (*ref.mutable_scalermetadata())["queues"] = "gpu";
  grpc::ClientContext ctx;
  auto reader = f.stub().StreamIsActive(&ctx, ref);
  externalscaler::IsActiveResponse msg;
  REQUIRE(reader->Read(&msg));
  CHECK_FALSE(msg.result());  // current state as soon as it opens

  f.SendTasks("gpu", 1);
  const auto sent = std::chrono::steady_clock::now();
  REQUIRE(reader->Read(&msg));
  const auto elapsed = std::chrono::steady_clock::now() - sent;
  CHECK(msg.result());
  CHECK(elapsed < 1s);

  // By default an unchanged true is not sent again (it would move KEDA's lastActiveTime past its
  // last poll): the next message is the change to false, however long the task waited.
  std::this_thread::sleep_for(5500ms);
  f.redis().Cli({"DEL", "gpu"});
  REQUIRE(reader->Read(&msg));
  CHECK_FALSE(msg.result());

  ctx.TryCancel();
  while (reader->Read(&msg)) {
  }
  grpc::Status s = reader->Finish();
  CHECK(s.error_code() == grpc::StatusCode::CANCELLED);
  // The server is still healthy after the client went away.
  CHECK(HealthCheck(f.channel(), "") == 1);
}

TEST_CASE("Health and reflection answer", "[scaler][integration]") {
  ScalerFixture f;
  CHECK(HealthCheck(f.channel(), "") == 1);
  CHECK(WaitFor([&] { return HealthCheck(f.channel(), "readiness") == 1; }, 5s));
  CHECK(HealthCheck(f.channel(), "liveness") == 1);
  auto services = ReflectionListServices(f.channel());
  CHECK(std::count(services.begin(), services.end(), "externalscaler.ExternalScaler") == 1);
  CHECK(std::count(services.begin(), services.end(), "grpc.health.v1.Health") == 1);
}

TEST_CASE("Metrics, decision logs and reads coalesced across ScaledObjects",
          "[scaler][integration]") {
  ScalerFixture f(std::vector<std::string>{}, {"--coalesce-ms", "300", "--log-format", "json"});
  f.SendTasks("gpu", 3);
  f.redis().Cli({"CONFIG", "RESETSTAT"});
  const auto start = std::chrono::steady_clock::now();
  int ok = 0;
  for (int round = 0; round < 5; ++round) {
    for (int so = 0; so < 40; ++so) {
      int64_t value = 0;
      ok += f.GetMetrics("so" + std::to_string(so), {{"drainSeconds", "off"}, {"queues", "gpu"}},
                         &value)
                .ok() &&
            value == 3;
    }
  }
  CHECK(ok == 200);
  auto stats = f.redis().Cli({"INFO", "commandstats"});
  // Up to the stats read: the refresher may read once more right at a window boundary.
  const auto elapsed = std::chrono::steady_clock::now() - start;
  auto calls = [&](const std::string& cmd) -> long {
    auto pos = stats.find("cmdstat_" + cmd + ":calls=");
    if (pos == std::string::npos) return 0;
    return std::stol(stats.substr(pos + cmd.size() + 15));
  };
  const long windows =
      std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() / 300 + 1;
  INFO("elapsed windows " << windows << " llen " << calls("llen") << " hvals " << calls("hvals"));
  CHECK(calls("llen") <= 4 * windows);
  CHECK(calls("hvals") <= windows);

  auto metrics = RunCommand(
      {"curl", "-s", "http://127.0.0.1:" + std::to_string(f.metrics_port()) + "/metrics"}, 10s);
  CHECK_THAT(metrics.output,
             Catch::Contains(R"(warmpool_queue_pending{connection="default",queue="gpu"} 3)"));
  CHECK_THAT(
      metrics.output,
      Catch::Contains(R"(warmpool_desired_replicas{namespace="test",scaledobject="so7"} 3)"));
  CHECK_THAT(metrics.output,
             Catch::Contains("warmpool_rpc_duration_seconds_count{method=\"GetMetrics\"}"));

  // One JSON line per decision change, naming the ScaledObject.
  auto log = f.ScalerLog();
  CHECK_THAT(log, Catch::Contains(R"("event":"decision","active":true,"desired":3)"));
  CHECK_THAT(log, Catch::Contains(R"("scaledObject":"test/so7")"));
}

TEST_CASE("SIGTERM stops the scaler cleanly", "[scaler][integration]") {
  ScalerFixture f;
  f.scaler().Signal(SIGTERM);
  CHECK(f.scaler().Wait(10s) == 0);
  CHECK_THAT(f.ScalerLog(), Catch::Contains("stopped"));
}

}  // namespace
}  // namespace warmpool::testing

namespace warmpool::testing {
namespace {

TEST_CASE("Two scaler replicas share policy state through Redis and agree",
          "[scaler][integration][policy]") {
  using namespace std::chrono_literals;
  TestRedisServer redis;
  ScalerFixture a(&redis, {});
  ScalerFixture b(&redis, {});
  const std::map<std::string, std::string> md = {
      {"queues", "gpu"}, {"keepAlive", "600"}, {"drainSeconds", "off"}};
  a.SendTasks("gpu", 2);
  // Only replica A sees the busy period.
  int64_t value = -1;
  REQUIRE(WaitFor([&] { return a.GetMetrics("w", md, &value).ok() && value == 2; }, 3s));
  redis.Cli({"DEL", "gpu"});
  bool a_active = false;
  REQUIRE(WaitFor(
      [&] {
        return a.GetMetrics("w", md, &value).ok() && value == 1 &&
               a.IsActive("w", md, &a_active).ok() && a_active;
      },
      3s));
  // B never saw work, yet reads the shared history: keep-alive, like A.
  bool b_active = false;
  int64_t b_value = -1;
  REQUIRE(b.GetMetrics("w", md, &b_value).ok());
  REQUIRE(b.IsActive("w", md, &b_active).ok());
  CHECK(b_active);
  CHECK(b_value == value);
  CHECK_THAT(b.ScalerLog(), Catch::Contains("reason=keep-alive"));
  CHECK(redis.Cli({"KEYS", "warmpool:state:*"}).find("warmpool:state:gpu:") != std::string::npos);
}

}  // namespace
}  // namespace warmpool::testing
