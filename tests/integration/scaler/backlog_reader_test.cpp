// scaler::ReadBacklog on a real redis-server holding queues as kombu's Redis transport lays them
// out (kombu/transport/redis.py): Channel._put LPUSHes the JSON envelope onto the priority
// sub-list, the worker's BRPOP takes the right end (the oldest), and QoS.append records deliveries
// in the `unacked` hash as [envelope, exchange, routing_key].
#include "scaler/backlog_reader.h"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "celery/kombu_keys.h"
#include "celery/message.h"
#include "redis/connection.h"
#include "tests/support/redis_server.h"
#include "tests/support/skip_test.h"

namespace warmpool {
namespace {

using Sample = std::map<std::string, int64_t>;

// A protocol 2 envelope as Celery 5.2.6 + kombu 5.2.4 publish it.
std::string Envelope(const std::string& task, const std::string& queue, const std::string& tag,
                     int priority = 0) {
  celery::TaskMessage m;
  m.id = std::string("id-") + tag;
  m.task = task;
  m.routing_key = queue;
  m.priority = priority;
  return celery::EncodeTaskMessageV2(m, tag);
}

class Kombu {
 public:
  Kombu() : redis_(), conn_(Endpoint()) {}

  RedisEndpoint Endpoint() const {
    RedisEndpoint e;
    e.host = redis_.host();
    e.port = redis_.port();
    return e;
  }

  // Channel._put of `n` messages of `task` onto `queue`'s sub-list of priority step `step`.
  void Send(const std::string& queue, int step, const std::string& task, int n) {
    for (int k = 0; k < n; ++k) {
      const std::string tag = queue + "-" + std::to_string(step) + "-" + std::to_string(++sent_);
      Push(queue, step, Envelope(task, queue, tag, step));
    }
  }
  void Push(const std::string& queue, int step, const std::string& element) {
    conn_.Command({"LPUSH", kombu::PriorityListKey("", queue, step), element});
  }
  // QoS.append of a delivered message.
  void Deliver(const std::string& tag, const std::string& envelope, const std::string& queue) {
    const nlohmann::json value = {nlohmann::json::parse(envelope), "", queue};
    conn_.Command({"HSET", std::string(kombu::kUnackedKey), tag, value.dump()});
  }

  scaler::BacklogReading Read(const scaler::ProbeTarget& target) {
    return scaler::ReadBacklog(conn_, target, std::chrono::system_clock::now(),
                               std::chrono::steady_clock::now() + std::chrono::seconds(5));
  }

 private:
  testing::TestRedisServer redis_;
  RedisConnection conn_;
  int sent_ = 0;
};

scaler::ProbeTarget Target(bool read_unacked = true) {
  scaler::ProbeTarget t;
  t.connection = "default";
  t.queues = {"cpu", "empty", "gpu"};
  t.priority_levels = {0, 3, 6, 9};
  t.read_unacked = read_unacked;
  return t;
}

void RequireRedis() {
  if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
    testing::SkipTest("redis-server is not installed");
  }
}

TEST_CASE("The pending sample names the 16 messages each queue delivers next",
          "[scaler][integration][pending_sample]") {
  RequireRedis();
  Kombu kombu;
  // cpu: 20 short ones, then 3 long ones pushed later. BRPOP delivers the 20 short ones first, so
  // the 16 next are all short.
  kombu.Send("cpu", 0, "app.short", 20);
  kombu.Send("cpu", 0, "app.long", 3);
  // gpu: on sub-list 0 (delivered first) 6 short ones, a message that is no JSON, then 3 long
  // ones; 14 short ones at priority step 3 after them. Next delivered: 6 short, the nameless one,
  // 3 long (10 from sub-list 0), then the 6 oldest of step 3.
  kombu.Send("gpu", 0, "app.short", 6);
  kombu.Push("gpu", 0, "not a kombu message");
  kombu.Send("gpu", 0, "app.long", 3);
  kombu.Send("gpu", 3, "app.short", 14);

  const scaler::BacklogReading r = kombu.Read(Target());
  CHECK(r.per_queue.at("cpu").pending == 23);
  CHECK(r.per_queue.at("gpu").pending == 24);
  CHECK(r.per_queue.at("empty").pending == 0);
  // cpu 16 short; gpu 6 + 6 short and 3 long (the nameless one fills a place, counted nowhere).
  CHECK(r.pending_sample == Sample{{"app.short", 16 + 12}, {"app.long", 3}});
  CHECK(scaler::ToObservation(r, true).pending_sample == r.pending_sample);

  // Without reading unacked the lists' contents are not read either.
  CHECK(kombu.Read(Target(false)).pending_sample.empty());
}

TEST_CASE("A queue's long tasks enter the sample once they are among the next 16",
          "[scaler][integration][pending_sample]") {
  RequireRedis();
  Kombu kombu;
  kombu.Send("gpu", 0, "app.short", 14);
  kombu.Send("gpu", 0, "app.long", 3);   // the 15th and 16th delivered are long, the 17th unseen
  kombu.Send("gpu", 9, "app.short", 5);  // lowest priority: after all of step 0
  CHECK(kombu.Read(Target()).pending_sample == Sample{{"app.short", 14}, {"app.long", 2}});
}

TEST_CASE("In-flight tasks carry their task names from the unacked hash",
          "[scaler][integration][pending_sample]") {
  RequireRedis();
  Kombu kombu;
  kombu.Deliver("t-long", Envelope("app.long", "gpu", "t-long"), "gpu");
  kombu.Deliver("t-short", Envelope("app.short", "cpu", "t-short", 3), "cpu");
  kombu.Deliver("t-nameless", R"({"headers": {}, "properties": {"delivery_tag": "t-nameless"}})",
                "gpu");
  kombu.Deliver("t-other", Envelope("app.other", "other", "t-other"), "other");  // not our queue

  const scaler::BacklogReading r = kombu.Read(Target());
  CHECK(r.in_flight() == 3);
  REQUIRE(r.in_flight_tasks.size() == r.in_flight_tags.size());
  std::map<std::string, std::string> task_of;  // HVALS comes in no particular order
  for (size_t k = 0; k < r.in_flight_tags.size(); ++k) {
    task_of[r.in_flight_tags[k]] = r.in_flight_tasks[k];
  }
  CHECK(task_of == std::map<std::string, std::string>{
                       {"t-long", "app.long"}, {"t-short", "app.short"}, {"t-nameless", ""}});
  CHECK(r.pending_sample.empty());  // nothing queued
}

}  // namespace
}  // namespace warmpool
