#pragma once

#include "worker/task_registry.h"

namespace warmpool::worker {

// Registers the built-in tasks:
//   warmpool.ping()           -> "pong"
//   warmpool.sleep(seconds)   -> seconds slept (float); honours soft/hard time limits and
//                                shutdown (ValueError when seconds < 0 or > 86400)
void RegisterBuiltinTasks(TaskRegistry& registry);

}  // namespace warmpool::worker
