#include "worker/executor_pool.h"

#include <algorithm>
#include <chrono>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "celery/result.h"
#include "common/logging.h"
#include "redis/errors.h"

namespace warmpool::worker {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point After(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

ExecutorPool::ExecutorPool(const WorkerOptions& options, const TaskRegistry& registry,
                           bool same_server, BrokerApi& broker, ResultStoreApi& results,
                           EventDispatcher& events, WorkerMetrics& metrics, WorkerState& state,
                           Consumer& consumer, Finisher& finisher)
    : options_(options),
      registry_(registry),
      same_server_(same_server),
      broker_(broker),
      results_(results),
      events_(events),
      metrics_(metrics),
      state_(state),
      consumer_(consumer),
      finisher_(finisher) {}

void ExecutorPool::Start() {
  std::lock_guard lock(state_.mu);
  for (int i = 0; i < options_.concurrency; ++i) {
    state_.threads.emplace_back([this, i] { Loop(i); });
  }
}

void ExecutorPool::Join() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(state_.mu);
    state_.stop_executors = true;
    threads.swap(state_.threads);
  }
  state_.work_cv.notify_all();
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
}

bool ExecutorPool::Abandon(const std::shared_ptr<Job>& job) {
  int expected = kRunning;
  if (!job->phase.compare_exchange_strong(expected, kAbandoned)) return false;
  job->ctx.RequestCancelForWorker();
  // The executor thread is stuck in the task: detach it and start a replacement in its slot.
  std::lock_guard lock(state_.mu);
  int slot = job->slot;
  state_.running.erase(slot);
  state_.threads[slot].detach();
  state_.threads[slot] = std::thread([this, slot] { Loop(slot); });
  state_.abandoned_threads.fetch_add(1);
  return true;
}

void ExecutorPool::CheckHardLimits() {
  std::vector<std::shared_ptr<Job>> expired;
  std::vector<std::pair<std::shared_ptr<Job>, int>> terminate;
  auto now = Clock::now();
  {
    std::lock_guard lock(state_.mu);
    for (auto& [slot, job] : state_.running) {
      if (auto it = state_.terminate.find(job->msg.id); it != state_.terminate.end()) {
        terminate.emplace_back(job, it->second);
      } else if (job->hard_deadline && now >= *job->hard_deadline) {
        expired.push_back(job);
      }
    }
    state_.terminate.clear();
  }
  for (auto& [job, signum] : terminate) {
    if (!Abandon(job)) continue;
    LogEvent(spdlog::level::warn, "task_terminated",
             {{"id", job->msg.id}, {"name", job->msg.task}, {"signum", signum}});
    finisher_.Finish(
        job, TerminatedOutcome(signum, std::chrono::duration<double>(now - job->started).count()));
  }
  for (auto& job : expired) {
    if (!Abandon(job)) continue;
    double limit = job->hard_limit_seconds.value_or(0);
    LogEvent(spdlog::level::err, "task_hard_time_limit",
             {{"id", job->msg.id}, {"name", job->msg.task}, {"limit_s", limit}});
    finisher_.Finish(job, TimeLimitOutcome(job->task_name, limit));
  }
}

std::vector<std::shared_ptr<Job>> ExecutorPool::TakeQueued() {
  std::vector<std::shared_ptr<Job>> out;
  std::lock_guard lock(state_.mu);
  for (auto& job : state_.ready_jobs) {
    int expected = kQueued;
    if (job->phase.compare_exchange_strong(expected, kAbandoned)) {
      out.push_back(job);
      --state_.reserved;
    }
  }
  state_.ready_jobs.clear();
  return out;
}

std::vector<std::shared_ptr<Job>> ExecutorPool::Running() {
  std::vector<std::shared_ptr<Job>> out;
  std::lock_guard lock(state_.mu);
  for (auto& [slot, job] : state_.running) out.push_back(job);
  return out;
}

bool ExecutorPool::AbandonForShutdown(const std::shared_ptr<Job>& job) {
  int expected = kRunning;
  if (!job->phase.compare_exchange_strong(expected, kAbandoned)) return false;
  job->ctx.RequestCancelForWorker();
  std::lock_guard lock(state_.mu);
  state_.running.erase(job->slot);
  state_.threads[job->slot].detach();
  state_.abandoned_threads.fetch_add(1);
  --state_.reserved;
  return true;
}

void ExecutorPool::Loop(int slot) {
  while (true) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(state_.mu);
      state_.work_cv.wait(lock,
                          [this] { return state_.stop_executors || !state_.ready_jobs.empty(); });
      if (state_.stop_executors) return;
      job = std::move(state_.ready_jobs.front());
      state_.ready_jobs.pop_front();
      int expected = kQueued;
      if (!job->phase.compare_exchange_strong(expected, kRunning)) continue;
      job->slot = slot;
      job->started = Clock::now();
      state_.running[slot] = job;
    }
    int took = RunJob(job);
    if (job->phase.load() == kAbandoned) return;  // replaced in this slot; we were detached
    // Take the next messages here rather than waking the consumer loop: no thread hop between
    // tasks when the queue is busy.
    if (took < 0) took = consumer_.TryFetchInline();
    if (took == 0) state_.Kick();
  }
}

