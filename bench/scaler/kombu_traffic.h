#pragma once

// Background task traffic for the scaler soak, laid out in Redis as kombu 5.2's Redis transport
// does (transport/redis.py): a message is LPUSHed onto its queue's priority sub-list; a consumer
// RPOPs it (lowest step first), parks it in the `unacked` hash ([payload, exchange, routing_key])
// and `unacked_index` sorted set, and acks it later with HDEL + ZREM. Bench-only.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "redis/url.h"

namespace warmpool::bench {

class KombuTraffic {
 public:
  struct Options {
    RedisEndpoint endpoint;
    std::vector<std::string> queues;
    std::vector<int> priority_steps{0, 3, 6, 9};
    // A Celery protocol-2 message as Python's send_task wrote it to queue `template_queue`; each
    // push is a copy with a fresh task id and delivery tag.
    std::string template_message;
    std::string template_queue;
    double operations_per_s = 20;  // pushes + pops
    int max_backlog_per_queue = 20;
    std::chrono::milliseconds mean_hold{4000};  // how long a popped task stays unacked
    std::chrono::steady_clock::time_point deadline;
  };

  // Starts the traffic thread; it stops at options.deadline or on Stop().
  explicit KombuTraffic(Options options);
  ~KombuTraffic();
  KombuTraffic(const KombuTraffic&) = delete;
  KombuTraffic& operator=(const KombuTraffic&) = delete;

  // Stops and joins; acks whatever is still unacked. Idempotent.
  void Stop();

  long commands() const { return commands_.load(); }  // Redis commands this traffic sent
  long pushed() const { return pushed_.load(); }
  long popped() const { return popped_.load(); }
  long errors() const { return errors_.load(); }

 private:
  void Run();

  Options options_;
  std::atomic<bool> stop_{false};
  std::atomic<long> commands_{0}, pushed_{0}, popped_{0}, errors_{0};
  std::thread thread_;
};

}  // namespace warmpool::bench
