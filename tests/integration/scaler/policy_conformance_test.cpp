// One policy path (issue 21): the real ScalerCore, reading a queue that a real redis-server holds
// as kombu lays it out, and the simulator's policy step (sim::ObservationOf + sim::PolicyStep,
// what warmpool-sim's WarmpoolTrigger runs per probe) take the same decision (active, desired
// replicas, reason) at every step of one arrival trace: idle, a cold burst, its drain,
// keep-alive and its expiry, a task held for an eta, bursts every 900 s that open the learned
// pre-warm window and spend the release budget, and a warmWindows floor.
//
// Both sides see one queue: the trace model (TraceQueue) moves tasks between waiting, held for an
// eta, running and done only at probe times, so the run times the scaler measures from delivery
// tags entering and leaving `unacked` (policy::TaskTiming) are the ones the simulator reports
// from finished tasks (end - start). warmpool-sim starts and ends tasks between probes and
// measures them through the scaler's own policy::ObserveInFlight (sim::ProbeQueue, checked in
// tests/unit/sim/triggers_test.cpp).
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <future>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "celery/kombu_keys.h"
#include "celery/message.h"
#include "policy/policy_state.h"
#include "redis/connection.h"
#include "scaler/backlog_reader.h"
#include "scaler/scaler_core.h"
#include "sim/triggers.h"
#include "tests/support/redis_server.h"
#include "tests/support/skip_test.h"

namespace warmpool {
namespace {

using namespace std::chrono_literals;
using Raw = std::map<std::string, std::string>;

constexpr char kQueue[] = "celery";
// Two task names, so durations are learned and pending work sized per name on both sides.
constexpr char kTaskName[] = "tasks.detect_change";
constexpr char kOtherTaskName[] = "tasks.index_tiles";

struct TraceTask {
  int64_t arrival = 0;
  std::optional<int64_t> eta;  // a countdown: held in `unacked` until then, then run at once
  int64_t duration = 0;
  int64_t start = -1;
  int64_t end = -1;
  std::string tag;  // kombu delivery tag
  std::string envelope;
  std::string name;  // headers.task
};

// Worker slots that take tasks from the list in [from, to) (an open loop: the workers do not
// follow the decisions, which are what is compared).
struct Capacity {
  int64_t from = 0, to = 0, slots = 0;
};

// What one Advance changed, for the Redis side to mirror.
struct Changes {
  std::vector<int> queued, held, started, finished;  // task indices
};

// The queue at probe times only: tasks that ran their duration end, arrivals join the list (or
// are held until their eta, when the worker holding them runs them), free slots take from the
// list's head.
class TraceQueue {
 public:
  TraceQueue(std::vector<TraceTask> tasks, std::vector<Capacity> capacity)
      : tasks_(std::move(tasks)), capacity_(std::move(capacity)) {
    REQUIRE(std::is_sorted(tasks_.begin(), tasks_.end(),
                           [](const auto& a, const auto& b) { return a.arrival < b.arrival; }));
  }

  Changes Advance(int64_t t) {
    Changes c;
    for (size_t k = 0; k < running_.size();) {
      TraceTask& task = tasks_[running_[k]];
      if (task.start + task.duration <= t) {
        task.end = t;
        finished_ += 1;
        finished_seconds_ += static_cast<double>(task.end - task.start);
        FinishedOf(task.name).count += 1;
        FinishedOf(task.name).seconds_sum += static_cast<double>(task.end - task.start);
        c.finished.push_back(running_[k]);
        running_.erase(running_.begin() + static_cast<long>(k));
      } else {
        ++k;
      }
    }
    for (; next_ < tasks_.size() && tasks_[next_].arrival <= t; ++next_) {
      const int id = static_cast<int>(next_);
      if (tasks_[next_].eta && *tasks_[next_].eta > t) {
        held_.push_back(id);
        c.held.push_back(id);
      } else {
        list_.push_back(id);
        c.queued.push_back(id);
      }
    }
    for (size_t k = 0; k < held_.size();) {
      if (*tasks_[held_[k]].eta <= t) {
        Start(held_[k], t);  // no Changes entry: its `unacked` entry only passes its eta
        held_.erase(held_.begin() + static_cast<long>(k));
      } else {
        ++k;
      }
    }
    int64_t slots = 0;
    for (const Capacity& cap : capacity_) {
      if (t >= cap.from && t < cap.to) slots += cap.slots;
    }
    int64_t busy = 0;
    for (int id : running_) busy += !tasks_[id].eta;
    for (; busy < slots && !list_.empty(); ++busy) {
      c.started.push_back(list_.front());
      Start(list_.front(), t);
      list_.pop_front();
    }
    return c;
  }

