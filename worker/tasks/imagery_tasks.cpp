#include "worker/tasks/imagery_tasks.h"

#include <stdexcept>

#include "worker/tasks/imagery_exceptions.h"

namespace warmpool::worker {

void RegisterImageryTasks(TaskRegistry& registry, const imagery::ImageryConfig& config) {
  imagery::ValidateDeviceSpec(config.device);
  if (!(config.time_limit_s >= 0)) {
    throw std::invalid_argument("--imagery-time-limit must be >= 0 seconds");
  }
  registry.Register(
      imagery::kChangeDetectionTaskName,
      [config](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext& ctx) {
        ctx.ThrowIfStopRequested();
        try {
          return imagery::RunChangeDetectionTask(args, kwargs, config);
        } catch (const imagery::ImageryError& e) {
          throw TaskError(PythonExceptionFor(e), "builtins", e.what());
        }
      });
  if (config.time_limit_s > 0) {
    registry.SetDefaultTimeLimit(imagery::kChangeDetectionTaskName, config.time_limit_s);
  }
}

}  // namespace warmpool::worker
