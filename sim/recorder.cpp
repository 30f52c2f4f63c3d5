#include "sim/recorder.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "celery/kombu_keys.h"
#include "celery/unacked.h"
#include "redis/connection.h"
#include "redis/errors.h"
#include "redis/url.h"

namespace warmpool::sim {

Workload WorkloadFromSamples(const std::vector<QueueSample>& samples, const std::string& name) {
  Workload w;
  w.name = name;
  if (samples.empty()) return w;
  std::map<std::string, double> started;          // tag -> first seen
  std::vector<std::pair<double, double>> starts;  // (start, duration or -1), in start order
  std::vector<std::string> names;                 // task name of each start
  std::map<std::string, size_t> index;            // tag -> position in starts
  std::set<std::string> previous;
  std::vector<double> arrivals;
  int64_t last_pending = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    const QueueSample& s = samples[i];
    std::set<std::string> now(s.in_flight_tags.begin(), s.in_flight_tags.end());
    int64_t new_starts = 0;
    for (const auto& tag : now) {
      if (!previous.count(tag)) {
        index[tag] = starts.size();
        starts.emplace_back(s.t_s, -1);
        const auto name = s.task_of.find(tag);
        names.push_back(name == s.task_of.end() ? std::string() : name->second);
        ++new_starts;
      }
    }
    for (const auto& tag : previous) {
      if (!now.count(tag)) {
        auto& st = starts[index[tag]];
        st.second = std::max(s.t_s - st.first, 0.001);
      }
    }
    const int64_t grown = (i == 0 ? s.pending : s.pending - last_pending) + new_starts;
    for (int64_t k = 0; k < grown; ++k) arrivals.push_back(s.t_s);
    last_pending = s.pending;
    previous = std::move(now);
  }
  const double end = samples.back().t_s;
  double sum = 0;
  int64_t n = 0;
  for (auto& st : starts) {
    if (st.second < 0) st.second = std::max(end - st.first, 0.001);  // still running at the end
    sum += st.second;
    ++n;
  }
  const double mean = n > 0 ? sum / static_cast<double>(n) : 1.0;
  const double t0 = samples.front().t_s;
  for (size_t k = 0; k < arrivals.size(); ++k) {
    const bool started_k = k < starts.size();
    w.tasks.push_back(Task{arrivals[k] - t0, started_k ? starts[k].second : mean, -1, "",
                           started_k ? names[k] : std::string()});
  }
  w.horizon_s = static_cast<int64_t>(end - t0) + 7200;
  return w;
}

Status RecordQueue(const RecordOptions& o, std::ostream& log) {
  std::string error;
  auto endpoint = ParseRedisUrl(o.redis_url, &error);
  if (!endpoint) return Status::InvalidArgument("--redis \"" + o.redis_url + "\": " + error);
  std::vector<RedisArgs> commands;
  for (const auto& q : o.queues) {
    for (const auto& key : kombu::PriorityListKeys(o.key_prefix, q, o.priority_steps)) {
      commands.push_back({"LLEN", key});
    }
  }
  commands.push_back({"HVALS", kombu::PrefixedKey(o.key_prefix, kombu::kUnackedKey)});
  const std::set<std::string> queues(o.queues.begin(), o.queues.end());
  std::vector<QueueSample> samples;
  try {
    RedisConnection conn(*endpoint);
    const auto start = std::chrono::steady_clock::now();
    const auto period = std::chrono::milliseconds(std::max<int64_t>(1, o.interval_ms));
    for (auto next = start; next - start <= std::chrono::seconds(o.duration_s); next += period) {
      std::this_thread::sleep_until(next);
      auto replies = conn.Pipeline(commands);
      QueueSample s;
      s.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (size_t i = 0; i + 1 < replies.size(); ++i) s.pending += ReplyInteger(replies[i].get());
      for (const redisReply* value : ReplyElements(replies.back().get())) {
        const auto entry = celery::ParseUnackedValue(ReplyString(value));
        if (!entry || !queues.count(entry->routing_key) || entry->delivery_tag.empty()) continue;
        s.in_flight_tags.push_back(entry->delivery_tag);
        if (!entry->task.empty()) s.task_of[entry->delivery_tag] = entry->task;
      }
      if (samples.size() % 60 == 0) {
        log << "t=" << static_cast<int64_t>(s.t_s) << "s pending=" << s.pending
            << " in_flight=" << s.in_flight_tags.size() << "\n";
      }
      samples.push_back(std::move(s));
    }
  } catch (const RedisError& e) {
    return Status::Unavailable(std::string("recording from ") + o.redis_url + ": " + e.what());
  }
  std::ofstream out(o.out_path);
  if (!out) return Status::InvalidArgument("--out \"" + o.out_path + "\": cannot write");
  out << FormatWorkloadCsv(WorkloadFromSamples(samples, o.out_path));
  log << "wrote " << o.out_path << " from " << samples.size() << " samples\n";
  return Status::Ok();
}

}  // namespace warmpool::sim
