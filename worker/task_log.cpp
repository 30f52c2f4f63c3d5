#include "worker/task_log.h"

#include <spdlog/spdlog.h>

#include "common/logging.h"

namespace warmpool::worker {

void LogTask(WorkerMetrics& metrics, const Job& job, const std::string& state, double runtime,
             const std::string& detail) {
  metrics.CountTask(state);
  auto level = state == "SUCCESS" || state == "RETRY" ? spdlog::level::info : spdlog::level::warn;
  if (!spdlog::should_log(level)) return;
  nlohmann::json fields = {
      {"id", job.msg.id},     {"name", job.msg.task},       {"state", state},
      {"runtime_s", runtime}, {"queue", job.fetched.queue}, {"retries", job.msg.retries}};
  if (!detail.empty()) fields["detail"] = detail;
  LogEvent(level, "task", fields);
}

}  // namespace warmpool::worker
