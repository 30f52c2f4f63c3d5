#pragma once

#include "worker/task_registry.h"
#include "worker/tasks/change_detection_task.h"

namespace warmpool::worker {

// Registers `imagery.change_detection` (worker/tasks/change_detection_task.h). Imagery errors
// become FAILURE results with their Python class (TypeError, ValueError, FileNotFoundError,
// PermissionError, OSError, RuntimeError; module builtins). `config.data_root` must be set: a
// path outside it is a FAILURE, never a read. `config.time_limit_s` (> 0) becomes the task's
// default hard time limit (TaskRegistry::SetDefaultTimeLimit): a message without time_limit is
// abandoned with TimeLimitExceeded after it, so a stuck read cannot hold a slot forever.
// Throws std::invalid_argument for a bad device or time limit.
void RegisterImageryTasks(TaskRegistry& registry, const imagery::ImageryConfig& config);

}  // namespace warmpool::worker
