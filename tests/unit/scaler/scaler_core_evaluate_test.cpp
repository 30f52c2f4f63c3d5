// ScalerCore's evaluation (EvaluateAsync, TryEvaluate) over a fake BacklogSource: what the core
// itself does with a reading (policy, state, run times, errors), without Redis. The Redis side
// is covered by scaler_integration_tests.
#include <atomic>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <sstream>

#include <catch2/catch.hpp>
#include <prometheus/text_serializer.h>

#include "redis/errors.h"
#include "scaler/backlog_source.h"
#include "scaler/policy_state_store.h"
#include "scaler/scaler_core.h"

namespace warmpool::scaler {
namespace {

using namespace std::chrono_literals;
using std::chrono::system_clock;

const system_clock::time_point kT0 = system_clock::time_point(std::chrono::seconds(1795982400));

// A backlog the test sets (per-queue pending, unacked entries counted as the real reader does),
// the shared policy state kept in a map, and faults on demand. Thread-safe: the core calls it
// from its reader threads.
class FakeSource final : public BacklogSource {
 public:
  void SetPending(const std::string& queue, int64_t n) {
    std::lock_guard lock(mu_);
    pending_[queue] = n;
  }
  void SetUnacked(std::vector<celery::UnackedEntry> entries) {
    std::lock_guard lock(mu_);
    unacked_ = std::move(entries);
  }
  // A non-empty error makes every read throw it (as a RedisIoError).
  void Fail(std::string error) {
    std::lock_guard lock(mu_);
    error_ = std::move(error);
  }
  // While held, reads wait (as on a hung Redis) until released.
  void Hold(bool held) {
    {
      std::lock_guard lock(mu_);
      held_ = held;
    }
    cv_.notify_all();
  }
  std::optional<policy::PolicyState> StateAt(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = states_.find(key);
    if (it == states_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> StateKeys() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> keys;
    for (const auto& [k, s] : states_) keys.push_back(k);
    return keys;
  }
  int reads() const {
    std::lock_guard lock(mu_);
    return reads_;
  }
  ProbeTarget last_target() const {
    std::lock_guard lock(mu_);
    return last_target_;
  }

  std::unique_ptr<Session> Open(const ProbeTarget& target, Deadline) override {
    return std::make_unique<FakeSession>(this, target);
  }

 private:
  class FakeSession final : public Session {
   public:
    FakeSession(FakeSource* source, ProbeTarget target) : source_(source), target_(target) {}
    BacklogReading ReadBacklog(system_clock::time_point now) override {
      return source_->Read(target_, now);
    }
    policy::PolicyState UpdatePolicyState(const std::string& key, std::chrono::seconds,
                                          const StateUpdate& update) override {
      std::lock_guard lock(source_->mu_);
      policy::PolicyState& stored = source_->states_[key];
      stored = update(stored);
      return stored;
    }

   private:
    FakeSource* const source_;
    const ProbeTarget target_;
  };

  BacklogReading Read(const ProbeTarget& target, system_clock::time_point now) {
    std::unique_lock lock(mu_);
    ++reads_;
    last_target_ = target;
    cv_.wait_for(lock, 5s, [&] { return !held_; });
    if (!error_.empty()) throw RedisIoError(error_);
    BacklogReading reading;
    reading.taken_at = now;
    for (const auto& q : target.queues) reading.per_queue[q].pending = pending_[q];
    if (target.read_unacked) {
      for (const auto& e : unacked_) CountUnackedEntry(e, now, &reading);
    }
    return reading;
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, int64_t> pending_;
  std::vector<celery::UnackedEntry> unacked_;
  std::string error_;
  bool held_ = false;
  std::map<std::string, policy::PolicyState> states_;
  int reads_ = 0;
  ProbeTarget last_target_;
};

celery::UnackedEntry Running(const std::string& queue, const std::string& tag) {
  celery::UnackedEntry e;
  e.routing_key = queue;
  e.delivery_tag = tag;
  return e;
}

ScalerCore::Options EveryCallReads() {
  ScalerCore::Options o;
  o.coalesce_window = 0ms;  // no reuse: every evaluation sees the fake's current backlog
  o.refresh_ahead = false;
  return o;
}

struct Core {
  explicit Core(ScalerCore::Options options = EveryCallReads())
      : core(&registry, &source, &metrics, options, [this] { return kT0 + seconds.load() * 1s; }) {}
  ConnectionRegistry registry{{{"default", RedisEndpoint{}}}, RedisPoolOptions{}};
  FakeSource source;
  ScalerMetrics metrics{std::make_shared<prometheus::Registry>()};
  std::atomic<int64_t> seconds{0};  // the core's wall clock: kT0 + this
  ScalerCore core;
};

struct Outcome {
  Status status;
  Evaluation eval;
};

Outcome Evaluate(Core& c, const MetadataView& metadata, ScaledObjectKey key = {"so", "ns"}) {
  auto promise = std::make_shared<std::promise<Outcome>>();
  auto future = promise->get_future();
  c.core.EvaluateAsync(key, metadata, [promise](const Status& s, const Evaluation& e) {
    promise->set_value({s, e});
  });
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  return future.get();
}

std::string Metrics(Core& c) {
  return prometheus::TextSerializer().Serialize(c.metrics.registry->Collect());
}

TEST_CASE("Evaluate sizes replicas from pending and in-flight tasks", "[scaler_core][evaluate]") {
  Core c;
  c.source.SetPending("gpu", 5);
  c.source.SetUnacked({Running("gpu", "a"), Running("gpu", "b"), Running("cpu", "c")});
  const MetadataView md = {{"queues", "gpu"}, {"tasksPerReplica", "2"}, {"drainSeconds", "off"}};
  Outcome o = Evaluate(c, md);
  REQUIRE(o.status.ok());
  REQUIRE(o.eval.reading);
  CHECK(o.eval.reading->pending() == 5);
  CHECK(o.eval.reading->in_flight() == 2);       // the cpu task is another queue's
  CHECK(o.eval.decision.desired_replicas == 4);  // ceil((5 + 2) / 2)
  CHECK(o.eval.decision.active);
  CHECK(o.eval.decision.reason == policy::kReasonBacklog);
  CHECK(o.eval.metric_name == "warmpool-gpu");
  CHECK(c.source.last_target().queues == std::vector<std::string>{"gpu"});
  // The per-queue gauges and the decision's gauge are published.
  const std::string text = Metrics(c);
  CHECK_THAT(text,
             Catch::Contains(R"(warmpool_queue_pending{connection="default",queue="gpu"} 5)"));
  CHECK_THAT(text,
             Catch::Contains(R"(warmpool_desired_replicas{namespace="ns",scaledobject="so"} 4)"));

  SECTION("capped at maxReplicas") {
    Outcome capped =
        Evaluate(c, {{"queues", "gpu"}, {"maxReplicas", "3"}, {"drainSeconds", "off"}});
    REQUIRE(capped.status.ok());
    CHECK(capped.eval.decision.desired_replicas == 3);
    CHECK(capped.eval.decision.reason == policy::kReasonCapped);
  }
  SECTION("countInFlight=false counts only pending tasks") {
    Outcome pending_only = Evaluate(c, {{"queues", "gpu"},
                                        {"tasksPerReplica", "2"},
                                        {"drainSeconds", "off"},
                                        {"countInFlight", "false"},
                                        {"etaPrewarm", "false"}});
    REQUIRE(pending_only.status.ok());
    CHECK(pending_only.eval.decision.desired_replicas == 3);  // ceil(5 / 2)
    CHECK_FALSE(c.source.last_target().read_unacked);         // nothing needs the unacked hash
    CHECK_FALSE(c.source.last_target().count_in_flight);
  }
}

TEST_CASE("Evaluate activates above activationBacklog only", "[scaler_core][evaluate]") {
  Core c;
  const MetadataView md = {{"queues", "gpu"}, {"activationBacklog", "5"}, {"drainSeconds", "off"}};
  Outcome idle = Evaluate(c, md);
  REQUIRE(idle.status.ok());
  CHECK_FALSE(idle.eval.decision.active);
  CHECK(idle.eval.decision.desired_replicas == 0);
  CHECK(idle.eval.decision.reason == policy::kReasonIdle);

  c.seconds = 1;
  c.source.SetPending("gpu", 5);
  Outcome below = Evaluate(c, md);
  REQUIRE(below.status.ok());
  CHECK_FALSE(below.eval.decision.active);
  CHECK(below.eval.decision.reason == policy::kReasonBelowActivation);

  c.seconds = 2;
  c.source.SetPending("gpu", 6);
  Outcome above = Evaluate(c, md);
  REQUIRE(above.status.ok());
  CHECK(above.eval.decision.active);
  CHECK(above.eval.decision.desired_replicas == 6);
}

TEST_CASE("A backlog read error is UNAVAILABLE naming the connection, never a number",
          "[scaler_core][evaluate]") {
  Core c;
  c.source.SetPending("gpu", 7);
  c.source.Fail("redis 127.0.0.1:6379: Connection refused");
  const MetadataView md = {{"queues", "gpu"}};
  Outcome o = Evaluate(c, md);
  CHECK(o.status.code() == Status::Code::kUnavailable);
  CHECK(o.status.message() ==
        "cannot read the backlog from redis connection 'default': "
        "redis 127.0.0.1:6379: Connection refused");
  CHECK(o.eval.reading == nullptr);
  CHECK_THAT(Metrics(c), Catch::Contains(R"(warmpool_redis_errors_total{connection="default"} 1)"));
  CHECK(c.source.StateKeys().empty());  // nothing observed

  c.source.Fail("");  // recovered: the next read answers again
  Outcome again = Evaluate(c, md);
  REQUIRE(again.status.ok());
  CHECK(again.eval.decision.desired_replicas > 0);
}

TEST_CASE("A read slower than the Redis timeout is UNAVAILABLE at the deadline",
          "[scaler_core][evaluate]") {
  ScalerCore::Options options = EveryCallReads();
  options.redis_timeout = 100ms;
  Core c(options);
  c.source.Hold(true);
  const auto start = std::chrono::steady_clock::now();
  Outcome o = Evaluate(c, {{"queues", "gpu"}});
  const auto waited = std::chrono::steady_clock::now() - start;
  c.source.Hold(false);
  CHECK(o.status.code() == Status::Code::kUnavailable);
  CHECK_THAT(o.status.message(),
             Catch::Contains("redis connection 'default'") && Catch::Contains("no reply within"));
  CHECK(waited >= 90ms);
  CHECK(waited < 2s);
}

TEST_CASE("Bad metadata and names are refused before any read", "[scaler_core][evaluate]") {
  Core c;
  Outcome o = Evaluate(c, {{"maxReplicas", "-1"}});
  CHECK(o.status.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(o.status.message(), Catch::Contains("maxReplicas"));
  o = Evaluate(c, {{"redis", "other"}});
  CHECK(o.status.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(o.status.message(), Catch::Contains("other"));
  o = Evaluate(c, {{"queues", "gpu"}}, {std::string(300, 'n'), "ns"});
  CHECK(o.status.code() == Status::Code::kInvalidArgument);
  CHECK_THAT(o.status.message(), Catch::Contains("ScaledObject name"));
  Evaluation eval;
  auto now = c.core.TryEvaluate({"so", "ns"}, {{"keepAlive", "soon"}}, &eval);
  REQUIRE(now.has_value());
  CHECK(now->code() == Status::Code::kInvalidArgument);
  CHECK(c.source.reads() == 0);
}

TEST_CASE("The policy state goes through the source and carries over", "[scaler_core][evaluate]") {
  Core c;
  const MetadataView md = {{"queues", "gpu"}, {"keepAlive", "60"}, {"drainSeconds", "off"}};
  c.source.SetPending("gpu", 3);
  Outcome busy = Evaluate(c, md);
  REQUIRE(busy.status.ok());
  std::shared_ptr<const ScalerPlan> plan;
  REQUIRE(c.core.Plan(md, &plan).ok());
  const std::string key = PolicyStateKey("warmpool:", "", "gpu", plan->target_key);
  CHECK(c.source.StateKeys() == std::vector<std::string>{key});
  auto state = c.source.StateAt(key);
  REQUIRE(state);
  CHECK(state->busy);
  CHECK(state->last_observed == kT0);
  CHECK(busy.eval.reading->state == *state);  // the decision saw the stored state

  // Work ended 10 s ago: kept warm by the keep-alive the stored state remembers.
  c.source.SetPending("gpu", 0);
  c.seconds = 10;
  Outcome warm = Evaluate(c, md);
  REQUIRE(warm.status.ok());
  CHECK(warm.eval.decision.active);
  CHECK(warm.eval.decision.desired_replicas == 1);
  CHECK(warm.eval.decision.reason == policy::kReasonKeepAlive);
  c.seconds = 75;  // 65 s after the idle clock started
  Outcome cold = Evaluate(c, md);
  REQUIRE(cold.status.ok());
  CHECK_FALSE(cold.eval.decision.active);
  CHECK(cold.eval.decision.desired_replicas == 0);
}

// Issue 21: the scaler learned with policy::ScalerMetadata{} (coldStartSeconds 300) whatever the
// ScaledObject said; the simulator passed the real metadata.
TEST_CASE("The shared state learns with the ScaledObject's own metadata",
          "[scaler_core][evaluate]") {
  Core c;
  const MetadataView md = {{"queues", "gpu"}, {"coldStartSeconds", "40"}};
  c.source.SetPending("gpu", 3);  // work appears with nothing running
  REQUIRE(Evaluate(c, md).status.ok());
  c.seconds = 30;  // the first task runs 30 s later: a cold start (> 40 / 2), not a warm pod
  c.source.SetPending("gpu", 2);
  c.source.SetUnacked({Running("gpu", "a")});
  Outcome o = Evaluate(c, md);
  REQUIRE(o.status.ok());
  CHECK(o.eval.reading->state.cold_start_seconds == Approx(30));

  // Objects whose metadata differ learn apart: the state also remembers what each one's HPA was
  // asked for. Equal ones share one state, whatever KEDA adds and however a key is written.
  std::shared_ptr<const ScalerPlan> a, b, d, e;
  REQUIRE(c.core.Plan(md, &a).ok());
  REQUIRE(c.core.Plan({{"queues", "gpu"}, {"coldStartSeconds", "600"}}, &b).ok());
  REQUIRE(
      c.core.Plan({{"queues", "gpu"}, {"coldStartSeconds", "40"}, {"maxReplicas", "3"}}, &d).ok());
  REQUIRE(c.core
              .Plan({{"queues", "gpu"},
                     {"coldStartSecondsFromEnv", "40"},
                     {"scalerAddress", "warmpool-scaler.ns.svc:6000"}},
                    &e)
              .ok());
  CHECK(a->target_key != b->target_key);
  CHECK(a->target_key != d->target_key);
  CHECK(a->target_key == e->target_key);
}

TEST_CASE("Run times are measured from in-flight tags that vanish", "[scaler_core][evaluate]") {
  Core c;
  const MetadataView md = {{"queues", "gpu"}};
  c.source.SetUnacked({Running("gpu", "a"), Running("gpu", "b")});
  REQUIRE(Evaluate(c, md).status.ok());
  c.seconds = 20;
  c.source.SetUnacked({Running("gpu", "b")});  // a finished after about 20 s
  Outcome o = Evaluate(c, md);
  REQUIRE(o.status.ok());
  CHECK(o.eval.reading->state.task_seconds == Approx(20));
  CHECK(o.eval.reading->state.task_count == 1);
  CHECK(o.eval.reading->oldest_in_flight_seconds == Approx(20));  // b, still running
}

TEST_CASE("TryEvaluate never waits: it starts a read and answers once it is in",
          "[scaler_core][evaluate]") {
  ScalerCore::Options options = EveryCallReads();
  options.coalesce_window = 10s;  // the reading stays fresh for the second call
  Core c(options);
  std::mutex mu;
  std::condition_variable cv;
  int completed = 0;
  c.core.SetReadListener([&] {
    std::lock_guard lock(mu);
    ++completed;
    cv.notify_all();
  });
  c.source.SetPending("gpu", 2);
  const MetadataView md = {{"queues", "gpu"}, {"drainSeconds", "off"}};
  Evaluation eval;
  CHECK_FALSE(c.core.TryEvaluate({"so", "ns"}, md, &eval).has_value());
  {
    std::unique_lock lock(mu);
    REQUIRE(cv.wait_for(lock, 10s, [&] { return completed == 1; }));
  }
  auto now = c.core.TryEvaluate({"so", "ns"}, md, &eval);
  REQUIRE(now.has_value());
  REQUIRE(now->ok());
  CHECK(eval.decision.desired_replicas == 2);
  CHECK(c.source.reads() == 1);
}

}  // namespace
}  // namespace warmpool::scaler
