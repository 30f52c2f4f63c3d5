// A Redis that stops answering (SIGSTOP: the kernel still accepts connections, nothing replies)
// must not freeze the scaler: health and GetMetricSpec answer at once, GetMetrics answers
// UNAVAILABLE by the Redis timeout, streams of another connection keep their latency, and
// everything recovers alone after SIGCONT.
#include <algorithm>
#include <atomic>
#include <signal.h>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/scaler/grpc_probe.h"
#include "tests/integration/scaler/scaler_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;
using Metadata = std::map<std::string, std::string>;

constexpr auto kRedisTimeout = 500ms;  // the fixture's --redis-timeout-ms

pid_t RedisPid(const TestRedisServer& redis) {
  const std::string info = redis.Cli({"INFO", "server"});
  const auto pos = info.find("process_id:");
  REQUIRE(pos != std::string::npos);
  return static_cast<pid_t>(std::stol(info.substr(pos + 11)));
}

std::chrono::milliseconds Ms(Steady::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

externalscaler::ScaledObjectRef Ref(const std::string& name, const Metadata& md) {
  externalscaler::ScaledObjectRef ref;
  ref.set_name(name);
  ref.set_namespace_("test");
  ref.mutable_scalermetadata()->insert(md.begin(), md.end());
  return ref;
}

struct Stream {
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<externalscaler::IsActiveResponse>> reader;
};

// Time from now until the stream says `want`.
std::chrono::milliseconds TimeUntil(Stream& s, bool want) {
  const auto t0 = Steady::now();
  externalscaler::IsActiveResponse msg;
  while (s.reader->Read(&msg)) {
    if (msg.result() == want) return Ms(Steady::now() - t0);
  }
  FAIL("stream ended");
  return {};
}

TEST_CASE("A hung Redis freezes neither health, GetMetricSpec, nor another connection",
          "[scaler][integration][hang]") {
  const int hung_streams = GENERATE(10, 30);
  INFO("streams on the hung connection: " << hung_streams);
  TestRedisServer healthy;
  ScalerFixture f(std::vector<std::string>{},
                  {"--redis", "healthy=" + healthy.url(), "--stream-interval-ms", "50"});
  const pid_t frozen_pid = RedisPid(f.redis());

  // Streams on the connection that will hang (distinct queue sets), one on the healthy one.
  std::vector<std::unique_ptr<Stream>> frozen;
  for (int i = 0; i < hung_streams; ++i) {
    auto s = std::make_unique<Stream>();
    s->reader = f.stub().StreamIsActive(
        &s->ctx, Ref(std::string("hung").append(std::to_string(i)),
                     {{"queues", std::string("q").append(std::to_string(i))}}));
    externalscaler::IsActiveResponse msg;
    REQUIRE(s->reader->Read(&msg));
    frozen.push_back(std::move(s));
  }
  Stream push;
  push.reader = f.stub().StreamIsActive(
      &push.ctx,
      Ref("push",
          {{"redis", "healthy"}, {"queues", "gpu"}, {"keepAlive", "0"}, {"prewarm", "off"}}));
  externalscaler::IsActiveResponse first;
  REQUIRE(push.reader->Read(&first));
  REQUIRE_FALSE(first.result());

  // Normal latency from LPUSH to `true`, worst of three.
  std::chrono::milliseconds normal{0};
  for (int i = 0; i < 3; ++i) {
    healthy.Cli({"LPUSH", "gpu", "task"});
    normal = std::max(normal, TimeUntil(push, true));
    healthy.Cli({"DEL", "gpu"});
    TimeUntil(push, false);
  }
  INFO("normal latency " << normal.count() << " ms");

  REQUIRE(kill(frozen_pid, SIGSTOP) == 0);
  const auto stopped_at = Steady::now();

  // 20 ScaledObjects poll the hung connection throughout.
  std::atomic<bool> polling{true};
  std::atomic<int64_t> slowest_ms{0};
  std::atomic<int> unavailable{0}, other{0}, late_ok{0};
  std::vector<std::thread> pollers;
  for (int i = 0; i < 20; ++i) {
    pollers.emplace_back([&, i] {
      while (polling) {
        int64_t value = 0;
        const auto t0 = Steady::now();
        grpc::Status s = f.GetMetrics("poll" + std::to_string(i), {{"queues", "gpu"}}, &value);
        const auto took = Ms(Steady::now() - t0).count();
        int64_t prev = slowest_ms;
        while (took > prev && !slowest_ms.compare_exchange_weak(prev, took)) {
        }
        if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
          ++unavailable;
        } else if (s.ok()) {
          // A reading taken before the hang may be served while fresh (2 windows).
          if (t0 - stopped_at > 200ms) ++late_ok;
        } else {
          ++other;
        }
        std::this_thread::sleep_for(10ms);
      }
    });
  }
  std::this_thread::sleep_for(kRedisTimeout + 200ms);  // let reads pile up on the hung Redis

  std::chrono::milliseconds slowest_health{0}, slowest_spec{0};
  for (int i = 0; i < 10; ++i) {
    for (const char* service : {"", "liveness"}) {
      const auto t0 = Steady::now();
      CHECK(HealthCheck(f.channel(), service) == 1);
      slowest_health = std::max(slowest_health, Ms(Steady::now() - t0));
    }
    auto ref = Ref("spec", {{"queues", "gpu"}});
    externalscaler::GetMetricSpecResponse spec;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    const auto t0 = Steady::now();
    CHECK(f.stub().GetMetricSpec(&ctx, ref, &spec).ok());
    slowest_spec = std::max(slowest_spec, Ms(Steady::now() - t0));
    std::this_thread::sleep_for(50ms);
  }
  WARN("measured with " << hung_streams << " hung streams: health " << slowest_health.count()
                        << " ms, GetMetricSpec " << slowest_spec.count() << " ms, normal stream "
                        << normal.count() << " ms");
  CHECK(slowest_health < 100ms);
  CHECK(slowest_spec < 100ms);

  // The healthy connection's stream keeps its latency.
  for (int i = 0; i < 3; ++i) {
    healthy.Cli({"LPUSH", "gpu", "task"});
    const auto took = TimeUntil(push, true);
    WARN("stream latency during the hang " << took.count() << " ms");
    CHECK(took < normal + 100ms);
    healthy.Cli({"DEL", "gpu"});
    TimeUntil(push, false);
  }

  polling = false;
  for (auto& t : pollers) t.join();
  WARN("slowest GetMetrics " << slowest_ms.load() << " ms, UNAVAILABLE " << unavailable.load());
  CHECK(slowest_ms.load() < (kRedisTimeout + 100ms).count());
  CHECK(unavailable > 0);
  CHECK(late_ok == 0);  // never a reading from before the hang past its freshness bound
  CHECK(other == 0);
  CHECK_THAT(f.ScalerLog(), Catch::Contains("redis_connection_failing"));
  CHECK_THAT(f.ScalerLog(), Catch::Contains("connection=default"));

  REQUIRE(kill(frozen_pid, SIGCONT) == 0);
  const auto resumed = Steady::now();
  int64_t value = -1;
  CHECK(WaitFor([&] { return f.GetMetrics("poll0", {{"queues", "gpu"}}, &value).ok(); }, 2s));
  WARN("numbers again " << Ms(Steady::now() - resumed).count() << " ms after SIGCONT");
  CHECK(value == 0);
  CHECK(WaitFor(
      [&] { return f.ScalerLog().find("redis_connection_recovered") != std::string::npos; }, 2s));

  for (auto& s : frozen) s->ctx.TryCancel();
  push.ctx.TryCancel();
  externalscaler::IsActiveResponse msg;
  for (auto& s : frozen) {
    while (s->reader->Read(&msg)) {
    }
    s->reader->Finish();
  }
  while (push.reader->Read(&msg)) {
  }
  push.reader->Finish();
}

}  // namespace
}  // namespace warmpool::testing
