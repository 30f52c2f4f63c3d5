#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "redis/url.h"

namespace warmpool::worker {

// Answers Celery's remote-control broadcasts (kombu/pidbox.py, celery/worker/control.py) so that
// `celery inspect ping`, `celery control enable_events` and Flower see this worker:
//   ping -> {"ok": "pong"}; enable_events / disable_events -> toggles task events;
//   heartbeat -> sends a worker-heartbeat at once; revoke {task_id} -> flags ids as revoked
//   (REVOKED when received or before they start), with terminate also stops the running ones
//   (REVOKED 'terminated'; the task is asked to stop, its thread replaced); active -> the running
//   tasks (Celery's Request.info() fields); reserved -> prefetched tasks not started yet; scheduled
//   -> tasks held for their eta ({eta, priority, request}); stats -> totals per task, pid, uptime,
//   pool, broker, prefetch, rusage; registered -> the task names; anything else -> {"error":
//   "..."}.
// It PSUBSCRIBEs "<prefix>/<db>.celery.pidbox" on its own connection (thread) and LPUSHes
// replies to the reply queue bound to reply.celery.pidbox. Best effort: Redis errors are logged
// and the subscription is re-made with backoff.
class RemoteControl {
 public:
  struct Hooks {
    std::function<void(bool)> set_task_events;
    std::function<void()> send_heartbeat;
    // Flags task ids as revoked; with terminate, also stops those running and returns them.
    std::function<std::vector<std::string>(const std::vector<std::string>&, bool terminate,
                                           int signum)>
        revoke;
    std::function<nlohmann::json()> active;                // JSON array
    std::function<nlohmann::json()> reserved;              // JSON array
    std::function<nlohmann::json()> scheduled;             // JSON array
    std::function<nlohmann::json()> stats;                 // JSON object
    std::function<std::vector<std::string>()> registered;  // task names
  };
  RemoteControl(RedisEndpoint broker, std::string prefix, std::string hostname, Hooks hooks);
  ~RemoteControl();  // Stop()
  RemoteControl(const RemoteControl&) = delete;
  RemoteControl& operator=(const RemoteControl&) = delete;

  // Stops the thread (wakes it with a PUBLISH on its channel). Idempotent.
  void Stop();

  // The reply for `method` (pure; exposed for tests). nullopt = not for us.
  static nlohmann::json Reply(const std::string& method, const nlohmann::json& arguments,
                              const Hooks& hooks);

 private:
  void Loop();
  void Handle(const std::string& payload);

  const RedisEndpoint broker_;
  const std::string prefix_;
  const std::string hostname_;
  const std::string channel_;
  Hooks hooks_;
  std::atomic<bool> stop_{false};
  std::atomic<long> clock_{0};
  std::thread thread_;
};

}  // namespace warmpool::worker
