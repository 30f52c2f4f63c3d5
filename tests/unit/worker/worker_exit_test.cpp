// --max-tasks / --exit-when-idle: parsing, and the take budget in WorkerState (pure).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "worker/worker_options.h"
#include "worker/worker_state.h"

namespace warmpool::worker {
namespace {

ParsedCommandLine ParseArgs(std::vector<std::string> args) {
  args.insert(args.begin(), "warmpool-worker");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return ParseWorkerCommandLine(static_cast<int>(argv.size()), argv.data(),
                                [](const char*) -> const char* { return nullptr; });
}

TEST_CASE("max-tasks and exit-when-idle parse, default off", "[worker][options]") {
  auto defaults = ParseArgs({});
  REQUIRE(defaults.options);
  CHECK(defaults.options->max_tasks == 0);
  CHECK(defaults.options->exit_when_idle == 0);
  auto set = ParseArgs({"--max-tasks", "3", "--exit-when-idle", "2.5"});
  REQUIRE(set.options);
  CHECK(set.options->max_tasks == 3);
  CHECK(set.options->exit_when_idle == 2.5);
  for (const char* bad : {"-1", "x", "1.5"}) {
    auto p = ParseArgs({"--max-tasks", bad});
    CHECK_FALSE(p.options);
    CHECK(p.exit_code == 2);
    CHECK_THAT(p.message, Catch::Contains("--max-tasks"));
  }
}

TEST_CASE("The take budget caps the prefetch room and what one take may keep", "[worker][state]") {
  WorkerState state;
  {
    std::lock_guard lock(state.mu);
    CHECK(state.RoomLocked(4) == 4);  // no limit: the prefetch room
  }
  state.max_tasks = 2;
  {
    std::lock_guard lock(state.mu);
    CHECK(state.RoomLocked(4) == 2);
    CHECK_FALSE(state.TaskBudgetSpentLocked());
  }
  CHECK(state.CountTaken(3) == 2);  // a take counted before another's: one goes back
  CHECK(state.CountTaken(1) == 0);
  std::lock_guard lock(state.mu);
  CHECK(state.RoomLocked(4) == 0);
  CHECK(state.RoomLocked(4, 1) == 0);  // a finishing job frees prefetch room, not budget
  CHECK(state.TaskBudgetSpentLocked());
}

}  // namespace
}  // namespace warmpool::worker
