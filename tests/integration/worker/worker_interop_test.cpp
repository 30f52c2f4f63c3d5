// Interoperability with Python kombu's ack emulation in both directions, and the health server.
#include <algorithm>
#include <arpa/inet.h>
#include <ctime>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "celery/time.h"
#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\n\r\n";
  (void)!write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST_CASE("An unacked entry of our killed worker is restored by a Python kombu sweep",
          "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({}, "warmpool@swept");
  json sent = fx.Client({"send", "warmpool.sleep", "--args", "[0.5]"});
  std::string ids = fx.dir + "/ids.json";
  std::ofstream(ids) << sent.dump();
  REQUIRE(fx.WaitUnacked(1, std::chrono::seconds(10)));
  worker->Signal(SIGKILL);
  worker->Wait(std::chrono::seconds(5));
  REQUIRE(fx.Int({"LLEN", "celery"}) == 0);
  // Older than the visibility timeout of 1 s (our worker refreshed the score while alive).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  json sweep = fx.Client({"--visibility-timeout", "1", "sweep"});
  CHECK(sweep["visibility_timeout"] == 1);
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  REQUIRE(fx.Int({"LLEN", "celery"}) == 1);
  auto other = fx.StartWorker({}, "warmpool@other");
  json done = fx.Client({"collect", ids});
  CHECK(done["statuses"] == json{{"SUCCESS", 1}});
}

TEST_CASE("An unacked entry of a killed Python worker is restored by ours",
          "[worker][integration]") {
  WorkerFixture fx;
  ChildProcess py({PythonInterpreter(), "-m", "celery", "-A", "worker_pytasks", "worker", "-P",
                   "solo", "-Q", "celery", "--without-gossip", "--without-mingle",
                   "--without-heartbeat", "-n", "py@test", "--loglevel", "INFO"},
                  fx.dir + "/pyworker.log",
                  {{"PYTHONPATH", PythonScriptsDir()},
                   {"CELERY_BROKER_URL", fx.broker()},
                   {"CELERY_RESULT_BACKEND", fx.backend()}});
  REQUIRE(WaitFor([&] { return py.Log().find("ready.") != std::string::npos; },
                  std::chrono::seconds(30)));
  json sent = fx.Client({"send", "pytasks.slow", "--args", "[1.5]"});
  std::string ids = fx.dir + "/ids.json";
  std::ofstream(ids) << sent.dump();
  REQUIRE(fx.WaitUnacked(1, std::chrono::seconds(10)));
  py.Signal(SIGKILL);
  py.Wait(std::chrono::seconds(5));
  CHECK(fx.Int({"LLEN", "celery"}) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto worker =
      fx.StartWorker({"--visibility-timeout", "1", "--task-alias", "pytasks.slow=warmpool.sleep"});
  json done = fx.Client({"collect", ids});
  CHECK(done["statuses"] == json{{"SUCCESS", 1}});
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK_THAT(worker->Log(), Catch::Contains("unacked_restored"));
}

TEST_CASE("healthz, readyz and metrics are served", "[worker][integration]") {
  WorkerFixture fx;
  int port = FreePort();
  auto worker = fx.StartWorker({"--health-listen", "127.0.0.1:" + std::to_string(port)});
  REQUIRE(WaitFor([&] { return HttpGet(port, "/readyz").find(" 200 ") != std::string::npos; },
                  std::chrono::seconds(10)));
  CHECK_THAT(HttpGet(port, "/healthz"), Catch::StartsWith("HTTP/1.0 200"));
  json ping = fx.Client({"call", "warmpool.ping"});
  CHECK(ping["result"] == "pong");
  std::string metrics = HttpGet(port, "/metrics");
  CHECK_THAT(metrics, Catch::Contains("warmpool_worker_tasks_total{state=\"SUCCESS\"} 1"));
  CHECK_THAT(metrics, Catch::Contains("warmpool_worker_task_runtime_seconds_count 1"));
  CHECK_THAT(HttpGet(port, "/nope"), Catch::StartsWith("HTTP/1.0 404"));
  fx.redis.Stop();
  CHECK(WaitFor([&] { return HttpGet(port, "/readyz").find(" 503 ") != std::string::npos; },
                std::chrono::seconds(10)));
  fx.redis.Start();
  CHECK(WaitFor([&] { return HttpGet(port, "/readyz").find(" 200 ") != std::string::npos; },
                std::chrono::seconds(10)));
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(std::chrono::seconds(10)) == 0);
}

}  // namespace
}  // namespace warmpool::testing

