// The warmpool_worker library API as another task library uses it (register, run, shut down),
// with retries: a task asks for a retry and Python's AsyncResult.get() sees the final value.
#include <thread>

#include <catch2/catch.hpp>

#include "tests/integration/worker/worker_fixture.h"
#include "worker/task_registry.h"
#include "worker/tasks/builtin_tasks.h"
#include "worker/worker.h"

namespace warmpool::testing {
namespace {

using nlohmann::json;
using worker::TaskContext;
using worker::TaskError;
using worker::TaskRetry;

TEST_CASE("A registered task retries with the same id until it succeeds", "[worker][integration]") {
  WorkerFixture fx;
  worker::TaskRegistry registry;
  worker::RegisterBuiltinTasks(registry);
  registry.Register("test.flaky", [](const json&, const json&, TaskContext& ctx) -> json {
    if (ctx.retries < 2)
      throw TaskRetry(std::chrono::milliseconds(200), TaskError::RuntimeError("again"));
    return json{{"retries", ctx.retries}, {"id", ctx.id}};
  });
  registry.Register("test.hopeless", [](const json&, const json&, TaskContext&) -> json {
    throw TaskRetry(std::chrono::milliseconds(50), TaskError("KeyError", "builtins", "gone"), 1);
  });
  registry.Register("test.custom_error", [](const json&, const json&, TaskContext&) -> json {
    throw TaskError("ValueError", "builtins", json::array({"before/after size mismatch", 3}));
  });

  worker::WorkerOptions options;
  std::string error;
  options.broker = *ParseRedisUrl(fx.broker(), &error);
  options.result_backend = *ParseRedisUrl(fx.backend(), &error);
  options.hostname = "warmpool@library";
  options.grace = std::chrono::seconds(5);
  worker::Worker w(options, registry);
  int exit_code = -1;
  std::thread runner([&] { exit_code = w.Run(); });

  json flaky = fx.Client({"call", "test.flaky"});
  CHECK(flaky["status"] == "SUCCESS");
  CHECK(flaky["result"]["retries"] == 2);
  CHECK(flaky["result"]["id"] == flaky["id"]);  // same task id across retries
  json hopeless = fx.Client({"call", "test.hopeless"});
  CHECK(hopeless["status"] == "FAILURE");
  CHECK(hopeless["exc_type"] == "KeyError");
  json custom = fx.Client({"call", "test.custom_error"});
  CHECK(custom["exc_type"] == "ValueError");
  CHECK(custom["exc_args"] == json::array({"before/after size mismatch", "3"}));

  w.RequestShutdown(/*cold=*/false);
  runner.join();
  CHECK(exit_code == 0);
  CHECK(fx.Int({"HLEN", "unacked"}) == 0);
  CHECK(fx.Int({"LLEN", "celery"}) == 0);
}

}  // namespace
}  // namespace warmpool::testing
