#include "bench/scaler/kombu_traffic.h"

#include <cstdio>
#include <deque>
#include <memory>
#include <queue>
#include <random>

#include "celery/kombu_keys.h"
#include "common/json_parse.h"
#include "redis/connection.h"
#include "redis/errors.h"

namespace warmpool::bench {

namespace {

using Clock = std::chrono::steady_clock;

void ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (size_t pos = 0; (pos = text->find(from, pos)) != std::string::npos; pos += to.size()) {
    text->replace(pos, from.size(), to);
  }
}

// A UUID-shaped id that is unique within the run (the scaler only needs tags to differ).
std::string SequenceId(long n, const char* tag) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s0000000-0000-4000-8000-%012lx", tag, n);
  return buf;
}

struct SubList {
  std::string key;
  std::deque<std::string> tags;  // in the order they will be RPOPed (FIFO: LPUSH + RPOP)
};

struct Queue {
  std::string name;
  std::vector<SubList> subs;  // kombu consumption order: lowest step first
  int backlog = 0;
};

struct Unacked {
  Clock::time_point due;
  std::string tag;
  bool operator>(const Unacked& o) const { return due > o.due; }
};

double EpochSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

KombuTraffic::KombuTraffic(Options options) : options_(std::move(options)) {
  thread_ = std::thread([this] { Run(); });
}

KombuTraffic::~KombuTraffic() { Stop(); }

void KombuTraffic::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void KombuTraffic::Run() {
  auto doc = ParseJson(options_.template_message);
  const std::string old_id = doc["headers"]["id"].get<std::string>();
  const std::string old_tag = doc["properties"]["delivery_tag"].get<std::string>();
  const std::string old_queue = "\"" + options_.template_queue + "\"";

  std::vector<Queue> queues;
  for (const auto& name : options_.queues) {
    Queue q{name, {}, 0};
    for (int step : options_.priority_steps) {
      q.subs.push_back({kombu::PriorityListKey("", name, step), {}});
    }
    queues.push_back(std::move(q));
  }
  std::priority_queue<Unacked, std::vector<Unacked>, std::greater<>> unacked;
  std::mt19937 rng(17);  // fixed seed: the same traffic every run
  std::uniform_int_distribution<size_t> pick_queue(0, queues.size() - 1);
  std::uniform_int_distribution<size_t> pick_step(0, options_.priority_steps.size() - 1);
  std::uniform_real_distribution<double> unit(0, 1);
  const auto tick = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / std::max(0.1, options_.operations_per_s)));
  const std::string unacked_key(kombu::kUnackedKey), index_key(kombu::kUnackedIndexKey);

  std::unique_ptr<RedisConnection> conn;
  auto pipeline = [&](const std::vector<RedisArgs>& commands) {
    if (!conn || conn->broken()) conn = std::make_unique<RedisConnection>(options_.endpoint);
    commands_ += static_cast<long>(commands.size());
    return conn->Pipeline(commands);
  };
  auto ack_due = [&](Clock::time_point now) {
    std::vector<RedisArgs> acks;
    while (!unacked.empty() && unacked.top().due <= now) {
      acks.push_back({"HDEL", unacked_key, unacked.top().tag});
      acks.push_back({"ZREM", index_key, unacked.top().tag});
      unacked.pop();
    }
    if (!acks.empty()) pipeline(acks);
  };

  long seq = 0;
  auto next = Clock::now();
  while (!stop_ && Clock::now() < options_.deadline) {
    std::this_thread::sleep_until(next);
    next += tick;
    try {
      ack_due(Clock::now());
      Queue& q = queues[pick_queue(rng)];
      const bool push =
          q.backlog == 0 || (q.backlog < options_.max_backlog_per_queue && unit(rng) < 0.5);
      if (push) {
        SubList& sub = q.subs[pick_step(rng)];
        ++seq;
        std::string tag = SequenceId(seq, "d");
        std::string message = options_.template_message;
        ReplaceAll(&message, old_id, SequenceId(seq, "a"));
        ReplaceAll(&message, old_tag, tag);
        ReplaceAll(&message, old_queue, "\"" + q.name + "\"");
        pipeline({{"LPUSH", sub.key, message}});
        sub.tags.push_back(std::move(tag));
        ++q.backlog;
        ++pushed_;
        continue;
      }
      for (SubList& sub : q.subs) {
        if (sub.tags.empty()) continue;
        auto reply = pipeline({{"RPOP", sub.key}});
        if (ReplyIsNil(reply[0].get())) {
          ++errors_;  // someone else took it: our bookkeeping is off
        } else {
          const std::string body = ReplyString(reply[0].get());
          const std::string tag = sub.tags.front();
          // kombu QoS.append: zadd(unacked_index, {tag: time()}) + hset(unacked, tag,
          // dumps([message._raw, exchange, routing_key])).
          pipeline({{"ZADD", index_key, std::to_string(EpochSeconds()), tag},
                    {"HSET", unacked_key, tag,
                     "[" + body + ", \"" + q.name + "\", \"" + q.name + "\"]"}});
          const auto hold =
              std::chrono::duration_cast<Clock::duration>(options_.mean_hold * (0.5 + unit(rng)));
          unacked.push({Clock::now() + hold, tag});
          ++popped_;
        }
        sub.tags.pop_front();
        --q.backlog;
        break;
      }
    } catch (const RedisError& e) {
      ++errors_;
      conn.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  try {
    ack_due(Clock::time_point::max());
  } catch (const RedisError&) {
    ++errors_;
  }
}

}  // namespace warmpool::bench
