// The finisher and the consumer driven through a fake broker (no Redis): what reaches the
// broker, and what happens when a write fails.
#include "worker/finisher.h"

#include <chrono>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "celery/message.h"
#include "tests/unit/worker/fake_broker.h"
#include "worker/consumer.h"
#include "worker/events.h"
#include "worker/worker_metrics.h"
#include "worker/worker_state.h"

namespace warmpool::worker {
namespace {

using nlohmann::json;
using testing::FakeBroker;
using testing::FakeResults;

// A finisher over fakes, with `jobs` held and reserved as the consumer leaves them.
struct Fixture {
  FakeBroker broker;
  FakeResults results;
  EventDispatcher events{broker,
                         "",
                         0,
                         "warmpool@test",
                         /*worker_events=*/false,
                         /*task_events=*/true};
  WorkerMetrics metrics;
  WorkerState state;
  Finisher finisher;

  explicit Fixture(bool same_server = true)
      : finisher({"warmpool@test", "", true, same_server}, /*backend_db=*/1,
                 /*result_expires=*/3600, broker, results, events, metrics, state) {}

  std::shared_ptr<Job> Held(const std::string& id) {
    auto job = std::make_shared<Job>();
    job->fetched.tag = "tag-" + id;
    job->fetched.queue = "celery";
    job->msg.id = id;
    job->msg.task = "warmpool.add";
    job->msg.routing_key = "celery";
    job->task_name = "warmpool.add";
    job->phase = kFinishing;
    std::lock_guard lock(state.mu);
    state.held[job->fetched.tag] = job;
    ++state.reserved;
    return job;
  }
};

Outcome Success(json value) {
  Outcome out;
  out.value = std::move(value);
  return out;
}

Outcome Retry() {
  Outcome out;
  out.kind = Outcome::Kind::kRetry;
  out.countdown = 1;
  out.exc = {"Retry", "celery.exceptions", json::array({"Retry in 1s"})};
  return out;
}

TEST_CASE("A finished batch reaches the broker as its finish plans say",
          "[worker][finisher][fake_broker]") {
  Fixture f;
  std::vector<Finishing> batch = {{f.Held("a"), Success(3)}, {f.Held("b"), Retry()}};
  f.finisher.WriteBatch(batch, /*kick=*/true, nullptr);

  REQUIRE(f.broker.finish_calls.size() == 1);  // one round trip for the batch
  const auto& call = f.broker.finish_calls[0];
  CHECK(call.backend_db == 1);
  CHECK(call.expires == 3600);
  REQUIRE(call.ops.size() == 2);
  CHECK(call.ops[0].ack.tag == "tag-a");
  CHECK(call.ops[0].result_key == "celery-task-meta-a");
  CHECK(json::parse(call.ops[0].result)["status"] == "SUCCESS");
  CHECK(json::parse(call.ops[0].result)["result"] == 3);
  CHECK(call.ops[0].ack.pushes.empty());
  CHECK(json::parse(call.ops[1].result)["status"] == "RETRY");
  REQUIRE(call.ops[1].ack.pushes.size() == 1);
  celery::TaskMessage again;
  REQUIRE(celery::DecodeTaskMessage(call.ops[1].ack.pushes[0].value, &again).ok());
  CHECK(again.id == "b");
  CHECK(again.retries == 1);
  CHECK(f.broker.ack_many_calls.empty());  // same server: acked in the finish script

  // The jobs are forgotten: room freed, the consumer kicked, counted.
  CHECK(f.state.reserved == 0);
  CHECK(f.state.held.empty());
  CHECK(f.state.kicks == 2);
  CHECK(f.state.processed == 2);
  CHECK(f.state.totals["warmpool.add"] == 2);
  CHECK(batch[0].job->phase == kDone);
  // task-succeeded and task-retried went out on the events channel.
  REQUIRE(f.broker.published.size() == 2);
  CHECK(f.broker.published[0].first == "/0.celeryev/task.succeeded");
  CHECK(f.broker.published[1].first == "/0.celeryev/task.retried");
}

TEST_CASE("A failed write is retried with the same plan until it goes through",
          "[worker][finisher][fake_broker]") {
  Fixture f;
  f.broker.fail_finishes = 2;
  std::vector<Finishing> batch = {{f.Held("a"), Success("x")}};
  const auto t0 = std::chrono::steady_clock::now();
  f.finisher.WriteBatch(batch, /*kick=*/true, nullptr);
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK(f.broker.finish_attempts == 3);
  REQUIRE(f.broker.finish_calls.size() == 1);
  CHECK(f.broker.finish_calls[0].ops[0].ack.tag == "tag-a");
  CHECK(json::parse(f.broker.finish_calls[0].ops[0].result)["result"] == "x");
  CHECK(waited >= std::chrono::milliseconds(150));  // backoff 50 ms, then 100 ms
  CHECK(f.state.reserved == 0);
  CHECK(f.state.processed == 1);
}

TEST_CASE("With a separate result backend, results are stored once and the ack retried alone",
          "[worker][finisher][fake_broker]") {
  Fixture f(/*same_server=*/false);
  f.broker.fail_ack_many = 1;
  std::vector<Finishing> batch = {{f.Held("a"), Success(1)}, {f.Held("b"), Success(2)}};
  f.finisher.WriteBatch(batch, /*kick=*/false, nullptr);
  CHECK(f.broker.finish_calls.empty());
  CHECK(f.results.store_many_calls == 1);
  REQUIRE(f.results.stored.size() == 2);
  CHECK(f.results.stored[0].task_id == "a");
  CHECK(f.broker.ack_many_attempts == 2);
  REQUIRE(f.broker.ack_many_calls.size() == 1);
  REQUIRE(f.broker.ack_many_calls[0].size() == 2);
  CHECK(f.broker.ack_many_calls[0][1].tag == "tag-b");
  CHECK(f.state.kicks == 0);  // kick=false: the executor that wrote takes the next itself
  CHECK(f.state.reserved == 0);
}

TEST_CASE("After a hard exit is ordered a failing write gives up and leaves the message unacked",
          "[worker][finisher][fake_broker]") {
  Fixture f;
  f.broker.fail_finishes = 1000;
  f.state.hard_exit = true;
  std::vector<Finishing> batch = {{f.Held("a"), Success(1)}};
  f.finisher.WriteBatch(batch, /*kick=*/true, nullptr);
  CHECK(f.broker.finish_attempts == 1);
  CHECK(f.broker.finish_calls.empty());
  CHECK(f.state.reserved == 0);   // forgotten by this process...
  CHECK(f.state.processed == 0);  // ...but not counted as done: Redis still holds it unacked
  CHECK(f.broker.published.empty());
}

TEST_CASE("The finisher thread writes what is queued, and the inline path takes with it",
          "[worker][finisher][fake_broker]") {
  Fixture f;
  SECTION("queued for the thread") {
    f.finisher.Start();
    f.finisher.Finish(f.Held("a"), Success(1));
    for (int i = 0; i < 200 && f.broker.finished() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    f.finisher.Stop();
    REQUIRE(f.broker.finish_calls.size() == 1);
    CHECK(f.broker.finish_calls[0].ops[0].ack.tag == "tag-a");
  }
  SECTION("written inline with the next take in the same round trip") {
    Fetched next;
    next.tag = "tag-next";
    next.queue = "celery";
    f.broker.to_fetch = {next};
    std::vector<Finishing> batch;
    CHECK_FALSE(f.finisher.DeferIfBusy(f.Held("a"), Success(1), &batch));  // nothing waits
    REQUIRE(batch.size() == 1);
    FetchRequest fetch;
    fetch.keys = {"celery"};
    fetch.queues = {"celery"};
    fetch.room = 1;
    f.finisher.WriteBatch(batch, /*kick=*/false, &fetch);
    CHECK(fetch.attempted);
    CHECK(fetch.ok);
    REQUIRE(fetch.fetched.size() == 1);
    CHECK(fetch.fetched[0].tag == "tag-next");
    REQUIRE(f.broker.finish_calls.size() == 1);
    CHECK(f.broker.finish_calls[0].with_fetch);
  }
  SECTION("while jobs wait for an executor, the result waits for the finisher") {
    f.state.ready_jobs.push_back(std::make_shared<Job>());
    std::vector<Finishing> batch;
    CHECK(f.finisher.DeferIfBusy(f.Held("a"), Success(1), &batch));
    CHECK(batch.empty());
    CHECK(f.state.finish_queue.size() == 1);
  }
}

// The consumer over the same fakes: each taken message becomes a job, a refusal or a
// dead-letter entry.
TEST_CASE("Taken messages are queued, ETA-held, refused or dead-lettered",
          "[worker][consumer][fake_broker]") {
  FakeBroker broker;
  FakeResults results;
  EventDispatcher events{broker, "", 0, "warmpool@test", false, false};
  WorkerMetrics metrics;
  WorkerState state;
  WorkerOptions options;
  options.hostname = "warmpool@test";
  TaskRegistry registry;
  registry.Register("warmpool.add", [](const json&, const json&, TaskContext&) { return 1; });
  Consumer consumer(options, registry, broker, results, events, metrics, state);

  const auto message = [](const std::string& id, const std::string& task,
                          std::optional<double> eta = std::nullopt) {
    celery::TaskMessage m;
    m.id = id;
    m.task = task;
    m.routing_key = "celery";
    m.eta = eta;
    Fetched f;
    f.tag = "tag-" + id;
    f.queue = "celery";
    f.list_key = "celery";
    f.envelope = celery::EncodeTaskMessageV2(m, f.tag);
    return f;
  };
  Fetched bad;
  bad.tag = "tag-bad";
  bad.queue = "celery";
  bad.envelope = R"({"body": "not base64 json", "headers": {}, "properties": {}})";

  std::vector<Fetched> taken = {message("ready", "warmpool.add"),
                                message("later", "warmpool.add", WallNow() + 3600),
                                message("unknown", "no.such.task"), bad};
  std::lock_guard fetch_lock(consumer.fetch_mutex());
  CHECK(consumer.HandleFetchedBatch(taken) == 4);

  REQUIRE(state.ready_jobs.size() == 1);
  CHECK(state.ready_jobs[0]->msg.id == "ready");
  CHECK(state.reserved == 1);  // an ETA-held job is not counted against the prefetch
  CHECK(state.held.count("tag-ready") == 1);
  CHECK(state.held.count("tag-later") == 1);
  // Not registered: FAILURE NotRegistered stored, the message acked.
  REQUIRE(results.stored.size() == 1);
  CHECK(results.stored[0].task_id == "unknown");
  CHECK(results.stored[0].result["exc_type"] == "NotRegistered");
  // Undecodable: acked onto the dead-letter list with the reason.
  REQUIRE(broker.acks.size() == 2);
  CHECK(broker.acks[0].tag == "tag-unknown");
  CHECK(broker.acks[0].push_key.empty());
  CHECK(broker.acks[1].tag == "tag-bad");
  CHECK(broker.acks[1].push_key == "warmpool.deadletter");
  CHECK(json::parse(broker.acks[1].push_value)["message"] == bad.envelope);
}

}  // namespace
}  // namespace warmpool::worker