  // What the scaler's probe reads now; the finished tasks are those since the previous call.
  sim::ProbeSnapshot Snapshot() {
    sim::ProbeSnapshot s;
    s.pending = static_cast<int64_t>(list_.size());
    s.in_flight = static_cast<int64_t>(running_.size());
    for (int id : running_) {
      if (!s.oldest_start || tasks_[id].start < *s.oldest_start) s.oldest_start = tasks_[id].start;
    }
    s.scheduled = static_cast<int64_t>(held_.size());
    for (int id : held_) {
      if (!s.earliest_eta || *tasks_[id].eta < *s.earliest_eta) s.earliest_eta = tasks_[id].eta;
      s.upcoming_etas.push_back(*tasks_[id].eta);
    }
    std::sort(s.upcoming_etas.begin(), s.upcoming_etas.end());
    s.finished = finished_;
    s.finished_seconds = finished_seconds_;
    // The scaler reads the names from the messages: the list's next kPendingSample, `unacked`.
    s.finished_by_task = std::move(finished_by_task_);
    for (size_t i = 0; i < list_.size() && i < static_cast<size_t>(policy::kPendingSample); ++i) {
      ++s.pending_sample[tasks_[list_[i]].name];
    }
    finished_ = 0;
    finished_seconds_ = 0;
    finished_by_task_.clear();
    return s;
  }

  const TraceTask& task(int id) const { return tasks_[id]; }
  bool done() const { return next_ == tasks_.size() && list_.empty() && running_.empty(); }

 private:
  policy::FinishedTasks& FinishedOf(const std::string& name) {
    for (policy::FinishedTasks& f : finished_by_task_) {
      if (f.task == name) return f;
    }
    return finished_by_task_.emplace_back(policy::FinishedTasks{name, 0, 0});
  }

  void Start(int id, int64_t t) {
    tasks_[id].start = t;
    running_.push_back(id);
  }

  std::vector<TraceTask> tasks_;
  std::vector<Capacity> capacity_;
  std::vector<policy::FinishedTasks> finished_by_task_;
  size_t next_ = 0;
  std::deque<int> list_;
  std::vector<int> held_, running_;
  int64_t finished_ = 0;
  double finished_seconds_ = 0;
};

// Lays the queue out in Redis as kombu's Redis transport does (kombu/transport/redis.py):
// Channel._put LPUSHes the JSON envelope, the worker's BRPOP takes the oldest, and QoS.append
// records the delivery in the `unacked` hash ([envelope, exchange, routing_key]) and the
// `unacked_index` zset (tag -> time) until the ack (HDEL/ZREM). A task with an eta is delivered
// at once and held in `unacked` until it runs.
class KombuMirror {
 public:
  explicit KombuMirror(const testing::TestRedisServer& redis) : conn_(Endpoint(redis)) {}

  // Simulated second t as Unix seconds (kombu's times).
  static int64_t Unix(int64_t t) {
    return std::chrono::duration_cast<std::chrono::seconds>(
               (sim::kSimEpoch + std::chrono::seconds(t)).time_since_epoch())
        .count();
  }

  static RedisEndpoint Endpoint(const testing::TestRedisServer& redis) {
    RedisEndpoint e;
    e.host = redis.host();
    e.port = redis.port();
    return e;
  }

