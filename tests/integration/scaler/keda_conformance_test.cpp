// KEDA conformance: warmpool-scaler (real process, real redis-server, tasks sent by Python
// Celery) driven by a replay of KEDA's own external-scaler client (keda_client.h: each step
// cites the kedacore/keda file and line it comes from). Includes the regression tests for
// issue 19 findings 1-3.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/scaler/keda_client.h"
#include "tests/integration/scaler/scaler_fixture.h"

namespace warmpool::testing {
namespace {

using namespace std::chrono_literals;
using Metadata = std::map<std::string, std::string>;
using Event = KedaExternalTrigger::StreamEvent;

// A ScaledObject trigger as a user writes it: KEDA's own keys travel in scalerMetadata too
// (external_scaler.go L45-47 reads them from the same map and L132-142 forwards all of it).
std::string ScalerAddress(ScalerFixture& f) {
  return std::string("127.0.0.1:").append(std::to_string(f.grpc_port()));
}

Metadata Trigger(ScalerFixture& f, Metadata extra) {
  Metadata md = {{"scalerAddress", ScalerAddress(f)},
                 {"enableTLS", "false"},
                 {"unsafeSsl", "false"},
                 {"drainSeconds", "off"}};
  for (auto& [k, v] : extra) md[k] = v;
  return md;
}

// One polling cycle as KEDA's metrics adapter and the HPA make it: the spec, then the metric
// under the name the spec gave (with KEDA's "sN-" prefix).
struct Poll {
  std::vector<KedaExternalTrigger::MetricSpec> specs;
  KedaExternalTrigger::MetricsAndActivity metrics;
};
Poll PollOnce(KedaExternalTrigger& keda) {
  Poll p;
  grpc::Status spec_status;
  p.specs = keda.GetMetricSpecForScaling(&spec_status);
  INFO(spec_status.error_message());
  REQUIRE(p.specs.size() == 1);
  p.metrics = keda.GetMetricsAndActivity(p.specs[0].name);
  return p;
}

Poll PollUntilValue(KedaExternalTrigger& keda, double want) {
  Poll p;
  WaitFor(
      [&] {
        p = PollOnce(keda);
        return p.metrics.status.ok() && p.metrics.value == want;
      },
      5s);
  return p;
}

TEST_CASE("KEDA's polling sequence: spec, then metrics under the spec's name",
          "[scaler][integration][keda]") {
  ScalerFixture f;
  f.SendTasks("gpu", 3);
  // The second trigger of its ScaledObject: KEDA names the metric "s1-...".
  KedaExternalTrigger keda("gpu-workers", "ml", Trigger(f, {{"queues", "gpu"}}), {}, 1);
  CHECK(keda.ref().scalermetadata().at("scalerAddress") == ScalerAddress(f));
  Poll p = PollUntilValue(keda, 3);
  REQUIRE(p.metrics.status.ok());
  CHECK(p.specs[0].name == "s1-warmpool-gpu");
  CHECK(p.specs[0].target == 1.0);
  CHECK(p.metrics.value == 3);
  CHECK(p.metrics.active);
  CHECK(p.metrics.calls == 1);
  // The HPA's AverageValue rule on KEDA's numbers.
  CHECK(std::ceil(p.metrics.value / p.specs[0].target) == 3);
}

// Issue 19 finding 1: KEDA sends `queuesFromEnv: gpu` (the resolved variable); warmpool
// ignored it and watched `celery` (metric warmpool-celery, value 0).
TEST_CASE("Finding 1: xFromEnv keys resolved by KEDA are read", "[scaler][integration][keda]") {
  ScalerFixture f;
  f.SendTasks("gpu", 3);
  KedaExternalTrigger keda(
      "from-env", "ml",
      Trigger(f, {{"queuesFromEnv", "QUEUE_NAME"}, {"tasksPerReplicaFromEnv", "PER_REPLICA"}}),
      {{"QUEUE_NAME", "gpu"}, {"PER_REPLICA", "2"}});
  CHECK(keda.ref().scalermetadata().at("queuesFromEnv") == "gpu");
  Poll p = PollUntilValue(keda, 2);
  CHECK(p.specs[0].name == "s0-warmpool-gpu");
  CHECK(p.metrics.status.ok());
  CHECK(p.metrics.value == 2);  // 3 tasks, 2 per replica
  CHECK(p.metrics.active);

  // An unset variable: KEDA drops the key, so the default queue is watched.
  KedaExternalTrigger unset("unset-env", "ml", Trigger(f, {{"queuesFromEnv", "NOT_SET"}}), {});
  CHECK(unset.ref().scalermetadata().count("queuesFromEnv") == 0);
  CHECK(PollOnce(unset).specs[0].name == "s0-warmpool-celery");
}

// Issue 19 finding 2: `queue: gpu` was logged and the default queue `celery` served.
TEST_CASE("Finding 2: a misspelled key is INVALID_ARGUMENT on every rpc",
          "[scaler][integration][keda]") {
  ScalerFixture f;
  f.SendTasks("gpu", 1);
  KedaExternalTrigger keda("typo", "ml", Trigger(f, {{"queue", "gpu"}}), {});
  grpc::Status spec_status;
  CHECK(keda.GetMetricSpecForScaling(&spec_status).empty());
  CHECK(spec_status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(spec_status.error_message(),
             Catch::Contains("unknown metadata key 'queue' (did you mean 'queues'?)"));

  auto m = keda.GetMetricsAndActivity("s0-warmpool-celery");
  CHECK(m.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(m.calls == 2);  // KEDA retried once, and got the same answer

  externalscaler::IsActiveResponse active;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  auto stub = externalscaler::ExternalScaler::NewStub(f.channel());
  CHECK(stub->IsActive(&ctx, keda.ref(), &active).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext stream_ctx;
  stream_ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  auto reader = stub->StreamIsActive(&stream_ctx, keda.ref());
  while (reader->Read(&active)) {
  }
  grpc::Status stream_status = reader->Finish();
  CHECK(stream_status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(stream_status.error_message(), Catch::Contains("did you mean 'queues'?"));
}

TEST_CASE("KEDA's one retry after an error meets a prompt error, then recovery",
          "[scaler][integration][keda]") {
  ScalerFixture f;
  f.SendTasks("gpu", 2);
  KedaExternalTrigger keda("retry", "ml", Trigger(f, {{"queues", "gpu"}}), {});
  Poll p = PollUntilValue(keda, 2);
  REQUIRE(p.metrics.status.ok());

  f.redis().Stop();
  // Never a made-up value: once the last reading is gone, both of KEDA's calls fail, each
  // within the scaler's Redis timeout (500 ms).
  KedaExternalTrigger::MetricsAndActivity m;
  std::chrono::steady_clock::duration elapsed{};
  REQUIRE(WaitFor(
      [&] {
        const auto start = std::chrono::steady_clock::now();
        m = keda.GetMetricsAndActivity(p.specs[0].name);
        elapsed = std::chrono::steady_clock::now() - start;
        return !m.status.ok();
      },
      5s));
  CHECK(m.status.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(m.calls == 2);
  CHECK(elapsed < 3s);

  f.redis().Start();
  CHECK(WaitFor([&] { return keda.GetMetricsAndActivity(p.specs[0].name).status.ok(); }, 10s));
  f.SendTasks("gpu", 2);
  CHECK(PollUntilValue(keda, 2).metrics.value == 2);  // the restarted Redis is empty
}

// Issue 19 finding 3: SIGTERM ended streams with UNAVAILABLE, so KEDA's retry wait doubled on
// each rolling restart (2, 4, 8 s ... up to 60 s) instead of staying at 2 s. Two replicas on one
// Redis as deployed (docs/deploy.md: 2 replicas behind a headless Service; KEDA's round_robin
// channel reaches both, here through an ipv4: target listing both ports), restarted one after
// the other three times, as a rolling update does.
TEST_CASE("Finding 3: SIGTERM ends StreamIsActive with a clean EOF, KEDA's wait stays 2 s",
          "[scaler][integration][keda]") {
  TestRedisServer redis;
  ScalerFixture a(&redis, {}), b(&redis, {});
  Metadata md = Trigger(a, {{"queues", "gpu"}});
  md["scalerAddress"] =
      std::string("ipv4:").append(ScalerAddress(a)).append(",").append(ScalerAddress(b));
  KedaExternalTrigger keda("push", "ml", md, {});
  keda.StartStream();
  REQUIRE(keda.WaitForEvents(Event::kMessage, 1, 5s));  // the state as soon as it opens

  constexpr int kRounds = 3;
  for (int round = 0; round < kRounds; ++round) {
    for (ScalerFixture* replica : {&a, &b}) {
      CHECK(replica->Restart() == 0);
      // KEDA waits 2 s after a clean end, then reopens on a ready replica.
      std::this_thread::sleep_for(3s);
    }
  }
  keda.StopStream();

  // Streams the servers ended (they had delivered their first message): each with OK, which
  // KEDA's client reads as io.EOF.
  const auto events = keda.StreamEvents();
  int server_ended = 0, failed_opens = 0;
  std::chrono::steady_clock::duration longest_silence{};
  for (size_t i = 0; i + 1 < events.size(); ++i) {  // the last one: StopStream cancelled it
    const Event& e = events[i];
    if (e.kind != Event::kEnded) continue;
    if (e.messages == 0) {
      ++failed_opens;
      continue;
    }
    ++server_ended;
    INFO("stream " << server_ended << " ended with code " << e.status.error_code() << ": "
                   << e.status.error_message());
    CHECK(e.status.ok());
    REQUIRE(events[i + 1].kind == Event::kRetryWait);
    CHECK(events[i + 1].wait == 2s);
    // Push is silent from the end until the reopened stream's first message.
    for (size_t j = i + 1; j < events.size(); ++j) {
      if (events[j].kind == Event::kMessage) {
        longest_silence = std::max(longest_silence, events[j].at - e.at);
        break;
      }
    }
  }
  // Every replica restart that held the stream ended it: at least one per round.
  CHECK(server_ended >= kRounds);
  CHECK(failed_opens == 0);
  INFO("longest push silence "
       << std::chrono::duration_cast<std::chrono::milliseconds>(longest_silence).count() << " ms");
  CHECK(longest_silence < 3500ms);  // KEDA's 2 s wait + reopening the stream
  CHECK(a.ScalerLog().find("streams_not_finished") == std::string::npos);
  CHECK(b.ScalerLog().find("streams_not_finished") == std::string::npos);
}

// KEDA's push scaler also watches StreamMetricSpec (external_scaler.go Run). warmpool's spec is
// fixed by the metadata, so the watcher must end at once with UNIMPLEMENTED, KEDA's signal to
// stop it for good and keep polling GetMetricSpec, rather than hang or fail, which KEDA retries
// with a growing backoff and logs as an error.
TEST_CASE("KEDA's StreamMetricSpec watcher stops on UNIMPLEMENTED, GetMetricSpec serves",
          "[scaler][integration][keda]") {
  ScalerFixture f;
  f.SendTasks("gpu", 2);
  KedaExternalTrigger keda("spec-watch", "ml", Trigger(f, {{"queues", "gpu"}}), {});
  const auto started = std::chrono::steady_clock::now();
  const KedaExternalTrigger::MetricSpecStream watched = keda.StreamMetricSpecOnce(5s);
  INFO(watched.status.error_message());
  CHECK(watched.status.error_code() == grpc::StatusCode::UNIMPLEMENTED);
  CHECK(watched.updates == 0);
  CHECK(std::chrono::steady_clock::now() - started < 2s);  // answered, not left to the deadline
  Poll p = PollUntilValue(keda, 2);
  CHECK(p.specs[0].name == "s0-warmpool-gpu");
  CHECK(p.metrics.active);
}

}  // namespace
}  // namespace warmpool::testing
