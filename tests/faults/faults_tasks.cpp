// The fault suite's worker: worker/main.cpp unchanged, built with one extra test-only task.
//
// This file is compiled normally; worker/main.cpp is compiled for this target with
// -DRegisterBuiltinTasks=RegisterBuiltinAndFaultTasks (see CMakeLists.txt), so the binary under
// test has production's signal handling, shutdown and worker library, and registers
// faults.work next to the built-in and imagery tasks.
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "worker/task_registry.h"
#include "worker/tasks/builtin_tasks.h"

namespace warmpool::worker {

void RegisterBuiltinAndFaultTasks(TaskRegistry& registry);

namespace {

// One line per execution, appended with a single write(2) on an O_APPEND descriptor: the line is
// in the kernel before the task body runs, so a SIGKILL right after still leaves it counted.
void RecordExecution(const TaskContext& ctx) {
  if (ctx.data_root.empty()) throw TaskError::RuntimeError("faults.work needs --data-root");
  const std::string path = ctx.data_root + "/executions.log";
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw TaskError::RuntimeError(path + ": " + std::strerror(errno));
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string line = ctx.id + " " + ctx.hostname + " " + std::to_string(::getpid()) + " " +
                           std::to_string(now) + "\n";
  const ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) throw TaskError::RuntimeError(path + ": short write");
}

}  // namespace

void RegisterBuiltinAndFaultTasks(TaskRegistry& registry) {
  RegisterBuiltinTasks(registry);
  // faults.work(seconds): records the execution, sleeps, returns seconds (the client checks it).
  registry.Register("faults.work",
                    [](const nlohmann::json& args, const nlohmann::json& kwargs, TaskContext& ctx) {
                      CheckArity(args, kwargs, 1, {"seconds"}, "faults.work");
                      const double seconds = NumberArg(args, kwargs, 0, "seconds", "faults.work");
                      if (seconds < 0 || seconds > 60)
                        throw TaskError::ValueError("seconds must be within 0..60");
                      RecordExecution(ctx);
                      ctx.Sleep(std::chrono::duration<double>(seconds));
                      return nlohmann::json(seconds);
                    });
}

}  // namespace warmpool::worker