  void Apply(const TraceQueue& q, const Changes& c, int64_t t) {
    for (int id : c.queued) Run({"LPUSH", kQueue, q.task(id).envelope});
    for (int id : c.held) Deliver(q.task(id), t);
    for (int id : c.started) {
      RedisReplyPtr popped = conn_.Command({"RPOP", kQueue});
      celery::TaskMessage m;
      REQUIRE(celery::DecodeTaskMessage(ReplyString(popped.get()), &m).ok());
      REQUIRE(m.delivery_tag == q.task(id).tag);  // FIFO, as the worker takes them
      Deliver(q.task(id), t);
    }
    for (int id : c.finished) {
      Run({"HDEL", unacked_, q.task(id).tag});
      Run({"ZREM", index_, q.task(id).tag});
    }
  }

 private:
  void Deliver(const TraceTask& task, int64_t t) {
    const nlohmann::json value = {nlohmann::json::parse(task.envelope), "", kQueue};
    Run({"HSET", unacked_, task.tag, value.dump()});
    Run({"ZADD", index_, std::to_string(Unix(t)), task.tag});
  }
  void Run(const RedisArgs& args) {
    RedisReplyPtr r = conn_.Command(args);
    REQUIRE_FALSE(ReplyIsError(r.get()));
  }

  RedisConnection conn_;
  const std::string unacked_ = kombu::PrefixedKey("", kombu::kUnackedKey);
  const std::string index_ = kombu::PrefixedKey("", kombu::kUnackedIndexKey);
};

TraceTask Task(int64_t arrival, int64_t duration, std::optional<int64_t> eta = std::nullopt,
               const char* name = kTaskName) {
  static int serial = 0;
  TraceTask task;
  task.arrival = arrival;
  task.duration = duration;
  task.eta = eta;
  task.tag = "tag-";
  task.tag.append(std::to_string(++serial));
  celery::TaskMessage m;
  m.id = "id-";
  m.id.append(std::to_string(serial));
  m.task = name;
  task.name = name;
  m.routing_key = kQueue;
  if (eta) m.eta = static_cast<double>(KombuMirror::Unix(*eta));
  task.envelope = celery::EncodeTaskMessageV2(m, task.tag);
  return task;
}

// Idle 300 s; a burst of 20 that waits 140 s for its first worker (a cold start for
// coldStartSeconds 120, not for the default 300) and drains on 4 slots; then 7 bursts of 3 tasks
// of another task name every 900 s from 1200, on 2 slots after 150 s (cold again) or 5 s, with a
// countdown task sent at 2300 for 3000. Idle gaps of 650 s and more let every keep-alive expire
// before the learned pre-warm window opens.
TraceQueue Trace() {
  std::vector<TraceTask> tasks;
  std::vector<Capacity> capacity;
  for (int i = 0; i < 15; ++i) tasks.push_back(Task(300, 20 + (i * 7) % 21));
  for (int i = 0; i < 5; ++i) tasks.push_back(Task(320 + 10 * i, 30));
  capacity.push_back({440, 800, 4});
  for (int k = 0; k < 7; ++k) {
    const int64_t at = 1200 + 900 * k;
    for (int i = 0; i < 3; ++i) {
      tasks.push_back(Task(at + 3 * i, 35 + 5 * i, std::nullopt, kOtherTaskName));
    }
    if (k == 1) tasks.push_back(Task(at + 200, 30, 3000));
    capacity.push_back({at + (k % 2 ? 5 : 150), at + 400, 2});
  }
  return TraceQueue(std::move(tasks), std::move(capacity));
}
constexpr int64_t kTraceEnd = 7200;

struct ScalerUnderTest {
  explicit ScalerUnderTest(const testing::TestRedisServer& redis)
      : registry({{"default", KombuMirror::Endpoint(redis)}}, RedisPoolOptions{}),
        core(&registry, &source, &metrics, EveryCallReads(),
             [this] { return sim::kSimEpoch + std::chrono::seconds(now.load()); }) {}

