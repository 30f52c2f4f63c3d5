#include "worker/builtin_tasks.h"

#include <chrono>

namespace warmpool::worker {

void RegisterBuiltinTasks(TaskRegistry& registry) {
  registry.Register("warmpool.ping",
                    [](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext&) {
                      CheckArity(args, kwargs, 0, {}, "warmpool.ping");
                      return nlohmann::json("pong");
                    });
  registry.Register("warmpool.sleep",
                    [](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext& ctx) {
                      CheckArity(args, kwargs, 1, {"seconds"}, "warmpool.sleep");
                      double seconds = NumberArg(args, kwargs, 0, "seconds", "warmpool.sleep");
                      if (seconds < 0 || seconds > 86400) {
                        throw TaskError::ValueError(
                            "argument 'seconds' of warmpool.sleep() must be within "
                            "0..86400, got " +
                            nlohmann::json(seconds).dump());
                      }
                      ctx.Sleep(std::chrono::duration<double>(seconds));
                      return nlohmann::json(seconds);
                    });
}

}  // namespace warmpool::worker
