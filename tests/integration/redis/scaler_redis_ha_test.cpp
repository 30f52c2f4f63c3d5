// The real warmpool-scaler over rediss:// with an ACL user, with a wrong CA, and through a
// Sentinel failover (master SIGKILLed): GetMetrics over gRPC, as KEDA calls it.
#include <string>

#include <catch2/catch.hpp>

#include "tests/integration/redis/redis_tls_fixture.h"
#include "tests/integration/scaler/scaler_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;

std::map<std::string, std::string> Metadata(const std::string& connection) {
  return {{"redis", connection}, {"queues", "gpu"}, {"drainSeconds", "off"}};
}

// GetMetrics until it answers `want` (or the timeout); returns the last value, -1 on errors.
int64_t MetricEventually(ScalerFixture& f, const std::string& connection, int64_t want,
                         std::chrono::milliseconds timeout) {
  int64_t value = -1;
  WaitFor(
      [&] {
        int64_t v = -1;
        value = f.GetMetrics("w", Metadata(connection), &v).ok() ? v : -1;
        return value == want;
      },
      timeout);
  return value;
}

std::vector<std::string> LpushArgs(int n) {
  std::vector<std::string> args = {"LPUSH", "gpu"};
  for (int i = 0; i < n; ++i) args.push_back("{\"body\": \"x\"}");
  return args;
}

TEST_CASE("The scaler reads a backlog over rediss:// as an ACL user",
          "[scaler][redis][tls][integration]") {
  const TestCerts certs = MakeTestCerts();
  auto redis = StartTlsRedis(certs);
  REQUIRE(redis->Cli(LpushArgs(3)) == "3");
  TestRedisServer unused_default;
  // The password is percent-encoded (@ , :) in the URL, as in a Secret.
  ScalerFixture f(&unused_default, {"--redis", "tls=" + TlsUrl(*redis, certs.ca), "--redis",
                                    "bad=" + TlsUrl(*redis, certs.other_ca)});
  CHECK(MetricEventually(f, "tls", 3, 5s) == 3);
  REQUIRE(redis->Cli(LpushArgs(2)) == "5");
  CHECK(MetricEventually(f, "tls", 5, 5s) == 5);

  int64_t value = -1;
  grpc::Status bad = f.GetMetrics("w", Metadata("bad"), &value);
  CHECK(bad.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(WaitFor(
      [&] {
        return f.ScalerLog().find("certificate verify failed for host '127.0.0.1'") !=
               std::string::npos;
      },
      5s));
  CHECK_THAT(f.ScalerLog(), !Catch::Contains(kAclPasswordEncoded) && !Catch::Contains("p@ss"));
  CHECK(f.scaler().Running());
}

TEST_CASE("The scaler follows a Sentinel failover to the new master",
          "[scaler][redis][sentinel][integration]") {
  SentinelSetup ha;
  REQUIRE(ha.master().Cli(LpushArgs(4)) == "4");
  REQUIRE(ha.WaitReplicated(2s));
  TestRedisServer unused_default;
  ScalerFixture f(&unused_default, {"--redis", "ha=" + ha.Url(0, /*with_master_name=*/true)});
  CHECK(MetricEventually(f, "ha", 4, 5s) == 4);

  REQUIRE(ha.KillMasterAndWaitFailover(20s));
  // The old connections break; new ones ask the Sentinel again and reach the promoted replica.
  CHECK(MetricEventually(f, "ha", 4, 15s) == 4);
  REQUIRE(ha.replica().Cli(LpushArgs(3)) == "7");
  CHECK(MetricEventually(f, "ha", 7, 10s) == 7);
  CHECK(f.scaler().Running());
}

}  // namespace
}  // namespace warmpool::testing
