// warmpool-keda-probe against the real scaler: --health, --stream and the polling calls.
#include <csignal>

#include <catch2/catch.hpp>

#include "tests/integration/scaler/scaler_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;

std::string ProbeBinary() {
  return std::string(WARMPOOL_BINARY_DIR) + "/scaler/warmpool-keda-probe";
}

std::string Address(ScalerFixture& f) {
  return std::string("127.0.0.1:").append(std::to_string(f.grpc_port()));
}

TEST_CASE("warmpool-keda-probe --health exits 0 only when SERVING",
          "[scaler][integration][probe]") {
  ScalerFixture f;
  auto r = RunCommand({ProbeBinary(), "--scaler", Address(f), "--health"}, 20s);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains(R"({"service":"","status":"SERVING"})"));
  REQUIRE(WaitFor(
      [&] {
        return RunCommand({ProbeBinary(), "--scaler", Address(f), "--health", "readiness"}, 20s)
                   .exit_code == 0;
      },
      5s));
  r = RunCommand({ProbeBinary(), "--scaler", Address(f), "--health", "no-such-service"}, 20s);
  CHECK(r.exit_code == 1);
  f.redis().Stop();  // readiness follows Redis
  CHECK(WaitFor(
      [&] {
        r = RunCommand({ProbeBinary(), "--scaler", Address(f), "--health", "readiness"}, 20s);
        return r.exit_code == 1;
      },
      10s));
  CHECK_THAT(r.output, Catch::Contains("NOT_SERVING"));
}

TEST_CASE("warmpool-keda-probe --stream prints each message and the clean end on SIGTERM",
          "[scaler][integration][probe]") {
  ScalerFixture f;
  const std::string log = MakeTempDir("probe") + "/stream.log";
  ChildProcess probe({ProbeBinary(), "--scaler", Address(f), "--meta", "queues=gpu", "--stream",
                      "--stream-seconds", "60"},
                     log);
  REQUIRE(WaitFor([&] { return probe.Log().find("isActive") != std::string::npos; }, 10s));
  f.SendTasks("gpu", 1);
  REQUIRE(
      WaitFor([&] { return probe.Log().find(R"("isActive":true)") != std::string::npos; }, 10s));
  f.scaler().Signal(SIGTERM);
  CHECK(probe.Wait(10s) == 0);
  const std::string out = probe.Log();
  CHECK_THAT(out, Catch::Contains(R"({"isActive":false,"sinceOpenMs":)"));
  CHECK_THAT(out, Catch::Contains(R"("sincePreviousMs":null})"));
  CHECK_THAT(out, Catch::Contains(R"("end":"eof")"));
}

TEST_CASE("warmpool-keda-probe reports a metadata map the scaler refuses",
          "[scaler][integration][probe]") {
  ScalerFixture f;
  auto r = RunCommand({ProbeBinary(), "--scaler", Address(f), "--meta", "queue=gpu"}, 20s);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("the scaler will refuse"));
  CHECK_THAT(r.output, Catch::Contains(R"("rpc":"GetMetricSpec","status":{"code":3)"));
  r = RunCommand({ProbeBinary(), "--scaler", Address(f), "--meta", "queues=gpu"}, 20s);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Catch::Contains(R"("metricName":"warmpool-gpu")"));
}

}  // namespace
}  // namespace warmpool::testing
