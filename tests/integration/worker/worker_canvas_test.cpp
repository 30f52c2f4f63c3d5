// The Celery canvas (chain, link, link_error, chord) built by the Python Celery 5.2.6 client and
// run entirely on warmpool-worker; results are read back with AsyncResult.get().
#include <string>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

TEST_CASE("Canvas: chains, callbacks, errbacks and chords run on warmpool-worker",
          "[worker][integration][canvas]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"-c", "2"});

  SECTION("chain: each step gets the previous result; every AsyncResult resolves") {
    json r = fx.Client({"canvas", "chain"});
    INFO(r.dump());
    CHECK(r["first"]["result"] == 0.01);
    CHECK(r["middle"]["result"] == 0.01);
    CHECK(r["final"]["status"] == "SUCCESS");
    CHECK(r["final"]["result"].get<double>() == Approx(1.01));
    CHECK(r["middle_parent"] == r["first_id"]);
  }
  SECTION("chain: a failed step fails the rest of the chain") {
    json r = fx.Client({"canvas", "chain_failure"});
    INFO(r.dump());
    CHECK(r["final"]["status"] == "FAILURE");
    CHECK(r["final"]["exc_type"] == "ValueError");
  }
  SECTION("link: the callback runs with the result prepended") {
    json r = fx.Client({"canvas", "link"});
    INFO(r.dump());
    CHECK(r["task"]["result"] == 5);
    CHECK(r["callback"]["status"] == "SUCCESS");
    CHECK(r["callback"]["result"] == 15);
  }
  SECTION("link_error: the errback runs with the failed task's id; link does not run") {
    json r = fx.Client({"canvas", "link_error"});
    INFO(r.dump());
    CHECK(r["task"]["status"] == "FAILURE");
    CHECK(r["task"]["exc_type"] == "ValueError");
    CHECK(r["errback"]["status"] == "SUCCESS");
    CHECK(r["errback"]["result"] == r["task_id"]);
    CHECK(r["link_state"] == "PENDING");
  }
  SECTION("chord: the body gets the header results in order") {
    json r = fx.Client({"canvas", "chord", "--n", "5"});
    INFO(r.dump());
    CHECK(r["body"]["status"] == "SUCCESS");
    CHECK(r["body"]["result"] == 0 + 2 + 4 + 6 + 8);
    // The chord's keys are deleted once the body is sent.
    CHECK(fx.Cli({"KEYS", "celery-taskset-meta-*"}, 1).empty());
  }
  SECTION("chord: a failed header part fails the body with ChordError and calls its errback") {
    json r = fx.Client({"canvas", "chord_failure"});
    INFO(r.dump());
    // get() re-raises the failed header part first (AsyncResult._maybe_reraise_parent_error);
    // the body's own stored result is the ChordError.
    CHECK(r["body"]["status"] == "FAILURE");
    CHECK(r["body"]["exc_type"] == "ValueError");
    json meta =
        json::parse(fx.Cli({"GET", "celery-task-meta-" + r["body_id"].get<std::string>()}, 1));
    CHECK(meta["status"] == "FAILURE");
    CHECK(meta["result"]["exc_type"] == "ChordError");
    CHECK(meta["result"]["exc_module"] == "celery.exceptions");
    CHECK_THAT(meta["result"]["exc_message"][0].get<std::string>(),
               Catch::Contains("raised ValueError("));
    CHECK(r["errback"]["result"] == r["body_id"]);
  }
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CheckServingThenStopsCleanly(*worker);
}

TEST_CASE("Canvas: bad signatures are logged, the task's own result is kept",
          "[worker][integration][canvas][negative]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker();
  // A callback without a task name, sent as Celery would embed it.
  json r = fx.Client({"call", "warmpool.ping", "--link", R"({"args": [], "options": {}})"});
  CHECK(r["status"] == "SUCCESS");
  CHECK(r["result"] == "pong");
  CHECK(WaitFor([&] { return worker->Log().find("canvas_invalid") != std::string::npos; },
                std::chrono::seconds(5)));
  CHECK_THAT(worker->Log(), Catch::Contains("no task name"));
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK(fx.Client({"call", "warmpool.ping"})["result"] == "pong");
  CHECK(worker->Running());
}

}  // namespace
}  // namespace warmpool::testing
