#include "worker/task_registry.h"

#include <chrono>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "worker/tasks/builtin_tasks.h"

namespace warmpool::worker {
namespace {

using nlohmann::json;

json Call(const TaskRegistry& registry, const std::string& name, json args, json kwargs = {}) {
  const TaskFunction* fn = registry.Find(name);
  REQUIRE(fn != nullptr);
  TaskContext ctx;
  if (kwargs.is_null()) kwargs = json::object();
  return (*fn)(args, kwargs, ctx);
}

TEST_CASE("Built-in tasks return Celery-visible values", "[worker][registry]") {
  TaskRegistry registry;
  RegisterBuiltinTasks(registry);
  CHECK(registry.Names() == std::vector<std::string>{"warmpool.add", "warmpool.echo",
                                                     "warmpool.ping", "warmpool.sleep",
                                                     "warmpool.xsum"});
  CHECK(Call(registry, "warmpool.add", json::array({2, 3})) == 5);
  CHECK(Call(registry, "warmpool.add", json::array({0.5}), json{{"y", 1}}) == 1.5);
  CHECK(Call(registry, "warmpool.xsum", json::array({json::array({1, 2, 3})})) == 6);
  CHECK(Call(registry, "warmpool.echo", json::array({"abc"})) == "abc");
  CHECK(Call(registry, "warmpool.ping", json::array()) == "pong");
  CHECK(Call(registry, "warmpool.sleep", json::array({0.01})) == 0.01);
  CHECK(Call(registry, "warmpool.sleep", json::array(), json{{"seconds", 0}}) == 0);
}

TEST_CASE("Bad arguments raise TypeError/ValueError naming the argument",
          "[worker][registry][negative]") {
  TaskRegistry registry;
  RegisterBuiltinTasks(registry);
  struct Case {
    const char* name;
    const char* task;
    json args;
    json kwargs;
    const char* exc_type;
    const char* mentions;
  };
  // clang-format off
  std::vector<Case> cases = {
      {"string seconds",  "warmpool.sleep", json::array({"x"}),  json::object(),      "TypeError",  "'seconds'"},
      {"missing seconds", "warmpool.sleep", json::array(),       json::object(),      "TypeError",  "'seconds'"},
      {"negative",        "warmpool.sleep", json::array({-1}),   json::object(),      "ValueError", "'seconds'"},
      {"too many args",   "warmpool.sleep", json::array({1, 2}), json::object(),      "TypeError",  "positional"},
      {"unknown kwarg",   "warmpool.ping",  json::array(),       json{{"x", 1}},      "TypeError",  "'x'"},
  };
  // clang-format on
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.name) {
      const TaskFunction* fn = registry.Find(c.task);
      REQUIRE(fn != nullptr);
      TaskContext ctx;
      try {
        (*fn)(c.args, c.kwargs, ctx);
        FAIL("no exception");
      } catch (const TaskError& e) {
        CHECK(e.exc_type() == c.exc_type);
        CHECK(e.exc_module() == "builtins");
        REQUIRE(e.exc_args().size() == 1);
        CHECK_THAT(e.exc_args()[0].get<std::string>(), Catch::Contains(c.mentions));
      }
    }
  }
}

TEST_CASE("Registry names, aliases and their errors", "[worker][registry]") {
  TaskRegistry registry;
  registry.Register("app.task", [](const json&, const json&, TaskContext&) { return json(1); });
  CHECK_THROWS_AS(
      registry.Register("app.task", [](const json&, const json&, TaskContext&) { return json(); }),
      std::invalid_argument);
  CHECK_THROWS_AS(
      registry.Register("", [](const json&, const json&, TaskContext&) { return json(); }),
      std::invalid_argument);
  registry.AddAliasSpec("process_change_detection=app.task");
  std::string resolved;
  REQUIRE(registry.Find("process_change_detection", &resolved) != nullptr);
  CHECK(resolved == "app.task");
  CHECK(registry.Find("nope") == nullptr);
  CHECK_THROWS_AS(registry.AddAliasSpec("a=missing"), std::invalid_argument);
  CHECK_THROWS_AS(registry.AddAliasSpec("no-equals"), std::invalid_argument);
  CHECK_THROWS_AS(registry.AddAliasSpec("=x"), std::invalid_argument);
  CHECK_THROWS_AS(registry.AddAlias("app.task", "app.task"), std::invalid_argument);
}

TEST_CASE("TaskContext stops at the soft limit and on cancellation", "[worker][registry]") {
  TaskContext ctx;
  ctx.soft_limit_seconds = 0.05;
  ctx.soft_deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  CHECK_FALSE(ctx.StopRequested());
  try {
    ctx.Sleep(std::chrono::seconds(5));
    FAIL("no exception");
  } catch (const TaskError& e) {
    CHECK(e.exc_type() == "SoftTimeLimitExceeded");
    CHECK(e.exc_module() == "billiard.exceptions");
  }
  TaskContext cancelled;
  cancelled.RequestCancelForWorker();
  CHECK(cancelled.StopRequested());
  CHECK_THROWS_AS(cancelled.ThrowIfStopRequested(), TaskError);
}

TEST_CASE("TaskError and TaskRetry carry what Celery stores", "[worker][registry]") {
  TaskError e("ChangeDetectionError", "warmpool.errors", json::array({"size mismatch", 3}));
  CHECK(e.exc_args() == json::array({"size mismatch", 3}));
  CHECK(TaskError::ValueError("v").exc_args() == json::array({"v"}));
  TaskRetry r(std::chrono::seconds(5), TaskError::RuntimeError("again"), 2);
  CHECK(r.countdown().count() == 5);
  CHECK(r.max_retries() == 2);
  REQUIRE(r.cause().has_value());
  CHECK(r.cause()->exc_type() == "RuntimeError");
}

}  // namespace
}  // namespace warmpool::worker
