// ETA (countdown) tasks against Python Celery 5.2.6 as the client: a worker holds them without a
// slot until due, and hands a due one back to its list when every slot is taken, so another
// worker (a replica the backlog brings) runs it instead of it waiting behind the running tasks.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"
#include "tests/support/process.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

std::string Send(WorkerFixture& fx, const std::string& name, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"send"};
  argv.insert(argv.end(), args.begin(), args.end());
  json sent = fx.Client(argv);
  const std::string path = fx.dir + "/" + name + ".json";
  std::ofstream(path) << sent.dump();
  return path;
}

TEST_CASE("A due ETA task with no free slot goes back to its list for another worker",
          "[worker][integration][eta]") {
  WorkerFixture fx;
  auto busy = fx.StartWorker({"-c", "1"}, "warmpool@busy");
  // Idle, it takes both ETA tasks and holds them without a slot.
  const std::string pings = Send(fx, "pings", {"warmpool.ping", "--n", "2", "--countdown", "3"});
  REQUIRE(fx.WaitUnacked(2, std::chrono::seconds(10)));
  CHECK(fx.Int({"LLEN", "celery"}) == 0);
  // Then a long task takes its only slot.
  const std::string sleep = Send(fx, "sleep", {"warmpool.sleep", "--args", "[8.0]"});
  REQUIRE(fx.WaitUnacked(3, std::chrono::seconds(10)));
  // Due while the slot is taken: both go back to the list; only the sleep stays in flight.
  REQUIRE(WaitFor([&] { return fx.Int({"LLEN", "celery"}) == 2; }, std::chrono::seconds(10)));
  CHECK(fx.Int({"HLEN", "unacked"}) == 1);
  CHECK(busy->Log().find("task_eta_due_requeued") != std::string::npos);
  // A second worker runs them while the first still sleeps.
  auto other = fx.StartWorker({"-c", "1"}, "warmpool@other");
  json done = fx.Client({"collect", pings});
  CHECK(done["statuses"] == json{{"SUCCESS", 2}});
  CHECK(fx.Int({"HLEN", "unacked"}) == 1);  // the sleep: not over yet
  CHECK(fx.Client({"collect", sleep})["statuses"] == json{{"SUCCESS", 1}});
  CheckServingThenStopsCleanly(*other);
  CheckServingThenStopsCleanly(*busy);
}

TEST_CASE("A due ETA task runs where it is held when a slot is free",
          "[worker][integration][eta]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"-c", "1"});
  json r = fx.Client({"call", "warmpool.sleep", "--args", "[0.01]", "--countdown", "1.5"});
  CHECK(r["status"] == "SUCCESS");
  CHECK(r["since_send"].get<double>() >= 1.5);
  CHECK(worker->Log().find("task_eta_due_requeued") == std::string::npos);
  CheckServingThenStopsCleanly(*worker);
}

}  // namespace
}  // namespace warmpool::testing
