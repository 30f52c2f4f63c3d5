#include "worker/imagery_tasks.h"

namespace warmpool::worker {

void RegisterImageryTasks(TaskRegistry& registry, const imagery::ImageryConfig& config) {
  imagery::ValidateDeviceSpec(config.device);
  registry.Register(
      imagery::kChangeDetectionTaskName,
      [config](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext& ctx) {
        ctx.ThrowIfStopRequested();
        try {
          return imagery::RunChangeDetectionTask(args, kwargs, config);
        } catch (const imagery::ImageryError& e) {
          throw TaskError(e.exc_type(), "builtins", e.what());
        }
      });
}

}  // namespace warmpool::worker
