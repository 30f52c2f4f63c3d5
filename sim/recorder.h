#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "sim/workload.h"

namespace warmpool::sim {

// One sample of a live queue: runnable messages waiting (LLEN over every priority sub-list) and
// the delivery tags of messages delivered but not acked (kombu's `unacked` hash), with their task
// names (headers.task) where the message has one.
struct QueueSample {
  double t_s = 0;
  int64_t pending = 0;
  std::vector<std::string> in_flight_tags;
  std::map<std::string, std::string> task_of;  // tag -> task name
};

// Turns samples into a workload (pure): a tag first seen at t1 and gone at t2 ran for t2 - t1
// (sampling resolution); arrivals in an interval = growth of pending + tasks started in it,
// placed at the interval's end; the k-th arrival gets the k-th started task's duration (FIFO);
// tasks never seen finishing get the mean measured duration (or 1 s). Tags still in flight at the
// end count as running until the last sample. The k-th arrival also takes the k-th started task's
// name (none for those never started).
Workload WorkloadFromSamples(const std::vector<QueueSample>& samples, const std::string& name);

struct RecordOptions {
  std::string redis_url;            // redis://[user:pass@]host:port[/db]
  std::vector<std::string> queues;  // Celery queue names
  std::string key_prefix;           // kombu global_keyprefix
  std::vector<int> priority_steps = {0, 3, 6, 9};
  int64_t interval_ms = 1000;  // sampling period
  int64_t duration_s = 3600;   // how long to record
  std::string out_path;        // CSV written at the end
};

// Samples the queues every interval for duration_s (LLEN of each priority list and HVALS of the
// unacked hash, entries routed to the queues only, one pipelined round trip per sample), then
// writes WorkloadFromSamples as CSV. Progress goes to `log`. Unavailable when Redis cannot be
// reached; InvalidArgument for a bad URL.
Status RecordQueue(const RecordOptions& options, std::ostream& log);

}  // namespace warmpool::sim
