#include "worker/tasks/builtin_tasks.h"

#include <chrono>

namespace warmpool::worker {
namespace {

// The only argument of a one-argument task, positional or by keyword (TypeError when missing).
const nlohmann::json& OneArg(const nlohmann::json& args, const nlohmann::json& kwargs,
                             const char* name, const char* task) {
  if (!args.empty()) return args[0];
  auto it = kwargs.find(name);
  if (it == kwargs.end()) {
    throw TaskError::TypeError(std::string(task) + "() missing 1 required positional argument: '" +
                               name + "'");
  }
  return *it;
}

}  // namespace

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
  // Small canvas helpers (Celery's tutorial add/xsum), for chains, chords and callbacks.
  registry.Register("warmpool.add",
                    [](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext&) {
                      CheckArity(args, kwargs, 2, {"x", "y"}, "warmpool.add");
                      double x = NumberArg(args, kwargs, 0, "x", "warmpool.add");
                      double y = NumberArg(args, kwargs, 1, "y", "warmpool.add");
                      const auto& ax = !args.empty() ? args[0] : kwargs.at("x");
                      const auto& ay = args.size() > 1 ? args[1] : kwargs.at("y");
                      if (ax.is_number_integer() && ay.is_number_integer()) {
                        return nlohmann::json(ax.get<long long>() + ay.get<long long>());
                      }
                      return nlohmann::json(x + y);
                    });
  registry.Register(
      "warmpool.xsum", [](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext&) {
        CheckArity(args, kwargs, 1, {"numbers"}, "warmpool.xsum");
        const nlohmann::json& numbers = OneArg(args, kwargs, "numbers", "warmpool.xsum");
        if (!numbers.is_array()) {
          throw TaskError::TypeError("argument 'numbers' of warmpool.xsum() must be a list, got " +
                                     numbers.dump());
        }
        bool integral = true;
        long long isum = 0;
        double dsum = 0;
        for (const auto& n : numbers) {
          if (!n.is_number()) {
            throw TaskError::TypeError("warmpool.xsum() takes numbers, got " + n.dump());
          }
          integral = integral && n.is_number_integer();
          if (n.is_number_integer()) isum += n.get<long long>();
          dsum += n.get<double>();
        }
        return integral ? nlohmann::json(isum) : nlohmann::json(dsum);
      });
  registry.Register("warmpool.echo",
                    [](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext&) {
                      CheckArity(args, kwargs, 1, {"value"}, "warmpool.echo");
                      return OneArg(args, kwargs, "value", "warmpool.echo");
                    });
}

}  // namespace warmpool::worker
