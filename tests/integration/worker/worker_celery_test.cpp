// warmpool-worker against Python Celery 5.2.6 as the client: results, states, exception classes.
#include <string>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

TEST_CASE("Python AsyncResult.get() sees every state the worker stores", "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"-c", "2"});

  SECTION("ping and sleep return their values") {
    json ping = fx.Client({"call", "warmpool.ping"});
    CHECK(ping["status"] == "SUCCESS");
    CHECK(ping["result"] == "pong");
    json sleep = fx.Client({"call", "warmpool.sleep", "--args", "[0.2]"});
    CHECK(sleep["status"] == "SUCCESS");
    CHECK(sleep["result"] == 0.2);
    CHECK(sleep["since_send"].get<double>() >= 0.2);
  }
  SECTION("a priority=5 task is taken from the celery\\x06\\x163 sub-list") {
    json r = fx.Client({"call", "warmpool.ping", "--priority", "5"});
    CHECK(r["status"] == "SUCCESS");
    CHECK(r["result"] == "pong");
    CHECK(fx.Int({"LLEN", std::string("celery\x06\x16") + "3"}) == 0);
  }
  SECTION("countdown is honoured") {
    json r = fx.Client({"call", "warmpool.sleep", "--args", "[0.01]", "--countdown", "1.5"});
    CHECK(r["status"] == "SUCCESS");
    CHECK(r["since_send"].get<double>() >= 1.5);
  }
  SECTION("an expired task raises TaskRevokedError") {
    json already = fx.Client({"call", "warmpool.ping", "--expires", "-1"});
    CHECK(already["status"] == "REVOKED");
    CHECK(already["exc_type"] == "TaskRevokedError");
    CHECK(already["exc_module"] == "celery.exceptions");
    CHECK(already["exc_args"] == json::array({"expired"}));
    // Expires while held for its ETA: revoked when due.
    json during_eta = fx.Client({"call", "warmpool.ping", "--countdown", "1", "--expires", "0.5"});
    CHECK(during_eta["status"] == "REVOKED");
    CHECK(during_eta["exc_type"] == "TaskRevokedError");
  }
  SECTION("an unknown task raises NotRegistered and is acked") {
    json r = fx.Client({"call", "tasks.does_not_exist"});
    CHECK(r["status"] == "FAILURE");
    CHECK(r["exc_type"] == "NotRegistered");
    CHECK(r["exc_module"] == "celery.exceptions");
    CHECK(r["exc_args"] == json::array({"tasks.does_not_exist"}));
    CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  }
  SECTION("bad arguments fail with TypeError/ValueError naming the argument") {
    json wrong_type = fx.Client({"call", "warmpool.sleep", "--args", "[\"soon\"]"});
    CHECK(wrong_type["status"] == "FAILURE");
    CHECK(wrong_type["exc_type"] == "TypeError");
    CHECK(wrong_type["exc_module"] == "builtins");
    CHECK_THAT(wrong_type["exc_args"][0].get<std::string>(), Catch::Contains("argument 'seconds'"));
    json missing = fx.Client({"call", "warmpool.sleep"});
    CHECK(missing["exc_type"] == "TypeError");
    CHECK_THAT(missing["exc_args"][0].get<std::string>(), Catch::Contains("'seconds'"));
    json out_of_range = fx.Client({"call", "warmpool.sleep", "--args", "[-3]"});
    CHECK(out_of_range["exc_type"] == "ValueError");
    json extra_kw = fx.Client({"call", "warmpool.ping", "--kwargs", "{\"x\": 1}"});
    CHECK(extra_kw["exc_type"] == "TypeError");
  }
  SECTION("a hard time limit stops the task with TimeLimitExceeded") {
    json r = fx.Client({"call", "warmpool.sleep", "--args", "[10]", "--time-limit", "0.5"});
    CHECK(r["status"] == "FAILURE");
    CHECK(r["exc_type"] == "TimeLimitExceeded");
    CHECK(r["exc_module"] == "billiard.exceptions");
    CHECK(r["elapsed"].get<double>() < 5);
    json after = fx.Client({"call", "warmpool.ping"});
    CHECK(after["result"] == "pong");
  }
  CheckServingThenStopsCleanly(*worker);
}

