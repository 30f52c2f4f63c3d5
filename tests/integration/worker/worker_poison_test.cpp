// A poison message (valid Celery, args nested 50,000 deep) is dead-lettered and acked, and the
// task queued behind it runs: the worker neither crashes nor crash-loops on restore.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "celery/base64.h"
#include "redis/connection.h"
#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

constexpr const char* kPoisonId = "5f0c1d2e-0000-4000-8000-00000000dead";
constexpr const char* kPoisonTag = "9a8b7c6d-0000-4000-8000-00000000beef";

// The envelope Celery 5.2.6 + kombu 5.2.4 LPUSH for send_task('warmpool.ping', args=[x]) with x
// nested `depth` lists deep, written by hand (Python's json cannot dump that depth), laid out
// as kombu's json.dumps writes it (", " and ": ").
std::string PoisonEnvelope(int depth) {
  std::string body = "[[" + std::string(depth, '[') + std::string(depth, ']') +
                     R"js(], {}, {"callbacks": null, "errbacks": null, "chain": null, )js"
                     R"js("chord": null}])js";
  const std::string id = kPoisonId;
  return R"js({"body": ")js" + celery::Base64Encode(body) +
         R"js(", "content-encoding": "utf-8", "content-type": "application/json", )js"
         R"js("headers": {"lang": "py", "task": "warmpool.ping", "id": ")js" +
         id +
         R"js(", "shadow": null, "eta": null, "expires": null, "group": null, )js"
         R"js("group_index": null, "retries": 0, "timelimit": [null, null], "root_id": ")js" +
         id +
         R"js(", "parent_id": null, "argsrepr": "([[[...]]],)", "kwargsrepr": "{}", )js"
         R"js("origin": "gen1@poison", "ignore_result": false}, "properties": )js"
         R"js({"correlation_id": ")js" +
         id +
         R"js(", "reply_to": "2c1b0a99-0000-4000-8000-000000000001", "delivery_mode": 2, )js"
         R"js("delivery_info": {"exchange": "", "routing_key": "celery"}, "priority": 0, )js"
         R"js("body_encoding": "base64", "delivery_tag": ")js" +
         kPoisonTag + R"js("}})js";
}

// The 133 KB element is over the kernel's 128 KiB limit for one redis-cli argument.
void Redis(WorkerFixture& fx, const RedisArgs& args) {
  RedisEndpoint ep;
  ep.port = fx.redis.port();
  RedisConnection(ep).Command(args);
}

std::string Metrics(int port) {
  CommandResult r =
      RunCommand({PythonInterpreter(), "-c",
                  "import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
                  "'http://127.0.0.1:" +
                      std::to_string(port) + "/metrics', timeout=5).read().decode())"},
                 std::chrono::seconds(10));
  return r.output;
}

void CheckDeadLetteredAndPingRan(WorkerFixture& fx, ChildProcess& worker,
                                 const std::string& ping_ids, int health_port) {
  json done = fx.Client({"collect", ping_ids});
  CHECK(done["statuses"] == json{{"SUCCESS", 1}});
  REQUIRE(WaitFor(
      [&] {
        return fx.Int({"LLEN", "warmpool.deadletter"}) == 1;
      },
      std::chrono::seconds(10)));
  json entry = json::parse(fx.Cli({"LINDEX", "warmpool.deadletter", "0"}));
  CHECK(entry["reason"] == "body nests arrays/objects deeper than 1024 levels");
  CHECK(entry["id"] == kPoisonId);
  CHECK(entry["task"] == "warmpool.ping");
  CHECK(entry["queue"] == "celery");
  CHECK(entry["message"].get<std::string>().size() > 100000);  // the message itself, kept
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK(fx.Int({"ZCARD", "unacked_index"}) == 0);
  CHECK(fx.Int({"LLEN", "celery"}) == 0);
  CHECK(fx.Int({"EXISTS", "celery-task-meta-" + std::string(kPoisonId)}, 1) == 0);
  CHECK_THAT(worker.Log(), Catch::Contains("message_deadlettered") &&
                               Catch::Contains(std::string("id=") + kPoisonId) &&
                               Catch::Contains("deeper than 1024 levels"));
  CHECK_THAT(Metrics(health_port),
             Catch::Contains("warmpool_worker_tasks_total{state=\"DEADLETTER\"} 1"));
  CheckServingThenStopsCleanly(worker);
}

TEST_CASE("A message nested 50,000 deep is dead-lettered and the ping behind it runs",
          "[worker][integration][poison]") {
  WorkerFixture fx;
  const int port = FreePort();
  const std::vector<std::string> flags = {"--health-listen", "127.0.0.1:" + std::to_string(port)};
  SECTION("taken from the queue") {
    Redis(fx, {"LPUSH", "celery", PoisonEnvelope(50000)});
    json sent = fx.Client({"send", "warmpool.ping"});  // real Celery, queued behind the poison
    std::string ids = fx.dir + "/ping.json";
    std::ofstream(ids) << sent.dump();
    REQUIRE(fx.Int({"LLEN", "celery"}) == 2);
    auto worker = fx.StartWorker(flags);
    CheckDeadLetteredAndPingRan(fx, *worker, ids, port);
  }
  SECTION("left in unacked by a worker that died on it (restored at start-up)") {
    // What a crashed worker leaves: the message in kombu's unacked hash and our in-flight set.
    const std::string tag = kPoisonTag;
    Redis(fx, {"HSET", "unacked", tag,
               std::string("[").append(PoisonEnvelope(50000)).append(", \"\", \"celery\"]")});
    Redis(fx, {"ZADD", "unacked_index", "1", tag});
    Redis(fx, {"SADD", "warmpool.inflight.warmpool@test", tag});
    json sent = fx.Client({"send", "warmpool.ping"});
    std::string ids = fx.dir + "/ping.json";
    std::ofstream(ids) << sent.dump();
    auto worker = fx.StartWorker(flags);
    CheckDeadLetteredAndPingRan(fx, *worker, ids, port);
    CHECK_THAT(worker->Log(), Catch::Contains("restored_own=1"));
  }
}

}  // namespace
}  // namespace warmpool::testing