  static scaler::ScalerCore::Options EveryCallReads() {
    scaler::ScalerCore::Options o;
    o.coalesce_window = 0ms;  // each step reads Redis afresh at the fake clock's time
    o.refresh_ahead = false;
    return o;
  }

  struct Outcome {
    Status status;
    scaler::Evaluation eval;
  };
  Outcome Evaluate(const std::string& name, const Raw& raw) {
    auto promise = std::make_shared<std::promise<Outcome>>();
    auto future = promise->get_future();
    core.EvaluateAsync({name, "conformance"}, scaler::ViewOf(raw),
                       [promise](const Status& s, const scaler::Evaluation& e) {
                         promise->set_value({s, e});
                       });
    REQUIRE(future.wait_for(10s) == std::future_status::ready);
    return future.get();
  }

  scaler::ConnectionRegistry registry;
  scaler::RedisBacklogSource source;
  scaler::ScalerMetrics metrics{std::make_shared<prometheus::Registry>()};
  std::atomic<int64_t> now{0};
  scaler::ScalerCore core;
};

// One ScaledObject: its metadata, and the simulator's policy state run beside the scaler's.
struct Object {
  std::string name;
  Raw raw;
  policy::ScalerMetadata meta;
  policy::PolicyState sim_state;
  std::set<std::string> reasons;
  std::string last_reason;
  int decision_mismatches = 0;  // steps where active, desired or reason differ
  int state_mismatches = 0;     // steps where the learned policy state differs
  int reported = 0;
};

Object MakeObject(std::string name, Raw raw) {
  Object o;
  o.name = std::move(name);
  o.raw = std::move(raw);
  policy::ParsedMetadata parsed;
  REQUIRE(policy::ParseScalerMetadata(o.raw, &parsed).ok());
  o.meta = parsed.metadata;
  return o;
}

std::string Describe(const policy::Decision& d) {
  std::ostringstream out;
  out << "active=" << d.active << " desired=" << d.desired_replicas << " reason=" << d.reason;
  return out.str();
}

std::string Describe(const policy::Observation& o) {
  std::ostringstream out;
  out << "pending=" << o.pending << " in_flight=" << o.in_flight << " scheduled=" << o.scheduled
      << " eta=" << (o.earliest_eta ? o.earliest_eta->time_since_epoch().count() : -1)
      << " oldest_in_flight=" << o.oldest_in_flight_seconds
      << " measured=" << o.measured_task_seconds.value_or(-1) << "x" << o.measured_task_count;
  return out.str();
}

// Runs the trace through one ScalerCore evaluating every object at every step (1-10 s apart),
// and through the simulator's policy step once per object; compares decisions and states.
// Returns the number of probe targets the scaler read.
size_t RunConformance(std::vector<Object>& objects) {
  if (std::system("command -v redis-server >/dev/null 2>&1") != 0) {
    testing::SkipTest("redis-server is not installed");
  }
  spdlog::set_level(spdlog::level::warn);  // decisions are compared, not logged
  testing::TestRedisServer redis;
  KombuMirror mirror(redis);
  ScalerUnderTest scaler(redis);
  TraceQueue trace = Trace();
  uint64_t rng = 21;  // step lengths 1-10 s from a fixed LCG (the same trace on every run)
  int steps = 0;
  for (int64_t t = 0; t <= kTraceEnd; ++steps) {
    const Changes changes = trace.Advance(t);
    mirror.Apply(trace, changes, t);
    const policy::Observation obs = sim::ObservationOf(trace.Snapshot(), t, true);
    scaler.now = t;
    for (Object& o : objects) {
      const policy::Decision want = sim::PolicyStep(o.meta, obs, t, &o.sim_state);
      const auto got = scaler.Evaluate(o.name, o.raw);
      REQUIRE(got.status.ok());
      o.reasons.insert(want.reason);
      // CONFORMANCE_TRACE=1: print every change of reason (to see what the trace exercises).
      if (std::getenv("CONFORMANCE_TRACE") && want.reason != o.last_reason) {
        std::cout << o.name << " t=" << t << " " << Describe(want) << " | " << Describe(obs)
                  << "\n";
      }
      o.last_reason = want.reason;
      const policy::PolicyState& scaler_state = got.eval.reading->state;
      const bool same_decision = got.eval.decision == want;
      const bool same_state = scaler_state == o.sim_state;
      o.decision_mismatches += !same_decision;
      o.state_mismatches += !same_state;
      if ((same_decision && same_state) || ++o.reported > 3) continue;  // the first few suffice
      const policy::Observation seen =
          scaler::ToObservation(*got.eval.reading, o.meta.count_in_flight);
      FAIL_CHECK(o.name << " step " << steps << " t=" << t << "\n  simulator: " << Describe(want)
                        << "\n    observed " << Describe(obs) << "\n    state "
                        << policy::EncodeState(o.sim_state)
                        << "\n  scaler:    " << Describe(got.eval.decision) << "\n    observed "
                        << Describe(seen) << "\n    state " << policy::EncodeState(scaler_state));
    }
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    t += 1 + static_cast<int64_t>((rng >> 33) % 10);
  }
  CHECK(trace.done());
  CHECK(steps == 1305);  // docs/sim.md quotes it
  for (const Object& o : objects) {
    INFO(o.name);
    CHECK(o.decision_mismatches == 0);
    CHECK(o.state_mismatches == 0);
    CHECK(o.sim_state.task_durations.size() == 2);  // both names learned apart
  }
  return scaler.core.probe_targets();
}

const Raw kDefault = {{"queues", kQueue}};
// Monday 00:00 UTC is simulated t = 0: the window (3600-4200) covers the burst at 3900.
const Raw kColdStart120 = {{"queues", kQueue},
                           {"coldStartSeconds", "120"},
                           {"keepAlive", "200"},
                           {"warmWindows", "Mon 01:00-01:10 UTC=2"},
                           {"tasksPerReplica", "2"}};

TEST_CASE("The scaler decides as the simulator with the default metadata",
          "[conformance][integration]") {
  std::vector<Object> objects = {MakeObject("default", kDefault)};
  RunConformance(objects);
  // The trace reaches the rules the default applies (its `auto` keep-alive is 0 here: the 900 s
  // gaps are longer than the break-even time, and a node outlives an idle pod anyway).
  for (const char* reason : {"idle", "drain", "in-flight", "eta-prewarm", "prewarm"}) {
    INFO(reason);
    CHECK(objects[0].reasons.count(reason));
  }
}

TEST_CASE("The scaler decides as the simulator with coldStartSeconds 120, keepAlive, warmWindows",
          "[conformance][integration]") {
  std::vector<Object> objects = {MakeObject("cold-start-120", kColdStart120)};
  RunConformance(objects);
  for (const char* reason : {"idle", "drain", "in-flight", "keep-alive", "eta-prewarm", "prewarm",
                             "warm-window", "release-budget"}) {
    INFO(reason);
    CHECK(objects[0].reasons.count(reason));
  }
}

// One queue, three ScaledObjects with their own metadata: each reads and learns apart (the state
// also remembers what its own HPA was asked for; ProbeTarget::CacheKey, docs/scaler.md "Reads are
// shared"), and each decides as the simulator run with its own metadata. A fourth with the
// default's metadata shares the default's reading and state.
TEST_CASE("ScaledObjects on one queue each decide as the simulator with their own metadata",
          "[conformance][integration]") {
  Raw sizing = kDefault;
  sizing["keepAlive"] = "60";
  sizing["drainSeconds"] = "off";
  sizing["maxReplicas"] = "3";
  std::vector<Object> objects = {MakeObject("default", kDefault),
                                 MakeObject("cold-start-120", kColdStart120),
                                 MakeObject("sizing", sizing), MakeObject("default-2", kDefault)};
  CHECK(RunConformance(objects) == 3);
  CHECK(objects[2].reasons.count("backlog-capped"));
}

}  // namespace
}  // namespace warmpool