TEST_CASE("Malformed messages are dead-lettered and the worker keeps serving",
          "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker();
  // Not JSON at all; JSON with a delivery tag but a body that is not base64; no task name.
  fx.Cli({"LPUSH", "celery", "{this is not json"});
  fx.Cli({"LPUSH", "celery",
          R"({"body": "%%%", "headers": {"task": "warmpool.ping", "id": "x1"},)"
          R"( "properties": {"body_encoding": "base64", "delivery_tag": "dt-1"}})"});
  fx.Cli({"LPUSH", "celery",
          R"({"body": "W10=", "headers": {}, "properties": {"body_encoding": "base64",)"
          R"( "delivery_tag": "dt-2"}})"});
  // Laid out as kombu writes it, so the take script reads the tag without decoding, but cut
  // short: the worker's decoder rejects it after it was recorded as unacked under "dt-3".
  fx.Cli({"LPUSH", "celery",
          R"({"body": "W10=", "properties": {"delivery_info": {"exchange": "", )"
          R"("routing_key": "celery"}, "delivery_tag": "dt-3"})"});
  REQUIRE(WaitFor(
      [&] {
        return fx.Int({"LLEN", "warmpool.deadletter"}) == 4;
      },
      std::chrono::seconds(10)));
  std::string entries = fx.Cli({"LRANGE", "warmpool.deadletter", "0", "-1"});
  CHECK_THAT(entries, Catch::Contains("envelope is not valid JSON"));
  CHECK_THAT(entries, Catch::Contains("body is not valid base64"));
  CHECK_THAT(entries, Catch::Contains("no task name"));
  CHECK_THAT(entries, Catch::Contains(R"(\"delivery_tag\": \"dt-3\"})"));
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK(fx.Int({"LLEN", "celery"}) == 0);
  json ping = fx.Client({"call", "warmpool.ping"});
  CHECK(ping["result"] == "pong");
  CHECK(worker->Running());
  CHECK_THAT(worker->Log(), Catch::Contains("message_deadlettered"));
}

TEST_CASE("Task events and heartbeats reach a celery events receiver", "[worker][integration]") {
  WorkerFixture fx;
  std::string out = fx.dir + "/events.json";
  ChildProcess receiver({PythonInterpreter(), ClientScript(), "--broker", fx.broker(), "--backend",
                         fx.backend(), "events", "--seconds", "20", "--until", "worker-offline"},
                        out);
  // The receiver has subscribed once its PSUBSCRIBE "/0.celeryev/*" exists.
  REQUIRE(WaitFor([&] { return fx.Int({"PUBSUB", "NUMPAT"}) >= 1; }, std::chrono::seconds(30)));
  auto worker = fx.StartWorker({"-E"}, "warmpool@events");
  json ping = fx.Client({"call", "warmpool.ping"});
  CHECK(ping["result"] == "pong");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // at least one heartbeat
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(std::chrono::seconds(10)) == 0);
  REQUIRE(receiver.Wait(std::chrono::seconds(30)) == 0);
  std::string log = receiver.Log();
  INFO(log);
  json events = json::parse(log.substr(log.rfind("{\"counts\"")));
  for (const char* type : {"worker-online", "worker-heartbeat", "worker-offline", "task-received",
                           "task-started", "task-succeeded"}) {
    INFO(type);
    CHECK(events["counts"].value(type, 0) >= 1);
    CHECK(events["hosts"][type] == json::array({"warmpool@events"}));
  }
}

}  // namespace
}  // namespace warmpool::testing

