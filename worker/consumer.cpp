#include "worker/consumer.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <spdlog/spdlog.h>

#include "celery/kombu_keys.h"
#include "celery/message.h"
#include "celery/time.h"
#include "common/logging.h"
#include "redis/errors.h"
#include "worker/task_log.h"

namespace warmpool::worker {
namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json TimeOrNull(const std::optional<double>& t) {
  return t ? nlohmann::json(celery::FormatIsoUtc(*t)) : nlohmann::json(nullptr);
}

template <typename D>
Clock::duration Ticks(D d) {
  return std::chrono::duration_cast<Clock::duration>(d);
}

}  // namespace

Consumer::Consumer(const WorkerOptions& options, const TaskRegistry& registry, BrokerApi& broker,
                   ResultStoreApi& results, EventDispatcher& events, WorkerMetrics& metrics,
                   WorkerState& state)
    : options_(options),
      registry_(registry),
      broker_(broker),
      results_(results),
      events_(events),
      metrics_(metrics),
      state_(state),
      queue_order_(options.queues) {}

bool Consumer::ConnectAndRecover() {
  auto backoff = std::chrono::milliseconds(100);
  const auto held = [this](const std::string& t) { return state_.Held(t); };
  while (!state_.shutdown.load()) {
    try {
      broker_.DeclareQueues(options_.queues);
      int own = broker_.RecoverOwn(held);
      int stale = broker_.SweepStale(WallNow(), options_.visibility_timeout.count(), held);
      LogEvent(spdlog::level::info, "worker_ready",
               {{"hostname", options_.hostname},
                {"broker", options_.broker.Redacted()},
                {"result_backend", options_.result_backend.Redacted()},
                {"queues", options_.queues},
                {"concurrency", options_.concurrency},
                {"prefetch_limit", options_.prefetch_limit()},
                {"restored_own", own},
                {"restored_stale", stale}});
      return true;
    } catch (const RedisError& e) {
      metrics_.CountRedisError();
      LogEvent(spdlog::level::warn, "redis_unavailable",
               {{"error", e.what()}, {"retry_in_ms", backoff.count()}});
      std::unique_lock lock(state_.mu);
      state_.main_cv.wait_for(lock, backoff, [this] { return state_.shutdown.load(); });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }
  return false;
}

void Consumer::Loop(const std::function<void()>& each_pass) {
  const auto refresh_every = std::min<std::chrono::duration<double>>(
      options_.heartbeat_interval, options_.visibility_timeout / 3);
  const auto sweep_every = std::clamp<std::chrono::duration<double>>(
      options_.visibility_timeout / 2, std::chrono::seconds(1), std::chrono::seconds(60));
  auto next_heartbeat = Clock::now() + Ticks(refresh_every);
  auto next_sweep = Clock::now() + Ticks(sweep_every);
  auto idle_wait = std::chrono::microseconds(500);
  auto error_backoff = std::chrono::milliseconds(100);
  const auto held = [this](const std::string& t) { return state_.Held(t); };
  auto busy_at = Clock::now();  // --exit-when-idle: last time something was held or taken

  while (!state_.shutdown.load()) {
    state_.last_tick.store(Clock::now().time_since_epoch().count());
    bool got_any = false;
    int room = 0;
    uint64_t kicks_seen;
    {
      std::lock_guard lock(state_.mu);
      kicks_seen = state_.kicks;
    }
    try {
      std::lock_guard fetch_lock(fetch_mu_);
      if (need_recover_) {
        broker_.RecoverOwn(held);
        need_recover_ = false;
      }
      each_pass();
      PromoteDueEta(WallNow());
      if (Clock::now() >= next_heartbeat) {
        Heartbeat(WallNow());
        next_heartbeat = Clock::now() + Ticks(refresh_every);
      }
      if (Clock::now() >= next_sweep) {
        broker_.SweepStale(WallNow(), options_.visibility_timeout.count(), held);
        next_sweep = Clock::now() + Ticks(sweep_every);
      }
      {
        std::lock_guard lock(state_.mu);
        room = state_.RoomLocked(options_.prefetch_limit());
      }
      if (room > 0) got_any = FetchAndHandle(room) > 0;
      state_.ready.store(true);
      error_backoff = std::chrono::milliseconds(100);
    } catch (const RedisError& e) {
      metrics_.CountRedisError();
      need_recover_ = true;
      state_.ready.store(false);
      LogEvent(spdlog::level::warn, "redis_unavailable",
               {{"error", e.what()}, {"retry_in_ms", error_backoff.count()}});
      std::unique_lock lock(state_.mu);
      state_.main_cv.wait_for(lock, error_backoff, [this] { return state_.shutdown.load(); });
      error_backoff = std::min(error_backoff * 2, std::chrono::milliseconds(2000));
      busy_at = Clock::now();  // an empty queue is not seen while Redis fails
      continue;
    }
    if (ExitConditionMet(got_any, &busy_at)) break;
    if (got_any) {
      idle_wait = std::chrono::microseconds(500);
      continue;
    }
    WaitForWork(room, kicks_seen, &idle_wait);
  }
}

bool Consumer::ExitConditionMet(bool took, Clock::time_point* busy_at) {
  if (options_.max_tasks == 0 && options_.exit_when_idle <= 0) return false;
  // Under the fetch lock: no take is between counting a message and holding its job.
  std::lock_guard fetch_lock(fetch_mu_);
  std::lock_guard lock(state_.mu);
  const auto now = Clock::now();
  if (took || state_.reserved > 0 || !state_.held.empty() || !eta_.empty()) {
    *busy_at = now;
    return false;
  }
  const auto idle = std::chrono::duration<double>(now - *busy_at);
  const char* reason = nullptr;
  if (state_.TaskBudgetSpentLocked()) {
    reason = "max_tasks";
  } else if (options_.exit_when_idle > 0 && idle.count() >= options_.exit_when_idle) {
    reason = "idle";
  }
  if (reason == nullptr) return false;
  state_.shutdown.store(true);
  LogEvent(spdlog::level::info, "worker_exit_condition",
           {{"reason", reason},
            {"taken", state_.taken},
            {"max_tasks", options_.max_tasks},
            {"idle_s", idle.count()}});
  return true;
}

void Consumer::WaitForWork(int room, uint64_t kicks_seen, std::chrono::microseconds* idle_wait) {
  // Nothing taken: wait for a finished job (room), the next ETA/heartbeat, or the poll pause.
  auto wait = room > 0 ? Ticks(*idle_wait) : Ticks(std::chrono::milliseconds(50));
  if (room > 0) *idle_wait = std::min(*idle_wait * 2, std::chrono::microseconds(50000));
  std::optional<double> next_eta;
  {
    std::lock_guard fetch_lock(fetch_mu_);
    if (!eta_.empty()) next_eta = eta_.begin()->first;
  }
  if (next_eta) {
    double until = *next_eta - WallNow();
    wait = std::min(wait, Ticks(std::chrono::duration<double>(std::max(until, 0.0))));
  }
  std::unique_lock lock(state_.mu);
  state_.main_cv.wait_for(lock, wait,
                          [&] { return state_.shutdown.load() || state_.kicks != kicks_seen; });
}

std::vector<std::string> Consumer::ConsumeKeys(std::vector<std::string>* key_queues) const {
  auto keys = kombu::ConsumeOrder(options_.key_prefix, queue_order_, {0, 3, 6, 9});
  for (const auto& k : keys) {
    key_queues->push_back(kombu::QueueFromListKey(options_.key_prefix, k));
  }
  return keys;
}

int Consumer::FetchAndHandle(int room) {
  std::vector<std::string> key_queues;
  auto keys = ConsumeKeys(&key_queues);
  return HandleFetchedBatch(broker_.Fetch(keys, key_queues, room, WallNow()));
}

int Consumer::HandleFetchedBatch(std::vector<Fetched> fetched) {
  if (fetched.empty()) return 0;
  // More than --max-tasks leaves (a take whose room was counted before another's): give the
  // rest back unstarted.
  const size_t fit = state_.CountTaken(fetched.size());
  if (fit < fetched.size()) {
    GiveBack({fetched.begin() + static_cast<std::ptrdiff_t>(fit), fetched.end()});
    fetched.resize(fit);
    if (fetched.empty()) return 0;
  }
  // kombu round_robin: the queue just consumed goes to the end.
  const std::string last = fetched.back().queue;
  auto it = std::find(queue_order_.begin(), queue_order_.end(), last);
  if (it != queue_order_.end() && queue_order_.size() > 1) {
    std::rotate(it, it + 1, queue_order_.end());
  }
  int n = static_cast<int>(fetched.size());
  for (auto& f : fetched) {
    try {
      HandleFetched(std::move(f));
    } catch (const RedisError&) {
      need_recover_ = true;  // the rest are in our in-flight set: recovered next pass
      throw;
    }
  }
  return n;
}

void Consumer::GiveBack(const std::vector<Fetched>& fetched) {
  for (const auto& f : fetched) {
    if (f.kind != Fetched::Kind::kMessage) continue;
    try {
      broker_.Restore(f.tag);
    } catch (const RedisError&) {
      metrics_.CountRedisError();  // stays in unacked and the in-flight set: recovered later
    }
  }
}

int Consumer::TryFetchInline() {
  std::unique_lock fetch_lock(fetch_mu_, std::try_to_lock);
  if (!fetch_lock.owns_lock() || state_.shutdown.load() || need_recover_) return 0;
  int room;
  {
    std::lock_guard lock(state_.mu);
    if (!state_.ready_jobs.empty()) return 1;  // more work queued: nothing to take yet
    room = state_.RoomLocked(options_.prefetch_limit());
  }
  if (room <= 0) return 1;  // full; a finishing job will kick the consumer loop
  try {
    return FetchAndHandle(room);
  } catch (const RedisError&) {
    // The consumer loop sees the same error on its next pass, logs it and backs off.
    metrics_.CountRedisError();
    need_recover_ = true;
    return 0;
  }
}

void Consumer::Heartbeat(double now) {
  std::vector<std::string> tags;
  int active;
  {
    std::lock_guard lock(state_.mu);
    tags.reserve(state_.held.size());
    for (const auto& [tag, job] : state_.held) tags.push_back(tag);
    active = static_cast<int>(state_.running.size());
    metrics_.SetRunning(active);
    metrics_.SetReserved(state_.reserved);
  }
  metrics_.SetEtaHeld(static_cast<double>(eta_.size()));
  events_.SendWorker("worker-heartbeat", options_.heartbeat_interval.count(), active,
                     state_.processed.load());
  broker_.RefreshScores(tags, now);
}

void Consumer::DeadLetter(const Fetched& fetched, const celery::TaskMessage& partial,
                          const std::string& reason) {
  nlohmann::json entry = {
      {"reason", reason},           {"queue", fetched.queue}, {"worker", options_.hostname},
      {"time", WallNow()},          {"id", partial.id},       {"task", partial.task},
      {"message", fetched.envelope}};
  broker_.Ack(fetched.tag, broker_.deadletter_key(), entry.dump());
  LogEvent(spdlog::level::err, "message_deadlettered",
           {{"queue", fetched.queue},
            {"tag", fetched.tag},
            {"id", partial.id},
            {"name", partial.task},
            {"reason", reason},
            {"deadletter_key", broker_.deadletter_key()}});
  metrics_.CountTask("DEADLETTER");
}

void Consumer::Refuse(const Job& job, const Refusal& refusal, bool not_registered) {
  if (refusal.meta) results_.Store(*refusal.meta);
  broker_.Ack(job.fetched.tag);
  if (not_registered) {
    LogEvent(spdlog::level::err, "task_not_registered",
             {{"id", job.msg.id}, {"name", job.msg.task}, {"queue", job.fetched.queue}});
  }
  LogTask(metrics_, job, refusal.state, 0, refusal.detail);
  events_.SendTask(refusal.event, refusal.event_fields);
}

void Consumer::HandleFetched(Fetched fetched) {
  if (fetched.kind == Fetched::Kind::kDeadLettered) {
    LogEvent(spdlog::level::err, "message_deadlettered",
             {{"queue", fetched.queue},
              {"reason", fetched.reason},
              {"deadletter_key", broker_.deadletter_key()}});
    metrics_.CountTask("DEADLETTER");
    return;
  }
  auto job = std::make_shared<Job>();
  job->taken_at = WallNow();
  Status status = celery::DecodeTaskMessage(fetched.envelope, &job->msg);
  job->fetched = std::move(fetched);
  if (!status.ok()) {
    DeadLetter(job->fetched, job->msg, status.message());
    return;
  }
  const celery::TaskMessage& msg = job->msg;
  job->fn = registry_.Find(msg.task, &job->task_name);
  if (job->fn == nullptr) {
    // Celery: error log, reject (= ack on Redis), FAILURE NotRegistered, task-failed.
    Refuse(*job, PlanNotRegistered(msg, WallNow()), /*not_registered=*/true);
    return;
  }
  events_.SendTask("task-received",
                   {{"uuid", msg.id},
                    {"name", msg.task},
                    {"args", msg.argsrepr},
                    {"kwargs", msg.kwargsrepr},
                    {"root_id", msg.root_id},
                    {"parent_id", msg.parent_id.empty() ? nlohmann::json(nullptr)
                                                        : nlohmann::json(msg.parent_id)},
                    {"retries", msg.retries},
                    {"eta", TimeOrNull(msg.eta)},
                    {"expires", TimeOrNull(msg.expires)}});
  double now = WallNow();
  const bool revoked = state_.Revoked(msg.id);
  if (revoked || (msg.expires && now >= *msg.expires)) {
    Refuse(*job, PlanRevokedOnReceipt(msg, revoked, now), /*not_registered=*/false);
    return;
  }
  {
    std::lock_guard lock(state_.mu);
    state_.held[job->fetched.tag] = job;
  }
  if (msg.eta && *msg.eta > now) {
    // Held in memory, still in unacked (scores refreshed by Heartbeat); not counted as reserved.
    LogEvent(spdlog::level::debug, "task_eta_held", {{"id", msg.id}, {"eta", *msg.eta}});
    eta_.emplace(*msg.eta, std::move(job));
    return;
  }
  state_.EnqueueReady(std::move(job));
}

void Consumer::PromoteDueEta(double now) {
  while (!eta_.empty() && eta_.begin()->first <= now) {
    std::shared_ptr<Job> job = eta_.begin()->second;
    bool room = false;
    {
      std::lock_guard lock(state_.mu);
      room = state_.RoomLocked(options_.prefetch_limit()) > 0;
    }
    if (!room) {
      // Due with every slot taken: back to the head of its list for whichever worker has room
      // (a new replica the backlog brings, or this one), instead of waiting here behind the
      // running tasks where no other worker can take it. Restored before it is forgotten, so a
      // Redis error leaves it held for the next pass.
      const BrokerApi::RestoreResult restored = broker_.Restore(job->fetched.tag);
      eta_.erase(eta_.begin());
      {
        std::lock_guard lock(state_.mu);
        state_.held.erase(job->fetched.tag);
      }
      LogEvent(spdlog::level::info, "task_eta_due_requeued",
               {{"id", job->msg.id},
                {"task", job->msg.task},
                {"restored", restored == BrokerApi::RestoreResult::kRestored},
                {"reason", "due with no free slot"}});
      continue;
    }
    eta_.erase(eta_.begin());
    job->taken_at = now;
    state_.EnqueueReady(std::move(job));
  }
}

std::vector<std::shared_ptr<Job>> Consumer::TakeEtaHeld() {
  std::vector<std::shared_ptr<Job>> out;
  std::lock_guard fetch_lock(fetch_mu_);  // no executor takes messages from now on
  for (auto& [t, job] : eta_) out.push_back(job);
  eta_.clear();
  return out;
}

std::vector<std::pair<double, std::shared_ptr<Job>>> Consumer::EtaHeld() {
  std::lock_guard fetch_lock(fetch_mu_);
  return {eta_.begin(), eta_.end()};
}

}  // namespace warmpool::worker