namespace warmpool::testing {
namespace {

TEST_CASE("Remote control: inspect ping, enable_events, revoke, registered, active and stats",
          "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({}, "warmpool@control");
  REQUIRE(WaitFor([&] { return worker->Log().find("worker_ready") != std::string::npos; },
                  std::chrono::seconds(10)));
  // Subscribed once the pidbox PSUBSCRIBE exists.
  REQUIRE(WaitFor([&] { return fx.Int({"PUBSUB", "NUMPAT"}) >= 1; }, std::chrono::seconds(10)));
  json ping = fx.Client({"control", "ping"});
  CHECK(ping == json{{"warmpool@control", {{"ok", "pong"}}}});
  json enable = fx.Client({"control", "enable_events"});
  CHECK(enable["warmpool@control"]["ok"] == "task events enabled");
  // AsyncResult.revoke() on a task held for its countdown: REVOKED when it comes due.
  json revoked = fx.Client({"revoke", "warmpool.ping", "--countdown", "2"});
  CHECK(revoked["status"] == "REVOKED");
  CHECK(revoked["exc_type"] == "TaskRevokedError");
  CHECK(revoked["exc_args"] == json::array({"revoked"}));
  json unknown = fx.Client({"control", "pool_grow"});
  CHECK(unknown["warmpool@control"].contains("error"));

  // inspect registered / active / stats, while a task runs.
  json registered = fx.Client({"control", "registered"})["warmpool@control"];
  CHECK(std::find(registered.begin(), registered.end(), "warmpool.sleep") != registered.end());
  json ping_result = fx.Client({"call", "warmpool.ping"});
  REQUIRE(ping_result["result"] == "pong");
  json sent = fx.Client({"send", "warmpool.sleep", "--args", "[6]"});
  const std::string sleep_id = sent["ids"][0];
  REQUIRE(WaitFor([&] { return fx.Int({"HLEN", "unacked"}) == 1; }, std::chrono::seconds(10)));
  json active;
  REQUIRE(WaitFor(
      [&] {
        active = fx.Client({"control", "active"})["warmpool@control"];
        return active.size() == 1;
      },
      std::chrono::seconds(10)));
  CHECK(active[0]["id"] == sleep_id);
  CHECK(active[0]["name"] == "warmpool.sleep");
  CHECK(active[0]["args"] == json::array({6}));
  CHECK(active[0]["acknowledged"] == false);  // acks_late: acked after the result is stored
  CHECK(active[0]["delivery_info"]["routing_key"] == "celery");
  CHECK(active[0]["time_start"].get<double>() > 1.7e9);
  json stats = fx.Client({"control", "stats"})["warmpool@control"];
  CHECK(stats["total"]["warmpool.ping"] == 1);  // tasks that ran: not the revoked one
  CHECK(stats["pool"]["max-concurrency"] == 1);
  CHECK(stats["prefetch_count"] == 1);
  CHECK(stats["broker"]["transport"] == "redis");
  CHECK(stats["pid"].get<long>() > 0);
  CHECK(stats["rusage"]["maxrss"].get<long>() > 0);
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(std::chrono::seconds(10)) == 0);
}

TEST_CASE("Remote control: inspect reserved and scheduled", "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"--prefetch", "3", "--grace-seconds", "1"}, "warmpool@inspect");
  REQUIRE(WaitFor([&] { return fx.Int({"PUBSUB", "NUMPAT"}) >= 1; }, std::chrono::seconds(10)));
  const std::string later = fx.Client({"send", "warmpool.ping", "--countdown", "60"})["ids"][0];
  // Long enough to outlast the broadcasts below (1.5 s each); SIGTERM requeues both.
  json sleeps = fx.Client({"send", "warmpool.sleep", "--args", "[30]", "--n", "2"})["ids"];
  json reserved, scheduled, active;
  REQUIRE(WaitFor(
      [&] {
        active = fx.Client({"control", "active"})["warmpool@inspect"];
        reserved = fx.Client({"control", "reserved"})["warmpool@inspect"];
        return active.size() == 1 && reserved.size() == 1;
      },
      std::chrono::seconds(10)));
  // One sleep runs, the other waits in the prefetch; neither is the eta-held ping.
  CHECK(active[0]["id"] != reserved[0]["id"]);
  CHECK((reserved[0]["id"] == sleeps[0] || reserved[0]["id"] == sleeps[1]));
  CHECK(reserved[0]["name"] == "warmpool.sleep");
  CHECK(reserved[0]["time_start"].is_null());
  CHECK(reserved[0]["acknowledged"] == false);
  scheduled = fx.Client({"control", "scheduled"})["warmpool@inspect"];
  REQUIRE(scheduled.size() == 1);
  CHECK(scheduled[0]["request"]["id"] == later);
  CHECK(scheduled[0]["request"]["name"] == "warmpool.ping");
  CHECK(scheduled[0]["priority"] == 0);
  auto eta = celery::ParseIso8601(scheduled[0]["eta"].get<std::string>());
  REQUIRE(eta.has_value());
  CHECK(*eta > static_cast<double>(std::time(nullptr)) + 40);
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(std::chrono::seconds(15)) == 0);
  // Whatever it held goes back: the eta task and both sleeps.
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK(fx.Int({"LLEN", "celery"}) == 3);
}

TEST_CASE("revoke(terminate=True) stops a running task and the worker keeps serving",
          "[worker][integration]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({}, "warmpool@terminate");
  REQUIRE(WaitFor([&] { return fx.Int({"PUBSUB", "NUMPAT"}) >= 1; }, std::chrono::seconds(10)));
  const std::string id = fx.Client({"send", "warmpool.sleep", "--args", "[60]"})["ids"][0];
  REQUIRE(WaitFor(
      [&] {
        return fx.Client({"control", "active"})["warmpool@terminate"].size() == 1;
      },
      std::chrono::seconds(10)));
  json r = fx.Client({"terminate", id, "--signal", "SIGKILL"});
  CHECK(r["replies"]["warmpool@terminate"]["ok"] == "terminate: " + id);
  CHECK(r["status"] == "REVOKED");
  CHECK(r["exc_type"] == "TaskRevokedError");
  CHECK(r["exc_args"] == json::array({"terminated"}));
  CHECK(r["elapsed"].get<double>() < 10);
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  // Unknown or finished ids: Celery's reply, nothing stopped.
  json none = fx.Client({"terminate", id, "--timeout", "1"});
  CHECK(none["replies"]["warmpool@terminate"]["ok"] == "terminate: tasks unknown");
  json ping = fx.Client({"call", "warmpool.ping"});
  CHECK(ping["result"] == "pong");
  CHECK_THAT(worker->Log(), Catch::Contains("task_terminated"));
  worker->Signal(SIGTERM);
  CHECK(worker->Wait(std::chrono::seconds(10)) == 0);
}

}  // namespace
}  // namespace warmpool::testing