namespace warmpool::testing {
namespace {

TEST_CASE("Key prefix and protocol 1 messages", "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"--key-prefix", "pfx:"});
  json ping = fx.Client({"--key-prefix", "pfx:", "call", "warmpool.ping"});
  CHECK(ping["status"] == "SUCCESS");
  CHECK(ping["result"] == "pong");
  // A protocol 1 message (everything in the body, no headers), as old clients send.
  // Body: {"task": "warmpool.sleep", "id": "v1-task", "args": [0.01], "kwargs": {}}
  fx.Cli(
      {"LPUSH", "pfx:celery",
       R"({"body": "eyJ0YXNrIjogIndhcm1wb29sLnNsZWVwIiwgImlkIjogInYxLXRhc2siLCAiYXJncyI6IFswLjAxXSwgImt3YXJncyI6IHt9fQ==",)"
       R"( "content-encoding": "utf-8", "content-type": "application/json", "headers": {},)"
       R"( "properties": {"body_encoding": "base64", "delivery_tag": "v1-tag",)"
       R"( "delivery_info": {"exchange": "", "routing_key": "celery"}, "priority": 0}})"});
  REQUIRE(WaitFor(
      [&] {
        return !fx.Cli({"GET", "celery-task-meta-v1-task"}, 1).empty();
      },
      std::chrono::seconds(10)));
  json meta = json::parse(fx.Cli({"GET", "celery-task-meta-v1-task"}, 1));
  CHECK(meta["status"] == "SUCCESS");
  CHECK(meta["result"] == 0.01);
  CHECK(fx.Int({"HLEN", "pfx:unacked"}) == 0);
  CHECK(fx.Int({"EXISTS", "unacked"}) == 0);
}

}  // namespace
}  // namespace warmpool::testing

namespace warmpool::testing {
namespace {

TEST_CASE("Queues are consumed round-robin, each in priority order", "[worker][integration]") {
  WorkerFixture fx;
  // Filled before the worker starts: 3 tasks on 'a', 3 on 'b', and one priority-9 task on 'a'
  // (its sub-list comes after every queue's priority-0 list, as kombu orders them).
  fx.Client({"send", "warmpool.ping", "--n", "3", "--queue", "a"});
  fx.Client({"send", "warmpool.ping", "--n", "3", "--queue", "b"});
  std::string low = fx.Cli({"RPOP", "a"});
  fx.Cli({"LPUSH", std::string("a\x06\x16") + "9", low});
  auto worker = fx.StartWorker({"-Q", "a,b"});
  REQUIRE(WaitFor([&] { return fx.Int({"DBSIZE"}, 1) == 6; }, std::chrono::seconds(20)));
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(std::chrono::seconds(10)) == 0);
  std::vector<std::string> order;
  std::istringstream in(worker->Log());
  for (std::string line; std::getline(in, line);) {
    if (line.find(" task ") == std::string::npos ||
        line.find("state=SUCCESS") == std::string::npos) {
      continue;
    }
    auto q = line.find("queue=");
    order.push_back(line.substr(q + 6, 1));
  }
  CHECK(order == std::vector<std::string>{"a", "b", "a", "b", "b", "a"});
}

}  // namespace
}  // namespace warmpool::testing

namespace warmpool::testing {
namespace {

TEST_CASE("STARTED is stored with --track-started, and --early-ack acks at start",
          "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"--track-started", "--early-ack"});
  json sent = fx.Client({"send", "warmpool.sleep", "--args", "[1.5]"});
  std::string id = sent["ids"][0];
  std::string key = "celery-task-meta-" + id;
  REQUIRE(WaitFor([&] { return !fx.Cli({"GET", key}, 1).empty(); }, std::chrono::seconds(10)));
  json started = json::parse(fx.Cli({"GET", key}, 1));
  CHECK(started["status"] == "STARTED");
  CHECK(started["result"]["hostname"] == "warmpool@test");
  CHECK(started["result"]["pid"] == worker->pid());
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);  // early ack: acked while it runs
  REQUIRE(WaitFor(
      [&] {
        return fx.Cli({"GET", key}, 1).find("SUCCESS") != std::string::npos;
      },
      std::chrono::seconds(10)));
  CHECK(json::parse(fx.Cli({"GET", key}, 1))["result"] == 1.5);
}

}  // namespace
}  // namespace warmpool::testing