std::optional<Outcome> ExecutorPool::PreCheck(const Job& job) {
  const celery::TaskMessage& msg = job.msg;
  try {
    if (state_.Revoked(msg.id)) {
      Outcome out;
      out.kind = Outcome::Kind::kRevoked;
      out.exc = celery::TaskRevoked();
      return out;
    }
    if (msg.expires && WallNow() >= *msg.expires) {
      Outcome out;
      out.kind = Outcome::Kind::kRevoked;
      out.exc = celery::TaskRevokedExpired();
      return out;
    }
    if (msg.redelivered && results_.Status(msg.id) == std::optional<std::string>("SUCCESS")) {
      // Redelivered after a crash between storing SUCCESS and the ack: do not run it twice.
      Outcome out;
      out.kind = Outcome::Kind::kSkip;
      return out;
    }
  } catch (const RedisError& e) {
    metrics_.CountRedisError();  // pre-checks are optimisations; run the task anyway
  }
  return std::nullopt;
}

void ExecutorPool::Prepare(Job& job) {
  const celery::TaskMessage& msg = job.msg;
  // The message's limit, else the task's own default (imagery), else --time-limit.
  auto hard = msg.time_limit ? msg.time_limit : registry_.DefaultTimeLimit(job.task_name);
  if (!hard) hard = options_.time_limit;
  auto soft = msg.soft_time_limit ? msg.soft_time_limit : options_.soft_time_limit;
  job.ctx.id = msg.id;
  job.ctx.name = job.task_name;
  job.ctx.hostname = options_.hostname;
  job.ctx.queue = job.fetched.queue;
  job.ctx.data_root = options_.data_root;
  job.ctx.retries = msg.retries;
  if (soft && *soft > 0) {
    job.ctx.soft_limit_seconds = *soft;
    job.ctx.soft_deadline = After(job.started, *soft);
  }
  if (hard && *hard > 0) {
    std::lock_guard lock(state_.mu);
    job.hard_limit_seconds = *hard;
    job.hard_deadline = After(job.started, *hard);
  }
}

void ExecutorPool::WriteStarted(const Job& job) {
  const celery::TaskMessage& msg = job.msg;
  try {
    if (!options_.acks_late) broker_.Ack(job.fetched.tag);
    if (options_.track_started && !msg.ignore_result) {
      results_.Store(celery::StartedMeta(msg.id, static_cast<long>(getpid()), options_.hostname));
    }
  } catch (const RedisError& e) {
    metrics_.CountRedisError();
    LogEvent(spdlog::level::warn, "task_start_write_failed", {{"id", msg.id}, {"error", e.what()}});
  }
  events_.SendTask("task-started", {{"uuid", msg.id}});
}

int ExecutorPool::RunJob(const std::shared_ptr<Job>& job) {
  metrics_.ObserveQueued(std::max(0.0, WallNow() - job->taken_at));
  std::optional<Outcome> out = PreCheck(*job);
  if (!out) {
    Prepare(*job);
    WriteStarted(*job);
    out = CallTask(*job->fn, job->msg, job->task_name, job->ctx);
  }
  return HandOff(job, std::move(*out));
}

int ExecutorPool::HandOff(const std::shared_ptr<Job>& job, Outcome out) {
  int expected = kRunning;
  if (!job->phase.compare_exchange_strong(expected, kFinishing)) return 1;  // abandoned
  {
    std::lock_guard lock(state_.mu);
    state_.running.erase(job->slot);
  }
  metrics_.ObserveRuntime(out.runtime);
  // Nothing else queued for the executors: write now on this thread (with whatever already waits
  // for the finisher), saving a thread hop per task; otherwise let the finisher batch it.
  std::vector<Finishing> batch;
  if (finisher_.DeferIfBusy(job, std::move(out), &batch)) return 1;
  return FinishInline(batch);
}

int ExecutorPool::FinishInline(std::vector<Finishing>& batch) {
  // With the result backend on the broker's server, finishing and taking the next messages go
  // in one pipeline: one round trip per task.
  std::unique_lock fetch_lock(consumer_.fetch_mutex(), std::defer_lock);
  FetchRequest request;
  FetchRequest* fetch = nullptr;
  if (same_server_ && !state_.shutdown.load() && !consumer_.need_recover() &&
      fetch_lock.try_lock() && !state_.shutdown.load()) {
    std::lock_guard lock(state_.mu);
    request.room = state_.RoomLocked(options_.prefetch_limit(), static_cast<int>(batch.size()));
    if (state_.ready_jobs.empty() && request.room > 0) fetch = &request;
  }
  if (fetch == nullptr) {
    if (fetch_lock.owns_lock()) fetch_lock.unlock();
    finisher_.WriteBatch(batch, /*kick=*/false, nullptr);  // Loop takes the next or kicks
    return -1;
  }
  request.keys = consumer_.ConsumeKeys(&request.queues);
  request.fetch_lock = &fetch_lock;
  finisher_.WriteBatch(batch, /*kick=*/false, fetch);
  if (request.attempted && !request.ok) consumer_.set_need_recover();  // the take may have happened
  if (!fetch_lock.owns_lock()) {
    fetch_lock.lock();
    if (state_.shutdown.load()) {
      // Shutdown already requeued what it holds; give these back too.
      consumer_.GiveBack(request.fetched);
      return 1;
    }
  }
  try {
    return consumer_.HandleFetchedBatch(std::move(request.fetched));
  } catch (const RedisError&) {
    metrics_.CountRedisError();
    consumer_.set_need_recover();
    return 0;
  }
}

}  // namespace warmpool::worker
