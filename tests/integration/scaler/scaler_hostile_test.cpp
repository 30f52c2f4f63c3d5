// Anyone who reaches the scaler's gRPC port (no authentication) must not be able to make it grow:
// oversized metadata is refused naming the key with a short message, invented ScaledObject names
// add a bounded number of /metrics series, memory stays flat. And a second scaler cannot share
// the port.
#include <fstream>
#include <signal.h>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/integration/scaler/grpc_probe.h"
#include "tests/integration/scaler/scaler_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;

// Resident set of `pid` in KiB (VmRSS).
long RssKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

size_t CountLines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

TEST_CASE("Thousands of hostile requests leave memory, messages and /metrics bounded",
          "[scaler][integration][hostile]") {
  ScalerFixture f;
  int64_t value = 0;
  for (int i = 0; i < 50; ++i) REQUIRE(f.GetMetrics("warm", {{"queues", "gpu"}}, &value).ok());
  const long rss_before = RssKiB(f.scaler().pid());

  size_t longest_message = 0;
  int refused_naming_key = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string junk(200'000, static_cast<char>('a' + i % 26));
    // A distinct huge unknown key, then a distinct huge keyPrefix value.
    grpc::Status s =
        f.GetMetrics("so", {{"queues", "gpu"}, {junk + std::to_string(i), "1"}}, &value);
    longest_message = std::max(longest_message, s.error_message().size());
    refused_naming_key += s.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
                          s.error_message().find("(200") != std::string::npos;
    s = f.GetMetrics("so", {{"queues", "gpu"}, {"keyPrefix", junk + std::to_string(i)}}, &value);
    longest_message = std::max(longest_message, s.error_message().size());
    refused_naming_key += s.error_code() == grpc::StatusCode::INVALID_ARGUMENT &&
                          s.error_message().find("keyPrefix") != std::string::npos;
  }
  CHECK(refused_naming_key == 400);
  CHECK(longest_message < 400);
  // Bigger than any KEDA request: refused by gRPC before it is decoded.
  grpc::Status s = f.GetMetrics("so", {{"keyPrefix", std::string(1'000'000, 'x')}}, &value);
  CHECK(s.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);

  // 3,000 invented ScaledObject names.
  for (int i = 0; i < 3000; ++i) {
    REQUIRE(f.GetMetrics("invented-" + std::to_string(i), {{"queues", "gpu"}}, &value).ok());
  }
  auto metrics = RunCommand(
      {"curl", "-s", "http://127.0.0.1:" + std::to_string(f.metrics_port()) + "/metrics"}, 10s);
  const size_t series = CountLines(metrics.output, "scaledobject=\"");
  INFO("scaledobject series " << series);
  // desired, active, forecast, one decision counter per tracked object
  CHECK(series <= 4 * 1000 + 10);
  CHECK(series >= 3000);  // the first thousand are tracked
  CHECK_THAT(f.ScalerLog(), Catch::Contains("scaledobjects_not_tracked"));

  const long rss_after = RssKiB(f.scaler().pid());
  WARN("measured: RSS " << rss_before << " -> " << rss_after << " KiB, " << series
                        << " scaledobject series, longest error " << longest_message
                        << " bytes, log " << f.ScalerLog().size() << " bytes");
  INFO("RSS " << rss_before << " KiB -> " << rss_after << " KiB");
#if !defined(__SANITIZE_ADDRESS__)
  // Under ASan freed memory sits in its quarantine (256 MiB by default), so RSS says nothing
  // there; the other builds check it.
  CHECK(rss_after - rss_before < 40 * 1024);
#endif
  CHECK(f.ScalerLog().size() < 1'000'000);  // no 200 KB key ever reaches the log
  CHECK(HealthCheck(f.channel(), "") == 1);
}

TEST_CASE("A second scaler on a port in use exits 1 saying so", "[scaler][integration]") {
  ScalerFixture f;
  const std::string listen = "127.0.0.1:" + std::to_string(f.grpc_port());
  ChildProcess second(
      {ScalerBinary(), "--listen", listen, "--metrics-listen",
       "127.0.0.1:" + std::to_string(FreePort()), "--redis", "default=" + f.redis().url()},
      MakeTempDir("second") + "/scaler.log");
  CHECK(second.Wait(10s) == 1);
  CHECK_THAT(second.Log(), Catch::Contains("startup_failed"));
  CHECK_THAT(second.Log(), Catch::Contains("cannot listen on " + listen));
  if (second.Running()) second.Signal(SIGKILL);
  CHECK(HealthCheck(f.channel(), "") == 1);  // the first one still serves
}

}  // namespace
}  // namespace warmpool::testing
