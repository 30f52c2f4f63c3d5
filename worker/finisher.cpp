#include "worker/finisher.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "common/logging.h"
#include "redis/errors.h"
#include "worker/task_log.h"
#include "worker/uuid.h"

namespace warmpool::worker {
namespace {

// How long the finisher gathers results before one write, and the most it writes at once.
constexpr auto kFinishLinger = std::chrono::milliseconds(1);
constexpr size_t kFinishBatchMax = 256;

}  // namespace

Finisher::Finisher(FinishSettings settings, int backend_db, long result_expires, BrokerApi& broker,
                   ResultStoreApi& results, EventDispatcher& events, WorkerMetrics& metrics,
                   WorkerState& state)
    : settings_(std::move(settings)),
      backend_db_(backend_db),
      result_expires_(result_expires),
      broker_(broker),
      results_(results),
      events_(events),
      metrics_(metrics),
      state_(state) {}

Finisher::~Finisher() { Stop(); }

void Finisher::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Finisher::Stop() {
  {
    std::lock_guard lock(state_.mu);
    state_.stop_finisher = true;
  }
  state_.finish_cv.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Finisher::Finish(const std::shared_ptr<Job>& job, const Outcome& out) {
  {
    std::lock_guard lock(state_.mu);
    state_.finish_queue.push_back({job, out});
  }
  state_.finish_cv.notify_one();
}

bool Finisher::DeferIfBusy(const std::shared_ptr<Job>& job, Outcome out,
                           std::vector<Finishing>* batch) {
  {
    std::lock_guard lock(state_.mu);
    if (!state_.ready_jobs.empty()) {
      // Only the first waiting result wakes the finisher; it lingers for the rest (see Loop),
      // so short tasks cost no thread wake each.
      const bool first = state_.finish_queue.empty();
      state_.finish_queue.push_back({job, std::move(out)});
      if (first) state_.finish_cv.notify_one();
      return true;
    }
    batch->swap(state_.finish_queue);
  }
  batch->push_back({job, std::move(out)});
  return false;
}

void Finisher::Loop() {
  while (true) {
    std::vector<Finishing> batch;
    {
      std::unique_lock lock(state_.mu);
      state_.finish_cv.wait(
          lock, [this] { return state_.stop_finisher || !state_.finish_queue.empty(); });
      if (state_.finish_queue.empty()) return;  // stop_finisher
      // Linger: executors running short tasks add more results within microseconds, and one
      // that runs out of queued work writes them all inline with its next take. A result waits
      // at most kFinishLinger for this.
      state_.finish_cv.wait_for(lock, kFinishLinger, [this] {
        return state_.stop_finisher || state_.finish_queue.size() >= kFinishBatchMax;
      });
      auto& queue = state_.finish_queue;
      if (queue.empty()) continue;  // written inline meanwhile
      size_t n = std::min(queue.size(), kFinishBatchMax);
      batch.assign(std::make_move_iterator(queue.begin()),
                   std::make_move_iterator(queue.begin() + static_cast<long>(n)));
      queue.erase(queue.begin(), queue.begin() + static_cast<long>(n));
    }
    WriteBatch(batch, /*kick=*/true, nullptr);
  }
}

std::vector<FinishPlan> Finisher::Plan(const std::vector<Finishing>& batch) const {
  const double now = WallNow();
  std::vector<FinishPlan> plans;
  plans.reserve(batch.size());
  for (const auto& f : batch) {
    plans.push_back(PlanFinish(*f.job, f.outcome, settings_, now, NewUuid4));
    for (const auto& note : plans.back().notes) LogEvent(note.level, note.event, note.fields);
  }
  return plans;
}

void Finisher::WriteOnce(const std::vector<FinishPlan>& plans, FetchRequest* fetch, bool* stored,
                         bool* acked) {
  if (settings_.same_server) {
    // One script per task (result, then ack), all in one round trip.
    std::vector<FinishOp> ops;
    ops.reserve(plans.size());
    for (const auto& p : plans) ops.push_back(ToFinishOp(p));
    if (fetch != nullptr && !fetch->attempted) {
      fetch->attempted = true;
      broker_.FinishManyThenFetch(ops, backend_db_, result_expires_, fetch->keys, fetch->queues,
                                  fetch->room, WallNow(), &fetch->fetched);
      fetch->ok = true;
    } else {
      broker_.FinishMany(ops, backend_db_, result_expires_);
    }
    *stored = *acked = true;
  }
  if (!*stored) {
    std::vector<const celery::ResultMeta*> metas;
    for (const auto& p : plans) {
      if (p.store) metas.push_back(&p.meta);
      for (const auto& m : p.extra) metas.push_back(&m);
    }
    results_.StoreMany(metas);
    *stored = true;
  }
  if (!*acked) {
    std::vector<AckOp> ops;
    for (const auto& p : plans) ops.push_back(p.ack);
    broker_.AckMany(ops);
    *acked = true;
  }
}

bool Finisher::WriteWithRetry(const std::vector<FinishPlan>& plans,
                              const std::vector<Finishing>& batch, FetchRequest* fetch) {
  bool stored = false, acked = false;
  auto backoff = std::chrono::milliseconds(50);
  while (!(stored && acked)) {
    try {
      WriteOnce(plans, fetch, &stored, &acked);
    } catch (const RedisError& e) {
      metrics_.CountRedisError();
      // Never retry while holding the consumer lock: the loop and shutdown must go on.
      if (fetch != nullptr && fetch->fetch_lock != nullptr && fetch->fetch_lock->owns_lock()) {
        fetch->fetch_lock->unlock();
      }
      if (state_.hard_exit.load()) {
        for (const auto& f : batch) {
          LogEvent(spdlog::level::warn, "task_left_unacked",
                   {{"id", f.job->msg.id},
                    {"error", e.what()},
                    {"note", "restored on restart or by a visibility sweep"}});
        }
        return false;
      }
      LogEvent(spdlog::level::warn, "redis_unavailable",
               {{"error", e.what()}, {"retry_in_ms", backoff.count()}, {"tasks", batch.size()}});
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  }
  return true;
}

void Finisher::WriteBatch(std::vector<Finishing>& batch, bool kick, FetchRequest* fetch) {
  const std::vector<FinishPlan> plans = Plan(batch);
  if (!WriteWithRetry(plans, batch, fetch)) {
    for (auto& f : batch) state_.Forget(f.job, kick);
    return;
  }
  Settle(batch, plans, kick);
}

void Finisher::Settle(const std::vector<Finishing>& batch, const std::vector<FinishPlan>& plans,
                      bool kick) {
  {
    std::lock_guard lock(state_.mu);
    for (size_t i = 0; i < batch.size(); ++i) {
      if (plans[i].counts_in_totals) ++state_.totals[batch[i].job->task_name];
    }
  }
  std::vector<std::pair<std::string, nlohmann::json>> events;
  for (size_t i = 0; i < batch.size(); ++i) {
    const Job& job = *batch[i].job;
    state_.processed.fetch_add(1);
    LogTask(metrics_, job, plans[i].state, batch[i].outcome.runtime, plans[i].detail);
    if (!events_.task_events()) continue;
    if (auto event = FinishEvent(job, batch[i].outcome)) events.push_back(std::move(*event));
  }
  for (auto& [type, fields] : events) events_.SendTask(type, std::move(fields));
  for (const auto& f : batch) state_.Forget(f.job, kick);
}

}  // namespace warmpool::worker
