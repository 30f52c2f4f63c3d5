// --max-tasks and --exit-when-idle (one Kubernetes Job per task, manifests/overlays/scaledjob):
// real Python Celery sends, warmpool-worker exits 0 when done, and no task is lost.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

long long StoredResults(WorkerFixture& fx) {
  std::string keys = fx.Cli({"KEYS", "celery-task-meta-*"}, 1);
  long long n = 0;
  for (size_t at = keys.find("celery-task-meta-"); at != std::string::npos;
       at = keys.find("celery-task-meta-", at + 1)) {
    ++n;
  }
  return n;
}

TEST_CASE("max-tasks 1: the worker exits 0 after one task and the others wait for the next worker",
          "[worker][integration]") {
  WorkerFixture fx;
  json sent = fx.Client({"send", "warmpool.sleep", "--args", "[0.2]", "--n", "3"});
  REQUIRE(sent["ids"].size() == 3);
  const std::string ids_file = fx.dir + "/ids.json";
  std::ofstream(ids_file) << sent.dump();

  // Prefetch room for 4, yet it takes only the one task it may run.
  auto first = fx.StartWorker({"--max-tasks", "1", "-c", "2", "--prefetch", "2"}, "warmpool@job1");
  REQUIRE(first->Wait(std::chrono::seconds(30)) == 0);
  CHECK(StoredResults(fx) == 1);
  CHECK(fx.Int({"LLEN", "celery"}) == 2);
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK_THAT(first->Log(), Catch::Contains("max_tasks"));

  auto second = fx.StartWorker({"--max-tasks", "2"}, "warmpool@job2");
  REQUIRE(second->Wait(std::chrono::seconds(30)) == 0);
  CHECK(fx.Int({"LLEN", "celery"}) == 0);
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  json collected = fx.Client({"collect", ids_file});
  CHECK(collected["statuses"] == json({{"SUCCESS", 3}}));
}

TEST_CASE("exit-when-idle: the worker waits for the running task, then exits 0 on an empty queue",
          "[worker][integration]") {
  WorkerFixture fx;
  json sent = fx.Client({"send", "warmpool.sleep", "--args", "[2.0]"});
  const std::string ids_file = fx.dir + "/ids.json";
  std::ofstream(ids_file) << sent.dump();
  auto started = std::chrono::steady_clock::now();
  auto worker = fx.StartWorker({"--exit-when-idle", "1"});
  REQUIRE(worker->Wait(std::chrono::seconds(30)) == 0);
  // The 2 s task ran to the end: being busy is not idle.
  CHECK(std::chrono::steady_clock::now() - started >= std::chrono::seconds(3));
  CHECK_THAT(worker->Log(), Catch::Contains("idle"));
  json collected = fx.Client({"collect", ids_file});
  CHECK(collected["statuses"] == json({{"SUCCESS", 1}}));
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
}

TEST_CASE("max-tasks and exit-when-idle reject bad values with exit 2", "[worker][integration]") {
  WorkerFixture fx;
  auto negative = fx.StartWorker({"--max-tasks", "-1"});
  CHECK(negative->Wait(std::chrono::seconds(10)) == 2);
  auto word = fx.StartWorker({"--exit-when-idle", "soon"});
  CHECK(word->Wait(std::chrono::seconds(10)) == 2);
}

}  // namespace
}  // namespace warmpool::testing
