#pragma once

#include <atomic>
#include <string>

#include <nlohmann/json.hpp>

#include "worker/broker_api.h"

namespace warmpool::worker {

// Sends Celery events as a Python worker does (celery/events/dispatcher.py,
// EventDispatcher.publish): PUBLISH
// "<prefix>/<db>.celeryev/<type with - as .>" with a kombu envelope whose body carries the
// standard fields (hostname, utcoffset, pid, clock, timestamp, type) plus `fields`. Events are
// best effort: a Redis error is logged at debug level and dropped, never thrown. Thread-safe.
class EventDispatcher {
 public:
  EventDispatcher(BrokerApi& broker, std::string prefix, int db, std::string hostname,
                  bool worker_events, bool task_events);

  // worker-online / worker-heartbeat / worker-offline with freq, active, processed, loadavg and
  // sw_ident "warmpool-worker".
  void SendWorker(const std::string& type, double freq, int active, long processed);
  // task-* events (only when task events are enabled).
  void SendTask(const std::string& type, nlohmann::json fields);

  bool task_events() const { return task_events_.load(); }
  // enable_events / disable_events remote control.
  void SetTaskEvents(bool on) { task_events_.store(on); }

 private:
  void Send(const std::string& type, nlohmann::json fields);

  BrokerApi& broker_;
  const std::string prefix_;
  const int db_;
  const std::string hostname_;
  const bool worker_events_;
  std::atomic<bool> task_events_;
  std::atomic<long> clock_{0};
};

}  // namespace warmpool::worker
