// Message headers cannot change a message's delivery tag or queue: both come from the
// envelope's top-level `properties` (kombu writes `headers` first, so a text search met them
// there first: two messages shared one unacked entry and one was lost at a restart; a restored
// message went to a queue a header named).
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;

// Sends `n` tasks with real Python Celery, headers merged as apply_async(headers=...) does;
// returns the path of the {"ids": [...]} file for `collect`.
std::string SendWithHeaders(WorkerFixture& fx, const std::string& task, const std::string& args,
                            const json& headers, int n, const std::string& queue) {
  CommandResult r =
      RunCommand({PythonInterpreter(), PythonScriptsDir() + "/send_with_headers.py", "--broker",
                  fx.broker(), "--backend", fx.backend(), "--task", task, "--args", args,
                  "--headers", headers.dump(), "--n", std::to_string(n), "--queue", queue},
                 std::chrono::seconds(60));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::string path = fx.dir + "/ids-" + queue + ".json";
  std::ofstream(path) << r.output.substr(r.output.rfind('{'));
  return path;
}

// SIGKILLs `worker` while it holds `held` messages, restarts it under the same hostname (which
// restores them at start-up) and checks that every task ends with exactly one SUCCESS result.
void KillRestartAndCollect(WorkerFixture& fx, std::unique_ptr<ChildProcess> worker,
                           const std::string& ids, int held, const std::string& hostname,
                           const std::vector<std::string>& flags) {
  worker->Signal(SIGKILL);
  CHECK(worker->Wait(std::chrono::seconds(5)) == 128 + SIGKILL);
  CHECK(fx.Int({"HLEN", "unacked"}) == held);
  auto restarted = fx.StartWorker(flags, hostname);
  json done = fx.Client({"collect", ids, "--timeout", "15"});
  CHECK(done["statuses"] == json{{"SUCCESS", held}});
  CHECK(fx.Int({"DBSIZE"}, 1) == held);  // one result key per task
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK_THAT(restarted->Log(), Catch::Contains("restored_own=" + std::to_string(held)));
  CheckServingThenStopsCleanly(*restarted);
}

TEST_CASE("A delivery_tag inside the headers does not become the message's tag",
          "[worker][integration][headers]") {
  WorkerFixture fx;
  const std::vector<std::string> flags = {"--prefetch", "3"};
  auto worker = fx.StartWorker(flags, "warmpool@hdr");
  std::string ids = SendWithHeaders(fx, "warmpool.sleep", "[1.5]",
                                    {{"meta", {{"delivery_tag", "SAME"}}}}, 3, "celery");
  // Three messages held: three unacked entries under their own (uuid4) tags.
  REQUIRE(fx.WaitUnacked(3, std::chrono::seconds(10)));
  CHECK(fx.Int({"HEXISTS", "unacked", "SAME"}) == 0);
  CHECK(fx.Int({"SCARD", "warmpool.inflight.warmpool@hdr"}) == 3);
  KillRestartAndCollect(fx, std::move(worker), ids, 3, "warmpool@hdr", flags);
}

TEST_CASE("A restored message goes back to its own queue, not one a header names",
          "[worker][integration][headers]") {
  WorkerFixture fx;
  const std::vector<std::string> flags = {"-Q", "work"};
  auto worker = fx.StartWorker(flags, "warmpool@hdr");
  json decoy = {{"x", {{"delivery_info", {{"exchange", ""}, {"routing_key", "nowhere"}}}}},
                {"delivery_tag", "decoy"}};
  std::string ids = SendWithHeaders(fx, "warmpool.sleep", "[1.5]", decoy, 1, "work");
  REQUIRE(fx.WaitUnacked(1, std::chrono::seconds(10)));
  // kombu's unacked value: [envelope, exchange, routing_key] from properties.delivery_info.
  CHECK_THAT(fx.Cli({"HVALS", "unacked"}), Catch::EndsWith(R"(, "", "work"])"));
  KillRestartAndCollect(fx, std::move(worker), ids, 1, "warmpool@hdr", flags);
  CHECK(fx.Int({"EXISTS", "nowhere"}) == 0);
  CHECK(fx.Int({"LLEN", "work"}) == 0);
}

TEST_CASE("A hand-made second message under a held tag is dead-lettered, not merged",
          "[worker][integration][headers]") {
  WorkerFixture fx;
  auto worker = fx.StartWorker({"--prefetch", "2"}, "warmpool@hdr");  // takes the copy at once
  std::string first = SendWithHeaders(fx, "warmpool.sleep", "[1.5]", json::object(), 1, "celery");
  REQUIRE(fx.WaitUnacked(1, std::chrono::seconds(10)));
  // The same envelope again (same properties.delivery_tag), while the first is held.
  std::string value = fx.Cli({"HVALS", "unacked"});
  std::string envelope = json::parse(value)[0].dump();
  fx.Cli({"LPUSH", "celery", envelope});
  REQUIRE(WaitFor(
      [&] {
        return fx.Int({"LLEN", "warmpool.deadletter"}) == 1;
      },
      std::chrono::seconds(10)));
  json entry = json::parse(fx.Cli({"LINDEX", "warmpool.deadletter", "0"}));
  CHECK_THAT(entry["reason"].get<std::string>(),
             Catch::Contains("is already held by another message in unacked"));
  CHECK(entry["message"] == envelope);
  CHECK(fx.Cli({"HVALS", "unacked"}) == value);  // the first one's entry is untouched
  json done = fx.Client({"collect", first});
  CHECK(done["statuses"] == json{{"SUCCESS", 1}});
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CheckServingThenStopsCleanly(*worker);
}

}  // namespace
}  // namespace warmpool::testing
