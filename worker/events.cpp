#include "worker/events.h"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <unistd.h>

#include "celery/kombu_keys.h"
#include "celery/message.h"
#include "common/logging.h"
#include "redis/errors.h"
#include "worker/uuid.h"

namespace warmpool::worker {
namespace {

// Hours west of UTC (Python time.timezone // 3600): 0 for UTC.
int UtcOffsetHours() {
  std::time_t t = std::time(nullptr);
  std::tm local{};
  localtime_r(&t, &local);
  return static_cast<int>(-local.tm_gmtoff / 3600);
}

}  // namespace

EventDispatcher::EventDispatcher(BrokerApi& broker, std::string prefix, int db,
                                 std::string hostname, bool worker_events, bool task_events)
    : broker_(broker),
      prefix_(std::move(prefix)),
      db_(db),
      hostname_(std::move(hostname)),
      worker_events_(worker_events),
      task_events_(task_events) {}

void EventDispatcher::SendWorker(const std::string& type, double freq, int active, long processed) {
  if (!worker_events_) return;
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = 0;
  Send(type, {{"freq", freq},
              {"active", active},
              {"processed", processed},
              {"loadavg", {load[0], load[1], load[2]}},
              {"sw_ident", "warmpool-worker"},
              {"sw_ver", "0.1.0"},
              {"sw_sys", "Linux"}});
}

void EventDispatcher::SendTask(const std::string& type, nlohmann::json fields) {
  if (!task_events_.load()) return;
  Send(type, std::move(fields));
}

void EventDispatcher::Send(const std::string& type, nlohmann::json fields) {
  double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  fields["hostname"] = hostname_;
  fields["utcoffset"] = UtcOffsetHours();
  fields["pid"] = static_cast<long>(getpid());
  fields["clock"] = ++clock_;
  fields["timestamp"] = now;
  fields["type"] = type;
  std::string rk = celery::EventRoutingKey(type);
  std::string channel = kombu::FanoutChannel(prefix_, db_, "celeryev", rk);
  try {
    broker_.Publish(channel, celery::EncodeEventEnvelope(fields, hostname_, rk, NewUuid4()));
  } catch (const RedisError& e) {
    LogEvent(spdlog::level::debug, "event_dropped", {{"type", type}, {"error", e.what()}});
  }
}

}  // namespace warmpool::worker
